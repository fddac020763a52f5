//! Reading a text input (a scenario, a sweep, a requests file) whole, with an error that says
//! where it stops being text.

use std::path::{Path, PathBuf};

/// A text file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    /// The file could not be opened or read (missing, a directory, no permission).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file holds a byte that is not UTF-8: a binary file, or another encoding.
    #[error(
        "{}:{line}:{column}: expected UTF-8 text, found the byte 0x{byte:02x}",
        path.display()
    )]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The line of the first such byte, from 1.
        line: usize,
        /// Its column, in characters from 1.
        column: usize,
        /// The byte.
        byte: u8,
    },
}

/// Reads `path` whole as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, TextError> {
    let bytes = std::fs::read(path).map_err(|source| TextError::Io {
        path: path.to_owned(),
        source,
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        // Everything before `at` is valid, so it can be counted in characters.
        let before = String::from_utf8_lossy(&bytes[..at]);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        TextError::NotUtf8 {
            path: path.to_owned(),
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            byte: bytes[at],
        }
    })
}
