//! The HERALD v0.2 conformance vectors: their format ([`manifest`]), the
//! generator that writes `vectors/conformance/` from fixed seeds
//! ([`generate`](mod@generate)), and the runner any build of this implementation uses to
//! check itself against them ([`run`](mod@run)). `vectors/README.md` documents the
//! format for other implementations.

pub mod forge;
pub mod generate;
pub mod manifest;
pub mod run;

pub use generate::generate;
pub use run::{Outcome, run};

/// The conformance vectors this crate was built with, as `(path relative
/// to vectors/conformance, bytes)`, sorted by path: what `herald
/// conformance` runs without a directory.
pub fn builtin() -> &'static [(&'static str, &'static [u8])] {
    embedded::FILES
}

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/vectors.rs"));
}
