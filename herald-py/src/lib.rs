//! `herald._native`: the Python face of herald-rs (docs/python.md). Everything
//! here is a thin conversion layer over herald-core and herald-verify, so
//! Python gets the same encoder, decoder and verifier as the `herald`
//! command, never a second implementation. The pure-Python package
//! `herald` (python/herald/) re-exports it and adds the middleware.
//!
//! PyO3 0.30's macros expand to FFI glue that compiles under
//! `forbid(unsafe_code)`, so this crate forbids it like every library crate.
#![forbid(unsafe_code)]

mod agent;
mod auditlog;
mod envelope;
mod errors;
mod keys;
mod receipt;
mod report;
mod value;

use pyo3::prelude::*;

/// The extension module, imported as `herald._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    keys::register(m)?;
    value::register(m)?;
    envelope::register(m)?;
    report::register(m)?;
    auditlog::register(m)?;
    receipt::register(m)?;
    agent::register(m)?;
    m.add("PROTOCOL", herald_core::envelope::VERSION)?;
    Ok(())
}
