//! An envelope's reasons as a verifier lists them (PROFILE P11 revision 3,
//! CLI.md `verify --json`): every reason that names a signature is listed
//! with its index, however many there are; of the reasons that name none,
//! the first [`LISTED_PER_CODE`] of each code are listed and the rest
//! counted by code. Every reason is reported (P11), those repeats as a
//! count.
//!
//! Why the split: a reason that names a signature costs its sender a
//! signature item (and the audit keeps it as 12 bytes of codes,
//! [`crate::compact`]), so listing them all keeps memory bounded by the
//! input, and a user can tell which signature is bad. A reason that names
//! none can cost its sender one byte (a non-map item of `attestations`,
//! `malformed`) or seven (an unknown top-level key, `unknown_field`), and
//! `max_items` bounds them per container, not per input: listed one by one
//! they would cost a verifier tens of times the input. So the audit
//! ([`crate::trace`]) and live reception ([`crate::live`]) both gather
//! [`herald_core::check`]'s reasons here.
//!
//! Every code that occurs is listed at least once, and every reason about
//! a signature is listed, which keeps exact all a verifier reads from the
//! reasons:
//! - the status, since P13 depends only on the code and the index;
//! - whether the origin verified and the envelope claims its nonce (P10);
//! - whether signature k verified ([`verified`]);
//! - whether a code is present.

use alloc::vec::Vec;

use herald_core::{Detail, Reason, ReasonCode, ReasonSink};

/// How many reasons of one code that name no signature are listed in one
/// envelope before the rest are counted (CLI.md `verify --json`).
pub const LISTED_PER_CODE: u32 = 16;

/// The place of `code` in [`ReasonCode::ALL`].
fn slot(code: ReasonCode) -> usize {
    ReasonCode::ALL.iter().position(|c| *c == code).unwrap_or(0)
}

/// Reasons of one code an envelope was given beyond those listed: repeats
/// of a code that name no signature, past the first [`LISTED_PER_CODE`].
/// With the listed ones they account for every reason (P11), each code
/// with its count.
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
/// each reason listed: no reason but a warning names it. Exact, since
/// every reason that names a signature is listed (P11 revision 3).
pub(crate) fn verified(mut codes: impl Iterator<Item = (ReasonCode, Option<u32>)>, k: u32) -> bool {
    !codes.any(|(code, index)| !code.is_warning() && index == Some(k))
}

/// The reasons [`herald_core::check`] gave one envelope, as listed.
///
/// Reasons about consecutive signatures with one code (a run of items of
/// `signatures` that are not signature maps: `malformed` at k, k + 1, …)
/// are kept as a run, a byte each for its detail: such an item can cost
/// its sender one byte, and every one of them is listed.
#[derive(Clone, Debug)]
pub(crate) struct ReasonList {
    items: Vec<Item>,
    /// The details of the runs' reasons, each once (at most 256).
    table: Vec<Detail>,
    /// Reasons without an index listed so far, by [`slot`] of their code.
    plain: [u32; ReasonCode::ALL.len()],
    /// By code, in order of first repeat.
    unlisted: Vec<Unlisted>,
}

/// One reason, or a run of them ([`ReasonList`]).
#[derive(Clone, Debug)]
pub(crate) enum Item {
    One(Reason),
    /// Reasons with `code` about signatures `first`, `first + 1`, …: one
    /// per entry of `details`, each a place in [`ReasonList`]'s table.
    Run {
        code: ReasonCode,
        first: u32,
        details: Vec<u8>,
    },
}

impl Default for ReasonList {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            table: Vec::new(),
            plain: [0; ReasonCode::ALL.len()],
            unlisted: Vec::new(),
        }
    }
}

impl ReasonList {
    /// The reasons listed, in the order they were given.
    pub(crate) fn listed(&self) -> impl Iterator<Item = Reason> + '_ {
        self.items.iter().flat_map(move |item| {
            let (one, run) = match item {
                Item::One(r) => (Some(*r), None),
                Item::Run {
                    code,
                    first,
                    details,
                } => (None, Some((*code, *first, details))),
            };
            let run = run.into_iter().flat_map(move |(code, first, details)| {
                details.iter().zip(first..).map(move |(&d, k)| Reason {
                    code,
                    index: Some(k),
                    detail: self.detail(d),
                })
            });
            one.into_iter().chain(run)
        })
    }

    /// The code and signature index of each reason listed, in order.
    pub(crate) fn codes(&self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> + '_ {
        self.items.iter().flat_map(|item| {
            let (one, code, range) = match item {
                Item::One(r) => (Some((r.code, r.index)), r.code, 0..0),
                Item::Run {
                    code,
                    first,
                    details,
                } => (None, *code, *first..first.saturating_add(run_len(details))),
            };
            one.into_iter().chain(range.map(move |k| (code, Some(k))))
        })
    }

    /// The reasons and runs as kept.
    pub(crate) fn items(&self) -> &[Item] {
        &self.items
    }

    /// The detail at place `d` of the table.
    pub(crate) fn detail(&self, d: u8) -> Detail {
        self.table
            .get(usize::from(d))
            .copied()
            .unwrap_or(Detail::None)
    }

    /// The reasons given beyond those listed, by code.
    pub(crate) fn unlisted(&self) -> &[Unlisted] {
        &self.unlisted
    }

    /// The place of `detail` in the table, added if there is room.
    fn place(&mut self, detail: Detail) -> Option<u8> {
        match self.table.iter().position(|d| *d == detail) {
            Some(at) => u8::try_from(at).ok(),
            None => {
                let at = u8::try_from(self.table.len()).ok()?;
                self.table.push(detail);
                Some(at)
            }
        }
    }

    /// Add `reason` about signature `k` to a run it continues, if any.
    fn extend_run(&mut self, reason: Reason, k: u32) -> bool {
        let (code, prev, prev_detail) = match self.items.last() {
            Some(Item::One(r)) => match r.index {
                Some(i) => (r.code, i, Some(r.detail)),
                None => return false,
            },
            Some(Item::Run {
                code,
                first,
                details,
            }) => (*code, first.saturating_add(run_len(details)) - 1, None),
            None => return false,
        };
        if code != reason.code || prev.checked_add(1) != Some(k) {
            return false;
        }
        let Some(d) = self.place(reason.detail) else {
            return false;
        };
        match prev_detail {
            Some(pd) => {
                let Some(p) = self.place(pd) else {
                    return false;
                };
                if let Some(last) = self.items.last_mut() {
                    *last = Item::Run {
                        code,
                        first: prev,
                        details: alloc::vec![p, d],
                    };
                }
            }
            None => {
                if let Some(Item::Run { details, .. }) = self.items.last_mut() {
                    details.push(d);
                }
            }
        }
        true
    }
}

/// How many reasons a run holds.
pub(crate) fn run_len(details: &[u8]) -> u32 {
    u32::try_from(details.len()).unwrap_or(u32::MAX)
}

impl ReasonSink for ReasonList {
    fn push(&mut self, reason: Reason) {
        match reason.index {
            None => {
                let seen = self.plain.get_mut(slot(reason.code));
                match seen {
                    Some(n) if *n >= LISTED_PER_CODE => {
                        match self.unlisted.iter_mut().find(|u| u.code == reason.code) {
                            Some(u) => u.count = u.count.saturating_add(1),
                            None => self.unlisted.push(Unlisted::new(reason.code, 1)),
                        }
                        return;
                    }
                    Some(n) => *n += 1,
                    None => {}
                }
            }
            Some(k) => {
                if self.extend_run(reason, k) {
                    return;
                }
            }
        }
        self.items.push(Item::One(reason));
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

    fn status(reasons: impl Iterator<Item = Reason>) -> Status {
        reasons.map(|r| r.status()).max().unwrap_or_default()
    }

    #[test]
    fn every_reason_about_a_signature_is_listed() {
        let mut list = ReasonList::default();
        for k in 1..=1000 {
            list.push(at(ReasonCode::BadSignature, Some(k)));
            list.push(at(ReasonCode::DuplicateSigner, Some(k)));
        }
        assert_eq!(list.listed().count(), 2000);
        assert!(list.unlisted().is_empty());
        let indices: Vec<u32> = list
            .listed()
            .filter(|r| r.code == ReasonCode::BadSignature)
            .filter_map(|r| r.index)
            .collect();
        assert_eq!(indices, (1..=1000).collect::<Vec<_>>());
        assert_eq!(status(list.listed()), Status::Partial);
        let codes = || list.codes();
        assert!(verified(codes(), 0));
        assert!(!verified(codes(), 1000));
        assert!(verified(codes(), 1001));
    }

    #[test]
    fn repeats_of_a_code_without_an_index_are_counted_past_sixteen() {
        let mut list = ReasonList::default();
        let mut given = 0;
        for _ in 0..40 {
            list.push(at(ReasonCode::Malformed, None));
            given += 1;
        }
        for _ in 0..1000 {
            list.push(at(ReasonCode::UnknownField, None));
        }
        // Indexed reasons of the same code are never counted.
        for k in 1..=20 {
            list.push(at(ReasonCode::Malformed, Some(k)));
            given += 1;
        }
        let listed = |code, indexed: bool| {
            list.listed()
                .filter(|r| r.code == code && r.index.is_some() == indexed)
                .count()
        };
        assert_eq!(listed(ReasonCode::Malformed, false), 16);
        assert_eq!(listed(ReasonCode::Malformed, true), 20);
        assert_eq!(listed(ReasonCode::UnknownField, false), 16);
        assert_eq!(
            list.unlisted(),
            [
                Unlisted::new(ReasonCode::Malformed, 24),
                Unlisted::new(ReasonCode::UnknownField, 984)
            ]
        );
        assert_eq!(
            listed(ReasonCode::Malformed, false) + listed(ReasonCode::Malformed, true) + 24,
            given
        );
        assert_eq!(status(list.listed()), Status::Invalid);
    }

    /// One-byte items of `signatures` give `malformed` at consecutive
    /// indices: kept as one run, a byte each, listed in order with their
    /// own details, whatever their pattern.
    #[test]
    fn consecutive_reasons_about_signatures_are_kept_as_a_run() {
        let not_a_map = Detail::Field {
            field: "signatures",
            problem: "each signature must be a map",
        };
        let no_by = Detail::Field {
            field: "by",
            problem: "required field missing (P3)",
        };
        let mut list = ReasonList::default();
        list.push(at(ReasonCode::UnknownField, None));
        let mut given = Vec::new();
        for k in 1..=65_535u32 {
            let detail = if k % 3 == 0 { no_by } else { not_a_map };
            let r = Reason {
                code: ReasonCode::Malformed,
                index: Some(k),
                detail,
            };
            given.push(r);
            list.push(r);
        }
        // A gap (signature 65 536 verified), then another code.
        list.push(at(ReasonCode::BadSignature, Some(65_537)));
        list.push(at(ReasonCode::DuplicateSigner, Some(65_537)));
        assert_eq!(list.items().len(), 4, "one reason, a run, two reasons");
        assert_eq!(list.table.len(), 2);
        let listed: Vec<Reason> = list.listed().collect();
        assert_eq!(listed.len(), 1 + 65_535 + 2);
        assert_eq!(listed[1..=65_535], given[..]);
        assert_eq!(listed[65_536].code, ReasonCode::BadSignature);
        let codes: Vec<_> = list.codes().collect();
        assert_eq!(
            codes,
            listed.iter().map(|r| (r.code, r.index)).collect::<Vec<_>>()
        );
        assert!(!verified(list.codes(), 65_535));
        assert!(verified(list.codes(), 65_536));
        assert!(!verified(list.codes(), 65_537));
    }
}
