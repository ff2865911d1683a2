//! Notes and warnings on standard error (`herald: note: …`,
//! `herald: warning: …`), silenced by `--quiet`. Errors are not notices:
//! they are always printed.

use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silence notes and warnings (`--quiet`).
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// `herald: note: {text}` on standard error, unless quiet.
pub(crate) fn note(text: &str) {
    if !quiet() {
        eprintln!("herald: note: {text}");
    }
}

/// `herald: warning: {text}` on standard error, unless quiet.
pub(crate) fn warning(text: &str) {
    if !quiet() {
        eprintln!("herald: warning: {text}");
    }
}
