//! Payload shapes of the lifecycle kinds (PROFILE.md P7). Each is a closed
//! map: a missing required key, a wrong type or an extra key is `malformed`.

use crate::cbor::{ArrayRef, MapRef, ValueRef};
use crate::kind::Kind;
use crate::reason::Detail;
use crate::sigil::Sigil;

fn bad(field: &'static str, problem: &'static str) -> Detail {
    Detail::Field { field, problem }
}

/// Check a closed map: only `allowed` keys.
fn closed<'a>(
    payload: ValueRef<'a>,
    allowed: &[&str],
    what: &'static str,
) -> Result<MapRef<'a>, Detail> {
    let map = payload
        .as_map()
        .ok_or(bad(what, "payload must be a map (P7)"))?;
    if map.iter().any(|(k, _)| !allowed.contains(&k)) {
        return Err(bad(what, "unknown key in payload (P7)"));
    }
    Ok(map)
}

/// A molt's payload `{new_key: bstr 32, not_before: uint}` (P7, P8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Molt<'a> {
    /// The incoming public key.
    pub new_key: &'a [u8; 32],
    /// When the new key may start signing.
    pub not_before: u64,
}

impl<'a> Molt<'a> {
    /// Parse a molt payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = closed(payload, &["new_key", "not_before"], "payload")?;
        Ok(Self {
            new_key: map
                .get("new_key")
                .and_then(|v| v.as_bytes())
                .and_then(|b| b.try_into().ok())
                .ok_or(bad("payload.new_key", "must be a 32-byte byte string"))
                .and_then(|k: &'a [u8; 32]| match crate::PublicKey::from_bytes(k) {
                    Ok(_) => Ok(k),
                    Err(_) => Err(bad(
                        "payload.new_key",
                        "must be a canonical Ed25519 key of prime order (P5)",
                    )),
                })?,
            not_before: map
                .get("not_before")
                .and_then(|v| v.as_unsigned())
                .ok_or(bad("payload.not_before", "must be an unsigned integer"))?,
        })
    }
}

/// A deprecation's payload `{successor?: sigil, reason?: text}` (P7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deprecation<'a> {
    /// The named successor.
    pub successor: Option<Sigil>,
    /// Why.
    pub reason: Option<&'a str>,
}

impl<'a> Deprecation<'a> {
    /// Parse a deprecation payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = closed(payload, &["successor", "reason"], "payload")?;
        let successor = match map.get("successor") {
            None => None,
            Some(v) => {
                let text = v
                    .as_text()
                    .ok_or(bad("payload.successor", "must be a sigil string"))?;
                Some(Sigil::parse(text).map_err(|error| Detail::Sigil {
                    field: "payload.successor",
                    error,
                })?)
            }
        };
        Ok(Self {
            successor,
            reason: optional_text(map, "reason", "payload.reason")?,
        })
    }
}

/// A refusal's payload `{reason: text, retry_after?: uint}` (P7, spec §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal<'a> {
    /// Why the envelope was refused.
    pub reason: &'a str,
    /// When to try again.
    pub retry_after: Option<u64>,
}

impl<'a> Refusal<'a> {
    /// Parse a refusal payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = closed(payload, &["reason", "retry_after"], "payload")?;
        Ok(Self {
            reason: map
                .get("reason")
                .and_then(|v| v.as_text())
                .ok_or(bad("payload.reason", "required text (P7)"))?,
            retry_after: match map.get("retry_after") {
                None => None,
                Some(v) => Some(
                    v.as_unsigned()
                        .ok_or(bad("payload.retry_after", "must be an unsigned integer"))?,
                ),
            },
        })
    }
}

/// A duress envelope's payload `{note?: text}` (P7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Duress<'a> {
    /// A note.
    pub note: Option<&'a str>,
}

impl<'a> Duress<'a> {
    /// Parse a duress payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = closed(payload, &["note"], "payload")?;
        Ok(Self {
            note: optional_text(map, "note", "payload.note")?,
        })
    }
}

/// A capability manifest's payload (spec §8.3 less `sigil`, `ts`, `nonce`
/// and `expires`, which are the envelope's own; P7).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Manifest<'a> {
    /// Capability strings, each checked by [`is_capability`].
    pub capabilities: ArrayRef<'a>,
    /// Rates, uninterpreted.
    pub rates: Option<MapRef<'a>>,
    /// Constraint strings.
    pub constraints: Option<ArrayRef<'a>>,
    /// Whether the offer is subsidised.
    pub subsidised: Option<bool>,
}

impl<'a> Manifest<'a> {
    /// Parse a manifest payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = payload
            .as_map()
            .ok_or(bad("payload", "payload must be a map (P7)"))?;
        for (k, _) in map.iter() {
            match k {
                "capabilities" | "rates" | "constraints" | "subsidised" => {}
                "sigil" | "ts" | "nonce" | "expires" => {
                    return Err(bad(
                        "payload",
                        "sigil, ts, nonce and expires are the envelope's own (P7)",
                    ));
                }
                _ => return Err(bad("payload", "unknown key in payload (P7)")),
            }
        }
        let capabilities = map
            .get("capabilities")
            .and_then(|v| v.as_array())
            .ok_or(bad(
                "payload.capabilities",
                "required array of capability strings",
            ))?;
        if !capabilities
            .iter()
            .all(|c| c.as_text().is_some_and(is_capability))
        {
            return Err(bad(
                "payload.capabilities",
                "a capability is 1-8 segments of [a-z0-9-]+ joined by / (P7)",
            ));
        }
        let constraints = match map.get("constraints") {
            None => None,
            Some(v) => {
                let a = v
                    .as_array()
                    .filter(|a| a.iter().all(|c| c.as_text().is_some()));
                Some(a.ok_or(bad("payload.constraints", "must be an array of text"))?)
            }
        };
        let rates = match map.get("rates") {
            None => None,
            Some(v) => Some(v.as_map().ok_or(bad("payload.rates", "must be a map"))?),
        };
        let subsidised = match map.get("subsidised") {
            None => None,
            Some(ValueRef::Bool(b)) => Some(b),
            Some(_) => return Err(bad("payload.subsidised", "must be a bool")),
        };
        Ok(Self {
            capabilities,
            rates,
            constraints,
            subsidised,
        })
    }
}

/// Whether `s` is a capability string: lower-case segments `[a-z0-9-]+`
/// joined by `/`, 1–8 segments (P7).
pub fn is_capability(s: &str) -> bool {
    let mut segments = 0;
    for segment in s.split('/') {
        segments += 1;
        if segment.is_empty()
            || !segment
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        {
            return false;
        }
    }
    (1..=8).contains(&segments)
}

fn optional_text<'a>(
    map: MapRef<'a>,
    key: &str,
    field: &'static str,
) -> Result<Option<&'a str>, Detail> {
    match map.get(key) {
        None => Ok(None),
        Some(v) => Ok(Some(v.as_text().ok_or(bad(field, "must be text"))?)),
    }
}

/// Check the payload shape `kind` requires (P7). Kinds without a shape
/// (message, birth, posthumous citation) accept any payload.
pub fn check(kind: Kind, payload: ValueRef<'_>) -> Result<(), Detail> {
    match kind {
        Kind::Molt => Molt::parse(payload).map(|_| ()),
        Kind::Deprecation => Deprecation::parse(payload).map(|_| ()),
        Kind::Refusal => Refusal::parse(payload).map(|_| ()),
        Kind::Duress => Duress::parse(payload).map(|_| ()),
        Kind::Manifest => Manifest::parse(payload).map(|_| ()),
        _ => Ok(()),
    }
}
