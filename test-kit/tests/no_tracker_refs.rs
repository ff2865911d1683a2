//! No tracked source, script or document cites a numbered issue of the
//! project's tracker, which its readers cannot see: a comment or a doc
//! names the spec or profile section ("PROFILE P10 revision 3", "spec
//! §5.2", "CONDUIT.md *Bounded answers*"), the docs section
//! ("docs/performance.md *(8)*") or the plain concept ("the memory bound")
//! instead (common standards: "Doc comments cite the spec/profile
//! section"). The files are the repository's own (`git ls-files`), less
//! docs/spec/, a copy of the shared spec this project does not edit.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Tracked paths this test does not read: the shared spec's copy.
const NOT_OURS: &[&str] = &["docs/spec/"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The word that starts a citation, written so this file does not cite.
const WORD: &str = concat!("iss", "ue");

/// Every citation in `text` as its 1-based line number: the word (any
/// case, not inside a longer word), optionally plural, then only spaces,
/// line breaks, `-`, `#` and comment leaders (`//`, `//!`, `///`, `#`,
/// `*`) before a digit, so a citation wrapped onto the next comment line
/// is found too.
fn citations(text: &str) -> Vec<usize> {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find(WORD) {
        let start = from + at;
        from = start + WORD.len();
        if start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
            continue;
        }
        let mut i = from;
        if bytes.get(i) == Some(&b's') {
            i += 1;
        }
        while let Some(&b) = bytes.get(i) {
            if b.is_ascii_whitespace() || matches!(b, b'-' | b'#' | b'/' | b'!' | b'*') {
                i += 1;
            } else {
                break;
            }
        }
        if bytes.get(i).is_some_and(u8::is_ascii_digit) {
            found.push(1 + lower[..start].matches('\n').count());
        }
    }
    found
}

/// The tracked files, or `None` (with a one-line notice) when git or the
/// checkout is missing, e.g. in an unpacked crate; with HERALD_TEST_ALL=1
/// that is a failure instead.
fn tracked() -> Option<Vec<String>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root())
        .args(["ls-files", "-z"])
        .output();
    match out {
        Ok(out) if out.status.success() => Some(
            String::from_utf8(out.stdout)
                .unwrap()
                .split('\0')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        other => {
            let why = match other {
                Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
                Err(e) => e.to_string(),
            };
            assert!(
                std::env::var("HERALD_TEST_ALL").as_deref() != Ok("1"),
                "HERALD_TEST_ALL=1 but `git ls-files` failed: {why}"
            );
            eprintln!("skipped: no_tracker_refs needs `git ls-files` in a checkout ({why})");
            None
        }
    }
}

#[test]
fn the_detector_finds_citations_and_only_those() {
    let cite = |s: &str| citations(&s.replace("XX", WORD));
    assert_eq!(cite("a (XX 14) b"), vec![1]);
    assert_eq!(cite("x\nsee XX-7, item 2"), vec![2]);
    assert_eq!(cite("(XX #22)"), vec![1]);
    assert_eq!(cite("XXs 14 and 18"), vec![1]);
    assert_eq!(cite("//! the bound (XX\n//! 14): here"), vec![1]);
    assert_eq!(
        citations(&format!("{}{WORD} 3", "The ").to_uppercase()),
        vec![1]
    );
    assert!(cite("keys XXd 3 days ago").is_empty());
    assert!(cite("tXX 3").is_empty());
    assert!(cite("the XX of 2026").is_empty());
    assert!(cite("an XX: 3 more").is_empty());
}

#[test]
fn no_tracked_file_cites_a_tracker_issue() {
    let Some(files) = tracked() else {
        return;
    };
    assert!(
        files.len() > 100,
        "git ls-files listed {} files",
        files.len()
    );
    let root = root();
    let mut hits = Vec::new();
    for path in &files {
        if NOT_OURS.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        // A directory (a submodule) or a file deleted in the work tree is
        // not read; neither is a binary file.
        let Ok(bytes) = std::fs::read(root.join(path)) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        for line in citations(&text) {
            hits.push(format!("{path}:{line}"));
        }
    }
    assert!(
        hits.is_empty(),
        "cite the spec or docs section or name the concept instead of a tracker \
         issue number:\n{}",
        hits.join("\n")
    );
}
