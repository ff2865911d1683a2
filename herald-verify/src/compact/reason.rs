//! One reason of an envelope as a compact report keeps it until its text
//! is needed ([`CompactReason`], 12 bytes): a code and small indices into
//! the audit's [`DetailTable`].

use alloc::string::String;

use herald_core::{Detail, Reason, ReasonCode};

use super::details::ReportParts;
use crate::report::{ReportReason, hex};

/// One reason as an audit keeps it until its text is needed: 12 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CompactReason {
    /// A reason [`herald_core::check_with`] or
    /// [`herald_core::check_parent_link`] gave, its detail kept once per
    /// audit ([`DetailTable`]).
    Check {
        code: ReasonCode,
        /// The signature it is about, or [`NO_INDEX`].
        index: u32,
        /// Its place in [`DetailTable`].
        detail: u32,
    },
    /// The parent (in the facts) is not in the set.
    MissingParent,
    /// The `(from key, nonce)` pair was claimed by listed entry `first`.
    Replayed {
        /// The entry that claimed it.
        first: u32,
    },
    /// A reason the lifecycle rules gave ([`crate::lifecycle::rules`]),
    /// its text kept once per audit ([`DetailTable`]).
    Text {
        code: ReasonCode,
        /// Its place in [`DetailTable`]' texts.
        text: u32,
    },
    /// Not a reason: how many more with `code` [`herald_core::check_with`]
    /// gave than are listed ([`crate::reasons`]). [`CompactReasons::iter`] skips it.
    Unlisted { code: ReasonCode, count: u32 },
    /// Reasons with `code` about signatures `first` … `first + count - 1`
    /// (a run of [`crate::reasons::ReasonList`]), their details a byte
    /// each in [`DetailTable`], under the listed entry and `first`.
    Run {
        code: ReasonCode,
        first: u32,
        count: u32,
    },
}

impl CompactReason {
    pub(super) fn code(&self) -> ReasonCode {
        match self {
            Self::Check { code, .. } => *code,
            Self::MissingParent => ReasonCode::MissingParent,
            Self::Replayed { .. } => ReasonCode::ReplayedNonce,
            Self::Text { code, .. } | Self::Unlisted { code, .. } | Self::Run { code, .. } => *code,
        }
    }

    /// The code and signature index of each reason this stands for.
    pub(super) fn codes(self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> {
        let (one, code, range) = match self {
            Self::Run { code, first, count } => (None, code, first..first.saturating_add(count)),
            w => (Some((w.code(), w.index())), w.code(), 0..0),
        };
        one.into_iter().chain(range.map(move |k| (code, Some(k))))
    }

    /// The report form of each reason this stands for, about listed entry
    /// `i`.
    pub(super) fn forms(
        self,
        i: usize,
        cx: &ReportParts<'_, '_>,
    ) -> impl Iterator<Item = ReportReason> {
        let (one, run) = match self {
            Self::Run { code, first, count } => (None, Some((code, first, count))),
            w => (Some(w.form(i, cx)), None),
        };
        let bytes = cx.bytes.get(i).copied().unwrap_or_default();
        let run = run.into_iter().flat_map(move |(code, first, count)| {
            let details = cx.details.run(i, first);
            (0..count).map(move |j| {
                let detail = details
                    .get(j as usize)
                    .and_then(|&d| cx.details.run_table.get(usize::from(d)))
                    .and_then(|&at| cx.details.list.get(at as usize))
                    .copied()
                    .unwrap_or(Detail::None);
                let reason = Reason {
                    code,
                    index: Some(first.saturating_add(j)),
                    detail,
                };
                ReportReason::of(&reason, bytes)
            })
        });
        one.into_iter().chain(run)
    }

    pub(super) fn index(&self) -> Option<u32> {
        match self {
            Self::Check { index, .. } => (*index != NO_INDEX).then_some(*index),
            _ => None,
        }
    }

    /// The report form of this reason about listed entry `i`: every detail
    /// text of the audit's own reasons is here.
    pub(super) fn form(&self, i: usize, cx: &ReportParts<'_, '_>) -> ReportReason {
        match self {
            Self::Check {
                code,
                index,
                detail,
            } => {
                let reason = Reason {
                    code: *code,
                    index: (*index != NO_INDEX).then_some(*index),
                    detail: cx
                        .details
                        .list
                        .get(*detail as usize)
                        .copied()
                        .unwrap_or(Detail::None),
                };
                ReportReason::of(&reason, cx.bytes.get(i).copied().unwrap_or_default())
            }
            Self::MissingParent => {
                let parent = cx.fact(i).and_then(|f| f.parent).unwrap_or(&[0; 32]);
                ReportReason::new(
                    ReasonCode::MissingParent,
                    std::format!("parent {} is not in the set", hex(parent)),
                )
            }
            Self::Replayed { first } => {
                let first = *first as usize;
                let by = cx.fact(first).map(|f| hex(f.id));
                ReportReason::new(
                    ReasonCode::ReplayedNonce,
                    std::format!(
                        "the nonce belongs to {} (entry {first}, P10)",
                        by.as_deref().unwrap_or("?")
                    ),
                )
            }
            Self::Text { code, text } => ReportReason::new(
                *code,
                cx.details
                    .texts
                    .get(*text as usize)
                    .cloned()
                    .unwrap_or_default(),
            ),
            Self::Unlisted { code, count } => {
                ReportReason::new(*code, std::format!("{count} more, not listed"))
            }
            // Formed by `forms`, reason by reason.
            Self::Run { code, .. } => ReportReason::new(*code, String::new()),
        }
    }
}

/// A reason's missing signature index ([`CompactReason::Check`]).
pub(super) const NO_INDEX: u32 = u32::MAX;
