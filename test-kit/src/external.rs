//! Programs outside Rust that some tests need (Node and npm, PostgreSQL,
//! Python): found, or the test skipped with one line saying what it needs
//! and how to install it, so that `cargo test --workspace` passes on a
//! machine with only Rust (README, *Test*).
//!
//! With `HERALD_TEST_ALL=1` (which `.ci/run` sets once it has installed
//! everything) a missing program fails the test instead: CI never skips.
//!
//! The skip line is written straight to the process's standard error, not
//! through `eprintln!`, which the test harness captures: it shows in a
//! plain `cargo test` run.
//!
//! ```no_run
//! let Some(node) = herald_testkit::external::require("node", "apt-get install nodejs npm") else {
//!     return;
//! };
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

/// The variable that turns every skip into a failure.
pub const ALL: &str = "HERALD_TEST_ALL";

/// The variable that limits the search for programs to `PATH`: PostgreSQL
/// is otherwise also looked for where Debian installs it
/// (`/usr/lib/postgresql/*/bin`, not on `PATH`). `.ci/run`'s fresh-clone
/// step sets it to hide what is installed.
pub const PATH_ONLY: &str = "HERALD_TEST_PATH_ONLY";

/// Whether every test must run (`HERALD_TEST_ALL=1`).
pub fn all_required() -> bool {
    std::env::var_os(ALL).is_some_and(|v| v == "1")
}

/// `program` on `PATH`, or `None` after [`missing`] said so (or a panic
/// under `HERALD_TEST_ALL=1`). `install` is how to get it, e.g.
/// `apt-get install nodejs npm`.
pub fn require(program: &str, install: &str) -> Option<PathBuf> {
    match on_path(program) {
        Some(path) => Some(path),
        None => missing(program, install),
    }
}

/// Report that the running test lacks `what` and is skipped: one line
/// `skipped: <test>: needs <what> (install: <install>)` on standard error,
/// and `None`. Under `HERALD_TEST_ALL=1`, a panic naming the same.
pub fn missing<T>(what: &str, install: &str) -> Option<T> {
    let current = std::thread::current();
    let test = current.name().unwrap_or("a test");
    let need = format!("{test}: needs {what} (install: {install})");
    if all_required() {
        panic!("{need}, and {ALL}=1 forbids skipping it");
    }
    let line = format!("skipped: {need}");
    // Past the harness's capture (see the module documentation). Nothing
    // to do if standard error is gone.
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    None
}

/// The first `program` in a directory of `PATH` that is an executable file.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// How to install PostgreSQL, in the skip line.
const POSTGRES_INSTALL: &str = "apt-get install postgresql, or set HERALD_PG_BIN";

/// The directory of PostgreSQL's `initdb` and `pg_ctl`: `$HERALD_PG_BIN`,
/// else the newest `/usr/lib/postgresql/*/bin` (Debian's `postgresql`
/// package; not searched under `HERALD_TEST_PATH_ONLY=1`), else the
/// directory of `initdb` on `PATH`; or `None` after [`missing`].
pub fn postgres() -> Option<PathBuf> {
    let has_tools = |d: &Path| is_executable(&d.join("initdb")) && is_executable(&d.join("pg_ctl"));
    if let Some(dir) = std::env::var_os("HERALD_PG_BIN") {
        let dir = PathBuf::from(dir);
        return if has_tools(&dir) {
            Some(dir)
        } else {
            missing(
                &format!(
                    "PostgreSQL (no initdb and pg_ctl in HERALD_PG_BIN={})",
                    dir.display()
                ),
                POSTGRES_INSTALL,
            )
        };
    }
    if std::env::var_os(PATH_ONLY).is_none_or(|v| v != "1") {
        let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
                let bin = e.path().join("bin");
                has_tools(&bin).then_some((version, bin))
            })
            .collect();
        found.sort();
        if let Some((_, bin)) = found.pop() {
            return Some(bin);
        }
    }
    match on_path("initdb").and_then(|p| p.parent().map(Path::to_path_buf)) {
        Some(dir) if has_tools(&dir) => Some(dir),
        _ => missing("PostgreSQL (initdb, pg_ctl)", POSTGRES_INSTALL),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_on_path_is_found_and_a_missing_one_is_not() {
        assert!(on_path("sh").is_some());
        assert!(on_path("herald-no-such-program").is_none());
    }

    #[test]
    fn a_missing_program_skips_or_under_herald_test_all_fails() {
        let run = || require("herald-no-such-program", "nowhere");
        if all_required() {
            assert!(std::panic::catch_unwind(run).is_err());
        } else {
            assert_eq!(run(), None);
        }
    }
}
