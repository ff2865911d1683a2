//! The VALP profile (docs/valp.md): each VALP message is the payload of an
//! envelope from its sender principal's sigil, `parent` = the envelope of
//! its causation message; the installation's log is the set in input order.
//!
//! A message (`schema_version: "valp-message.v1"`) carries `message_id`,
//! `correlation_id`, `causation_id` (text, or null for a root),
//! `sender_principal_id`, `kind`, `leader_epoch` (unsigned), `payload` and
//! `payload_digest` (`"sha256:"` and the lowercase hex SHA-256 of the P1
//! encoding of `payload`). Kinds read here:
//! - `event.leader.activated` / `event.leader.rotation.completed`: payload
//!   `active_leader_epoch`, the new epoch;
//! - `evidence.add`: payload an evidence item `{evidence_id, content_ref,
//!   content_digest, content?}` (`content_digest` as `payload_digest`,
//!   over the evidence bytes: `content` when carried, else the bytes the
//!   verifier was given under `content_ref`);
//! - `claim.declare`: payload a claim `{claim_id, claim_kind,
//!   evidence_refs: [content_ref]}`; kinds `done`, `high_risk`,
//!   `migration`, `plugin_enablement` and `stable_release` are gate-bearing;
//! - `claim.review`: payload `{review_id, claim_ids: [claim_id], verdict}`.

use alloc::{collections::BTreeMap, format, string::String, vec::Vec};

use herald_core::cbor::{MapRef, ValueRef};
use sha2::Digest;

use super::{Entry, Evidence, FindingCode as C, Findings, Set, common, text, unsigned};

/// The message schema.
const SCHEMA: &str = "valp-message.v1";

/// Claim kinds that gate a release or a state change.
const GATE_BEARING: [&str; 5] = [
    "done",
    "high_risk",
    "migration",
    "plugin_enablement",
    "stable_release",
];

/// Kinds that activate a leader epoch.
const ACTIVATIONS: [&str; 2] = ["event.leader.activated", "event.leader.rotation.completed"];

/// A message as read.
struct Message<'a> {
    message_id: &'a str,
    correlation_id: &'a str,
    kind: &'a str,
    leader_epoch: u64,
    payload: ValueRef<'a>,
}

pub(super) fn check(set: &Set<'_>, evidence: &[Evidence<'_>], out: &mut Findings) {
    let mut messages: BTreeMap<usize, Message<'_>> = BTreeMap::new();
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    let mut epoch: Option<u64> = None;
    for (k, e) in set.entries.iter().enumerate() {
        if e.retired
            && let Some(Some(map)) = e.step_payload()
            && text(&map, "schema_version") == Some(SCHEMA)
        {
            out.add(
                e,
                C::AcceptedAfterRetirement,
                "a message from a sigil after its deprecation: a retired installation accepts \
                 nothing",
            );
        }
        if !e.signed {
            continue;
        }
        let Some(payload) = e.step_payload() else {
            continue;
        };
        common(e, out);
        let Some(m) = payload.and_then(|map| message(set, k, &map, out)) else {
            continue;
        };
        if let Some(first) = seen.get(m.message_id) {
            let detail = if *first == m.correlation_id {
                format!("message {:?} was seen before", m.message_id)
            } else {
                format!(
                    "message {:?} was seen before under correlation {first:?}, now under {:?}",
                    m.message_id, m.correlation_id
                )
            };
            // A replay is reported, not read again as a step.
            out.add(e, C::ReplayedMessage, detail);
            continue;
        }
        seen.insert(m.message_id, m.correlation_id);
        if let Some(high) = epoch
            && m.leader_epoch < high
        {
            out.add(
                e,
                C::EpochRollback,
                format!(
                    "leader epoch {} after epoch {high} was in force",
                    m.leader_epoch
                ),
            );
        }
        epoch = Some(epoch.map_or(m.leader_epoch, |h| h.max(m.leader_epoch)));
        if ACTIVATIONS.contains(&m.kind) {
            match m
                .payload
                .as_map()
                .and_then(|p| unsigned(&p, "active_leader_epoch"))
            {
                Some(new) if epoch.is_none_or(|h| new > h) => epoch = Some(new),
                Some(new) => out.add(
                    e,
                    C::EpochRollback,
                    format!(
                        "activates leader epoch {new}, not above epoch {}",
                        epoch.unwrap_or_default()
                    ),
                ),
                None => out.add(
                    e,
                    C::MalformedMessage,
                    "a leader activation without an unsigned `active_leader_epoch`",
                ),
            }
        }
        messages.insert(k, m);
    }
    claims(set, &messages, evidence, out);
}

/// Read `map` as a `valp-message.v1`, with its digest and causation checked.
fn message<'a>(
    set: &Set<'a>,
    k: usize,
    map: &MapRef<'a>,
    out: &mut Findings,
) -> Option<Message<'a>> {
    let e = set.entries.get(k)?;
    let fields = (
        text(map, "schema_version").filter(|s| *s == SCHEMA),
        text(map, "message_id"),
        text(map, "correlation_id"),
        text(map, "sender_principal_id"),
        text(map, "kind"),
        unsigned(map, "leader_epoch"),
        map.get("payload"),
        text(map, "payload_digest"),
    );
    let causation = match map.get("causation_id") {
        None | Some(ValueRef::Null) => Some(None),
        Some(ValueRef::Text(t)) => Some(Some(t)),
        Some(_) => None,
    };
    let (
        (Some(_), Some(message_id), Some(correlation_id), Some(_), Some(kind)),
        (Some(leader_epoch), Some(payload), Some(digest), Some(causation)),
    ) = (
        (fields.0, fields.1, fields.2, fields.3, fields.4),
        (fields.5, fields.6, fields.7, causation),
    )
    else {
        out.add(
            e,
            C::MalformedMessage,
            "not a valp-message.v1: it needs schema_version, message_id, correlation_id, \
             sender_principal_id, kind, leader_epoch (unsigned), payload, payload_digest (text) \
             and causation_id (text or null)",
        );
        return None;
    };
    if payload_bytes(e).is_none_or(|bytes| digest != sha256_tag(bytes)) {
        out.add(
            e,
            C::PayloadDigestMismatch,
            "payload_digest is not the SHA-256 of the payload's P1 encoding",
        );
    }
    causation_check(set, k, causation, out);
    Some(Message {
        message_id,
        correlation_id,
        kind,
        leader_epoch,
        payload,
    })
}

/// The P1 bytes of the message's `payload` field.
fn payload_bytes<'a>(e: &Entry<'a>) -> Option<&'a [u8]> {
    let outer = e.env.payload_bytes();
    let map = herald_core::cbor::decode(outer).ok()?.as_map()?;
    let mut entries = map.iter();
    while let Some(entry) = entries.next_entry() {
        if entry.key == "payload" {
            return outer.get(entry.value_span);
        }
    }
    None
}

/// `sha256:` and the lowercase hex digest of `bytes`.
fn sha256_tag(bytes: &[u8]) -> String {
    format!(
        "sha256:{}",
        crate::report::hex(&sha2::Sha256::digest(bytes))
    )
}

/// `causation_id` names the message its envelope replies to, when that
/// envelope is in the set.
fn causation_check(set: &Set<'_>, k: usize, cause: Option<&str>, out: &mut Findings) {
    let Some(e) = set.entries.get(k) else {
        return;
    };
    let replied = match (e.env.parent(), set.parent(k)) {
        // A genesis answers nothing.
        (None, _) => None,
        (Some(_), Some((_, p))) => match p.step_payload() {
            Some(Some(m)) if text(&m, "schema_version") == Some(SCHEMA) => {
                Some(text(&m, "message_id"))
            }
            // The parent is not a VALP message: nothing to compare.
            _ => return,
        },
        // The parent is not in the set (P11 `missing_parent`).
        (Some(_), None) => return,
    };
    match (cause, replied) {
        (None, None) => {}
        (Some(c), Some(Some(id))) if c == id => {}
        (Some(c), None) => out.add(
            e,
            C::CausationMismatch,
            format!("causation_id {c:?}, but the envelope answers no message (parent null)"),
        ),
        (None, Some(_)) => out.add(
            e,
            C::CausationMismatch,
            "no causation_id, but the envelope answers a message",
        ),
        (Some(c), Some(id)) => out.add(
            e,
            C::CausationMismatch,
            format!(
                "causation_id {c:?}, but the envelope answers message {:?}",
                id.unwrap_or_default()
            ),
        ),
    }
}

/// Gate-bearing claims cite evidence whose digest matches its bytes, and
/// a review is by a key other than its claim's.
fn claims(
    set: &Set<'_>,
    messages: &BTreeMap<usize, Message<'_>>,
    evidence: &[Evidence<'_>],
    out: &mut Findings,
) {
    let of_kind = |kind: &'static str| {
        messages
            .iter()
            .filter(move |(_, m)| m.kind == kind)
            .filter_map(|(&k, m)| Some((set.entries.get(k)?, m.payload.as_map()?)))
    };
    // Evidence items by content_ref, and claims by claim_id.
    let mut items: BTreeMap<&str, Vec<(&Entry<'_>, MapRef<'_>)>> = BTreeMap::new();
    for (e, item) in of_kind("evidence.add") {
        if let Some(r) = text(&item, "content_ref") {
            items.entry(r).or_default().push((e, item));
        }
    }
    let mut claimed: BTreeMap<&str, &Entry<'_>> = BTreeMap::new();
    // The given bytes' digests, each hashed once.
    let given: BTreeMap<&str, String> = evidence
        .iter()
        .map(|g| (g.content_ref, sha256_tag(g.bytes)))
        .collect();
    let mut checked = alloc::collections::BTreeSet::new();
    for (e, claim) in of_kind("claim.declare") {
        if let Some(id) = text(&claim, "claim_id") {
            claimed.entry(id).or_insert(e);
        }
        if !text(&claim, "claim_kind").is_some_and(|k| GATE_BEARING.contains(&k)) {
            continue;
        }
        let refs: Vec<&str> = claim
            .get("evidence_refs")
            .and_then(|r| r.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_text()).collect())
            .unwrap_or_default();
        if refs.is_empty() {
            out.add(
                e,
                C::EvidenceMissing,
                "a gate-bearing claim that cites no evidence",
            );
        }
        for r in refs {
            let cited = items.get(r).map(Vec::as_slice).unwrap_or_default();
            if cited.is_empty() {
                out.add(
                    e,
                    C::EvidenceMissing,
                    format!("cites evidence {r:?}, which no evidence message in the set adds"),
                );
            }
            for (ev, item) in cited {
                // Each evidence envelope is checked once, however often cited.
                if checked.insert(ev.position) {
                    digest_check(ev, item, r, &given, out);
                }
            }
        }
    }
    for (e, review) in of_kind("claim.review") {
        let ids = review.get("claim_ids").and_then(|r| r.as_array());
        for id in ids
            .iter()
            .flat_map(|a| a.iter())
            .filter_map(|v| v.as_text())
        {
            if let Some(claim) = claimed.get(id)
                && claim.signer.is_some()
                && claim.signer == e.signer
            {
                out.add(
                    e,
                    C::SelfVerification,
                    format!("reviews claim {id:?} with the key that made the claim"),
                );
            }
        }
    }
}

/// An evidence item's `content_digest` against its bytes.
fn digest_check(
    e: &Entry<'_>,
    item: &MapRef<'_>,
    content_ref: &str,
    given: &BTreeMap<&str, String>,
    out: &mut Findings,
) {
    let Some(digest) = text(item, "content_digest") else {
        out.add(
            e,
            C::MalformedMessage,
            "an evidence item without a text `content_digest`",
        );
        return;
    };
    let actual = match item.get("content").and_then(|c| c.as_bytes()) {
        Some(carried) => Some(sha256_tag(carried)),
        None => given.get(content_ref).cloned(),
    };
    match actual {
        Some(d) if d == digest => {}
        Some(_) => out.add(
            e,
            C::EvidenceDigestMismatch,
            format!("content_digest of {content_ref:?} does not match its bytes"),
        ),
        None => out.add(
            e,
            C::EvidenceUnverifiable,
            format!("no bytes of {content_ref:?} given, so its content_digest is unchecked"),
        ),
    }
}
