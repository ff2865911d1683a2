//! docs/architecture.md names every module of herald-core, herald-verify
//! and herald-cli, and
//! every module it names exists: the map a newcomer reads is the
//! territory.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The crates whose modules the document must list, and their sources.
const CRATES: &[(&str, &str)] = &[
    ("herald-core", "herald-core/src"),
    ("herald-verify", "herald-verify/src"),
    ("herald-cli", "herald-cli/src"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The module names the document lists under `krate`: in the first code
/// block, the lines indented by exactly two spaces after the line that
/// starts with the crate's name; each line's first column (up to two
/// spaces) may name several, comma-separated, a directory with a `/`.
fn listed(doc: &str, krate: &str) -> BTreeSet<String> {
    let block = doc.split("```").nth(1).expect("a code block");
    let mut names = BTreeSet::new();
    let mut inside = false;
    for line in block.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            inside = line.split_whitespace().next() == Some(krate);
            continue;
        }
        let Some(rest) = line.strip_prefix("  ") else {
            continue;
        };
        if !inside || rest.starts_with(' ') {
            continue;
        }
        let column = rest.split("  ").next().unwrap_or_default();
        for name in column.split(',') {
            names.insert(name.trim().trim_end_matches('/').to_string());
        }
    }
    names
}

/// The top-level modules of a crate's `src`: each `NAME.rs` but the crate
/// roots, and each directory but `bin` (a `NAME.rs` with a `NAME/` of
/// submodules is one module).
fn modules(src: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if name != "bin" {
                names.insert(name);
            }
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            names.insert(name);
        }
    }
    names
}

#[test]
fn the_architecture_lists_exactly_the_modules_there_are() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    for (krate, src) in CRATES {
        let listed = listed(&doc, krate);
        let present = modules(&root().join(src));
        assert!(!listed.is_empty(), "{krate}: nothing listed");
        let missing: Vec<_> = present.difference(&listed).collect();
        let phantom: Vec<_> = listed.difference(&present).collect();
        assert!(
            missing.is_empty() && phantom.is_empty(),
            "{krate}: modules not in docs/architecture.md: {missing:?}; \
             listed there but absent: {phantom:?}"
        );
    }
}
