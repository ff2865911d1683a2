//! herald-verify for the browser: the verifier compiled to
//! `wasm32-unknown-unknown`, so that the inspector page (`herald inspect
//! --serve`, docs/inspector.md) checks dropped files on the user's
//! machine with the same code, and the same verdicts, as `herald verify
//! --json` (CLI.md).
//!
//! The module has a plain C ABI ([`ffi`]): no wasm-bindgen, no generated
//! JavaScript glue, no dependency beyond the workspace's. The page loads it
//! with `WebAssembly.instantiate`, copies its inputs into buffers the module
//! allocates, and reads JSON back. The logic lives in safe modules that
//! also build for the host: [`session`] (inputs, keyrings, the audit and
//! its JSON) and [`annotate`] (a cbor.me-style annotated hex view); every
//! reason code in plain words, with its PROFILE.md section, is
//! [`herald_verify::explain`], as `herald explain` prints it.
//!
//! Unsafe code is needed only where the C ABI hands over raw pointers
//! (`ffi`) and where the host's random source is called (`random`, on
//! wasm32 only); each block says why it is sound.
#![deny(unsafe_code)]

pub mod annotate;
#[allow(unsafe_code)]
pub mod ffi;
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod random;
pub mod session;

pub use session::Session;
