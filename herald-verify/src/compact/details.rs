//! What a compact report shares between its envelopes' reports: each
//! distinct reason detail and lifecycle text once ([`DetailTable`]), and
//! what the reports are formed from ([`ReportParts`]).

use alloc::{boxed::Box, collections::BTreeMap, string::String, vec::Vec};
use std::collections::HashMap;

use herald_core::{Detail, Reason};

use super::reason::{CompactReason, NO_INDEX};
use crate::facts::Facts;
use crate::input::Input;
use crate::reasons::ReasonList;
use crate::report::{ReportReason, Source};

/// Each distinct detail of an audit's reasons, once: a reason keeps its
/// place here (most envelopes share a handful of details). The lifecycle
/// rules' texts likewise: an identity's envelopes share a few. And what a
/// report kept as codes has no field for: the lineage consents of births
/// (P8), by listed entry.
#[derive(Debug, Default)]
pub(crate) struct DetailTable {
    pub(crate) list: Vec<Detail>,
    pub(super) at: HashMap<Detail, u32>,
    /// The details of the runs' reasons ([`CompactReason::Run`]), each a place in
    /// `run_table`, by listed entry and first signature index.
    pub(super) runs: HashMap<(u32, u32), Box<[u8]>>,
    /// Places in `list` of the runs' details (at most 256).
    pub(super) run_table: Vec<u32>,
    pub(super) texts: Vec<String>,
    pub(super) text_at: HashMap<String, u32>,
    pub(super) consents: BTreeMap<u32, Vec<String>>,
    /// Keys a resolution found at a handle (PROFILE P15), from the keyring.
    pub(crate) resolved: Vec<(herald_core::PublicKey, crate::keyring::ResolvedAt)>,
    /// What a quorum of the verifier's Heralds certifies (PROFILE P14), by
    /// subject, as reports list it.
    pub(crate) certified: Vec<(herald_core::Sigil, Vec<crate::report::ReportedClaim>)>,
}

impl DetailTable {
    /// What a resolution said of the key of `from` (PROFILE P15).
    pub(crate) fn resolved_for(&self, from: Option<&str>) -> Option<&crate::keyring::ResolvedAt> {
        if self.resolved.is_empty() {
            return None;
        }
        let sigil = herald_core::Sigil::parse(from?).ok()?;
        self.resolved
            .iter()
            .find(|(k, _)| sigil.names_key(k.as_bytes()))
            .map(|(_, at)| at)
    }

    /// What a quorum of Heralds certifies about `from` (PROFILE P14).
    pub(crate) fn certified_for(&self, from: Option<&str>) -> Vec<crate::report::ReportedClaim> {
        if self.certified.is_empty() {
            return Vec::new();
        }
        let Some(sigil) = from.and_then(|f| herald_core::Sigil::parse(f).ok()) else {
            return Vec::new();
        };
        self.certified
            .iter()
            .find(|(s, _)| s.same_key_as(&sigil))
            .map(|(_, c)| c.clone())
            .unwrap_or_default()
    }

    /// `reason` as kept.
    pub(crate) fn why(&mut self, reason: &Reason) -> CompactReason {
        let list = &mut self.list;
        let detail = *self.at.entry(reason.detail).or_insert_with(|| {
            list.push(reason.detail);
            u32::try_from(list.len() - 1).unwrap_or(u32::MAX)
        });
        CompactReason::Check {
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
    pub(super) fn keep_run(
        &mut self,
        list: &ReasonList,
        entry: u32,
        first: u32,
        ids: &[u8],
    ) -> Option<u32> {
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
    pub(super) fn run(&self, i: usize, first: u32) -> &[u8] {
        u32::try_from(i)
            .ok()
            .and_then(|i| self.runs.get(&(i, first)))
            .map_or(&[], |b| b)
    }

    /// A lifecycle rule's `reason` as kept (the rules give no signature
    /// index).
    pub(super) fn text(&mut self, reason: ReportReason) -> CompactReason {
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
        CompactReason::Text {
            code: reason.code,
            text,
        }
    }
}

/// What the reports are formed from: listed entry `i`'s facts and bytes,
/// the inputs they lie in, the details of the reasons.
#[derive(Clone, Copy)]
pub(crate) struct ReportParts<'s, 'a> {
    pub(crate) facts: &'s [Option<Facts<'a>>],
    pub(crate) bytes: &'s [&'a [u8]],
    pub(crate) inputs: &'a [Input],
    pub(crate) details: &'s DetailTable,
}

impl<'a> ReportParts<'_, 'a> {
    pub(super) fn fact(&self, i: usize) -> Option<&Facts<'a>> {
        self.facts.get(i).and_then(Option::as_ref)
    }

    /// The input `bytes` lie in, and their offset there.
    pub(super) fn source(&self, bytes: &[u8]) -> Source {
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
