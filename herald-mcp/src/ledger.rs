//! The session's ledger: the keys, the [`Session`] and the [`Recorder`]
//! behind one lock, so that envelopes are signed and recorded one at a
//! time, in the order of the parent chain, and every message the client
//! gets about one is built from what was recorded.

use std::path::PathBuf;

use data_encoding::HEXLOWER;
use herald_core::Envelope;
use serde_json::{Map, Value};

use crate::jsonrpc::{self, meta};
use crate::pin::{PinCheck, check_pin_file};
use crate::recorder::{Before, RecordError, Recorder};
use herald_agent::mcp::{Handshake, Keys, Session, SignError, ToolSet};

/// What the proxy signs with and records into.
#[derive(Debug)]
pub(crate) struct Ledger {
    keys: Option<Keys>,
    session: Option<Session>,
    recorder: Recorder,
    pin: Option<PathBuf>,
    /// Why `tools/call` is refused (the tool set is not the pinned one).
    refuse: Option<String>,
}

impl Ledger {
    /// A ledger that opens its session with `keys`.
    pub(crate) fn new(keys: Keys, recorder: Recorder, pin: Option<PathBuf>) -> Self {
        Self {
            keys: Some(keys),
            session: None,
            recorder,
            pin,
            refuse: None,
        }
    }

    /// Whether the session was opened (it can be at most once).
    pub(crate) fn opened(&self) -> bool {
        self.keys.is_none()
    }

    fn trace(&self) -> [u8; 32] {
        self.session.as_ref().map_or([0; 32], Session::trace)
    }

    /// Sign with the session and record, `before` forwarding or releasing
    /// something: the envelope as recorded, or the text telling the client
    /// why not (`filed`: whether the trace file holds the signed envelope
    /// even so).
    async fn record(
        &mut self,
        before: Before,
        make: impl FnOnce(&mut Session) -> Result<Envelope, SignError>,
    ) -> Result<Envelope, Unrecorded> {
        let Some(session) = self.session.as_mut() else {
            return Err(Unrecorded::new(
                "herald-mcp: the MCP session could not be opened",
                false,
            ));
        };
        let envelope =
            make(session).map_err(|e| Unrecorded::new(format!("herald-mcp: {e}"), false))?;
        match self.recorder.record(&envelope, before).await {
            Ok(None) => Ok(envelope),
            Ok(Some(bytes)) => Ok(Envelope::from_bytes(bytes).unwrap_or(envelope)),
            Err(e @ RecordError::File(_)) => {
                Err(Unrecorded::new(format!("herald-mcp: {e}"), false))
            }
            Err(e) => Err(Unrecorded::new(format!("herald-mcp: {e}"), true)),
        }
    }

    /// Open the session: the tool identity's birth and the genesis
    /// recorded, then the pin file checked. A failure leaves no session
    /// (calls are answered with the reason) and is said on standard error.
    pub(crate) async fn open(&mut self, handshake: &Handshake, tools: Result<ToolSet, String>) {
        let Some(keys) = self.keys.take() else {
            return;
        };
        let tools = tools.unwrap_or_else(|e| {
            let text = format!("herald-mcp: cannot pin the tool set: {e}");
            tracing::warn!("{text}");
            self.refuse = Some(text);
            ToolSet::empty()
        });
        let (session, envelopes) = match Session::open(keys, handshake, tools, now) {
            Ok(opened) => opened,
            Err(e) => return tracing::error!("herald-mcp: cannot open the session: {e}"),
        };
        for envelope in &envelopes {
            match self.recorder.record(envelope, Before::Forward).await {
                Ok(_) => {}
                Err(e @ RecordError::File(_)) => return tracing::error!("herald-mcp: {e}"),
                Err(e) => {
                    tracing::warn!("herald-mcp: {e}");
                    self.refuse = Some(format!("herald-mcp: the session's genesis: {e}"));
                }
            }
        }
        if let Some(path) = &self.pin {
            match check_pin_file(path, session.tools()) {
                Ok(PinCheck::Matches | PinCheck::Pinned) => {}
                Ok(PinCheck::Changed { pinned }) => {
                    self.refuse = Some(format!(
                        "herald-mcp: refused: the server's tool set (sha256 {}) is not the one \
                         pinned in {} (sha256 {pinned})",
                        session.tools().hex(),
                        path.display()
                    ));
                }
                Err(e) => self.refuse = Some(format!("herald-mcp: --pin: {e}")),
            }
        }
        self.session = Some(session);
    }

    /// A `tools/call`: `Ok(params)` stamped with the request envelope to
    /// forward and the request id to wait for, or `Err(response)` to
    /// answer the client with at once.
    pub(crate) async fn call(&mut self, message: &mut Value) -> Result<[u8; 32], Value> {
        let id = message.get("id").cloned().unwrap_or_default();
        let name = message
            .pointer("/params/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = message.pointer("/params/arguments");
        let request = match self
            .record(Before::Forward, |s| s.request(name, arguments))
            .await
        {
            Ok(request) => request,
            Err(no) if no.filed => {
                // Signed and filed, but the conduit did not take it: the
                // call is not made, and its (wrapper-made) answer says why,
                // once the request it answers is durable.
                let text = match self.recorder.sync() {
                    Ok(()) => no.text,
                    Err(e) => format!("{}; herald-mcp: {e}", no.text),
                };
                return Err(self.refusal(text, &id, None).await);
            }
            Err(no) => return Err(jsonrpc::response(&id, jsonrpc::tool_error(&no.text))),
        };
        if let Some(reason) = self.refuse.clone() {
            return Err(self.refusal(reason, &id, Some(request.id())).await);
        }
        let trace = self.trace();
        if let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) {
            jsonrpc::with_meta(params, |m| jsonrpc::stamp(m, &request, &trace));
        }
        Ok(request.id())
    }

    /// An `isError` answer made by the wrapper; when `request` is given it
    /// is signed as the call's result, without the sandbox's co-signature
    /// (the sandbox ran nothing).
    async fn refusal(&mut self, reason: String, id: &Value, request: Option<[u8; 32]>) -> Value {
        let result = jsonrpc::tool_error(&reason);
        let mut answer = jsonrpc::response(id, result.clone());
        let Some(request) = request else {
            return answer;
        };
        let trace = self.trace();
        if let Ok(envelope) = self
            .record(Before::Release, |s| s.result(request, &result, false))
            .await
            && let Some(result) = answer.get_mut("result").and_then(Value::as_object_mut)
        {
            stamp_result(result, &envelope, &request, &trace);
        }
        answer
    }

    /// The server's answer to a signed call, signed and stamped; if it
    /// cannot be recorded it is withheld and an `isError` result says why.
    pub(crate) async fn answer(&mut self, request: [u8; 32], mut message: Value) -> Value {
        let id = message.get("id").cloned().unwrap_or_default();
        // Signed from the message as received (borrowed: a result may be
        // megabytes of content).
        let signed = match (message.get("result"), message.get("error")) {
            (Some(result), _) => {
                self.record(Before::Release, |s| s.result(request, result, true))
                    .await
            }
            (None, error) => {
                let error = error.unwrap_or(&Value::Null);
                self.record(Before::Release, |s| s.error(request, error))
                    .await
            }
        };
        match signed {
            Ok(envelope) => {
                let trace = self.trace();
                if let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) {
                    stamp_result(result, &envelope, &request, &trace);
                }
                message
            }
            Err(no) => jsonrpc::response(
                &id,
                jsonrpc::tool_error(&format!("{}; the tool's result is withheld", no.text)),
            ),
        }
    }

    /// `notifications/cancelled` for a pending call: an event in the trace.
    pub(crate) async fn cancelled(&mut self, request: [u8; 32], params: &Value) {
        if let Err(no) = self
            .record(Before::Forward, |s| s.cancelled(request, params))
            .await
        {
            tracing::warn!("{} (a cancellation)", no.text);
        }
    }

    /// Compare a complete tool set with the pinned one: a warning for the
    /// client (and a signed event) when it changed; with `--pin`, calls
    /// are refused from then on.
    pub(crate) async fn changed(&mut self, set: Result<ToolSet, String>) -> Option<String> {
        let set = match set {
            Ok(set) => set,
            Err(e) => return Some(format!("herald-mcp: cannot check the tool set: {e}")),
        };
        let pinned = self.session.as_ref()?.tools().clone();
        if pinned.sha256 == set.sha256 {
            return None;
        }
        let mut warning = format!(
            "herald-mcp: the server's tool set changed since the session began \
             (pinned sha256 {}, now {})",
            pinned.hex(),
            set.hex()
        );
        match self
            .record(Before::Release, |s| s.tools_changed(&set))
            .await
        {
            Ok(event) => {
                warning.push_str("; recorded as envelope ");
                warning.push_str(&HEXLOWER.encode(&event.id()));
            }
            Err(no) => {
                warning.push_str("; ");
                warning.push_str(&no.text);
            }
        }
        if self.pin.is_some() && self.refuse.is_none() {
            self.refuse = Some(format!("{warning}; tools/call is refused (--pin)"));
        }
        Some(warning)
    }

    /// A `tools/list` answer for the client, with a `herald/warning` in
    /// `result._meta` when the list is complete and differs from the pin.
    pub(crate) async fn listed(&mut self, message: &mut Value) -> Option<String> {
        let result = message.get_mut("result").and_then(Value::as_object_mut)?;
        if !result.get("nextCursor").is_none_or(Value::is_null) {
            return None;
        }
        let tools = result
            .get("tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let warning = self
            .changed(ToolSet::of(&tools).map_err(|e| e.to_string()))
            .await?;
        if let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) {
            jsonrpc::with_meta(result, |m| {
                m.insert(meta::WARNING.into(), warning.clone().into());
            });
        }
        Some(warning)
    }
}

/// Why an envelope is not recorded as asked.
struct Unrecorded {
    text: String,
    filed: bool,
}

impl Unrecorded {
    fn new(text: impl Into<String>, filed: bool) -> Self {
        Self {
            text: text.into(),
            filed,
        }
    }
}

fn stamp_result(
    result: &mut Map<String, Value>,
    envelope: &Envelope,
    request: &[u8; 32],
    trace: &[u8; 32],
) {
    jsonrpc::with_meta(result, |m| {
        jsonrpc::stamp(m, envelope, trace);
        m.insert(meta::REQUEST.into(), HEXLOWER.encode(request).into());
    });
}

/// A JSON-RPC error for a `tools/call` the wrapper cannot read.
pub(crate) fn invalid_call(id: &Value) -> Value {
    jsonrpc::error(
        id,
        jsonrpc::INVALID_PARAMS,
        "herald-mcp: tools/call without a text params.name",
    )
}

/// The clock of the session's envelopes, Unix seconds.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::recorder::SyncPolicy;
    use crate::trace_file::TraceFile;
    use data_encoding::BASE64;
    use herald_core::SigningKey;
    use serde_json::json;

    /// A call and its answer through a ledger: (file length, durable
    /// length) once the call may be forwarded and once its result may be
    /// released, and whether the file held the forwarded request then.
    async fn call_and_answer(sync: SyncPolicy) -> [(u64, u64); 2] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.herald");
        let recorder = Recorder::new(TraceFile::open(&path).unwrap(), None, sync);
        let keys = Keys {
            agent: SigningKey::generate_os(),
            sandbox: SigningKey::generate_os(),
        };
        let mut ledger = Ledger::new(keys, recorder.clone(), None);
        ledger
            .open(&Handshake::default(), Ok(ToolSet::empty()))
            .await;
        let mut call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "echo", "arguments": {"message": "hi"}}});
        let request = ledger.call(&mut call).await.unwrap();
        let forwarded = call
            .pointer("/params/_meta/herald~1envelope")
            .and_then(Value::as_str)
            .unwrap();
        let forwarded = BASE64.decode(forwarded.as_bytes()).unwrap();
        // The request the server gets is the file's last envelope.
        assert!(std::fs::read(&path).unwrap().ends_with(&forwarded));
        let at_forward = recorder.lengths();
        let answer = json!({"jsonrpc": "2.0", "id": 1,
                            "result": {"content": [{"type": "text", "text": "hi"}]}});
        let released = ledger.answer(request, answer).await;
        let result = released
            .pointer("/result/_meta/herald~1envelope")
            .and_then(Value::as_str)
            .unwrap();
        let result = BASE64.decode(result.as_bytes()).unwrap();
        assert!(std::fs::read(&path).unwrap().ends_with(&result));
        [at_forward, recorder.lengths()]
    }

    #[tokio::test]
    async fn a_result_is_released_only_once_it_and_its_request_are_durable() {
        let [(forward_len, forward_durable), (len, durable)] =
            call_and_answer(SyncPolicy::Release).await;
        // Forwarded once written (the genesis and the request), synced with
        // the result: one fdatasync per call.
        assert!(forward_durable < forward_len);
        assert!(len > forward_len);
        assert_eq!(durable, len);
    }

    #[tokio::test]
    async fn with_sync_each_a_call_is_forwarded_only_once_its_request_is_durable() {
        let [(forward_len, forward_durable), (len, durable)] =
            call_and_answer(SyncPolicy::Each).await;
        assert_eq!((forward_durable, durable), (forward_len, len));
    }
}
