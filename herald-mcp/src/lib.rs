//! The HERALD MCP wrapper (docs/mcp.md; spec §5.1 *Translator*, §10 Phase 3).
//!
//! It sits between an MCP client (the model's host) and an MCP server (the
//! tools) and turns every `tools/call` and its result into signed HERALD
//! envelopes, one trace per MCP session, while everything else MCP carries
//! passes through untouched. The keys are held by the wrapper process only.
//!
//! - [`session`]: the signing layer — which envelope each MCP event
//!   becomes (the genesis at `initialize`, request, result, events);
//! - [`pin`]: tool-definition pinning (the `tools/list` digest);
//! - [`trace_file`]: the append-only, crash-safe `--trace FILE`
//!   (herald-agent's, shared with the Python recorder);
//! - [`jsonrpc`]: the JSON-RPC shapes the wrapper looks at and the
//!   `herald/…` keys it adds to `_meta`;
//! - [`recorder`]: where envelopes go: the trace file, and a conduit
//!   (`--conduit`) that must acknowledge them first (herald-agent's);
//! - [`ledger`]: the session and the recorder behind one lock, and what
//!   the client is told about each recorded envelope;
//! - [`proxy`]: `herald mcp proxy` over stdio, the server a child or a URL;
//! - [`guard`]: `herald mcp guard`, replay defence facing a server;
//! - [`http`]: `herald mcp proxy --listen`, streamable HTTP downstream;
//! - [`upstream`]: the server, a child over stdio or a URL over
//!   streamable HTTP (rmcp's client transport);
//! - `stdio`: the stdio transport both are built on; `own_stdio`: this
//!   process's standard input and output, its client side.
#![forbid(unsafe_code)]

pub mod guard;
pub mod http;
pub mod jsonrpc;
pub mod ledger;
mod own_stdio;
pub mod pin;
pub mod proxy;
pub mod session;
mod stdio;
pub mod upstream;

pub use herald_agent::{recorder, trace_file};

pub use pin::{PinCheck, PinError, ToolSet};
pub use proxy::{ProxyConfig, ProxyError, run_stdio};
pub use recorder::{Conduit, SyncPolicy};
pub use session::{Handshake, Keys, Session, SignError};
pub use trace_file::{TraceFile, TraceFileError};
pub use upstream::Upstream;
