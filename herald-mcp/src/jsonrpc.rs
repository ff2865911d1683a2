//! JSON-RPC 2.0 messages as the wrapper sees them: only the shape needed to
//! tell which ones it signs. Everything else is forwarded as received.

use data_encoding::{BASE64, HEXLOWER};
use herald_core::Envelope;
use serde_json::{Map, Value};

/// The `_meta` keys the wrapper adds (docs/mcp.md *What is signed*):
/// namespaced, so a client that does not know HERALD ignores them.
pub(crate) mod meta {
    /// This message's envelope id, hex.
    pub(crate) const ID: &str = "herald/id";
    /// The session's trace id, hex.
    pub(crate) const TRACE: &str = "herald/trace";
    /// On a result: the id of the request envelope it answers, hex.
    pub(crate) const REQUEST: &str = "herald/request";
    /// The envelope itself: its P1 bytes in base64 (RFC 4648 §4, padded).
    pub(crate) const ENVELOPE: &str = "herald/envelope";
    /// A warning for the client (a changed tool set).
    pub(crate) const WARNING: &str = "herald/warning";
}

/// JSON-RPC "invalid request".
pub(crate) const INVALID_REQUEST: i64 = -32600;

/// JSON-RPC "invalid params".
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// What a message is, by its JSON-RPC shape.
#[derive(Debug, PartialEq)]
pub(crate) enum Kind<'a> {
    /// A request: `id` and `method`.
    Request {
        /// Its id as JSON text (so `1` and `"1"` stay apart).
        id: String,
        /// The method.
        method: &'a str,
    },
    /// A notification: `method`, no `id`.
    Notification {
        /// The method.
        method: &'a str,
    },
    /// A response (`result` or `error`) to the request with this id.
    Response {
        /// Its id as JSON text.
        id: String,
    },
    /// A JSON-RPC batch (an array).
    Batch,
    /// Anything else (forwarded as it is).
    Other,
}

/// The id as JSON text, the key requests and responses are matched by.
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

/// Classify a parsed message.
pub(crate) fn classify(message: &Value) -> Kind<'_> {
    let Some(obj) = message.as_object() else {
        return if message.is_array() {
            Kind::Batch
        } else {
            Kind::Other
        };
    };
    let method = obj.get("method").and_then(Value::as_str);
    match (obj.get("id"), method) {
        (Some(id), Some(method)) if !id.is_null() => Kind::Request {
            id: id_key(id),
            method,
        },
        (None, Some(method)) => Kind::Notification { method },
        (Some(id), None) if obj.contains_key("result") || obj.contains_key("error") => {
            Kind::Response { id: id_key(id) }
        }
        _ => Kind::Other,
    }
}

/// Whether `id` can name a request: a string or an integer (MCP's
/// `RequestId`; JSON-RPC 2.0 §4: `null` and fractions are not for
/// requests). A signed call is matched to its answer by it.
pub(crate) fn usable_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// Whether `message` is a call of `method` without a usable id (absent,
/// `null`, or another type): a notification or a malformed request that
/// names a method the wrapper signs or checks. It is never forwarded.
pub(crate) fn without_usable_id(message: &Value, method: &str) -> bool {
    message.get("method").and_then(Value::as_str) == Some(method)
        && !message.get("id").is_some_and(usable_id)
}

/// The answer to a call without a usable id: an "invalid request" error
/// with id `null` (JSON-RPC 2.0 §5: the id could not be determined).
pub(crate) fn no_usable_id(method: &str) -> Value {
    error(
        &Value::Null,
        INVALID_REQUEST,
        &format!(
            "herald-mcp: a {method} needs an id (a string or an integer): it is signed and \
             answered by it; this one was not forwarded"
        ),
    )
}

/// The answer to a batch the wrapper refuses whole (nothing of it is
/// forwarded): an "invalid request" error per request in it, with its id
/// (`null` for a signed method without a usable id). Empty when the batch
/// holds only notifications of other methods (JSON-RPC 2.0 §6: nothing is
/// returned for those).
pub(crate) fn batch_refusal(batch: &Value, signed: &[&str], text: &str) -> Vec<Value> {
    let items = batch.as_array().map_or(&[][..], Vec::as_slice);
    items
        .iter()
        .filter_map(|m| {
            let method = m.get("method").and_then(Value::as_str)?;
            match m.get("id") {
                Some(id) if usable_id(id) => Some(error(id, INVALID_REQUEST, text)),
                _ if signed.contains(&method) => Some(error(&Value::Null, INVALID_REQUEST, text)),
                _ => None,
            }
        })
        .collect()
}

/// Edit the `_meta` object of `container` (`params` or `result`),
/// created if absent (a `_meta` that is not an object is replaced).
pub(crate) fn with_meta(
    container: &mut Map<String, Value>,
    edit: impl FnOnce(&mut Map<String, Value>),
) {
    let mut meta = match container.remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    edit(&mut meta);
    container.insert("_meta".into(), Value::Object(meta));
}

/// Write an envelope's `herald/…` keys into a `_meta` object.
pub(crate) fn stamp(meta: &mut Map<String, Value>, envelope: &Envelope, trace: &[u8; 32]) {
    meta.insert(meta::ID.into(), HEXLOWER.encode(&envelope.id()).into());
    meta.insert(meta::TRACE.into(), HEXLOWER.encode(trace).into());
    meta.insert(
        meta::ENVELOPE.into(),
        BASE64.encode(envelope.as_bytes()).into(),
    );
}

/// A JSON-RPC success response.
pub(crate) fn response(id: &Value, result: Value) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A JSON-RPC error response.
pub(crate) fn error(id: &Value, code: i64, message: &str) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A `CallToolResult` with `isError: true` and one text block.
pub(crate) fn tool_error(text: &str) -> Value {
    serde_json::json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// A `notifications/message` (logging) at level `warning` from the wrapper.
pub(crate) fn warning(text: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "warning", "logger": "herald-mcp", "data": text}
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes() {
        let r = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"});
        assert_eq!(
            classify(&r),
            Kind::Request {
                id: "1".into(),
                method: "tools/call"
            }
        );
        let s = json!({"jsonrpc": "2.0", "id": "1", "result": {}});
        assert_eq!(classify(&s), Kind::Response { id: "\"1\"".into() });
        let n = json!({"jsonrpc": "2.0", "method": "notifications/progress"});
        assert_eq!(
            classify(&n),
            Kind::Notification {
                method: "notifications/progress"
            }
        );
        assert_eq!(classify(&json!([n])), Kind::Batch);
        assert_eq!(classify(&json!(3)), Kind::Other);
    }

    #[test]
    fn a_call_needs_a_string_or_integer_id() {
        for id in [json!(1), json!("a"), json!(u64::MAX)] {
            let m = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call"});
            assert!(!without_usable_id(&m, "tools/call"), "{m}");
        }
        for m in [
            json!({"jsonrpc": "2.0", "method": "tools/call"}),
            json!({"jsonrpc": "2.0", "id": null, "method": "tools/call"}),
            json!({"jsonrpc": "2.0", "id": {}, "method": "tools/call"}),
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "tools/call"}),
        ] {
            assert!(without_usable_id(&m, "tools/call"), "{m}");
            assert!(!without_usable_id(&m, "ping"), "{m}");
        }
        assert_eq!(no_usable_id("tools/call")["id"], Value::Null);
    }

    #[test]
    fn a_refused_batch_answers_each_request_in_it() {
        let batch = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call"},
            {"jsonrpc": "2.0", "method": "tools/call"},
            {"jsonrpc": "2.0", "id": "p", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/progress"}
        ]);
        let answers = batch_refusal(&batch, &["tools/call"], "no");
        let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
        assert_eq!(ids, [&json!(1), &Value::Null, &json!("p")]);
        assert!(
            answers
                .iter()
                .all(|a| a["error"]["code"] == INVALID_REQUEST)
        );
    }

    #[test]
    fn meta_is_created_or_kept() {
        let mut params = json!({"_meta": {"progressToken": 7}})
            .as_object()
            .unwrap()
            .clone();
        with_meta(&mut params, |m| {
            m.insert("herald/id".into(), json!("x"));
        });
        assert_eq!(
            params["_meta"],
            json!({"progressToken": 7, "herald/id": "x"})
        );
        let mut empty = Map::new();
        with_meta(&mut empty, |m| {
            m.insert("k".into(), json!(1));
        });
        assert_eq!(empty["_meta"], json!({"k": 1}));
    }
}
