//! Replaying the fuzz corpora in the test suites: every input of
//! `fuzz/corpus/<target>/`, the committed reproducers of
//! `fuzz/regressions/<target>/` and any local `fuzz/artifacts/<target>/crash-*`
//! must pass through the target without a panic.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// The workspace's `fuzz/` directory.
pub fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// Every file directly under `dir` whose name starts with `prefix` (not
/// hidden), sorted; none if `dir` is absent.
pub fn files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && !n.starts_with('.'))
        })
        .collect();
    out.sort();
    out
}

/// Run `body` over the corpus, the regressions and the local crash
/// artifacts of `target`; `seeds` says how to write the corpus when it is
/// empty. Panics (the test failing) naming every input that panicked.
pub fn replay(target: &str, seeds: &str, body: fn(&[u8])) {
    let root = fuzz_dir();
    let corpus = files(&root.join("corpus").join(target), "");
    assert!(
        !corpus.is_empty(),
        "fuzz/corpus/{target} is empty: run `{seeds}`"
    );
    let mut all = corpus;
    all.extend(files(&root.join("regressions").join(target), ""));
    all.extend(files(&root.join("artifacts").join(target), "crash-"));
    let mut failed = Vec::new();
    for path in &all {
        let ran = fs::read(path).map_err(|e| e.to_string()).and_then(|bytes| {
            catch_unwind(AssertUnwindSafe(|| body(&bytes))).map_err(|_| String::from("panicked"))
        });
        if let Err(e) = ran {
            failed.push(format!("{}: {e}", path.display()));
        }
    }
    assert!(failed.is_empty(), "{target}: {failed:#?}");
    eprintln!("{target}: {} inputs replayed", all.len());
}
