//! `herald man`: every page herald(1) refers to exists, with its
//! subcommand's options; one page is printed by subcommand name, and all
//! are written with `--dir`.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::collections::BTreeSet;
use std::path::Path;

use support::herald;

/// The pages `page` refers to: `herald\-keygen(1)` and the like.
fn references(page: &str) -> BTreeSet<String> {
    page.split(|c: char| c.is_whitespace())
        .filter_map(|w| w.strip_suffix("(1)"))
        .filter(|w| w.starts_with("herald\\-"))
        .map(|w| w.replace("\\-", "-"))
        .collect()
}

#[test]
fn every_page_herald_refers_to_exists_with_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let run = herald(dir.path(), &["man", "--dir", "pages"]);
    run.expect(0);
    let pages = dir.path().join("pages");
    let written: BTreeSet<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // Each file written is listed, one per line.
    assert_eq!(run.out().lines().count(), written.len(), "{}", run.out());
    let read = |name: &str| std::fs::read_to_string(pages.join(format!("{name}.1"))).unwrap();
    // Every reference, from every page, resolves: none dangles.
    let mut seen = BTreeSet::new();
    let mut pending = vec!["herald".to_owned()];
    while let Some(name) = pending.pop() {
        assert!(written.contains(&format!("{name}.1")), "{name}(1) missing");
        if seen.insert(name.clone()) {
            pending.extend(references(&read(&name)));
        }
    }
    let top = references(&read("herald"));
    assert!(top.len() >= 15, "{top:?}");
    assert!(top.contains("herald-keygen") && top.contains("herald-verify"));
    // Nested subcommands have pages too (herald log …).
    assert!(
        seen.iter().any(|n| n.starts_with("herald-log-")),
        "{seen:?}"
    );
    // A subcommand's page carries its options.
    let keygen = read("herald-keygen");
    assert!(keygen.contains("\\-\\-force"), "{keygen}");
    // Its title line names herald and its version, as herald(1)'s does.
    let version = format!("\"herald {}\"", env!("CARGO_PKG_VERSION"));
    assert!(
        keygen
            .lines()
            .any(|l| l.starts_with(".TH herald-keygen 1 ") && l.contains(&version))
    );
    let verify = read("herald-verify");
    assert!(verify.contains("\\-\\-keyring") && verify.contains("\\-\\-json"));
    // No page for clap's `help` subcommand, which has none to show.
    assert!(!written.contains("herald-help.1"), "{written:?}");
}

#[test]
fn one_page_by_subcommand_name() {
    let dir = tempfile::tempdir().unwrap();
    herald(dir.path(), &["man", "--dir", "pages"]).expect(0);
    let file = |name: &str| std::fs::read(dir.path().join("pages").join(name)).unwrap();
    for (args, page) in [
        (&["man"][..], "herald.1"),
        (&["man", "keygen"][..], "herald-keygen.1"),
        (
            &["man", "log", "verify-proof"][..],
            "herald-log-verify-proof.1",
        ),
    ] {
        let run = herald(dir.path(), args);
        run.expect(0);
        assert_eq!(run.stdout, file(page), "{args:?}");
    }
    let run = herald(dir.path(), &["man", "keygn"]);
    run.expect(2);
    assert!(
        run.stderr
            .starts_with("herald: no man page for `herald keygn`: `herald` has: keygen, new"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1);
    assert!(Path::new(env!("CARGO_BIN_EXE_herald")).exists());
}
