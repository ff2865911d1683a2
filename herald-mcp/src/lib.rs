//! The HERALD MCP wrapper (docs/mcp.md; spec §5.1 *Translator*, §10 Phase 3).
//!
//! It sits between an MCP client (the model's host) and an MCP server (the
//! tools) and turns every `tools/call` and its result into signed HERALD
//! envelopes, one trace per MCP session, while everything else MCP carries
//! passes through untouched. The keys are held by the wrapper process only.
//!
//! Three entry points, one per way the CLI runs it, each item reached by
//! one path, at the crate root (the modules are private):
//!
//! - [`run_stdio`] with a [`ProxyConfig`]: `herald mcp proxy` over stdio,
//!   the server ([`Upstream`]) a child or a URL; the [`Keys`] it signs
//!   with, the trace file, and a [`Conduit`] that must acknowledge each
//!   envelope first ([`SyncPolicy`]; both herald-agent's);
//! - [`run_http`] with [`SessionLimits`]: `herald mcp proxy --listen`,
//!   streamable HTTP downstream, a session per client;
//! - [`run_guard`] with a [`GuardConfig`]: `herald mcp guard`, replay
//!   defence facing a server, each request envelope judged by the
//!   caller's live receiver ([`Receive`]).
//!
//! Inside: `pin` (the pin file of `--pin`; which envelope each MCP event
//! becomes is herald-agent's `mcp`, shared with the npm package), `jsonrpc` (the shapes the wrapper looks at,
//! the `herald/…` keys it adds to `_meta`), `ledger` (the session and the
//! recorder behind one lock), `proxy`, `guard`, `http`, `upstream`, and
//! `stdio`/`own_stdio`, the transport both are built on.
#![forbid(unsafe_code)]

mod guard;
mod http;
mod jsonrpc;
mod ledger;
mod own_stdio;
mod pin;
mod proxy;
mod stdio;
mod upstream;

// herald-agent's recorder, the internal modules' one path to it.
use herald_agent::{recorder, trace_file};

// `herald mcp proxy` (stdio) and its configuration.
pub use proxy::{ProxyConfig, ProxyError, run_stdio};
// The keys a session signs with: herald-agent's, part of [`ProxyConfig`].
pub use herald_agent::mcp::Keys;
pub use upstream::Upstream;
// Where envelopes go besides the trace file: herald-agent's, part of
// [`ProxyConfig`].
pub use herald_agent::recorder::{Conduit, SyncPolicy};
// `herald mcp proxy --listen`.
pub use http::{DEFAULT_MAX_SESSIONS, SessionLimits, run_http};
// `herald mcp guard`.
pub use guard::{DEFAULT_MAX_AGE, GuardConfig, Receive, run_guard};
