//! Retention and erasure (CONDUIT.md revision 3, *Retention and
//! erasure*; spec §11.4), one rule for every [`Backend`]:
//!
//! - What erasing an envelope removes: its bytes, its inbox entry, its
//!   place in its trace and its first 201 body. What remains: its audit-log
//!   leaf (P9: minimal metadata, so inclusion and consistency proofs still
//!   hold), its replay claim (P10: its `(from key, nonce)` stays taken) and
//!   a [`Tombstone`]: a refusal envelope signed by the conduit, `parent` =
//!   the erased id, `trace` = its trace, `to` = its sender, payload
//!   `{reason: "erased"}`, `ts` = the time of the erasure
//!   ([`Refusal::Erased`]; P7 allows no other payload key). A `GET` of the
//!   id, or a new `POST` of it, answers `410 Gone` with that tombstone; it
//!   is never stored again. Each backend erases a whole set in one
//!   transaction ([`Backend::erase`]): an envelope is readable or a
//!   tombstone, its inbox entry with it, whatever crashes when.
//! - Never erased: births, molts and deprecations (P7, P8). They are the
//!   public key history `GET /v1/keys/{sigil}` serves (P15), not messages;
//!   erasing them would not hide who talked to whom and would break every
//!   resolution of the sigil.
//! - `DELETE /v1/envelopes/{id}`, signed by the envelope's sender, erases
//!   it at once (`http`).
//! - `--retain DAYS` ([`retain`]): a background task erases, every
//!   [`PASS_EVERY`], the stored envelopes whose `ts` is more than DAYS
//!   days before the conduit's clock, oldest arrival first, at most
//!   [`PASS_MAX`] per pass among at most [`PASS_READ`] read, each pass in
//!   one transaction. Age is the envelope's own `ts` (the time its sender
//!   signed it, which the conduit checked against its clock on arrival).
//!
//! A notary erases only what its log holds under a signed tree head
//! (the leaf must outlive the bytes; `local`).

use std::sync::Arc;
use std::time::Duration;

use herald_core::{EnvelopeRef, Kind};

use crate::Conduit;
use crate::refusal::Refusal;
use crate::stored::{RECIPIENT_LEN, Stored, recipient};
use herald_http::head;

/// How often a retention pass runs.
pub(crate) const PASS_EVERY: Duration = Duration::from_secs(1);
/// Envelopes erased by one pass at most (one transaction).
pub(crate) const PASS_MAX: usize = 256;
/// Stored envelopes one pass reads at most to find them.
pub(crate) const PASS_READ: usize = 1024;
/// Seconds in a day (`--retain DAYS`).
const DAY: u64 = 86_400;

/// What remains of an erased envelope besides its leaf and its claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tombstone {
    /// The refusal envelope the conduit signed when it erased it.
    pub(crate) bytes: Vec<u8>,
    /// The erased envelope's `to` (its inbox key), so that it may read its
    /// tombstone too.
    pub(crate) recipient: Option<[u8; RECIPIENT_LEN]>,
}

impl Tombstone {
    /// The erased envelope's sender (the tombstone's `to`) and trace.
    pub(crate) fn sender_and_trace(&self) -> Option<([u8; RECIPIENT_LEN], [u8; 32])> {
        let h = head::scan(&self.bytes)?;
        Some((recipient(h.to.as_ref()?)?, h.trace))
    }
}

/// One envelope to erase and what replaces it.
#[derive(Clone, Debug)]
pub(crate) struct Erasure {
    pub(crate) id: [u8; 32],
    pub(crate) trace: [u8; 32],
    /// Its arrival number (its trace entry's key, its leaf index).
    pub(crate) arrival: u64,
    /// When it is erased (the tombstone's `ts`).
    pub(crate) at: u64,
    pub(crate) tombstone: Tombstone,
}

/// Why an envelope may not be erased.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kept {
    /// A birth, molt or deprecation: public key history (P15).
    Lifecycle,
    /// Its bytes do not decode (never the case for what was accepted).
    Unreadable,
}

/// The erasure of `stored` at `now`, its tombstone signed by `conduit`.
pub(crate) fn erasure(conduit: &Conduit, stored: &Stored, now: u64) -> Result<Erasure, Kept> {
    let view = EnvelopeRef::decode_with(&stored.bytes, &LARGE).map_err(|_| Kept::Unreadable)?;
    if matches!(view.kind(), Kind::Birth | Kind::Molt | Kind::Deprecation) {
        return Err(Kept::Lifecycle);
    }
    let h = head::scan(&stored.bytes).ok_or(Kept::Unreadable)?;
    let bytes = Refusal::Erased
        .envelope(&conduit.key, &h, now)
        .ok_or(Kept::Unreadable)?;
    Ok(Erasure {
        id: h.id,
        trace: h.trace,
        arrival: stored.arrival,
        at: now,
        tombstone: Tombstone {
            bytes,
            recipient: h.to.as_ref().and_then(recipient),
        },
    })
}

/// Limits to decode a stored envelope by (accepted under P1's; a relay's
/// receipt may have grown it a little).
const LARGE: herald_core::cbor::Limits = herald_core::cbor::Limits {
    max_size: usize::MAX,
    ..herald_core::cbor::Limits::DEFAULT
};

/// `--retain DAYS`: erase what is older than `days` days, a pass every
/// [`PASS_EVERY`], until the conduit closes. A failed pass is logged and
/// tried again at the next.
pub(crate) async fn retain(conduit: Arc<Conduit>, days: u64) {
    let mut closing = conduit.closing.subscribe();
    // Arrivals before this were read by an earlier pass and are erased or
    // kept (a lifecycle envelope): read from here on.
    let mut from = 0u64;
    loop {
        if *closing.borrow() {
            return;
        }
        match pass(&conduit, days, from).await {
            Ok(next) => from = next,
            Err(e) => tracing::error!(error = %e, "retention pass"),
        }
        tokio::select! {
            () = tokio::time::sleep(PASS_EVERY) => {}
            _ = closing.changed() => {}
        }
    }
}

/// One retention pass from arrival `from`: the arrival the next starts at.
async fn pass(conduit: &Conduit, days: u64, from: u64) -> Result<u64, String> {
    let backend = conduit.backend.as_ref();
    let now = conduit.now();
    let cutoff = now.saturating_sub(days.saturating_mul(DAY));
    let (oldest, scanned) = backend.oldest(from, PASS_READ).await?;
    // Everything before `scanned` was looked at: the next pass starts
    // there, or at the first envelope left for being too young (arrival
    // order is about `ts` order, not exactly), or where this one stopped.
    let mut next = scanned;
    let mut young = None;
    let mut batch = Vec::new();
    for stored in &oldest {
        if batch.len() >= PASS_MAX {
            next = stored.arrival;
            break;
        }
        if EnvelopeRef::decode_with(&stored.bytes, &LARGE).is_ok_and(|v| v.ts() >= cutoff) {
            young = young.or(Some(stored.arrival));
            continue;
        }
        // A lifecycle envelope is kept (and passed over).
        if let Ok(e) = erasure(conduit, stored, now) {
            batch.push(e);
        }
    }
    if let Some(y) = young {
        next = next.min(y);
    }
    if !batch.is_empty() {
        let erased = backend.erase(batch.clone()).await?;
        tracing::info!(erased = erased.len(), "retention pass");
        conduit.metrics.erased(erased.len());
        // One a notary's log does not cover yet is read again next pass.
        if let Some(first) = batch
            .iter()
            .filter(|e| !erased.contains(&e.id))
            .map(|e| e.arrival)
            .min()
        {
            next = first;
        }
    }
    Ok(next)
}
