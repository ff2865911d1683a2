//! An envelope's reasons as a verifier lists them (issue 14): every kind
//! of reason that occurs, in full; repeats beyond a number that grows with
//! the envelope's size are counted by code, not listed. Every reason is
//! reported (P11), the repeats as a count.
//!
//! A sender pays one byte for a reason when it is one non-map item of
//! `attestations` or `signatures` (`malformed`), seven for an unknown
//! top-level key (`unknown_field`), and `max_items` bounds them per
//! container, not per input. Listed one by one they cost a verifier tens of
//! times the input. So the audit ([`crate::trace`]) and live reception
//! ([`crate::live`]) both gather [`herald_core::check`]'s reasons here.
//!
//! A reason's *kind* is its code and the signature it is about: none, the
//! origin (index 0), or another (index ≥ 1). Every kind that occurs is
//! listed at least once, which keeps exact all a verifier reads from the
//! reasons:
//! - the status, since P13 depends only on the kind;
//! - whether the origin verified and the envelope claims its nonce (P10),
//!   which ask whether a kind occurs;
//! - whether a code is present.
//!
//! What an unlisted repeat can hide is *which* co-signature a fault is
//! about; "signature k verified" then fails closed ([`verified`]).

use alloc::vec::Vec;

use herald_core::{Reason, ReasonCode, ReasonSink};

/// How many of an envelope's reasons are listed before repeats are only
/// counted: three (what an audit's report holds in place), and one per
/// [`BYTES_PER_LISTED`] bytes of a larger envelope.
pub(crate) const fn listed_for(len: usize) -> usize {
    let by_size = len / BYTES_PER_LISTED;
    if by_size > MIN_LISTED {
        by_size
    } else {
        MIN_LISTED
    }
}

/// See [`listed_for`].
const MIN_LISTED: usize = 3;

/// See [`listed_for`]. A listed reason costs an audit 12 bytes as codes,
/// and about 120 formed in full (its detail text on the heap: live
/// reception, and an item that did not decode), so a list costs at most
/// half the envelope's own size: the bound of issue 14 (`2 × input +
/// 64 MiB`) leaves a report one input's worth of state.
const BYTES_PER_LISTED: usize = 256;

/// Kinds of reason: three per code (no index, index 0, index ≥ 1).
const KINDS: usize = ReasonCode::ALL.len() * 3;
const _: () = assert!(KINDS <= 128, "a kind is a bit of a u128");

/// The bit of `reason`'s kind.
fn kind(reason: &Reason) -> u128 {
    let code = ReasonCode::ALL
        .iter()
        .position(|c| *c == reason.code)
        .unwrap_or(0);
    let at = match reason.index {
        None => 0,
        Some(0) => 1,
        Some(_) => 2,
    };
    1 << (code * 3 + at)
}

/// Reasons of one code an envelope was given beyond those listed: repeats
/// of listed kinds (issue 14). With the listed ones they account for every
/// reason (P11), each code with its count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unlisted {
    /// The code.
    pub code: ReasonCode,
    /// How many reasons with it are not listed.
    pub count: u32,
}

impl Unlisted {
    /// `count` reasons with `code`, not listed.
    pub const fn new(code: ReasonCode, count: u32) -> Self {
        Self { code, count }
    }
}

/// Whether signature `k` verified, from the code and signature index of
/// each reason listed and whether any is not: no reason but a warning
/// names it. For a co-signature (k ≥ 1) this fails closed when a
/// co-signature's fault may be among the unlisted reasons: a listed one
/// stands for repeats about any k ≥ 1. Whether the origin has a fault is
/// always listed.
pub(crate) fn verified(
    codes: impl Iterator<Item = (ReasonCode, Option<u32>)>,
    mut unlisted: impl Iterator<Item = Unlisted>,
    k: u32,
) -> bool {
    let (mut named, mut a_cosignature) = (false, false);
    for (_, index) in codes.filter(|(code, _)| !code.is_warning()) {
        named |= index == Some(k);
        a_cosignature |= index.is_some_and(|i| i > 0);
    }
    let hidden = k > 0 && a_cosignature && unlisted.any(|u| !u.code.is_warning());
    !named && !hidden
}

/// The reasons [`herald_core::check`] gave one envelope, as listed.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReasonList {
    list: Vec<Reason>,
    /// The kinds listed, a bit each.
    kinds: u128,
    /// See [`listed_for`].
    cap: usize,
    /// By code, in order of first repeat.
    unlisted: Vec<Unlisted>,
}

impl ReasonList {
    /// An empty list for the reasons of `envelope`.
    pub(crate) fn for_envelope(envelope: &[u8]) -> Self {
        Self {
            cap: listed_for(envelope.len()),
            ..Self::default()
        }
    }

    /// The reasons listed, in the order they were given.
    pub(crate) fn listed(&self) -> &[Reason] {
        &self.list
    }

    /// The reasons given beyond those listed, by code.
    pub(crate) fn unlisted(&self) -> &[Unlisted] {
        &self.unlisted
    }
}

impl ReasonSink for ReasonList {
    fn push(&mut self, reason: Reason) {
        let kind = kind(&reason);
        if self.list.len() < self.cap || self.kinds & kind == 0 {
            self.kinds |= kind;
            self.list.push(reason);
        } else {
            match self.unlisted.iter_mut().find(|u| u.code == reason.code) {
                Some(u) => u.count = u.count.saturating_add(1),
                None => self.unlisted.push(Unlisted {
                    code: reason.code,
                    count: 1,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use herald_core::{Detail, Status};

    use super::*;

    fn at(code: ReasonCode, index: Option<u32>) -> Reason {
        Reason {
            code,
            index,
            detail: Detail::None,
        }
    }

    fn status(reasons: &[Reason]) -> Status {
        reasons.iter().map(Reason::status).max().unwrap_or_default()
    }

    #[test]
    fn the_cap_grows_with_the_envelope() {
        assert_eq!(listed_for(0), 3);
        assert_eq!(listed_for(190), 3);
        assert_eq!(listed_for(256 * 4), 4);
        assert_eq!(listed_for(1 << 20), 4096);
    }

    #[test]
    fn repeats_past_the_cap_are_counted_and_every_kind_listed() {
        let mut list = ReasonList::for_envelope(&[0; 200]);
        let mut all = Vec::new();
        let mut given = |r: Reason| {
            all.push(r);
            list.push(r);
        };
        for _ in 0..1000 {
            given(at(ReasonCode::UnknownField, None));
        }
        // A co-signature's fault (partial), then the same code about the
        // envelope (invalid), then one about the origin: each a new kind.
        given(at(ReasonCode::Malformed, Some(7)));
        for k in 8..100 {
            given(at(ReasonCode::Malformed, Some(k)));
        }
        given(at(ReasonCode::Malformed, None));
        given(at(ReasonCode::BadSignature, Some(0)));
        given(at(ReasonCode::BadSignature, Some(0)));

        assert_eq!(list.listed().len(), 3 + 3);
        for code in [
            ReasonCode::UnknownField,
            ReasonCode::Malformed,
            ReasonCode::BadSignature,
        ] {
            let given = all.iter().filter(|r| r.code == code).count();
            let listed = list.listed().iter().filter(|r| r.code == code).count();
            let unlisted = list.unlisted().iter().find(|u| u.code == code);
            assert_eq!(
                listed + unlisted.map_or(0, |u| u.count as usize),
                given,
                "every {code} reason is listed or counted"
            );
        }
        assert_eq!(list.unlisted().len(), 3, "one count per code");
        assert_eq!(status(list.listed()), status(&all));
        assert_eq!(status(list.listed()), Status::Invalid);
        for r in &all {
            assert!(
                list.listed()
                    .iter()
                    .any(|l| l.code == r.code && kind(l) == kind(r)),
                "{r} has a listed reason of its kind"
            );
        }
    }

    #[test]
    fn a_partial_envelope_stays_partial() {
        let mut list = ReasonList::for_envelope(&[]);
        for k in 1..=50 {
            list.push(at(ReasonCode::BadSignature, Some(k)));
        }
        assert_eq!(list.listed().len(), 3);
        assert_eq!(
            list.unlisted(),
            [Unlisted {
                code: ReasonCode::BadSignature,
                count: 47
            }]
        );
        assert_eq!(status(list.listed()), Status::Partial);
    }
}
