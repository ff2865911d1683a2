//! `GET /v1/keys/{sigil}` (CONDUIT.md *Endpoints*, PROFILE.md P15
//! *Conduits*): the sigil's birth and the molts and deprecation the
//! conduit holds, `application/cbor-seq`, so that any verifier can learn
//! the sigil's keys from any conduit without trusting it (herald-verify
//! `check_keys` judges the answer).
//!
//! Both backends keep a lifecycle index, written in the transaction that
//! stores the envelope: identity (the 10 key-hash bytes every form of a
//! sigil shares, P2) and arrival number → kind and id, for every accepted
//! birth, molt and deprecation ([`Lifecycle::of`]). An answer is planned
//! from the index ([`plan`]): the first birth, the molts in arrival order
//! (each followed by its inclusion proof, notary), the first deprecation;
//! at most [`KEYS_MAX_ENVELOPES`] envelopes and `min(--max-page,
//! KEYS_MAX_BYTES)` bytes, the birth and the deprecation kept first, then
//! as many molts as fit, oldest first (a verifier that receives fewer
//! learns an older key, never a wrong one).

use herald_core::{EnvelopeRef, Kind, Sigil};
use herald_verify::{KEYS_MAX_BYTES, KEYS_MAX_ENVELOPES};

use crate::stored::RECIPIENT_LEN;

/// Index rows read for one answer at most: a sigil's owner could post many
/// births or deprecations of its own; the answer needs the first of each.
pub(crate) const MAX_ROWS: usize = 1024;

/// A lifecycle kind, as the index stores it (one byte, a `smallint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    Birth = 1,
    Molt = 2,
    Deprecation = 3,
}

impl Lifecycle {
    /// The index entry of an accepted envelope `view`: its sender's
    /// identity and its kind, when it is a birth, molt or deprecation.
    pub(crate) fn of(view: &EnvelopeRef<'_>) -> Option<([u8; RECIPIENT_LEN], Self)> {
        let kind = match view.kind() {
            Kind::Birth => Self::Birth,
            Kind::Molt => Self::Molt,
            Kind::Deprecation => Self::Deprecation,
            _ => return None,
        };
        Some((crate::stored::recipient(&view.from_sigil())?, kind))
    }

    /// The stored code back.
    pub(crate) fn from_code(code: i64) -> Option<Self> {
        match code {
            1 => Some(Self::Birth),
            2 => Some(Self::Molt),
            3 => Some(Self::Deprecation),
            _ => None,
        }
    }
}

/// One row of the index, with the stored envelope's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Indexed {
    pub(crate) id: [u8; 32],
    pub(crate) kind: Lifecycle,
    pub(crate) len: usize,
}

/// The envelopes of an answer, from `rows` (in arrival order): the first
/// birth, the molts in order, the first deprecation, within the count and
/// `max_bytes` (each molt counted with `proof_room` for its proof).
pub(crate) fn plan(rows: &[Indexed], max_bytes: usize, proof_room: usize) -> Vec<Indexed> {
    let max_bytes = max_bytes.min(KEYS_MAX_BYTES);
    let birth = rows.iter().find(|r| r.kind == Lifecycle::Birth);
    let deprecation = rows.iter().find(|r| r.kind == Lifecycle::Deprecation);
    let mut count = 0;
    let mut bytes = 0usize;
    let mut take = |r: &Indexed, room: usize| {
        let len = r.len.saturating_add(room);
        if count >= KEYS_MAX_ENVELOPES || bytes.saturating_add(len) > max_bytes {
            return false;
        }
        count += 1;
        bytes += len;
        true
    };
    let birth = birth.filter(|b| take(b, 0));
    let deprecation = deprecation.filter(|d| take(d, 0));
    let mut out: Vec<Indexed> = birth.into_iter().copied().collect();
    for m in rows.iter().filter(|r| r.kind == Lifecycle::Molt) {
        if !take(m, proof_room) {
            break;
        }
        out.push(*m);
    }
    out.extend(deprecation);
    out
}

/// Whether `bytes` (a stored envelope the index names) is from `sigil`
/// itself, not only from a sigil sharing its 10-byte prefix.
pub(crate) fn from_sigil(bytes: &[u8], sigil: &Sigil) -> bool {
    EnvelopeRef::decode(bytes).is_ok_and(|v| v.from_sigil().same_key_as(sigil))
}

/// The identity of a path's sigil (any of its three forms, P2), `None`
/// for what is not a sigil with a key hash.
pub(crate) fn identity(text: &str) -> Option<(Sigil, [u8; RECIPIENT_LEN])> {
    let sigil = Sigil::parse(text).ok()?;
    let who = crate::stored::recipient(&sigil)?;
    Some((sigil, who))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: u8, kind: Lifecycle, len: usize) -> Indexed {
        Indexed {
            id: [n; 32],
            kind,
            len,
        }
    }

    #[test]
    fn plan_keeps_the_first_birth_and_deprecation_then_molts_that_fit() {
        let rows = [
            row(1, Lifecycle::Birth, 100),
            row(2, Lifecycle::Birth, 100),
            row(3, Lifecycle::Molt, 100),
            row(4, Lifecycle::Deprecation, 100),
            row(5, Lifecycle::Molt, 100),
            row(6, Lifecycle::Deprecation, 100),
        ];
        let ids = |p: Vec<Indexed>| p.iter().map(|r| r.id[0]).collect::<Vec<_>>();
        assert_eq!(ids(plan(&rows, 10_000, 0)), [1, 3, 5, 4]);
        // Room for the birth, the deprecation and one molt with its proof.
        assert_eq!(ids(plan(&rows, 350, 50)), [1, 3, 4]);
        assert_eq!(ids(plan(&rows, 150, 0)), [1]);
        let many: Vec<Indexed> = (0..200)
            .map(|n| row(n, Lifecycle::Molt, 10))
            .chain([row(250, Lifecycle::Birth, 10)])
            .collect();
        let planned = plan(&many, usize::MAX, 0);
        assert_eq!(planned.len(), KEYS_MAX_ENVELOPES);
        assert_eq!(planned[0].id[0], 250);
    }
}
