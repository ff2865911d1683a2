//! Reading the JSON display form (P3) back: `herald inspect --json` and
//! `--json` audit objects turn into the P1 bytes they were printed from.
//!
//! The display form writes every byte string as lowercase hex, so a text
//! string that happens to be lowercase hex looks the same as a byte
//! string. Fields whose P3/P9 type is known are read as that type. For an
//! envelope the rest (payload, attestation values, unknown fields) is
//! settled by the envelope's own `id`: of the readings of the hex-looking
//! strings, the one whose `sha256(body(E, 0))` (P4) is the `id` is the
//! original (P3: "converting JSON back … must reproduce the original
//! bytes"); when none is, the JSON is refused rather than guessed.
//! Detection is by content: a P1 envelope or audit object starts with a
//! CBOR map head, never with `{`.

use herald_core::EnvelopeRef;
use herald_core::cbor::{Map, Value};

use crate::json;

/// Most hex-looking strings of unknown type in one envelope: every reading
/// (2^n) is hashed, so this bounds the work at 4096 encodings.
const MAX_AMBIGUOUS: u32 = 12;

/// Top-level envelope fields that are byte strings (P3).
const ENVELOPE_BYTES: [&str; 5] = ["id", "parent", "trace", "nonce", "lineage_proof"];

/// Top-level envelope fields whose type P3 fixes as something other than
/// a byte string (left as JSON gives them).
const ENVELOPE_OTHERS: [&str; 7] = ["v", "from", "to", "ts", "expires", "kind", "signatures"];

/// Whether `bytes` hold the JSON display form rather than P1 CBOR.
pub(crate) fn is_json(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{')
}

/// The JSON values of `text`, one after another (one a line, as
/// `inspect --json` prints them, or any whitespace between).
pub(crate) fn values(text: &str) -> impl Iterator<Item = Result<&str, String>> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<&serde_json::value::RawValue>()
        .map(|v| {
            v.map(|raw| raw.get())
                .map_err(|e| format!("invalid JSON: {e}"))
        })
}

/// Whether the JSON object `text` is an envelope (it has `signatures`,
/// which no audit object has) rather than an audit object.
pub(crate) fn is_envelope(text: &str) -> bool {
    matches!(json::to_cbor(text), Ok(Value::Map(m)) if m.get("signatures").is_some())
}

/// The P1 bytes of the envelope whose display form is `text`.
pub(crate) fn envelope(text: &str) -> Result<Vec<u8>, String> {
    let Value::Map(map) = json::to_cbor(text)? else {
        return Err("not a JSON object (an envelope's display form is one)".into());
    };
    let id = match map.get("id") {
        Some(Value::Text(hex)) => decode_hex(hex).ok_or("\"id\": not lowercase hex")?,
        _ => return Err("no \"id\" (P3: always on the wire)".into()),
    };
    let mut fixed = Map::new();
    let mut open = Map::new();
    for (key, value) in map.iter() {
        if ENVELOPE_BYTES.contains(&key) {
            fixed.insert(key, to_bytes(key, value)?);
        } else if key == "signatures" {
            fixed.insert(key, signatures(value)?);
        } else if ENVELOPE_OTHERS.contains(&key) {
            fixed.insert(key, value.clone());
        } else {
            open.insert(key, value.clone());
        }
    }
    let open = Value::Map(open);
    let ambiguous = count(&open, false);
    if ambiguous > MAX_AMBIGUOUS {
        return Err(format!(
            "{ambiguous} hex-looking strings of unknown type (more than {MAX_AMBIGUOUS}): \
             cannot tell byte strings from text"
        ));
    }
    for mask in 0..(1u32 << ambiguous) {
        let mut seen = 0;
        let Value::Map(chosen) = apply(&open, mask, &mut seen, false) else {
            continue;
        };
        let mut all = fixed.clone();
        for (key, value) in chosen.iter() {
            all.insert(key, value.clone());
        }
        let bytes = Value::Map(all).to_vec();
        if EnvelopeRef::decode(&bytes).is_ok_and(|e| e.computed_id().as_slice() == id) {
            return Ok(bytes);
        }
    }
    Err(format!(
        "no reading of this JSON hashes to its id {} (P4): it was edited, or its id never \
         matched its bytes",
        herald_verify::hex(&id)
    ))
}

/// The P1 bytes of the audit object (STH, inclusion or consistency proof,
/// P9 and CLI.md) whose display form is `text`: every string is a byte
/// string except `log`, a sigil.
pub(crate) fn audit_object(text: &str) -> Result<Vec<u8>, String> {
    fn convert(value: &Value, key: &str) -> Result<Value, String> {
        match value {
            Value::Text(_) if key == "log" => Ok(value.clone()),
            Value::Text(_) => to_bytes(key, value),
            Value::Array(items) => items
                .iter()
                .map(|v| convert(v, key))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            Value::Map(map) => {
                let mut out = Map::new();
                for (k, v) in map.iter() {
                    out.insert(k, convert(v, k)?);
                }
                Ok(Value::Map(out))
            }
            other => Ok(other.clone()),
        }
    }
    let value = json::to_cbor(text)?;
    if !matches!(value, Value::Map(_)) {
        return Err("not a JSON object".into());
    }
    Ok(convert(&value, "")?.to_vec())
}

/// The signature maps, `sig` as bytes (P3).
fn signatures(value: &Value) -> Result<Value, String> {
    let Value::Array(items) = value else {
        return Err("\"signatures\": not an array".into());
    };
    let mut out = Vec::new();
    for item in items {
        let Value::Map(map) = item else {
            return Err("\"signatures\": an item is not an object".into());
        };
        let mut sig = Map::new();
        for (key, v) in map.iter() {
            let v = if key == "sig" {
                to_bytes("sig", v)?
            } else {
                v.clone()
            };
            sig.insert(key, v);
        }
        out.push(Value::Map(sig));
    }
    Ok(Value::Array(out))
}

/// A field P3 types as bytes: its hex; `null` stays `null` (a genesis parent).
fn to_bytes(key: &str, value: &Value) -> Result<Value, String> {
    match value {
        Value::Null => Ok(Value::Null),
        Value::Text(hex) => decode_hex(hex)
            .map(Value::Bytes)
            .ok_or_else(|| format!("{key:?}: {hex:?} is not lowercase hex")),
        _ => Err(format!("{key:?}: expected a hex string")),
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    data_encoding::HEXLOWER.decode(text.as_bytes()).ok()
}

/// Whether a string could be a byte string's display form. An
/// attestation's `type` is text (P3) and never counted.
fn hex_like(text: &str) -> bool {
    text.len().is_multiple_of(2) && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Hex-looking strings in `value`, in the order [`apply`] visits them.
fn count(value: &Value, is_type: bool) -> u32 {
    match value {
        Value::Text(t) => u32::from(!is_type && hex_like(t)),
        Value::Array(items) => items.iter().map(|v| count(v, false)).sum(),
        Value::Map(map) => map.iter().map(|(k, v)| count(v, k == "type")).sum(),
        _ => 0,
    }
}

/// `value` with the hex-looking strings whose bit is set in `mask` read as
/// byte strings; `seen` counts them as they are visited.
fn apply(value: &Value, mask: u32, seen: &mut u32, is_type: bool) -> Value {
    match value {
        Value::Text(t) if !is_type && hex_like(t) => {
            let bit = *seen;
            *seen += 1;
            match decode_hex(t) {
                Some(bytes) if mask & (1 << bit) != 0 => Value::Bytes(bytes),
                _ => value.clone(),
            }
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| apply(v, mask, seen, false)).collect())
        }
        Value::Map(map) => {
            let mut out = Map::new();
            for (k, v) in map.iter() {
                out.insert(k, apply(v, mask, seen, k == "type"));
            }
            Value::Map(out)
        }
        other => other.clone(),
    }
}
