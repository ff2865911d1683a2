//! The shape of herald-mcp's public surface, read from its sources, as
//! herald-verify's is: private modules, every public item one name at the
//! crate root (lib.rs's curated re-exports), and only what the CLI runs
//! the wrapper with (`herald mcp proxy`, `--listen`, `herald mcp guard`).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};

use herald_testkit::surface::{public_modules, root_exports, rust_files};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_module_is_public() {
    assert!(rust_files(&src()).len() > 10);
    assert_eq!(public_modules(&src()), Vec::<String>::new());
}

#[test]
fn the_root_exports_what_the_cli_runs_once_each() {
    let mut names = root_exports(&std::fs::read_to_string(src().join("lib.rs")).unwrap());
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
