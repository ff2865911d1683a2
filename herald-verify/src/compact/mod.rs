//! A trace audit's result with each envelope's report kept compact
//! ([`CompactReport`], from [`crate::audit_compact`]; the memory bound): reason
//! codes and small indices, the envelope's fixed-size facts and its bytes
//! in the input; the hex ids, the detail texts and the input's name are
//! formed only when a report is asked for or written.
//!
//! A report formed from a [`CompactReport`] is the one [`crate::audit`]
//! gives ([`CompactReport::into_report`] is how it gives it), so the CLI
//! can write 300 000 envelopes' reports one at a time without holding them
//! all.
//!
//! - [`reason`]: one reason as codes;
//! - [`reasons`]: an envelope's reasons, up to three in place;
//! - [`details`]: the details and texts the reports share, and what a
//!   report is formed from;
//! - [`envelope`]: one envelope's report, as codes or formed;
//! - [`trace`]: one trace's ids and counts;
//! - [`json`]: the JSON document, written as it is formed.

mod details;
mod envelope;
mod json;
mod reason;
mod reasons;
mod trace;

use alloc::{string::String, vec::Vec};

use herald_core::{ReasonCode, Status};

pub(crate) use details::{DetailTable, ReportParts};
pub(crate) use envelope::{
    CompactEnvelope, EnvelopeCodes, JudgedEnvelope, NO_SENDER, NOT_REPLAYED, SigningKeyCode,
};
pub(crate) use reason::CompactReason;
pub(crate) use reasons::CompactReasons;
pub(crate) use trace::CompactTrace;

use crate::facts::Facts;
use crate::input::Input;
use crate::keyring::KeyOrigin;
use crate::lifecycle::Findings;
use crate::report::{EnvelopeReport, ProofReport, Report, Summary, TraceReport, hex};

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

/// A whole verification ([`crate::audit_compact`]) with each envelope's
/// report kept as codes: envelope `k`'s report is formed by
/// [`CompactReport::envelope`], equal to `audit(…).envelopes[k]`; the JSON
/// document written is byte for byte [`Report::write_document`]'s.
/// It borrows the inputs, whose bytes the reports are formed from.
#[derive(Debug)]
pub struct CompactReport<'a> {
    /// In report order (items that are not envelopes in their places).
    pub(crate) kept: Vec<CompactEnvelope>,
    /// By listed entry.
    pub(crate) facts: Vec<Option<Facts<'a>>>,
    pub(crate) bytes: Vec<&'a [u8]>,
    pub(crate) inputs: &'a [Input],
    pub(crate) details: DetailTable,
    pub(crate) traces: Vec<CompactTrace>,
    /// Every trace's leaves, grouped by trace.
    pub(crate) leaves: Vec<u32>,
    pub(crate) summary: Summary,
    pub(crate) proofs: Vec<ProofReport>,
    pub(crate) unlisted: usize,
}

impl<'a> CompactReport<'a> {
    pub(super) fn cx(&self) -> ReportParts<'_, 'a> {
        ReportParts {
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
        self.kept.get(k).map(CompactEnvelope::status)
    }

    /// Whether envelope `k` decoded and its report has no reason at all
    /// (so it is valid, P13): formed, it would say no more than its ids
    /// ([`Self::links`]), its sender ([`Self::from`]) and where its key
    /// came from. The line of most envelopes of a good set, without forming
    /// the report.
    pub fn no_reasons(&self, k: usize) -> bool {
        self.kept.get(k).is_some_and(CompactEnvelope::no_reasons)
    }

    /// Whether envelope `k`'s report has a reason with `code`.
    pub fn has(&self, k: usize, code: ReasonCode) -> bool {
        self.kept.get(k).is_some_and(|e| e.has(code))
    }

    /// Where envelope `k`'s origin key came from.
    pub fn key_source(&self, k: usize) -> Option<KeyOrigin> {
        self.kept.get(k).and_then(CompactEnvelope::key_source)
    }

    /// Envelope `k`'s key and self-description when it is a birth that
    /// introduced its key into the set ([`crate::self_described`]).
    pub fn self_described(&self, k: usize) -> Option<crate::SelfDescribed<'a>> {
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
            CompactEnvelope::AsCodes(c) => c.sender(&self.cx()),
            CompactEnvelope::Formed { report, .. } => report.from.as_deref(),
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
    pub(super) fn trace_id(&self, t: &CompactTrace) -> &[u8; 32] {
        self.facts
            .get(t.first as usize)
            .and_then(Option::as_ref)
            .map_or(&[0; 32], |f| f.trace)
    }

    /// The listed entries of trace `t`'s leaves.
    pub(super) fn leaves_of(&self, t: &CompactTrace) -> &[u32] {
        self.leaves
            .get(t.leaves.start as usize..t.leaves.end as usize)
            .unwrap_or_default()
    }

    /// Listed entry `i`'s id, hex.
    pub(super) fn id_hex(&self, i: u32) -> String {
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
            self.kept.iter().map(CompactEnvelope::status),
            self.unlisted,
            &self.proofs,
        )
    }

    /// As [`Report::write_document`], each report formed as it is written.
    pub fn write_document(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::report::write_document(self, out)
    }

    /// Every listed envelope that decoded, in order, as a step for a
    /// protocol profile ([`crate::check_profile`]).
    pub fn profile_steps(&self) -> impl Iterator<Item = crate::ProfileStep<'a>> + '_ {
        self.kept.iter().filter_map(|k| {
            let bytes: &'a [u8] = self.bytes.get(k.entry()?)?;
            Some(crate::ProfileStep::of_reasons(bytes, k.all_codes()))
        })
    }

    /// Run `profile` over this verification's envelopes (docs/haven.md,
    /// docs/valp.md): its findings go beside the P11 reasons, and no
    /// envelope's status changes.
    pub fn check_profile(
        &self,
        profile: crate::Profile,
        evidence: &[crate::ProfileEvidence<'_>],
    ) -> crate::ProfileReport {
        crate::check_profile(profile, self.profile_steps(), evidence)
    }

    /// As [`CompactReport::write_document`], with `profile`'s report as
    /// a last member `"profile"` (additive: without a profile the document
    /// is unchanged).
    pub fn write_document_with_profile(
        &self,
        profile: &crate::ProfileReport,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        crate::report::write_document(&json::WithProfile(self, profile), out)
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
