//! The log's layers (docs/audit-log.md, *C2SP forms*): herald-merkle
//! depends on sha2 alone; herald-tlog on herald-core and herald-merkle of
//! the workspace (and herald-fs, std only, for the shape of its file
//! errors); herald-witness on those three (and herald-fs, std only,
//! the file rule it shares with herald-verify), never on herald-verify or
//! redb. Read from `cargo metadata`, over normal dependencies, transitively
//! through the workspace's own crates.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// Each workspace crate's normal (not dev, not build) dependencies, by name.
fn normal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

/// Every crate `name` reaches by normal dependencies, through the
/// workspace's crates (a registry crate's own dependencies are not followed).
fn reach(all: &BTreeMap<String, BTreeSet<String>>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_owned()];
    while let Some(n) = todo.pop() {
        for d in all.get(&n).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

fn workspace_crates(all: &BTreeMap<String, BTreeSet<String>>, name: &str) -> BTreeSet<String> {
    reach(all, name)
        .into_iter()
        .filter(|d| all.contains_key(d))
        .collect()
}

#[test]
fn the_log_is_layered() {
    let all = normal_dependencies();
    let set = |names: &[&str]| {
        names
            .iter()
            .map(|s| (*s).to_owned())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(all["herald-merkle"], set(&["sha2"]));
    // The file rule herald-witness shares with herald-verify: std only.
    assert_eq!(all["herald-fs"], set(&[]));
    assert_eq!(
        workspace_crates(&all, "herald-tlog"),
        set(&["herald-core", "herald-fs", "herald-merkle"])
    );
    let witness = reach(&all, "herald-witness");
    for banned in ["herald-verify", "redb"] {
        assert!(!witness.contains(banned), "herald-witness reaches {banned}");
    }
    for needed in ["herald-core", "herald-merkle", "herald-tlog"] {
        assert!(witness.contains(needed), "herald-witness lacks {needed}");
    }
}
