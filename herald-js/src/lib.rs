//! HERALD for JavaScript and TypeScript (docs/javascript.md): herald-core
//! and herald-verify compiled to `wasm32-unknown-unknown` with
//! wasm-bindgen, wrapped by the npm package `@herald-rs/core`
//! (`herald-js/npm/`), so that Node and browsers build, sign and verify
//! envelopes with the same encoder, builder and verifier as the `herald`
//! command and the Python bindings, never a second implementation.
//!
//! - [`keys`]: signing keys as opaque handles (the secret never leaves
//!   this instance unless asked by name, and is zeroized when the handle is
//!   freed), keyrings with labels (CLI.md);
//! - [`envelope`]: build and sign a genesis or a reply, co-sign, decode,
//!   the display form (spec §3.1, P3–P7);
//! - [`value`]: JavaScript values through the P1 encoder and decoder;
//! - [`verify`]: the audit of `herald verify --json` (CLI.md, P10–P13);
//! - [`inspect`]: the session the inspector page (`herald inspect
//!   --serve`, docs/inspector.md) drives: the report, the DAG's nodes, an
//!   entry's detail and annotated bytes;
//! - [`mcp`]: the envelopes of one MCP session as `herald mcp proxy`
//!   makes them (docs/mcp.md *What is signed*), for the in-process client
//!   wrapper of the npm package.
//!
//! wasm-bindgen's generated glue needs `unsafe` internally; this crate's
//! own code has none (`deny`, with no `allow` anywhere).
#![deny(unsafe_code)]

pub mod envelope;
mod error;
pub mod inspect;
pub mod keys;
pub mod mcp;
pub mod value;
pub mod verify;

use wasm_bindgen::prelude::wasm_bindgen;

/// The protocol version envelopes carry (spec §3.1).
#[wasm_bindgen(js_name = protocolVersion)]
pub fn protocol_version() -> String {
    herald_core::envelope::VERSION.to_string()
}
