//! The envelopes of one MCP session, made as `herald mcp proxy` makes them
//! (docs/mcp.md *What is signed*), for the npm package's in-process client
//! wrapper: by the same code, herald-agent's `mcp` (built here without its
//! recorder, which needs tokio), so payloads, attestations, signers and
//! the parent chain are the proxy's and `herald verify` and `herald mcp
//! guard` read its trace as the proxy's. This module only carries JSON
//! text and keys across from JavaScript and errors back.
//!
//! - **Tool-side identity**: a fresh key per session, made and kept inside
//!   this instance (never exported), announced by a `birth` envelope (P7)
//!   that the sandbox key co-signs `tool_sandbox`.
//! - **Genesis** (after `initialize` and the complete `tools/list`): from
//!   the agent, payload `{mcp: "initialize", protocolVersion, client,
//!   server, tool_identity, tool_birth}`, attestations `tools` (P12, the
//!   tool names) and `mcp_tools` (`{sha256, tools}`: SHA-256 over P1 of
//!   `{name: definition}`).
//! - **Request**: from the agent, `to` the tool identity, payload
//!   `{mcp: "tools/call", name, arguments}`, `tools: [name]`.
//! - **Result**: a reply to its request from the tool identity, `to` the
//!   agent, payload `{mcp: "result", content, isError,
//!   structuredContent?}`, co-signed `tool_sandbox` (without `ts`,
//!   herald-agent's `sandbox`); `{mcp: "error", error}` for a JSON-RPC error.
//! - **Events** (a changed tool set, a cancelled call): from the agent.
//!
//! JSON crosses from JavaScript as text and goes through serde_json and
//! `herald_core::cbor::to_value`, the proxy's own path.

use herald_agent::mcp::{Handshake, Keys, Session, SignError, ToolSet};
use herald_core::{Envelope as CoreEnvelope, SigningKey as CoreKey};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::*;

use crate::envelope::{Envelope, now};
use crate::error::{argument, coded};
use crate::keys::SigningKey;

fn json(what: &str, text: &str) -> Result<serde_json::Value, JsValue> {
    serde_json::from_str(text).map_err(|e| argument(format!("{what}: not JSON: {e}")))
}

/// The tool set of a JSON array of tools (anything else: no tools).
fn tool_set(text: &str) -> Result<ToolSet, JsValue> {
    let list = json("tools", text)?;
    let list = list.as_array().map(Vec::as_slice).unwrap_or_default();
    ToolSet::of(list).map_err(|e| coded("tools", e.to_string()))
}

/// A signing failure as a coded `Error`: `unencodable` (a JSON value P1
/// cannot hold) or `build`.
fn sign_error(e: SignError) -> JsValue {
    let code = match e {
        SignError::Unencodable { .. } => "unencodable",
        _ => "build",
    };
    coded(code, e.to_string())
}

fn signed(r: Result<CoreEnvelope, SignError>) -> Result<Envelope, JsValue> {
    r.map(|inner| Envelope { inner }).map_err(sign_error)
}

fn id_of(bytes: &[u8]) -> Result<[u8; 32], JsValue> {
    bytes
        .try_into()
        .map_err(|_| argument("an envelope id is 32 bytes"))
}

/// One MCP session's trace: the keys it signs with (copies, inside this
/// instance), the tool identity, and the chain's latest envelope.
#[wasm_bindgen]
pub struct McpSession {
    session: Session,
    opening: Vec<CoreEnvelope>,
}

#[wasm_bindgen]
impl McpSession {
    /// Open a session: the tool identity's birth, then the genesis.
    /// `initialize_params` and `initialize_result` are the JSON of the
    /// client's `initialize` params and the server's result; `tools` the
    /// JSON array of every page's tools (`undefined`: a server without
    /// tools). Both opening envelopes are in `opening`, in trace order.
    pub fn open(
        agent: &SigningKey,
        sandbox: &SigningKey,
        initialize_params: &str,
        initialize_result: &str,
        tools: Option<String>,
    ) -> Result<McpSession, JsValue> {
        let handshake = Handshake {
            request: json("initialize params", initialize_params)?,
            result: json("initialize result", initialize_result)?,
        };
        let tools = match tools {
            Some(text) => tool_set(&text)?,
            None => ToolSet::empty(),
        };
        let keys = Keys {
            agent: CoreKey::from_seed(&agent.key.to_seed()),
            sandbox: CoreKey::from_seed(&sandbox.key.to_seed()),
        };
        let (session, opening) = Session::open(keys, &handshake, tools, now).map_err(sign_error)?;
        Ok(Self {
            session,
            opening: opening.to_vec(),
        })
    }

    /// The birth and the genesis, in the order they go into the trace.
    #[wasm_bindgen(getter)]
    pub fn opening(&self) -> Vec<Envelope> {
        self.opening
            .iter()
            .map(|e| Envelope { inner: e.clone() })
            .collect()
    }

    /// The trace id (the genesis id), lowercase hex.
    #[wasm_bindgen(getter, js_name = traceHex)]
    pub fn trace_hex(&self) -> String {
        herald_verify::hex(&self.session.trace())
    }

    /// The tool identity's sigil.
    #[wasm_bindgen(getter, js_name = toolSigil)]
    pub fn tool_sigil(&self) -> String {
        self.session.tool_sigil().to_string()
    }

    /// The pinned tool set's digest, lowercase hex.
    #[wasm_bindgen(getter, js_name = toolsDigest)]
    pub fn tools_digest(&self) -> String {
        self.session.tools().hex()
    }

    /// The request envelope of a `tools/call` (`arguments` the JSON as
    /// sent, `undefined` when absent).
    pub fn request(&mut self, name: &str, arguments: Option<String>) -> Result<Envelope, JsValue> {
        let arguments = arguments.map(|a| json("arguments", &a)).transpose()?;
        signed(self.session.request(name, arguments.as_ref()))
    }

    /// The result envelope answering the request `request` (its id):
    /// `result` is the JSON of the `CallToolResult` as received;
    /// `sandboxed` adds the `tool_sandbox` co-signature (false when the
    /// wrapper itself answered: the sandbox ran nothing).
    pub fn result(
        &mut self,
        request: &[u8],
        result: &str,
        sandboxed: bool,
    ) -> Result<Envelope, JsValue> {
        let request = id_of(request)?;
        let result = json("result", result)?;
        signed(self.session.result(request, &result, sandboxed))
    }

    /// The envelope answering `request` with a JSON-RPC error object.
    pub fn error(&mut self, request: &[u8], error: &str) -> Result<Envelope, JsValue> {
        let request = id_of(request)?;
        let error = json("error", error)?;
        signed(self.session.error(request, &error))
    }

    /// `notifications/cancelled` for the pending call `request`: an event
    /// (`requestId`, `reason`) whose parent is that request.
    pub fn cancelled(&mut self, request: &[u8], params: &str) -> Result<Envelope, JsValue> {
        let request = id_of(request)?;
        let params = json("params", params)?;
        signed(self.session.cancelled(request, &params))
    }

    /// A complete `tools/list` (JSON array of every page's tools) compared
    /// with the pinned set: `undefined` when it is the same, else the
    /// signed `tools/changed` event recording the pinned digest and the
    /// new set.
    #[wasm_bindgen(js_name = toolsChanged)]
    pub fn tools_changed(&mut self, tools: &str) -> Result<Option<Envelope>, JsValue> {
        let now_set = tool_set(tools)?;
        if now_set.sha256 == self.session.tools().sha256 {
            return Ok(None);
        }
        signed(self.session.tools_changed(&now_set)).map(Some)
    }
}
