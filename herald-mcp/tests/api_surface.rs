//! The shape of herald-mcp's public surface, read from its sources, as
//! herald-verify's is: private modules, every public item one name at the
//! crate root (lib.rs's curated re-exports), and only what the CLI runs
//! the wrapper with (`herald mcp proxy`, `--listen`, `herald mcp guard`).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_is_public() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    assert!(files.len() > 10, "{} files", files.len());
    for file in &files {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            assert!(
                !line.trim_start().starts_with("pub mod "),
                "{}: {line}",
                file.display()
            );
        }
    }
}

#[test]
fn the_root_exports_what_the_cli_runs_once_each() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut names = Vec::new();
    for statement in lib.split(';') {
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let tree = &statement[at + "pub use ".len()..];
        let list = match (tree.find('{'), tree.rfind('}')) {
            (Some(open), Some(close)) => &tree[open + 1..close],
            _ => tree.rsplit("::").next().unwrap(),
        };
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            names.push(item.rsplit(" as ").next().unwrap().to_string());
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "Conduit",
            "DEFAULT_MAX_AGE",
            "DEFAULT_MAX_SESSIONS",
            "GuardConfig",
            "Keys",
            "ProxyConfig",
            "ProxyError",
            "Receive",
            "SessionLimits",
            "SyncPolicy",
            "Upstream",
            "run_guard",
            "run_http",
            "run_stdio",
        ]
    );
}
