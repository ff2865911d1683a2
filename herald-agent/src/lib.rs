//! What an agent's recorder needs, in one place for every recorder (the
//! MCP wrapper `herald mcp proxy`, the Python middlewares of herald-py):
//!
//! - [`trace_file`]: the append-only, crash-safe trace file (a CBOR
//!   sequence, CLI.md *Files*), mode 0600, a torn tail cut on open, a
//!   failed append rolled back;
//! - [`sender`]: a sender's side of CONDUIT.md `POST /v1/envelopes`, an
//!   envelope delivered only with a receipt that verifies (spec §5.2);
//! - [`recorder`]: the file and, optionally, a conduit that must
//!   acknowledge first, with the file's sync policy;
//! - [`sandbox`]: the `tool_sandbox` co-signature of a tool's result
//!   (PROFILE P5, P6);
//! - [`mcp`]: which envelope each event of an MCP session becomes
//!   (docs/mcp.md *What is signed*), for `herald mcp proxy` and the npm
//!   package's client wrapper alike.
//!
//! The first three are the feature `recorder` (on by default); without it
//! the crate is the signing rules alone and builds for
//! `wasm32-unknown-unknown` (herald-js).
#![forbid(unsafe_code)]

pub mod mcp;
#[cfg(feature = "recorder")]
pub mod recorder;
pub mod sandbox;
#[cfg(feature = "recorder")]
pub mod sender;
#[cfg(feature = "recorder")]
pub mod trace_file;

#[cfg(feature = "recorder")]
pub use recorder::{Before, Conduit, RecordError, Recorder, SyncPolicy};
#[cfg(feature = "recorder")]
pub use trace_file::{TraceFile, TraceFileError};
