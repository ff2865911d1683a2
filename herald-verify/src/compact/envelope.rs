//! One envelope's report as a compact report keeps it
//! ([`CompactEnvelope`]): as codes ([`EnvelopeCodes`]) for a decoded
//! envelope, formed in full otherwise; and the same open to the lifecycle
//! rules ([`JudgedEnvelope`]).

use alloc::{boxed::Box, string::String};

use herald_core::{ReasonCode, Status};

use super::details::{DetailTable, ReportParts};
use super::reason::CompactReason;
use super::reasons::CompactReasons;
use crate::keyring::KeyOrigin;
use crate::lifecycle::{Findings, Judged};
use crate::reasons::ReasonList;
use crate::report::{EnvelopeReport, ReportReason, SignedBy, hex, status_of};

/// Which key made the origin signature, as kept: a [`SignedBy`] in four
/// bytes (0: not said, 1: the birth's key, 2 + n: the n-th molt's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SigningKeyCode(u32);

impl SigningKeyCode {
    pub(super) fn of(by: SignedBy) -> Self {
        Self(match by {
            SignedBy::Birth => 1,
            SignedBy::Molt(n) => u32::try_from(n).map_or(u32::MAX, |n| n.saturating_add(2)),
        })
    }

    pub(super) fn get(self) -> Option<SignedBy> {
        match self.0 {
            0 => None,
            1 => Some(SignedBy::Birth),
            n => Some(SignedBy::Molt(n as usize - 2)),
        }
    }
}

/// The report of a decoded envelope, as codes.
#[derive(Clone, Debug)]
pub(crate) struct EnvelopeCodes {
    /// Its listed entry (facts, bytes, input).
    pub(crate) entry: u32,
    /// `from`, a byte range of its bytes.
    pub(crate) from: (u32, u32),
    pub(crate) reasons: CompactReasons,
    pub(crate) key_source: Option<KeyOrigin>,
    pub(crate) signing_key: SigningKeyCode,
    /// The last two reasons an audit can give, beside the list in bytes a
    /// report as codes has spare: its parent is not in the set (step 4)…
    pub(crate) missing_parent: bool,
    /// … and the entry that claimed its `(from key, nonce)` (step 5), or
    /// [`NOT_REPLAYED`].
    pub(crate) replayed: u32,
}

/// [`EnvelopeCodes::replayed`] when the envelope is no replay.
pub(crate) const NOT_REPLAYED: u32 = u32::MAX;

/// [`EnvelopeCodes::from`] of an item with no `from` that is a sigil.
pub(crate) const NO_SENDER: (u32, u32) = (0, 0);

impl EnvelopeCodes {
    /// Every reason in order: the list, then the missing parent, then the
    /// replay (steps 4 and 5 come last).
    pub(super) fn whys(&self) -> impl Iterator<Item = CompactReason> + '_ {
        let parent = self.missing_parent.then_some(CompactReason::MissingParent);
        let replay = (self.replayed != NOT_REPLAYED).then_some(CompactReason::Replayed {
            first: self.replayed,
        });
        self.reasons.iter().copied().chain(parent).chain(replay)
    }

    pub(super) fn sender<'a>(&self, cx: &ReportParts<'_, 'a>) -> Option<&'a str> {
        let bytes = cx.bytes.get(self.entry as usize)?;
        let (start, end) = (self.from.0 as usize, self.from.1 as usize);
        if start == end {
            // [`NO_SENDER`]: no `from` that is a sigil.
            return None;
        }
        core::str::from_utf8(bytes.get(start..end)?).ok()
    }

    pub(super) fn form(&self, cx: &ReportParts<'_, '_>) -> EnvelopeReport {
        let i = self.entry as usize;
        let f = cx.fact(i);
        let bytes = cx.bytes.get(i).copied().unwrap_or_default();
        let source = cx.source(bytes);
        // An item that did not decode is named by the fields that did parse.
        let id = match f {
            Some(f) => Some(hex(f.id)),
            None => crate::trace::named_fields(bytes).0,
        };
        let from = self.sender(cx);
        let resolved = match self.key_source {
            Some(KeyOrigin::Dns | KeyOrigin::Conduit) => cx.details.resolved_for(from),
            _ => None,
        };
        EnvelopeReport {
            id,
            from: from.map(String::from),
            reasons: self.whys().flat_map(|w| w.forms(i, cx)).collect(),
            unlisted_reasons: self.reasons.unlisted().collect(),
            key_source: self.key_source,
            signing_key: self.signing_key.get(),
            handle: resolved.map(|r| r.handle.clone()),
            dnssec: resolved.and_then(|r| r.dnssec),
            lineage_consents: cx
                .details
                .consents
                .get(&self.entry)
                .cloned()
                .unwrap_or_default(),
            certified: cx.details.certified_for(from),
            source,
            trace: f.map(|f| hex(f.trace)),
            parent: f.and_then(|f| f.parent).map(|p| hex(p)),
            kind: f.map(|f| f.kind),
        }
    }
}

/// One envelope's report as an audit keeps it.
#[derive(Clone, Debug)]
pub(crate) enum CompactEnvelope {
    /// A decoded envelope's, as codes.
    AsCodes(EnvelopeCodes),
    /// Formed in full: a piece of input that could not be split into
    /// items (one reason each).
    Formed {
        /// Its listed entry, when it decoded.
        entry: Option<u32>,
        /// The report.
        report: Box<EnvelopeReport>,
    },
}

impl Default for CompactEnvelope {
    fn default() -> Self {
        Self::Formed {
            entry: None,
            report: Box::default(),
        }
    }
}

impl CompactEnvelope {
    /// A report formed in full.
    pub(crate) fn formed(entry: Option<u32>, report: EnvelopeReport) -> Self {
        Self::Formed {
            entry,
            report: Box::new(report),
        }
    }

    /// The report in full.
    pub(crate) fn form(&self, cx: &ReportParts<'_, '_>) -> EnvelopeReport {
        match self {
            Self::AsCodes(c) => c.form(cx),
            Self::Formed { report, .. } => (**report).clone(),
        }
    }

    /// Its listed entry, when it decoded.
    pub(crate) fn entry(&self) -> Option<usize> {
        match self {
            Self::AsCodes(c) => Some(c.entry as usize),
            Self::Formed { entry, .. } => entry.map(|e| e as usize),
        }
    }

    /// Add a reason (its text formed now when the report is).
    pub(crate) fn push(&mut self, why: CompactReason, cx: &ReportParts<'_, '_>) {
        match self {
            Self::AsCodes(c) => match why {
                CompactReason::MissingParent => c.missing_parent = true,
                CompactReason::Replayed { first } => c.replayed = first,
                why => c.reasons.push(why),
            },
            Self::Formed { entry, report } => {
                let i = entry.map_or(usize::MAX, |e| e as usize);
                report.push(why.form(i, cx));
            }
        }
    }

    /// Every reason's code and signature index.
    pub(super) fn all_codes(&self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> + '_ {
        let (codes, formed) = match self {
            Self::AsCodes(c) => (Some(c.whys().flat_map(|w| w.codes())), None),
            Self::Formed { report, .. } => {
                (None, Some(report.reasons.iter().map(|r| (r.code, r.index))))
            }
        };
        codes
            .into_iter()
            .flatten()
            .chain(formed.into_iter().flatten())
    }

    /// A decoded envelope's report without any reason (most envelopes of
    /// a good set).
    pub(crate) fn no_reasons(&self) -> bool {
        matches!(self, Self::AsCodes(c)
            if c.reasons.all().is_empty() && !c.missing_parent && c.replayed == NOT_REPLAYED)
    }

    /// The verdict (P13), as [`EnvelopeReport::status`].
    pub(crate) fn status(&self) -> Status {
        // No reason at all: valid, without walking the chain of reasons.
        if self.no_reasons() {
            return Status::Valid;
        }
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
        details: &mut DetailTable,
        key_source: KeyOrigin,
    ) {
        match self {
            Self::AsCodes(c) => {
                c.reasons.forget_runs(details, c.entry);
                c.reasons = CompactReasons::of(reasons, details, c.entry);
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
            Self::AsCodes(c) => c.signing_key = SigningKeyCode::of(by),
            Self::Formed { report, .. } => report.signing_key = Some(by),
        }
    }

    pub(super) fn key_source(&self) -> Option<KeyOrigin> {
        match self {
            Self::AsCodes(c) => c.key_source,
            Self::Formed { report, .. } => report.key_source,
        }
    }
}

impl Findings for CompactEnvelope {
    fn codes(&self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> + '_ {
        self.all_codes()
    }
}

/// A kept report open to the lifecycle rules: the texts and lineage
/// consents they give go to the audit's [`DetailTable`].
pub(crate) struct JudgedEnvelope<'k> {
    pub(crate) kept: &'k mut CompactEnvelope,
    pub(crate) details: &'k mut DetailTable,
}

impl Findings for JudgedEnvelope<'_> {
    fn codes(&self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> + '_ {
        self.kept.all_codes()
    }
}

impl Judged for JudgedEnvelope<'_> {
    fn push(&mut self, reason: ReportReason) {
        match self.kept {
            CompactEnvelope::AsCodes(c) => c.reasons.push(self.details.text(reason)),
            CompactEnvelope::Formed { report, .. } => report.push(reason),
        }
    }

    fn set_signing_key(&mut self, by: SignedBy) {
        self.kept.set_signing_key(by);
    }

    fn consent(&mut self, parent: String) {
        match self.kept {
            CompactEnvelope::AsCodes(c) => self
                .details
                .consents
                .entry(c.entry)
                .or_default()
                .push(parent),
            CompactEnvelope::Formed { report, .. } => report.lineage_consents.push(parent),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_key_signed_is_kept_as_it_was_said() {
        for by in [
            SignedBy::Birth,
            SignedBy::Molt(0),
            SignedBy::Molt(1),
            SignedBy::Molt(9),
        ] {
            assert_eq!(SigningKeyCode::of(by).get(), Some(by));
        }
        assert_eq!(SigningKeyCode::default().get(), None);
    }

    /// What an audit keeps per decoded envelope beyond its facts stays
    /// small (the memory bound; docs/performance.md): a reason is 12 bytes, a
    /// report as codes 64 with up to three reasons in place and the
    /// missing parent and replay beside them.
    #[test]
    fn compact_reports_are_small() {
        assert!(
            core::mem::size_of::<CompactReason>() <= 12,
            "{}",
            core::mem::size_of::<CompactReason>()
        );
        assert!(
            core::mem::size_of::<CompactEnvelope>() <= 64,
            "{}",
            core::mem::size_of::<CompactEnvelope>()
        );
    }
}
