//! The signing rules of an MCP session (docs/mcp.md *What is signed*):
//! which envelope each MCP event becomes. One MCP session is one trace.
//! `herald mcp proxy` (herald-mcp) and the npm package's in-process client
//! wrapper (herald-js, on wasm32 without tokio) both sign through this
//! module, so their traces are alike for `herald verify` and `herald mcp
//! guard`.
//!
//! - **Tool-side identity.** The result of a tool is signed by an identity
//!   of the tool side, and co-signed `tool_sandbox` (P6) by the sandbox key.
//!   The sandbox key cannot be that identity too (the same signer twice is
//!   `duplicate_signer`, spec §3.4), so each session draws a fresh key for
//!   it, announced by a `birth` envelope (P7, its own genesis) that the
//!   sandbox key co-signs `tool_sandbox`: a verifier learns the key from the
//!   birth (P7: self-certifying) and trusts it through the sandbox key. The
//!   secret exists only in this process's memory and is wiped with it.
//! - **Genesis**, made at `initialize`: from the agent's sigil, payload
//!   `{mcp: "initialize", protocolVersion, client, server, tool_identity,
//!   tool_birth}`, with a `tools` attestation (P12, the tool names) and an
//!   `mcp_tools` attestation (the pinned digest, [`ToolSet`]).
//! - **Request**: from the agent, `to` the tool identity, payload
//!   `{mcp: "tools/call", name, arguments}`, `tools: [name]` (P12).
//! - **Result**: a reply to its request from the tool identity, payload
//!   `{mcp: "result", content, isError}` (and `structuredContent` when the
//!   server sent one), co-signed `tool_sandbox` (without `ts`, [`sandbox`]);
//!   `{mcp: "error", error}` for a JSON-RPC error.
//! - **Events** (a changed tool set, a cancelled call, a refused call): from
//!   the agent, as replies in the same chain.
//!
//! Every envelope's parent is the session's latest envelope (a result's is
//! its request), so the parent chain runs through the whole session.
//!
//! JSON values become P1 values by [`herald_core::cbor::to_value`]; the
//! clock is the caller's (the system's, or JavaScript's `Date` on wasm32).

mod tools;

pub use tools::{TOOLS_ATTESTATION, ToolSet, ToolSetError};

use core::fmt;

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value, to_value};
use herald_core::{BuildError, Envelope, EnvelopeBuilder, Kind, Sigil, SigilForm, SigningKey};

use crate::sandbox;
use tools::names;

/// The P12 attestation naming the tools an envelope concerns.
const TOOLS: &str = "tools";

/// Why an envelope could not be made.
#[derive(Debug)]
#[non_exhaustive]
pub enum SignError {
    /// A JSON value (arguments, content) holds what P1 cannot encode.
    Unencodable {
        /// Which part of the message.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The builder refused the envelope (too large, too deep).
    Build(BuildError),
}

impl fmt::Display for SignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unencodable { what, reason } => {
                write!(f, "the {what} cannot be signed (P1): {reason}")
            }
            Self::Build(e) => write!(f, "the envelope cannot be built: {e}"),
        }
    }
}

impl std::error::Error for SignError {}

impl From<BuildError> for SignError {
    fn from(e: BuildError) -> Self {
        Self::Build(e)
    }
}

/// A JSON value as a P1 value.
fn cbor(what: &'static str, json: &serde_json::Value) -> Result<Value, SignError> {
    to_value(json).map_err(|e| SignError::Unencodable {
        what,
        reason: e.to_string(),
    })
}

/// What the genesis records of the `initialize` exchange.
#[derive(Clone, Debug, Default)]
pub struct Handshake {
    /// The client's `initialize` params: `protocolVersion`, `clientInfo`.
    pub request: serde_json::Value,
    /// The server's `initialize` result: `protocolVersion`, `serverInfo`.
    pub result: serde_json::Value,
}

/// The keys a session signs with.
pub struct Keys {
    /// The agent's key (requests, events, the genesis).
    pub agent: SigningKey,
    /// The sandbox key (`tool_sandbox` co-signatures).
    pub sandbox: SigningKey,
}

impl Keys {
    /// The same keys again, for another session (streamable HTTP serves
    /// several); the seeds pass through wiped buffers only.
    #[must_use]
    pub fn duplicate(&self) -> Self {
        Self {
            agent: SigningKey::from_seed(&self.agent.to_seed()),
            sandbox: SigningKey::from_seed(&self.sandbox.to_seed()),
        }
    }
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keys")
            .field("agent", &self.agent.sigil(SigilForm::Default))
            .field("sandbox", &self.sandbox.sigil(SigilForm::Default))
            .finish()
    }
}

/// One MCP session's trace.
pub struct Session {
    keys: Keys,
    /// Unix seconds, each envelope's `ts`.
    clock: fn() -> u64,
    tool: SigningKey,
    trace: [u8; 32],
    last: [u8; 32],
    tools: ToolSet,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("keys", &self.keys)
            .field("tool", &self.tool.sigil(SigilForm::Default))
            .field("trace", &data_encoding::HEXLOWER.encode(&self.trace))
            .finish()
    }
}

impl Session {
    /// Start a session: the tool identity's birth, then the genesis. Both
    /// are returned, in the order they go into the trace file. `clock`
    /// gives each envelope's `ts` (Unix seconds).
    pub fn open(
        keys: Keys,
        handshake: &Handshake,
        tools: ToolSet,
        clock: fn() -> u64,
    ) -> Result<(Self, [Envelope; 2]), SignError> {
        let ts = clock();
        let tool = SigningKey::generate_os();
        let tool_sigil = tool.sigil(SigilForm::Default);
        let description = "herald-mcp tool-side identity of one MCP session, \
                           vouched for by the tool_sandbox co-signature";
        let mut birth_payload = Map::new();
        birth_payload.insert("mcp", Value::text("tool_identity"));
        if let Some(server) = handshake.result.get("serverInfo") {
            birth_payload.insert("server", cbor("serverInfo", server)?);
        }
        let birth = EnvelopeBuilder::genesis(ts)
            .kind(Kind::Birth)
            .attest(
                "birth",
                birth_attestation(&tool.public_key(), description, &[]),
            )
            .payload(Value::Map(birth_payload))
            .sign(&tool)?;
        let birth = sandbox::cosign(&birth, &keys.sandbox)?;

        let mut payload = Map::new();
        payload.insert("mcp", Value::text("initialize"));
        for (key, side, field) in [
            ("protocolVersion", &handshake.result, "protocolVersion"),
            ("client", &handshake.request, "clientInfo"),
            ("server", &handshake.result, "serverInfo"),
        ] {
            if let Some(v) = side.get(field) {
                payload.insert(key, cbor(field, v)?);
            }
        }
        payload.insert("tool_identity", Value::Text(tool_sigil.to_string()));
        payload.insert("tool_birth", Value::Bytes(birth.id().to_vec()));
        let genesis = EnvelopeBuilder::genesis(ts)
            .attest(TOOLS, names(&tools.names))
            .attest(TOOLS_ATTESTATION, tools.attestation())
            .payload(Value::Map(payload))
            .sign(&keys.agent)?;
        let id = genesis.id();
        let session = Self {
            keys,
            clock,
            tool,
            trace: id,
            last: id,
            tools,
        };
        Ok((session, [birth, genesis]))
    }

    /// The trace id (the genesis id).
    pub fn trace(&self) -> [u8; 32] {
        self.trace
    }

    /// The tool set pinned on the genesis.
    pub fn tools(&self) -> &ToolSet {
        &self.tools
    }

    /// The sigil of the tool-side identity.
    pub fn tool_sigil(&self) -> Sigil {
        self.tool.sigil(SigilForm::Default)
    }

    /// The request envelope of a `tools/call` (`arguments` as received,
    /// `None` when absent).
    pub fn request(
        &mut self,
        name: &str,
        arguments: Option<&serde_json::Value>,
    ) -> Result<Envelope, SignError> {
        let mut payload = Map::new();
        payload.insert("mcp", Value::text("tools/call"));
        payload.insert("name", Value::text(name));
        payload.insert(
            "arguments",
            arguments.map_or(Ok(Value::Null), |a| cbor("arguments", a))?,
        );
        let envelope = EnvelopeBuilder::reply_to(self.last, self.trace, (self.clock)())
            .to(self.tool_sigil())
            .attest(TOOLS, names(&[name]))
            .payload(Value::Map(payload))
            .sign(&self.keys.agent)?;
        self.last = envelope.id();
        Ok(envelope)
    }

    /// The result envelope answering `request`: `result` is the
    /// `CallToolResult` object as received. `sandboxed` adds the
    /// `tool_sandbox` co-signature (false when the wrapper itself answered,
    /// as for a refused call: the sandbox ran nothing).
    pub fn result(
        &mut self,
        request: [u8; 32],
        result: &serde_json::Value,
        sandboxed: bool,
    ) -> Result<Envelope, SignError> {
        let mut payload = Map::new();
        payload.insert("mcp", Value::text("result"));
        let content = result
            .get("content")
            .map_or(Ok(Value::Array(Vec::new())), |c| cbor("content", c))?;
        payload.insert("content", content);
        let is_error = result
            .get("isError")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        payload.insert("isError", Value::Bool(is_error));
        if let Some(s) = result.get("structuredContent") {
            payload.insert("structuredContent", cbor("structuredContent", s)?);
        }
        self.answer(request, payload, sandboxed)
    }

    /// The envelope answering `request` with a JSON-RPC error object.
    pub fn error(
        &mut self,
        request: [u8; 32],
        error: &serde_json::Value,
    ) -> Result<Envelope, SignError> {
        let mut payload = Map::new();
        payload.insert("mcp", Value::text("error"));
        payload.insert("error", cbor("error", error)?);
        self.answer(request, payload, true)
    }

    fn answer(
        &mut self,
        request: [u8; 32],
        payload: Map,
        sandboxed: bool,
    ) -> Result<Envelope, SignError> {
        let mut envelope = EnvelopeBuilder::reply_to(request, self.trace, (self.clock)())
            .to(self.keys.agent.sigil(SigilForm::Default))
            .payload(Value::Map(payload))
            .sign(&self.tool)?;
        if sandboxed {
            envelope = sandbox::cosign(&envelope, &self.keys.sandbox)?;
        }
        self.last = envelope.id();
        Ok(envelope)
    }

    /// An event of the session from the agent: `payload` gets `mcp: what`.
    /// `parent` defaults to the latest envelope.
    pub fn event(
        &mut self,
        what: &str,
        mut payload: Map,
        parent: Option<[u8; 32]>,
    ) -> Result<Envelope, SignError> {
        payload.insert("mcp", Value::text(what));
        let envelope =
            EnvelopeBuilder::reply_to(parent.unwrap_or(self.last), self.trace, (self.clock)())
                .payload(Value::Map(payload))
                .sign(&self.keys.agent)?;
        self.last = envelope.id();
        Ok(envelope)
    }

    /// A changed tool set: an event recording its digest and names.
    pub fn tools_changed(&mut self, now_set: &ToolSet) -> Result<Envelope, SignError> {
        let mut payload = Map::new();
        payload.insert("pinned", Value::Bytes(self.tools.sha256.to_vec()));
        payload.insert(TOOLS_ATTESTATION, now_set.attestation());
        self.event("tools/changed", payload, None)
    }

    /// `notifications/cancelled` for the pending call `request` (`params`
    /// as received): an event (`requestId`, `reason`) whose parent is that
    /// request.
    pub fn cancelled(
        &mut self,
        request: [u8; 32],
        params: &serde_json::Value,
    ) -> Result<Envelope, SignError> {
        let mut payload = Map::new();
        if let Some(v) = params.get("requestId").and_then(|v| to_value(v).ok()) {
            payload.insert("requestId", v);
        }
        if let Some(reason) = params.get("reason").and_then(serde_json::Value::as_str) {
            payload.insert("reason", Value::text(reason));
        }
        self.event("cancelled", payload, Some(request))
    }
}
