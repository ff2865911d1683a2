//! The README's console examples are the walk-through that
//! `tests/cmd/walkthrough.trycmd` runs (tests/cli.rs): each ```console
//! block of README.md must appear in it verbatim, so the README never
//! shows a command or an output that the test suite does not check.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;

fn console_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```console\n") {
        let body = &rest[start..];
        let end = body["```console\n".len()..].find("```\n").unwrap() + "```console\n".len();
        blocks.push(body[..end + "```\n".len()].to_owned());
        rest = &body[end + "```\n".len()..];
    }
    blocks
}

#[test]
fn readme_console_examples_are_run_by_the_walkthrough() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../README.md")).unwrap();
    let walkthrough = std::fs::read_to_string(root.join("tests/cmd/walkthrough.trycmd")).unwrap();
    let blocks = console_blocks(&readme);
    assert!(
        blocks.len() >= 3,
        "README has {} console blocks",
        blocks.len()
    );
    for block in blocks {
        assert!(
            walkthrough.contains(&block),
            "README block not in walkthrough.trycmd:\n{block}"
        );
    }
}
