//! Scenario files: the shipped ones, what `check` shows, every kind of bad input, and how
//! trace jobs get their requests.

// Test helpers unwrap what the test itself set up.
#![allow(clippy::unwrap_used)]

mod errors;
mod generated;
mod grammar;
mod moab;
mod requests;
mod reservations;
mod shipped;

use placesim_scenario::{Scenario, ScenarioError, load_scenario};
use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Loads a shipped scenario, which must be valid.
pub fn load_file(name: &str) -> Scenario {
    let path = repo().join("scenarios").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    load_scenario(&text, &path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Loads scenario text as the file `test.toml`.
pub fn load_text(text: &str) -> Result<Scenario, ScenarioError> {
    load_scenario(text, Path::new("test.toml"))
}

/// The error a scenario text must give.
pub fn error_of(text: &str) -> String {
    match load_text(text) {
        Ok(_) => panic!("loaded:\n{text}"),
        Err(e) => e.to_string(),
    }
}
