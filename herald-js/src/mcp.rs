//! The envelopes of one MCP session, made as `herald mcp proxy` makes them
//! (docs/mcp.md *What is signed*; herald-mcp's `session` and `pin`), for
//! the npm package's in-process client wrapper: same payloads, same
//! attestations, same signers and parent chain, so `herald verify` and
//! `herald mcp guard` read its trace as the proxy's.
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
//! [`herald_core::cbor::to_value`], the proxy's own path.

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value, to_value};
use herald_core::{
    Envelope as CoreEnvelope, EnvelopeBuilder, Kind, Scope, SigilForm, SigningKey as CoreKey,
};
use sha2::{Digest, Sha256};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::*;

use crate::envelope::{Envelope, now};
use crate::error::{argument, coded};
use crate::keys::SigningKey;

/// The P12 attestation naming the tools an envelope concerns.
const TOOLS: &str = "tools";
/// The attestation naming a session's tool set (herald-mcp `pin`).
const TOOLS_ATTESTATION: &str = "mcp_tools";

/// A server's tool set: the digest of `{name: definition}` and the names.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ToolSet {
    sha256: [u8; 32],
    names: Vec<String>,
}

impl ToolSet {
    fn of(tools: &[serde_json::Value]) -> Result<Self, String> {
        let mut map = Map::new();
        for (index, tool) in tools.iter().enumerate() {
            let name = tool
                .get("name")
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| {
                    format!("tools/list: tool {index} is not an object with a text name")
                })?;
            let value = to_value(tool)
                .map_err(|e| format!("tools/list: a definition cannot be signed: {e}"))?;
            if map.insert(name, value).is_some() {
                return Err(format!("tools/list: two tools are named {name:?}"));
            }
        }
        let names = map.iter().map(|(k, _)| k.to_owned()).collect();
        let sha256 = Sha256::digest(Value::Map(map).to_vec()).into();
        Ok(Self { sha256, names })
    }

    fn attestation(&self) -> Value {
        let mut m = Map::new();
        m.insert("sha256", Value::Bytes(self.sha256.to_vec()));
        m.insert("tools", names(&self.names));
        Value::Map(m)
    }
}

fn names<S: AsRef<str>>(names: &[S]) -> Value {
    Value::Array(names.iter().map(|n| Value::text(n.as_ref())).collect())
}

fn json(what: &str, text: &str) -> Result<serde_json::Value, JsValue> {
    serde_json::from_str(text).map_err(|e| argument(format!("{what}: not JSON: {e}")))
}

fn cbor(what: &str, v: &serde_json::Value) -> Result<Value, JsValue> {
    to_value(v).map_err(|e| {
        coded(
            "unencodable",
            format!("the {what} cannot be signed (P1): {e}"),
        )
    })
}

fn built(r: Result<CoreEnvelope, herald_core::BuildError>) -> Result<CoreEnvelope, JsValue> {
    r.map_err(|e| coded("build", format!("the envelope cannot be built: {e}")))
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
    agent: CoreKey,
    sandbox: CoreKey,
    tool: CoreKey,
    trace: [u8; 32],
    last: [u8; 32],
    tools: ToolSet,
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
        let request = json("initialize params", initialize_params)?;
        let result = json("initialize result", initialize_result)?;
        let tools = match tools {
            Some(text) => {
                let list = json("tools", &text)?;
                let list = list.as_array().map(Vec::as_slice).unwrap_or_default();
                ToolSet::of(list).map_err(|e| coded("tools", e))?
            }
            None => ToolSet::of(&[]).map_err(|e| coded("tools", e))?,
        };
        let ts = now();
        let tool = CoreKey::generate_os();
        let tool_sigil = tool.sigil(SigilForm::Default);
        let description = "herald-mcp tool-side identity of one MCP session, \
                           vouched for by the tool_sandbox co-signature";
        let mut birth_payload = Map::new();
        birth_payload.insert("mcp", Value::text("tool_identity"));
        if let Some(server) = result.get("serverInfo") {
            birth_payload.insert("server", cbor("serverInfo", server)?);
        }
        let birth = built(
            EnvelopeBuilder::genesis(ts)
                .kind(Kind::Birth)
                .attest(
                    "birth",
                    birth_attestation(&tool.public_key(), description, &[]),
                )
                .payload(Value::Map(birth_payload))
                .sign(&tool),
        )?;
        let sandbox = CoreKey::from_seed(&sandbox.key.to_seed());
        let birth = built(birth.cosign(&sandbox, Scope::ToolSandbox, None))?;

        let mut payload = Map::new();
        payload.insert("mcp", Value::text("initialize"));
        for (key, side, field) in [
            ("protocolVersion", &result, "protocolVersion"),
            ("client", &request, "clientInfo"),
            ("server", &result, "serverInfo"),
        ] {
            if let Some(v) = side.get(field) {
                payload.insert(key, cbor(field, v)?);
            }
        }
        payload.insert("tool_identity", Value::Text(tool_sigil.to_string()));
        payload.insert("tool_birth", Value::Bytes(birth.id().to_vec()));
        let agent = CoreKey::from_seed(&agent.key.to_seed());
        let genesis = built(
            EnvelopeBuilder::genesis(ts)
                .attest(TOOLS, names(&tools.names))
                .attest(TOOLS_ATTESTATION, tools.attestation())
                .payload(Value::Map(payload))
                .sign(&agent),
        )?;
        let id = genesis.id();
        Ok(Self {
            agent,
            sandbox,
            tool,
            trace: id,
            last: id,
            tools,
            opening: vec![birth, genesis],
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
        herald_verify::hex(&self.trace)
    }

    /// The tool identity's sigil.
    #[wasm_bindgen(getter, js_name = toolSigil)]
    pub fn tool_sigil(&self) -> String {
        self.tool.sigil(SigilForm::Default).to_string()
    }

    /// The pinned tool set's digest, lowercase hex.
    #[wasm_bindgen(getter, js_name = toolsDigest)]
    pub fn tools_digest(&self) -> String {
        herald_verify::hex(&self.tools.sha256)
    }

    /// The request envelope of a `tools/call` (`arguments` the JSON as
    /// sent, `undefined` when absent).
    pub fn request(&mut self, name: &str, arguments: Option<String>) -> Result<Envelope, JsValue> {
        let arguments = arguments.map(|a| json("arguments", &a)).transpose()?;
        let mut payload = Map::new();
        payload.insert("mcp", Value::text("tools/call"));
        payload.insert("name", Value::text(name));
        payload.insert(
            "arguments",
            arguments.map_or(Ok(Value::Null), |a| cbor("arguments", &a))?,
        );
        let envelope = built(
            EnvelopeBuilder::reply_to(self.last, self.trace, now())
                .to(self.tool.sigil(SigilForm::Default))
                .attest(TOOLS, names(&[name]))
                .payload(Value::Map(payload))
                .sign(&self.agent),
        )?;
        self.last = envelope.id();
        Ok(Envelope { inner: envelope })
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
    pub fn error(&mut self, request: &[u8], error: &str) -> Result<Envelope, JsValue> {
        let request = id_of(request)?;
        let error = json("error", error)?;
        let mut payload = Map::new();
        payload.insert("mcp", Value::text("error"));
        payload.insert("error", cbor("error", &error)?);
        self.answer(request, payload, true)
    }

    /// `notifications/cancelled` for the pending call `request`: an event
    /// (`requestId`, `reason`) whose parent is that request.
    pub fn cancelled(&mut self, request: &[u8], params: &str) -> Result<Envelope, JsValue> {
        let request = id_of(request)?;
        let params = json("params", params)?;
        let mut payload = Map::new();
        if let Some(v) = params.get("requestId").and_then(|v| to_value(v).ok()) {
            payload.insert("requestId", v);
        }
        if let Some(reason) = params.get("reason").and_then(serde_json::Value::as_str) {
            payload.insert("reason", Value::text(reason));
        }
        self.event("cancelled", payload, Some(request))
    }

    /// A complete `tools/list` (JSON array of every page's tools) compared
    /// with the pinned set: `undefined` when it is the same, else the
    /// signed `tools/changed` event recording the pinned digest and the
    /// new set.
    #[wasm_bindgen(js_name = toolsChanged)]
    pub fn tools_changed(&mut self, tools: &str) -> Result<Option<Envelope>, JsValue> {
        let list = json("tools", tools)?;
        let list = list.as_array().map(Vec::as_slice).unwrap_or_default();
        let now_set = ToolSet::of(list).map_err(|e| coded("tools", e))?;
        if now_set.sha256 == self.tools.sha256 {
            return Ok(None);
        }
        let mut payload = Map::new();
        payload.insert("pinned", Value::Bytes(self.tools.sha256.to_vec()));
        payload.insert(TOOLS_ATTESTATION, now_set.attestation());
        self.event("tools/changed", payload, None).map(Some)
    }
}

impl McpSession {
    fn answer(
        &mut self,
        request: [u8; 32],
        payload: Map,
        sandboxed: bool,
    ) -> Result<Envelope, JsValue> {
        let mut envelope = built(
            EnvelopeBuilder::reply_to(request, self.trace, now())
                .to(self.agent.sigil(SigilForm::Default))
                .payload(Value::Map(payload))
                .sign(&self.tool),
        )?;
        if sandboxed {
            envelope = built(envelope.cosign(&self.sandbox, Scope::ToolSandbox, None))?;
        }
        self.last = envelope.id();
        Ok(Envelope { inner: envelope })
    }

    fn event(
        &mut self,
        what: &str,
        mut payload: Map,
        parent: Option<[u8; 32]>,
    ) -> Result<Envelope, JsValue> {
        payload.insert("mcp", Value::text(what));
        let envelope = built(
            EnvelopeBuilder::reply_to(parent.unwrap_or(self.last), self.trace, now())
                .payload(Value::Map(payload))
                .sign(&self.agent),
        )?;
        self.last = envelope.id();
        Ok(Envelope { inner: envelope })
    }
}
