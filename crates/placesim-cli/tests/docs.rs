//! The documents hold together: every relative link in README.md, ARCHITECTURE.md and
//! docs/*.md reaches a file of the repository, every `#anchor` a heading of the file it
//! names (GitHub's rule for heading anchors), and every repository path the text names in
//! code spans exists. A section lost in an edit, or a file moved or renamed, fails here
//! rather than leaving a reader at a dead end: README.md's link to ARCHITECTURE.md's
//! "How to add" recipes pointed at nothing for eleven days after the section was cut by
//! mistake.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root (this crate is two levels below it).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The documents checked: the top-level guides and everything under docs/.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut docs = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut under_docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is listed")
        .map(|entry| entry.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    under_docs.sort();
    docs.extend(under_docs);
    docs
}

/// The lines of `text` outside fenced code blocks, with their 1-based numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// `line` split into its code spans (odd places) and the text between them (even places).
fn spans(line: &str) -> Vec<&str> {
    line.split('`').collect()
}

/// GitHub's anchor for a heading: lower case, every character but letters, digits, spaces,
/// hyphens and underscores dropped, spaces made hyphens; a repeated anchor gets `-1`, `-2`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The targets of the inline links `[text](target)` in the prose of `line`, code spans left
/// out.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    for text in spans(line).into_iter().step_by(2) {
        let mut rest = text;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else {
                break;
            };
            targets.push(&after[..end]);
            rest = &after[end..];
        }
    }
    targets
}

/// What is wrong with each link of `doc`, one message a link.
fn broken_links(doc: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(doc).expect("document reads");
    let dir = doc.parent().expect("document has a directory");
    let mut broken = Vec::new();
    for (number, line) in prose_lines(&text) {
        for target in link_targets(line) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target, None),
            };
            let file = if path.is_empty() {
                doc.to_path_buf()
            } else {
                dir.join(path)
            };
            let place = format!("{}:{number}: link to {target}", doc.display());
            if !file.exists() {
                broken.push(format!("{place}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = std::fs::read_to_string(&file).unwrap_or_default();
                if !anchors(&target_text).contains(anchor) {
                    broken.push(format!("{place}: no heading makes that anchor"));
                }
            }
        }
    }
    broken
}

/// What is wrong with each repository path `doc` names in a code span: a file or directory
/// under one of the repository's top-level source directories, written out (no `<name>`
/// pattern, no wildcard). `results/` is left out: what is under it is written by runs.
fn missing_paths(doc: &Path) -> Vec<String> {
    const TOP: [&str; 8] = [
        "crates/",
        "scripts/",
        "scenarios/",
        "docs/",
        "analysis/",
        "workloads/",
        "fuzz/",
        ".ci/",
    ];
    let text = std::fs::read_to_string(doc).expect("document reads");
    let mut missing = Vec::new();
    for (number, line) in prose_lines(&text) {
        for span in spans(line).into_iter().skip(1).step_by(2) {
            let written_out = !span.contains(['<', '*', '{', ' ', '…']);
            if !written_out || !TOP.iter().any(|t| span.starts_with(t)) {
                continue;
            }
            // `file.rs:123` and `crate/src/x.rs::item` name a place in a file.
            let path = span.split(':').next().unwrap_or(span);
            if !root().join(path).exists() {
                missing.push(format!(
                    "{}:{number}: `{span}`: no such path in the repository",
                    doc.display()
                ));
            }
        }
    }
    missing
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let broken: Vec<String> = documents().iter().flat_map(|d| broken_links(d)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_repository_path_the_docs_name_exists() {
    let missing: Vec<String> = documents().iter().flat_map(|d| missing_paths(d)).collect();
    assert!(missing.is_empty(), "missing paths:\n{}", missing.join("\n"));
}

#[test]
fn anchors_follow_githubs_rule() {
    let text = "# Architecture\n## How to add …\n### `crates/placesim-core`\n## Speed\n## Speed\n\
                ```\n## not a heading\n```\n#not-a-heading\n";
    let expected: BTreeSet<String> = [
        "architecture",
        "how-to-add-",
        "cratesplacesim-core",
        "speed",
        "speed-1",
    ]
    .map(String::from)
    .into();
    assert_eq!(anchors(text), expected);
}

#[test]
fn links_are_found_outside_code_spans_only() {
    assert_eq!(
        link_targets("see [a](A.md#x) and `[b](B.md)` and [c](docs/c.md)"),
        vec!["A.md#x", "docs/c.md"]
    );
}
