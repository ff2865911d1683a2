//! Steps 4 and 5 of an audit: how the set's envelopes name each other,
//! by parent (spec §3.3a) and by nonce (P10).
//!
//! Each table is keyed by ids borrowed from the facts and holds listed
//! entries as `u32`, sized once for what it will hold (the memory
//! bound: a table grown by doubling holds its old and new buckets
//! together).

use core::hash::{BuildHasher, Hasher};
use std::collections::HashMap;
use std::hash::RandomState;

use herald_core::{ParentLink, Status, check_parent_link};

use super::{Checked, Marks};
use crate::compact::{CompactReason, ReportParts};
use crate::input::Input;

/// 4. Parents and the trace-parent binding (spec §3.3a). An envelope is
///    found by its recomputed id only (P13 revision 2), so junk that claims
///    an id never stands in for the envelope that has it. A parent found
///    is marked [`Marks::HAS_CHILD`].
pub(super) fn parents(set: &mut Checked<'_>, inputs: &[Input]) {
    let owned = set.marks.iter().filter(|m| m.has(Marks::OWNS_ID)).count();
    let mut by_id: HashMap<&[u8; 32], u32, OwnedIds> =
        HashMap::with_capacity_and_hasher(owned, OwnedIds::new());
    for (i, (f, m)) in set.facts.iter().zip(&set.marks).enumerate() {
        if let (Some(f), true) = (f, m.has(Marks::OWNS_ID)) {
            by_id.entry(f.id).or_insert(entry(i));
        }
    }
    for (i, f) in set.facts.iter().enumerate() {
        let Some(f) = f else { continue };
        let Some(parent_id) = &f.parent else {
            continue;
        };
        let why = match by_id.get(parent_id) {
            None => CompactReason::MissingParent,
            Some(&p) => {
                let p = p as usize;
                if p != i
                    && let Some(m) = set.marks.get_mut(p)
                {
                    m.set(Marks::HAS_CHILD);
                }
                let link = ParentLink {
                    parent: f.parent,
                    trace: f.trace,
                };
                match &set.facts[p] {
                    Some(parent) => match check_parent_link(&link, parent.id, parent.trace) {
                        Err(r) => set.details.why(&r),
                        Ok(()) => continue,
                    },
                    None => continue,
                }
            }
        };
        let cx = ReportParts {
            facts: &set.facts,
            bytes: &set.bytes,
            inputs,
            details: &set.details,
        };
        set.reports[i].push(why, &cx);
    }
}

/// 5. Replays inside the set (P10 trace audit, revision 3): when several
///    envelopes carry the same `(from key, nonce)` pair, it goes to the
///    first in input order that would be `valid` apart from the replay
///    rule (every other step has run: its report's status now), and only
///    when none would, to the first whose origin verifies. Every other
///    envelope with the pair whose origin verifies, and every one after
///    the owner, is `replayed_nonce` (the same bytes twice included). So a
///    copy of a real envelope with a junk co-signature, wherever it lies,
///    never makes the real one a replay; and a forgery never claims, so it
///    cannot either.
pub(super) fn replays(set: &mut Checked<'_>, inputs: &[Input]) {
    let claims = set.marks.iter().filter(|m| m.has(Marks::CLAIMS)).count();
    // By (from key, nonce): the pair's owner so far, and whether it would
    // be valid.
    let mut owner: HashMap<Pair<'_>, (u32, bool)> = HashMap::with_capacity(claims);
    for (i, s) in set.senders.iter().enumerate() {
        let Some(s) = s else { continue };
        if !set.marks[i].has(Marks::CLAIMS) {
            continue;
        }
        let valid = set.reports[i].status() == Status::Valid;
        owner
            .entry((&s.signer, s.nonce))
            .and_modify(|o| {
                if valid && !o.1 {
                    *o = (entry(i), true);
                }
            })
            .or_insert((entry(i), valid));
    }
    let cx = ReportParts {
        facts: &set.facts,
        bytes: &set.bytes,
        inputs,
        details: &set.details,
    };
    for (i, s) in set.senders.iter().enumerate() {
        let Some(s) = s else { continue };
        let Some(&(first, _)) = owner.get(&(&s.signer, s.nonce)) else {
            continue;
        };
        let i32 = entry(i);
        if i32 != first && (i32 > first || set.marks[i].has(Marks::CLAIMS)) {
            set.reports[i].push(CompactReason::Replayed { first }, &cx);
        }
    }
}

/// A `(from key, nonce)` pair, borrowed from the senders.
type Pair<'s> = (&'s [u8; 32], &'s [u8; 16]);

/// Listed entry `i` as kept (at most [`super::AuditOptions::max_envelopes`]).
pub(super) fn entry(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// The hasher of a table keyed by the ids of the envelopes that own them
/// (P4: `sha256(body(E, 0))`, P13 revision 2: only an envelope whose
/// carried id is its computed one owns it): each id by its first eight
/// bytes, mixed with a key drawn for the table. Those bytes spread as well
/// as a hash of all 32, which SipHash took about 330 instructions to
/// compute; the key keeps bodies ground for chosen prefixes from meeting
/// in one bucket. A lookup may ask for any bytes: how long it probes
/// depends on what the table holds.
#[derive(Clone, Copy, Debug)]
struct OwnedIds {
    key: u64,
}

impl OwnedIds {
    fn new() -> Self {
        Self {
            key: RandomState::new().hash_one(0u64),
        }
    }
}

impl BuildHasher for OwnedIds {
    type Hasher = IdHasher;

    fn build_hasher(&self) -> IdHasher {
        IdHasher(self.key)
    }
}

/// [`OwnedIds`]'s hasher.
#[derive(Debug)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut head = [0u8; 8];
        for (h, b) in head.iter_mut().zip(bytes) {
            *h = *b;
        }
        // A folded multiply (the product's halves xored), as foldhash mixes.
        let product = u128::from(self.0 ^ u64::from_le_bytes(head)) * 0x9e37_79b9_7f4a_7c15;
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
