//! Dependencies reach only the crates that use them, with features as each
//! crate resolves them alone (not unified with the rest of the workspace):
//!
//! - redb, the replay cache's store, is behind herald-verify's `store`
//!   feature: herald-mcp (whose guard is given its receiver by the CLI)
//!   and herald-agent do not link it;
//! - axum, the servers' router, is behind herald-http's `server` feature:
//!   herald-agent (a client of conduits) does not link it;
//! - herald-py, its own workspace, links neither (its Cargo.lock, resolved
//!   with its features, holds neither).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;

/// What `cargo tree -e normal -p PACKAGE -i DEPENDENCY` prints: the paths by
/// which `package`'s normal dependencies reach `dependency`, empty if none.
fn reached(package: &str, dependency: &str) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "--locked", "-e", "normal", "-p"])
        .arg(package)
        .arg("-i")
        .arg(dependency)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Cargo's words when the dependency is nowhere in the resolved graph.
    if !out.status.success() && stderr.contains("did not match any packages") {
        return String::new();
    }
    assert!(out.status.success(), "{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_store_reaches_only_its_users() {
    for (package, dependency) in [
        ("herald-mcp", "redb"),
        ("herald-agent", "redb"),
        ("herald-agent", "axum"),
    ] {
        let tree = reached(package, dependency);
        assert!(tree.is_empty(), "{package} reaches {dependency}:\n{tree}");
    }
    // The users still have it (the check above can fail).
    assert!(reached("herald-conduit", "redb").contains("herald-verify"));
    assert!(reached("herald-mcp", "axum").contains("herald-http"));
}

#[test]
fn herald_py_links_neither_redb_nor_axum() {
    let lock = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../herald-py/Cargo.lock"),
    )
    .unwrap();
    let packages: Vec<&str> = lock
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|n| n.trim_end_matches('"'))
        .collect();
    assert!(packages.contains(&"herald-verify"), "{packages:?}");
    assert!(packages.contains(&"hyper"), "{packages:?}");
    for banned in ["redb", "axum"] {
        assert!(!packages.contains(&banned), "herald-py links {banned}");
    }
}
