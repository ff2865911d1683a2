//! A trace audit's result with each envelope's report kept as codes
//! (issue 14): reason codes and small indices, the envelope's fixed-size
//! facts and its bytes in the input; the hex ids, the detail texts and the
//! input's name are formed only when a report is asked for or written.
//!
//! A report formed from an [`Audited`] is the one [`crate::audit`] gives
//! ([`Audited::into_report`] is how it gives it), so the CLI can write
//! 300 000 envelopes' reports one at a time without holding them all.

use alloc::{boxed::Box, collections::BTreeMap, string::String, vec::Vec};
use std::collections::HashMap;

use herald_core::{Detail, Reason, ReasonCode, Status};
use serde::Serialize;

use crate::facts::Facts;
use crate::lifecycle::{Findings, Judged};
use crate::reasons::{Item, ReasonList, Unlisted};
use crate::report::{
    EnvelopeReport, KeyOrigin, ProofReport, Report, ReportReason, Shape, SignedBy, Source, Summary,
    TraceReport, TraceShape, hex, status_of,
};
use crate::trace::Input;

/// One reason as an audit keeps it until its text is needed: 12 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Why {
    /// A reason [`herald_core::check_with`] or
    /// [`herald_core::check_parent_link`] gave, its detail kept once per
    /// audit ([`Details`]).
    Check {
        code: ReasonCode,
        /// The signature it is about, or [`NO_INDEX`].
        index: u32,
        /// Its place in [`Details`].
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
    /// its text kept once per audit ([`Details`]).
    Text {
        code: ReasonCode,
        /// Its place in [`Details`]' texts.
        text: u32,
    },
    /// Not a reason: how many more with `code` [`herald_core::check_with`]
    /// gave than are listed ([`crate::reasons`]). [`Whys::iter`] skips it.
    Unlisted { code: ReasonCode, count: u32 },
    /// Reasons with `code` about signatures `first` … `first + count - 1`
    /// (a run of [`crate::reasons::ReasonList`]), their details a byte
    /// each in [`Details`], under the listed entry and `first`.
    Run {
        code: ReasonCode,
        first: u32,
        count: u32,
    },
}

impl Why {
    fn code(&self) -> ReasonCode {
        match self {
            Self::Check { code, .. } => *code,
            Self::MissingParent => ReasonCode::MissingParent,
            Self::Replayed { .. } => ReasonCode::ReplayedNonce,
            Self::Text { code, .. } | Self::Unlisted { code, .. } | Self::Run { code, .. } => *code,
        }
    }

    /// The code and signature index of each reason this stands for.
    fn codes(self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> {
        let (one, code, range) = match self {
            Self::Run { code, first, count } => (None, code, first..first.saturating_add(count)),
            w => (Some((w.code(), w.index())), w.code(), 0..0),
        };
        one.into_iter().chain(range.map(move |k| (code, Some(k))))
    }

    /// The report form of each reason this stands for, about listed entry
    /// `i`.
    fn forms(self, i: usize, cx: &Context<'_, '_>) -> impl Iterator<Item = ReportReason> {
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

    fn index(&self) -> Option<u32> {
        match self {
            Self::Check { index, .. } => (*index != NO_INDEX).then_some(*index),
            _ => None,
        }
    }

    /// The report form of this reason about listed entry `i`: every detail
    /// text of the audit's own reasons is here.
    fn form(&self, i: usize, cx: &Context<'_, '_>) -> ReportReason {
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

/// A reason's missing signature index ([`Why::Check`]).
const NO_INDEX: u32 = u32::MAX;

/// An envelope's reasons as kept: up to three in place, more on the heap
/// (most envelopes have a few; a heap block for them would cost more than
/// the reasons, issue 14).
#[derive(Clone, Debug)]
pub(crate) enum Whys {
    /// `items[..len]`.
    Few { len: Few, items: [Why; 3] },
    /// More than three.
    Many(Vec<Why>),
}

/// How many of [`Whys::Few`]'s items are set (an enum, so that [`Whys`]
/// needs no tag beside it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Few {
    None,
    One,
    Two,
    Three,
}

impl Few {
    fn get(self) -> usize {
        self as usize
    }

    fn next(self) -> Option<Self> {
        match self {
            Self::None => Some(Self::One),
            Self::One => Some(Self::Two),
            Self::Two => Some(Self::Three),
            Self::Three => None,
        }
    }
}

impl Default for Whys {
    fn default() -> Self {
        Self::Few {
            len: Few::None,
            items: [Why::MissingParent; 3],
        }
    }
}

impl Whys {
    pub(crate) fn push(&mut self, why: Why) {
        match self {
            Self::Few { len, items } => match (len.next(), items.get_mut(len.get())) {
                (Some(next), Some(slot)) => {
                    *slot = why;
                    *len = next;
                }
                _ => {
                    let mut list = spilled(items.len() + 1);
                    list.extend_from_slice(items);
                    list.push(why);
                    *self = Self::Many(list);
                }
            },
            Self::Many(list) => list.push(why),
        }
    }

    /// The reasons, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Why> + '_ {
        self.all()
            .iter()
            .filter(|w| !matches!(w, Why::Unlisted { .. }))
    }

    /// The reasons given beyond those listed, by code.
    pub(crate) fn unlisted(&self) -> impl Iterator<Item = Unlisted> + '_ {
        self.all().iter().filter_map(|w| match *w {
            Why::Unlisted { code, count } => Some(Unlisted { code, count }),
            _ => None,
        })
    }

    /// The reasons and the counts of those unlisted.
    fn all(&self) -> &[Why] {
        match self {
            Self::Few { len, items } => items.get(..len.get()).unwrap_or_default(),
            Self::Many(list) => list,
        }
    }

    /// The reasons of `list` about listed entry `entry` (each kept by
    /// `details`, a run as one [`Why::Run`]), then the counts of those
    /// unlisted.
    pub(crate) fn of(list: &ReasonList, details: &mut Details, entry: u32) -> Self {
        let mut whys = Vec::with_capacity(list.items().len() + list.unlisted().len());
        for item in list.items() {
            match item {
                Item::One(r) => whys.push(details.why(r)),
                Item::Run {
                    code,
                    first,
                    details: ids,
                } => match details.keep_run(list, entry, *first, ids) {
                    Some(count) => whys.push(Why::Run {
                        code: *code,
                        first: *first,
                        count,
                    }),
                    // No room for its details: reason by reason.
                    None => {
                        for (&d, k) in ids.iter().zip(*first..) {
                            let reason = Reason {
                                code: *code,
                                index: Some(k),
                                detail: list.detail(d),
                            };
                            whys.push(details.why(&reason));
                        }
                    }
                },
            }
        }
        whys.extend(list.unlisted().iter().map(|u| Why::Unlisted {
            code: u.code,
            count: u.count,
        }));
        whys.into_iter().collect()
    }

    /// Forget the details of the runs kept for listed entry `entry`.
    pub(crate) fn forget_runs(&self, details: &mut Details, entry: u32) {
        for w in self.all() {
            if let Why::Run { first, .. } = w {
                details.runs.remove(&(entry, *first));
            }
        }
    }
}

/// A heap block for `n` reasons that spill out of [`Whys::Few`], with room
/// for one more (a later step's: a lifecycle text, a parent link).
fn spilled(n: usize) -> Vec<Why> {
    Vec::with_capacity(n + 1)
}

impl FromIterator<Why> for Whys {
    fn from_iter<I: IntoIterator<Item = Why>>(iter: I) -> Self {
        let iter = iter.into_iter();
        // More than fit in place: one heap block for them at once.
        let known = iter.size_hint().0;
        if known > 3 {
            let mut list = spilled(known);
            list.extend(iter);
            return Self::Many(list);
        }
        let mut whys = Self::default();
        for why in iter {
            whys.push(why);
        }
        whys
    }
}

/// Each distinct detail of an audit's reasons, once: a reason keeps its
/// place here (most envelopes share a handful of details). The lifecycle
/// rules' texts likewise: an identity's envelopes share a few. And what a
/// report kept as codes has no field for: the lineage consents of births
/// (P8), by listed entry.
#[derive(Debug, Default)]
pub(crate) struct Details {
    pub(crate) list: Vec<Detail>,
    at: HashMap<Detail, u32>,
    /// The details of the runs' reasons ([`Why::Run`]), each a place in
    /// `run_table`, by listed entry and first signature index.
    runs: HashMap<(u32, u32), Box<[u8]>>,
    /// Places in `list` of the runs' details (at most 256).
    run_table: Vec<u32>,
    texts: Vec<String>,
    text_at: HashMap<String, u32>,
    consents: BTreeMap<u32, Vec<String>>,
}

impl Details {
    /// `reason` as kept.
    pub(crate) fn why(&mut self, reason: &Reason) -> Why {
        let list = &mut self.list;
        let detail = *self.at.entry(reason.detail).or_insert_with(|| {
            list.push(reason.detail);
            u32::try_from(list.len() - 1).unwrap_or(u32::MAX)
        });
        Why::Check {
            code: reason.code,
            // An envelope holds at most `Limits::max_items` signatures, and
            // its bytes are in memory: never four thousand million.
            index: reason.index.map_or(NO_INDEX, |i| i.min(NO_INDEX - 1)),
            detail,
        }
    }

    /// Keep the details of a run of `list` (its places `ids` in `list`'s
    /// table) for listed entry `entry`; its length, or `None` when
    /// `run_table` has no room for one of them.
    fn keep_run(&mut self, list: &ReasonList, entry: u32, first: u32, ids: &[u8]) -> Option<u32> {
        let mut local: Vec<Option<u8>> = alloc::vec![None; 256];
        let mut kept = Vec::with_capacity(ids.len());
        for &d in ids {
            let slot = local.get_mut(usize::from(d))?;
            let place = match *slot {
                Some(p) => p,
                None => {
                    let detail = list.detail(d);
                    let list = &mut self.list;
                    let at = *self.at.entry(detail).or_insert_with(|| {
                        list.push(detail);
                        u32::try_from(list.len() - 1).unwrap_or(u32::MAX)
                    });
                    let p = match self.run_table.iter().position(|&t| t == at) {
                        Some(p) => u8::try_from(p).ok()?,
                        None => {
                            let p = u8::try_from(self.run_table.len()).ok()?;
                            self.run_table.push(at);
                            p
                        }
                    };
                    *slot = Some(p);
                    p
                }
            };
            kept.push(place);
        }
        let count = crate::reasons::run_len(&kept);
        self.runs.insert((entry, first), kept.into_boxed_slice());
        Some(count)
    }

    /// The details of the run of listed entry `i` from signature `first`.
    fn run(&self, i: usize, first: u32) -> &[u8] {
        u32::try_from(i)
            .ok()
            .and_then(|i| self.runs.get(&(i, first)))
            .map_or(&[], |b| b)
    }

    /// A lifecycle rule's `reason` as kept (the rules give no signature
    /// index).
    fn text(&mut self, reason: ReportReason) -> Why {
        let texts = &mut self.texts;
        let text = match self.text_at.get(&reason.detail) {
            Some(&at) => at,
            None => {
                texts.push(reason.detail.clone());
                let at = u32::try_from(texts.len() - 1).unwrap_or(u32::MAX);
                self.text_at.insert(reason.detail, at);
                at
            }
        };
        Why::Text {
            code: reason.code,
            text,
        }
    }
}

/// What the reports are formed from: listed entry `i`'s facts and bytes,
/// the inputs they lie in, the details of the reasons.
#[derive(Clone, Copy)]
pub(crate) struct Context<'s, 'a> {
    pub(crate) facts: &'s [Option<Facts<'a>>],
    pub(crate) bytes: &'s [&'a [u8]],
    pub(crate) inputs: &'a [Input],
    pub(crate) details: &'s Details,
}

impl<'a> Context<'_, 'a> {
    fn fact(&self, i: usize) -> Option<&Facts<'a>> {
        self.facts.get(i).and_then(Option::as_ref)
    }

    /// The input `bytes` lie in, and their offset there.
    fn source(&self, bytes: &[u8]) -> Source {
        let at = bytes.as_ptr() as usize;
        self.inputs
            .iter()
            .find(|input| {
                let start = input.bytes.as_ptr() as usize;
                (start..=start + input.bytes.len()).contains(&at)
            })
            .map_or_else(Source::default, |input| Source {
                input: input.name.clone(),
                offset: at - input.bytes.as_ptr() as usize,
            })
    }
}

/// Which key made the origin signature, as kept: a [`SignedBy`] in four
/// bytes (0: not said, 1: the birth's key, 2 + n: the n-th molt's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Signed(u32);

impl Signed {
    fn of(by: SignedBy) -> Self {
        Self(match by {
            SignedBy::Birth => 1,
            SignedBy::Molt(n) => u32::try_from(n).map_or(u32::MAX, |n| n.saturating_add(2)),
        })
    }

    fn get(self) -> Option<SignedBy> {
        match self.0 {
            0 => None,
            1 => Some(SignedBy::Birth),
            n => Some(SignedBy::Molt(n as usize - 2)),
        }
    }
}

/// The report of a decoded envelope, as codes.
#[derive(Clone, Debug)]
pub(crate) struct Codes {
    /// Its listed entry (facts, bytes, input).
    pub(crate) entry: u32,
    /// `from`, a byte range of its bytes.
    pub(crate) from: (u32, u32),
    pub(crate) reasons: Whys,
    pub(crate) key_source: Option<KeyOrigin>,
    pub(crate) signing_key: Signed,
    /// The last two reasons an audit can give, beside the list in bytes a
    /// report as codes has spare: its parent is not in the set (step 4)…
    pub(crate) missing_parent: bool,
    /// … and the entry that claimed its `(from key, nonce)` (step 5), or
    /// [`NOT_REPLAYED`].
    pub(crate) replayed: u32,
}

/// [`Codes::replayed`] when the envelope is no replay.
pub(crate) const NOT_REPLAYED: u32 = u32::MAX;

/// [`Codes::from`] of an item with no `from` that is a sigil.
pub(crate) const NO_SENDER: (u32, u32) = (0, 0);

impl Codes {
    /// Every reason in order: the list, then the missing parent, then the
    /// replay (steps 4 and 5 come last).
    fn whys(&self) -> impl Iterator<Item = Why> + '_ {
        let parent = self.missing_parent.then_some(Why::MissingParent);
        let replay = (self.replayed != NOT_REPLAYED).then_some(Why::Replayed {
            first: self.replayed,
        });
        self.reasons.iter().copied().chain(parent).chain(replay)
    }

    fn sender<'a>(&self, cx: &Context<'_, 'a>) -> Option<&'a str> {
        let bytes = cx.bytes.get(self.entry as usize)?;
        let (start, end) = (self.from.0 as usize, self.from.1 as usize);
        if start == end {
            // [`NO_SENDER`]: no `from` that is a sigil.
            return None;
        }
        core::str::from_utf8(bytes.get(start..end)?).ok()
    }

    fn form(&self, cx: &Context<'_, '_>) -> EnvelopeReport {
        let i = self.entry as usize;
        let f = cx.fact(i);
        let bytes = cx.bytes.get(i).copied().unwrap_or_default();
        let source = cx.source(bytes);
        // An item that did not decode is named by the fields that did parse.
        let id = match f {
            Some(f) => Some(hex(f.id)),
            None => crate::trace::named_fields(bytes).0,
        };
        EnvelopeReport {
            id,
            from: self.sender(cx).map(String::from),
            reasons: self.whys().flat_map(|w| w.forms(i, cx)).collect(),
            unlisted_reasons: self.reasons.unlisted().collect(),
            key_source: self.key_source,
            signing_key: self.signing_key.get(),
            lineage_consents: cx
                .details
                .consents
                .get(&self.entry)
                .cloned()
                .unwrap_or_default(),
            source,
            trace: f.map(|f| hex(f.trace)),
            parent: f.and_then(|f| f.parent).map(|p| hex(p)),
            kind: f.map(|f| f.kind),
        }
    }
}

/// One envelope's report as an audit keeps it.
#[derive(Clone, Debug)]
pub(crate) enum Kept {
    /// A decoded envelope's, as codes.
    Codes(Codes),
    /// Formed in full: a piece of input that could not be split into
    /// items (one reason each).
    Formed {
        /// Its listed entry, when it decoded.
        entry: Option<u32>,
        /// The report.
        report: Box<EnvelopeReport>,
    },
}

impl Default for Kept {
    fn default() -> Self {
        Self::Formed {
            entry: None,
            report: Box::default(),
        }
    }
}

impl Kept {
    /// A report formed in full.
    pub(crate) fn formed(entry: Option<u32>, report: EnvelopeReport) -> Self {
        Self::Formed {
            entry,
            report: Box::new(report),
        }
    }

    /// The report in full.
    pub(crate) fn form(&self, cx: &Context<'_, '_>) -> EnvelopeReport {
        match self {
            Self::Codes(c) => c.form(cx),
            Self::Formed { report, .. } => (**report).clone(),
        }
    }

    /// Its listed entry, when it decoded.
    pub(crate) fn entry(&self) -> Option<usize> {
        match self {
            Self::Codes(c) => Some(c.entry as usize),
            Self::Formed { entry, .. } => entry.map(|e| e as usize),
        }
    }

    /// Add a reason (its text formed now when the report is).
    pub(crate) fn push(&mut self, why: Why, cx: &Context<'_, '_>) {
        match self {
            Self::Codes(c) => match why {
                Why::MissingParent => c.missing_parent = true,
                Why::Replayed { first } => c.replayed = first,
                why => c.reasons.push(why),
            },
            Self::Formed { entry, report } => {
                let i = entry.map_or(usize::MAX, |e| e as usize);
                report.push(why.form(i, cx));
            }
        }
    }

    /// Every reason's code and signature index.
    fn all_codes(&self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> + '_ {
        let (codes, formed) = match self {
            Self::Codes(c) => (Some(c.whys().flat_map(|w| w.codes())), None),
            Self::Formed { report, .. } => {
                (None, Some(report.reasons.iter().map(|r| (r.code, r.index))))
            }
        };
        codes
            .into_iter()
            .flatten()
            .chain(formed.into_iter().flatten())
    }

    /// The verdict (P13), as [`EnvelopeReport::status`].
    pub(crate) fn status(&self) -> Status {
        self.all_codes()
            .map(|(code, index)| status_of(code, index))
            .max()
            .unwrap_or(Status::Valid)
    }

    /// Its reasons replaced by those of a check with a molt's key
    /// (`bytes`, the envelope's, name an unknown field's key).
    pub(crate) fn redo(
        &mut self,
        reasons: &ReasonList,
        bytes: &[u8],
        details: &mut Details,
        key_source: KeyOrigin,
    ) {
        match self {
            Self::Codes(c) => {
                c.reasons.forget_runs(details, c.entry);
                c.reasons = Whys::of(reasons, details, c.entry);
                c.key_source = Some(key_source);
            }
            Self::Formed { report, .. } => {
                report.reasons = reasons
                    .listed()
                    .map(|r| ReportReason::of(&r, bytes))
                    .collect();
                report.unlisted_reasons = reasons.unlisted().to_vec();
                report.key_source = Some(key_source);
            }
        }
    }

    /// Set which key made the origin signature.
    pub(crate) fn set_signing_key(&mut self, by: SignedBy) {
        match self {
            Self::Codes(c) => c.signing_key = Signed::of(by),
            Self::Formed { report, .. } => report.signing_key = Some(by),
        }
    }

    fn key_source(&self) -> Option<KeyOrigin> {
        match self {
            Self::Codes(c) => c.key_source,
            Self::Formed { report, .. } => report.key_source,
        }
    }
}

impl Findings for Kept {
    fn codes(&self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> + '_ {
        self.all_codes()
    }
}

/// A kept report open to the lifecycle rules: the texts and lineage
/// consents they give go to the audit's [`Details`].
pub(crate) struct Judging<'k> {
    pub(crate) kept: &'k mut Kept,
    pub(crate) details: &'k mut Details,
}

impl Findings for Judging<'_> {
    fn codes(&self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> + '_ {
        self.kept.all_codes()
    }
}

impl Judged for Judging<'_> {
    fn push(&mut self, reason: ReportReason) {
        match self.kept {
            Kept::Codes(c) => c.reasons.push(self.details.text(reason)),
            Kept::Formed { report, .. } => report.push(reason),
        }
    }

    fn set_signing_key(&mut self, by: SignedBy) {
        self.kept.set_signing_key(by);
    }

    fn consent(&mut self, parent: String) {
        match self.kept {
            Kept::Codes(c) => self
                .details
                .consents
                .entry(c.entry)
                .or_default()
                .push(parent),
            Kept::Formed { report, .. } => report.lineage_consents.push(parent),
        }
    }
}

/// A trace as an audit keeps it: ids as listed entries, 28 bytes.
#[derive(Clone, Debug)]
pub(crate) struct TraceKept {
    /// Its first listed entry, whose facts name the trace.
    pub(crate) first: u32,
    /// The genesis's listed entry.
    pub(crate) genesis: Option<u32>,
    /// Its leaves: their listed entries are [`Audited`]'s `leaves[range]`.
    pub(crate) leaves: core::ops::Range<u32>,
    pub(crate) valid: u32,
    pub(crate) partial: u32,
    pub(crate) invalid: u32,
}

impl TraceKept {
    /// The trace of listed entry `first`, nothing counted yet.
    pub(crate) fn new(first: u32) -> Self {
        Self {
            first,
            genesis: None,
            leaves: 0..0,
            valid: 0,
            partial: 0,
            invalid: 0,
        }
    }

    /// Its counts as reported.
    fn counts(&self) -> TraceCounts {
        TraceCounts {
            valid: self.valid as usize,
            partial: self.partial as usize,
            invalid: self.invalid as usize,
            leaves: self.leaves.len(),
        }
    }
}

/// The ids of a decoded envelope, as the tree of a report links them.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Links<'s> {
    /// The `id` field.
    pub id: &'s [u8; 32],
    /// The `parent` field.
    pub parent: Option<&'s [u8; 32]>,
    /// The `trace` field.
    pub trace: &'s [u8; 32],
}

/// One trace's counts (CLI.md `traces`), without its ids in hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceCounts {
    /// Valid envelopes.
    pub valid: usize,
    /// Partial envelopes.
    pub partial: usize,
    /// Invalid envelopes.
    pub invalid: usize,
    /// Leaves.
    pub leaves: usize,
}

/// A whole verification ([`crate::trace::audited`]) with each envelope's
/// report kept as codes: envelope `k`'s report is formed by
/// [`Audited::envelope`], equal to `audit(…).envelopes[k]`; the JSON
/// document written is byte for byte [`Report::write_document`]'s.
/// It borrows the inputs, whose bytes the reports are formed from.
#[derive(Debug)]
pub struct Audited<'a> {
    /// In report order (items that are not envelopes in their places).
    pub(crate) kept: Vec<Kept>,
    /// By listed entry.
    pub(crate) facts: Vec<Option<Facts<'a>>>,
    pub(crate) bytes: Vec<&'a [u8]>,
    pub(crate) inputs: &'a [Input],
    pub(crate) details: Details,
    pub(crate) traces: Vec<TraceKept>,
    /// Every trace's leaves, grouped by trace.
    pub(crate) leaves: Vec<u32>,
    pub(crate) summary: Summary,
    pub(crate) proofs: Vec<ProofReport>,
    pub(crate) unlisted: usize,
}

impl<'a> Audited<'a> {
    fn cx(&self) -> Context<'_, 'a> {
        Context {
            facts: &self.facts,
            bytes: &self.bytes,
            inputs: self.inputs,
            details: &self.details,
        }
    }

    /// How many envelopes (and listed items that are not envelopes).
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Whether nothing is listed.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Envelope `k`'s report, formed now.
    pub fn envelope(&self, k: usize) -> Option<EnvelopeReport> {
        Some(self.kept.get(k)?.form(&self.cx()))
    }

    /// Every envelope's report in order, each formed as it is reached.
    pub fn envelopes(&self) -> impl ExactSizeIterator<Item = EnvelopeReport> + '_ {
        let cx = self.cx();
        self.kept.iter().map(move |k| k.form(&cx))
    }

    /// Envelope `k`'s verdict (P13).
    pub fn status(&self, k: usize) -> Option<Status> {
        self.kept.get(k).map(Kept::status)
    }

    /// Whether envelope `k`'s report has a reason with `code`.
    pub fn has(&self, k: usize, code: ReasonCode) -> bool {
        self.kept.get(k).is_some_and(|e| e.has(code))
    }

    /// Where envelope `k`'s origin key came from.
    pub fn key_source(&self, k: usize) -> Option<KeyOrigin> {
        self.kept.get(k).and_then(Kept::key_source)
    }

    /// Envelope `k`'s key and self-description when it is a birth that
    /// introduced its key into the set ([`crate::described::self_described`]).
    pub fn self_described(&self, k: usize) -> Option<crate::described::SelfDescribed<'a>> {
        if self.key_source(k) != Some(KeyOrigin::Birth) {
            return None;
        }
        let bytes: &'a [u8] = self.bytes.get(self.kept.get(k)?.entry()?)?;
        // Only a birth is formed again: a set may hold a million
        // envelopes signed by a key one birth introduced.
        if herald_core::EnvelopeRef::decode(bytes).ok()?.kind() != herald_core::Kind::Birth {
            return None;
        }
        crate::described::self_described(&self.envelope(k)?, bytes)
    }

    /// Envelope `k`'s `from` sigil, when it parsed.
    pub fn from(&self, k: usize) -> Option<&str> {
        match self.kept.get(k)? {
            Kept::Codes(c) => c.sender(&self.cx()),
            Kept::Formed { report, .. } => report.from.as_deref(),
        }
    }

    /// Envelope `k`'s ids, when it decoded.
    pub fn links(&self, k: usize) -> Option<Links<'_>> {
        let f = self.facts.get(self.kept.get(k)?.entry()?)?.as_ref()?;
        Some(Links {
            id: f.id,
            parent: f.parent,
            trace: f.trace,
        })
    }

    /// Every trace's id and counts, in order of first appearance.
    pub fn trace_counts(&self) -> impl Iterator<Item = (&[u8; 32], TraceCounts)> + '_ {
        self.traces.iter().map(|t| (self.trace_id(t), t.counts()))
    }

    /// Every trace's report, in order of first appearance, each formed as
    /// it is reached.
    pub fn traces(&self) -> impl ExactSizeIterator<Item = TraceReport> + '_ {
        self.traces.iter().map(move |t| {
            let counts = t.counts();
            TraceReport {
                trace: hex(self.trace_id(t)),
                genesis: t.genesis.map(|i| self.id_hex(i)),
                leaves: self.leaves_of(t).iter().map(|&i| self.id_hex(i)).collect(),
                valid: counts.valid,
                partial: counts.partial,
                invalid: counts.invalid,
            }
        })
    }

    /// The id of trace `t`.
    fn trace_id(&self, t: &TraceKept) -> &[u8; 32] {
        self.facts
            .get(t.first as usize)
            .and_then(Option::as_ref)
            .map_or(&[0; 32], |f| f.trace)
    }

    /// The listed entries of trace `t`'s leaves.
    fn leaves_of(&self, t: &TraceKept) -> &[u32] {
        self.leaves
            .get(t.leaves.start as usize..t.leaves.end as usize)
            .unwrap_or_default()
    }

    /// Listed entry `i`'s id, hex.
    fn id_hex(&self, i: u32) -> String {
        self.facts
            .get(i as usize)
            .and_then(Option::as_ref)
            .map_or_else(String::new, |f| hex(f.id))
    }

    /// Counts per status.
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// The bundled inclusion proofs' reports.
    pub fn proofs(&self) -> &[ProofReport] {
        &self.proofs
    }

    /// Items that are not envelopes counted, not listed ([`Report::unlisted`]).
    pub fn unlisted(&self) -> usize {
        self.unlisted
    }

    /// As [`Report::all_valid`].
    pub fn all_valid(&self) -> bool {
        crate::report::all_valid(
            self.kept.iter().map(Kept::status),
            self.unlisted,
            &self.proofs,
        )
    }

    /// As [`Report::write_document`], each report formed as it is written.
    pub fn write_document(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::report::write_document(self, out)
    }

    /// Every report formed: the [`Report`] of [`crate::audit`].
    pub fn into_report(self) -> Report {
        let envelopes = self.envelopes().collect();
        let traces = self.traces().collect();
        Report {
            envelopes,
            traces,
            summary: self.summary,
            proofs: self.proofs,
            unlisted: self.unlisted,
        }
    }
}

impl Serialize for Audited<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Shape {
            envelopes: Each(|| self.envelopes()),
            traces: Each(|| self.traces.iter().map(|t| Written(self, t))),
            summary: self.summary,
            proofs: &self.proofs,
            unlisted: self.unlisted,
        }
        .serialize(s)
    }
}

/// A trace of an [`Audited`] as its JSON is written: its leaves' ids
/// formed one at a time, not gathered ([`TraceShape`]).
struct Written<'s, 'a>(&'s Audited<'a>, &'s TraceKept);

impl Serialize for Written<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Self(audited, t) = *self;
        let genesis = t.genesis.map(|i| audited.id_hex(i));
        let counts = t.counts();
        TraceShape {
            trace: &hex(audited.trace_id(t)),
            genesis: genesis.as_deref(),
            leaves: Each(|| audited.leaves_of(t).iter().map(|&i| audited.id_hex(i))),
            valid: counts.valid,
            partial: counts.partial,
            invalid: counts.invalid,
        }
        .serialize(s)
    }
}

/// A JSON array of what `F` iterates, each item serialized as it is made.
struct Each<F>(F);

impl<F, I> Serialize for Each<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an audit keeps per decoded envelope beyond its facts stays
    /// small (issue 14; docs/performance.md): a reason is 12 bytes, a
    /// report as codes 64 with up to three reasons in place and the
    /// missing parent and replay beside them.
    /// Reasons kept in place and past two on the heap keep their order.
    #[test]
    fn reasons_keep_their_order_in_place_and_on_the_heap() {
        for n in 0..6u32 {
            let whys: Whys = (0..n).map(|first| Why::Replayed { first }).collect();
            let firsts: Vec<u32> = whys
                .iter()
                .map(|w| match w {
                    Why::Replayed { first } => *first,
                    _ => u32::MAX,
                })
                .collect();
            assert_eq!(firsts, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn which_key_signed_is_kept_as_it_was_said() {
        for by in [
            SignedBy::Birth,
            SignedBy::Molt(0),
            SignedBy::Molt(1),
            SignedBy::Molt(9),
        ] {
            assert_eq!(Signed::of(by).get(), Some(by));
        }
        assert_eq!(Signed::default().get(), None);
    }

    #[test]
    fn kept_reports_are_small() {
        assert!(
            core::mem::size_of::<Why>() <= 12,
            "{}",
            core::mem::size_of::<Why>()
        );
        assert!(
            core::mem::size_of::<Kept>() <= 64,
            "{}",
            core::mem::size_of::<Kept>()
        );
    }
}
