//! `herald mcp guard` (docs/mcp.md *Replay defence on the way in*): replay
//! defence on the way in. The same stdio plumbing as [`crate::proxy`],
//! facing a server: a `tools/call` is forwarded only when its
//! `params._meta["herald/envelope"]` holds a request envelope that
//!
//! 1. signs exactly this call: payload `{mcp: "tools/call", name,
//!    arguments}` equal, after P1, to the call's name and arguments
//!    (checked first, so an envelope attached to another call never uses up
//!    its nonce);
//! 2. is `valid` in live reception (P10, P11, P13): signed by a sigil of the
//!    guard's keyring, not `expired`, not `future_ts`, not a
//!    `replayed_nonce` (the cache persists across restarts), not `stale`;
//! 3. is fresh: its `ts` at most `max_age` seconds old (`stale` otherwise).
//!
//! Any other call is answered with an `isError` result naming the P11
//! codes (in the text and as `_meta["herald/reasons"]`), and never reaches
//! the server. A `tools/call` without a usable id (absent, `null`: a
//! notification a lenient server would still run) and a JSON-RPC batch
//! holding one are answered with a JSON-RPC error and never reach it
//! either (docs/mcp.md *Ids and batches*). Everything else passes through
//! untouched, both ways.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use data_encoding::BASE64;
use herald_core::cbor::{Value as CborValue, to_value};
use herald_core::{EnvelopeRef, Status};
use herald_verify::EnvelopeReport;
use serde_json::{Value, json};
use tokio::io::AsyncRead;

use crate::jsonrpc::{self, Kind, meta};
use crate::proxy::{ProxyError, TOOLS_CALL};
use crate::stdio::{self, Messages, Sender, send, send_json};
use crate::upstream::Upstream;

/// The `_meta` key of the reasons a refused call was refused for.
pub(crate) const REASONS: &str = "herald/reasons";

/// Default freshness bound, seconds: the P10 default skew.
pub const DEFAULT_MAX_AGE: u64 = 300;

/// Live reception of one request envelope (P10, P11, P13): its report
/// against the keyring of admitted sigils and the persistent replay cache.
/// The CLI gives herald-verify's `Receiver::receive` over its redb `Store`
/// (`--state`), so that this crate links no store of its own.
pub type Receive = Box<
    dyn Fn(&[u8]) -> Result<EnvelopeReport, Box<dyn std::error::Error + Send + Sync>> + Send + Sync,
>;

/// What `herald mcp guard` is given.
pub struct GuardConfig {
    /// The live receiver: the keyring of admitted sigils and the
    /// persistent replay cache.
    pub receive: Receive,
    /// Oldest a request envelope may be, seconds.
    pub max_age: u64,
    /// The server: a command started as a child, or a URL.
    pub upstream: Upstream,
}

impl std::fmt::Debug for GuardConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardConfig")
            .field("max_age", &self.max_age)
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

/// Run the guard until the server exits; the server's exit code.
pub fn run_guard(config: GuardConfig) -> Result<i32, ProxyError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProxyError::Io)?;
    let code = runtime.block_on(async move {
        let GuardConfig {
            receive,
            max_age,
            upstream,
        } = config;
        let guard = Arc::new(Guard { receive, max_age });
        stdio::serve(
            &upstream,
            crate::own_stdio::stdin(),
            crate::own_stdio::stdout(),
            move |stdin, up, down| async move { guard.client_to_server(stdin, &up, &down).await },
            |stdout, _up, down| async move { stdio::forward(stdout, &down).await },
        )
        .await
    });
    // As `run_stdio`: no wait for the blocking read of standard input.
    runtime.shutdown_background();
    code
}

struct Guard {
    receive: Receive,
    max_age: u64,
}

impl Guard {
    async fn client_to_server<R: AsyncRead + Unpin>(
        &self,
        input: R,
        up: &Sender,
        down: &Sender,
    ) -> std::io::Result<()> {
        let mut messages = Messages::new(input);
        while let Some(message) = messages.next(up).await? {
            let line = messages.line();
            if crate::proxy::refused_unroutable(&message, down) {
                continue;
            }
            let checked = match jsonrpc::classify(&message) {
                Kind::Request {
                    method: TOOLS_CALL, ..
                } => Some(self.admit(&message)),
                _ => None,
            };
            match checked {
                None | Some(Ok(())) => send(up, line.to_vec()),
                Some(Err(reasons)) => {
                    let id = message.get("id").cloned().unwrap_or_default();
                    send_json(down, &refusal(&id, &reasons));
                }
            }
        }
        Ok(())
    }

    /// Whether this `tools/call` may pass; else its reasons `(code, detail)`.
    fn admit(&self, message: &Value) -> Result<(), Vec<(&'static str, String)>> {
        let one = |code: &'static str, detail: &str| Err(vec![(code, detail.to_owned())]);
        let Some(encoded) = message
            .pointer("/params/_meta")
            .and_then(|m| m.get(meta::ENVELOPE))
            .and_then(Value::as_str)
        else {
            return one(
                "origin_missing",
                "no signed request envelope in _meta (herald/envelope)",
            );
        };
        let Ok(bytes) = BASE64.decode(encoded.as_bytes()) else {
            return one("malformed", "herald/envelope is not base64");
        };
        let view = match EnvelopeRef::decode(&bytes) {
            Ok(view) => view,
            Err(e) => return one("malformed", &e.to_string()),
        };
        if let Err(detail) = signs_this_call(&view, message) {
            return one("call_mismatch", &detail);
        }
        let now = now();
        let report = (self.receive)(&bytes)
            .map_err(|e| vec![("malformed", format!("replay cache: {e}"))])?;
        let mut reasons: Vec<(&'static str, String)> = report
            .reasons
            .iter()
            .filter(|r| report.status() != Status::Valid || !r.code.is_warning())
            .map(|r| (r.code.name(), r.detail.clone()))
            .collect();
        if report.status() == Status::Valid
            && reasons.is_empty()
            && now.saturating_sub(view.ts()) > self.max_age
        {
            reasons.push((
                "stale",
                format!(
                    "signed {} s ago, more than {} s",
                    now - view.ts(),
                    self.max_age
                ),
            ));
        }
        if report.status() == Status::Valid && reasons.is_empty() {
            Ok(())
        } else {
            Err(reasons)
        }
    }
}

/// Whether the envelope's payload is `{mcp: "tools/call", name, arguments}`
/// of this very call (compared as P1 values).
fn signs_this_call(view: &EnvelopeRef<'_>, message: &Value) -> Result<(), String> {
    let payload = CborValue::from(&view.payload());
    let map = payload.as_map().ok_or("the payload is not a map")?;
    if map.get("mcp").and_then(CborValue::as_text) != Some("tools/call") {
        return Err("the envelope is not a tools/call request".into());
    }
    let name = message.pointer("/params/name").and_then(Value::as_str);
    if map.get("name").and_then(CborValue::as_text) != name {
        return Err("the envelope signs another tool name".into());
    }
    let arguments = match message.pointer("/params/arguments") {
        Some(a) => to_value(a).map_err(|e| e.to_string())?,
        None => CborValue::Null,
    };
    if map.get("arguments") != Some(&arguments) {
        return Err("the envelope signs other arguments".into());
    }
    Ok(())
}

/// The `isError` answer to a refused call.
fn refusal(id: &Value, reasons: &[(&'static str, String)]) -> Value {
    let codes: Vec<&str> = reasons.iter().map(|(c, _)| *c).collect();
    let details: Vec<String> = reasons.iter().map(|(c, d)| format!("{c}: {d}")).collect();
    let mut result = jsonrpc::tool_error(&format!(
        "herald-mcp guard: refused: {}",
        details.join("; ")
    ));
    if let Some(obj) = result.as_object_mut() {
        jsonrpc::with_meta(obj, |m| {
            m.insert(REASONS.into(), json!(codes));
        });
    }
    jsonrpc::response(id, result)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
