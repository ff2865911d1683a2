//! Step 3 of an audit: each envelope checked alone (P11 local reasons),
//! its signatures verified in batches on every core with exactly the
//! verdicts of single verification (P5 revision 2).

use alloc::vec::Vec;
use std::collections::{HashMap, HashSet};

use herald_core::{Body, CheckOptions, Checked, PublicKey, SignatureVerifier, check_with};

use super::entry::{Entry, named_from_span};
use crate::batch;
use crate::compact::{
    CompactEnvelope, CompactReasons, EnvelopeCodes, NO_SENDER, NOT_REPLAYED, SigningKeyCode,
};
use crate::facts::{Facts, Sender};
use crate::keyring::Keyring;
use crate::lifecycle::Identity;
use crate::reasons::ReasonList;
use crate::verdicts::{Asked, Collect, Memo, Tally, Verdict};

/// How step 3 verifies signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Signatures {
    /// One envelope after the other, each signature on its own.
    Sequential,
    /// [`check_with`] preparing the signatures and [`batch::verify_all_with`]
    /// verifying them in batches, one part of each block per core, then the
    /// reasons of any envelope with a bad one from its recorded verdicts.
    Parallel,
}

/// What step 3 works with.
pub(super) struct Step3<'c> {
    pub(super) keys: &'c Keyring,
    pub(super) opts: &'c CheckOptions<'c>,
    pub(super) signatures: Signatures,
    /// Verdicts step 2 computed, by entry index.
    pub(super) known: &'c HashMap<usize, Vec<Verdict>>,
    /// Identities the set holds molts of: their envelopes whose origin
    /// fails keep their verdicts for step 3c.
    pub(super) molting: &'c HashSet<Identity>,
    pub(super) tally: &'c Tally,
}

impl Step3<'_> {
    fn known(&self, index: usize) -> &[Verdict] {
        self.known.get(&index).map_or(&[], Vec::as_slice)
    }

    /// Whether step 3c may check this entry again with a molt's key.
    fn keep(&self, record: &Record) -> bool {
        !record.claims
            && record
                .sender
                .and_then(|s| s.identity)
                .is_some_and(|who| self.molting.contains(&who))
    }
}

/// One entry as step 3 leaves it.
pub(super) struct Record<'a> {
    pub(super) report: CompactEnvelope,
    /// The reasons of a report kept as codes, still to be kept.
    pub(super) reasons: ReasonList,
    /// What the later steps need of it, when it decoded.
    pub(super) facts: Option<Facts<'a>>,
    /// What the lifecycle and replay steps read of its sender.
    pub(super) sender: Option<Sender<'a>>,
    /// `sha256(body(E, 0))`, when the body could be formed: what makes two
    /// items one node of the DAG.
    pub(super) computed: Option<[u8; 32]>,
    /// The id others may name it by: `computed` when the wire id equals it
    /// (P13 revision 2: an `id_mismatch` envelope is nobody's parent).
    pub(super) id: Option<[u8; 32]>,
    /// Its origin signature verified, so it claims its `(from key, nonce)`
    /// (P10 revision 2).
    pub(super) claims: bool,
    /// Its verdicts, kept when step 3c may check it again with a molt's key.
    pub(super) verdicts: Option<Vec<Verdict>>,
}

/// The record of entry `e` from what [`check_with`] said: a decoded
/// envelope's report as codes (the memory bound), any other item's in full.
fn record_of<'a>(
    e: &Entry<'a>,
    checked: Checked<'a>,
    reasons: ReasonList,
    keys: &Keyring,
) -> Record<'a> {
    let env = checked.envelope;
    let key_source = keys.source_name(checked.key_source, env.as_ref().map(|v| v.from_sigil()));
    let id = match (&env, checked.computed_id) {
        (Some(v), Some(computed)) if *v.id() == computed => Some(computed),
        _ => None,
    };
    // The origin verified: its key was resolved and signature 0 drew no
    // reason (a wrong scope, a `by` other than `from`, a bad signature).
    let claims = env.is_some()
        && checked.key_source.is_some()
        && !reasons.codes().any(|(_, index)| index == Some(0));
    // An item that did not decode is named by the fields that did parse;
    // its reasons are kept as codes too (every one that names a signature
    // is listed, P11 revision 3: as codes they cost less than its bytes).
    let from = match env.as_ref() {
        Some(v) => span_of(v.from(), e.bytes),
        None => named_from_span(e.bytes),
    };
    let report = CompactEnvelope::AsCodes(EnvelopeCodes {
        entry: 0,
        from: from.unwrap_or(NO_SENDER),
        reasons: CompactReasons::default(),
        key_source,
        signing_key: SigningKeyCode::default(),
        missing_parent: false,
        replayed: NOT_REPLAYED,
    });
    Record {
        report,
        reasons,
        facts: env.as_ref().map(Facts::of),
        sender: env.as_ref().map(|v| Sender::of(v, keys)),
        computed: checked.computed_id,
        id,
        claims,
        verdicts: None,
    }
}

/// The byte range of `text` in `bytes`, when it lies there.
fn span_of(text: &str, bytes: &[u8]) -> Option<(u32, u32)> {
    let start = (text.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)?;
    let end = start.checked_add(text.len())?;
    (bytes.get(start..end)? == text.as_bytes())
        .then(|| Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?)))
        .flatten()
}

/// Most envelope bytes in one block: a block's prepared signatures wait
/// for their batch, so this bounds them for any input size.
const BLOCK_BYTES: usize = 4 << 20;

/// Most envelopes in one block.
const BLOCK_ENVELOPES: usize = 8192;

/// How many entries from the start of `entries` form the next block: at
/// least one, then up to [`BLOCK_ENVELOPES`] and [`BLOCK_BYTES`].
pub(super) fn block_len(entries: &[Entry<'_>]) -> usize {
    let mut bytes = 0usize;
    let n = entries
        .iter()
        .take(BLOCK_ENVELOPES)
        .take_while(|e| {
            bytes = bytes.saturating_add(e.bytes.len());
            bytes <= BLOCK_BYTES
        })
        .count();
    n.max(1).min(entries.len())
}

/// Step 3 for every entry of `block`, whose first entry is entry number
/// `first`: its records in order, in one or more runs, exactly as
/// [`herald_core::check`] would give them one after the other.
///
/// With [`Signatures::Parallel`] the block is cut into one contiguous part
/// per core, and each part is checked on its own thread by
/// [`check_part`]: the records are independent of one another, so the
/// parts are handed back in order, each as its thread made it (not copied
/// into one vector). A part whose thread died (a bug, or out of memory) is
/// checked again here, one entry after the other: no verdict is ever
/// guessed.
pub(super) fn check_block<'a>(
    first: usize,
    block: &[Entry<'a>],
    step: &Step3<'_>,
) -> Vec<Vec<Record<'a>>> {
    let one_by_one = |first: usize, part: &[Entry<'a>]| -> Vec<Record<'a>> {
        part.iter()
            .enumerate()
            .map(|(j, e)| alone(first + j, e, step))
            .collect()
    };
    if step.signatures == Signatures::Sequential {
        return alloc::vec![one_by_one(first, block)];
    }
    let threads = batch::cores().min(block.len().div_ceil(PART_MIN));
    if threads <= 1 {
        return alloc::vec![check_part(first, block, step)];
    }
    let per = block.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = block
            .chunks(per)
            .enumerate()
            .map(|(n, part)| {
                let at = first + n * per;
                (at, part, scope.spawn(move || check_part(at, part, step)))
            })
            .collect();
        handles
            .into_iter()
            .map(|(at, part, handle)| handle.join().unwrap_or_else(|_| one_by_one(at, part)))
            .collect()
    })
}

/// Fewest entries worth a thread of their own in [`check_block`].
const PART_MIN: usize = 64;

/// Signatures per batch equation in [`check_part`]. Its part is already one
/// thread's share, so the chunk balances nothing: larger than
/// [`batch::BatchOptions::DEFAULT_CHUNK`], it spreads the multiplication's
/// fixed cost (the bucket sums of every window) over more points
/// (docs/performance.md *(26)*), and a failed chunk is batched again in
/// small pieces before anything is verified alone.
const PART_CHUNK: usize = 4096;

/// A [`SignatureVerifier`] that gives again, in order, the verdicts found
/// for one entry, and keeps them: [`check_with`] asks about the same
/// signatures in the same order for the same bytes and keys, so the second
/// check sees the real verdicts without verifying anything twice. Past the
/// recorded answers (which cannot happen) it fails closed.
struct Replay<'v> {
    asked: core::slice::Iter<'v, Asked>,
    verdicts: &'v [bool],
    kept: Vec<Verdict>,
}

impl SignatureVerifier for Replay<'_> {
    fn verify(&mut self, key: &PublicKey, sig: &[u8; 64], tag: &[u8], _: &Body<'_>) -> bool {
        let ok = match self.asked.next() {
            Some(Asked::Decided(v)) => *v,
            Some(Asked::Pending(i)) => self.verdicts.get(*i).copied().unwrap_or(false),
            None => false,
        };
        self.kept.push(Verdict::new(key, sig, tag, ok));
        ok
    }
}

/// Step 3 for one part of a block, on one thread (its first entry is
/// entry number `first`):
/// - A. [`check_with`] and [`Collect`]: every signature's byte checks and
///   challenge, the answers recorded;
/// - B. the prepared signatures' equations with [`batch::verify_all_with`]
///   on this thread, in batches: the verdicts of [`herald_core::Strict`]
///   (P5);
/// - C. [`check_with`] again with [`Replay`] for each entry with a
///   signature that failed B (so its reasons are those of the real
///   verdicts) or whose verdicts step 3c needs. Nothing is verified twice.
///
/// The result equals [`herald_core::check`]'s for every entry: one whose
/// prepared signatures all verify got from `Collect` the answers `Strict`
/// gives, and every other entry is checked again with exactly those
/// answers.
fn check_part<'a>(first: usize, part: &[Entry<'a>], step: &Step3<'_>) -> Vec<Record<'a>> {
    let mut collect = Collect::default();
    let mut out: Vec<Record> = Vec::with_capacity(part.len());
    for (j, e) in part.iter().enumerate() {
        collect.next_entry();
        collect.known = step.known(first + j);
        let mut reasons = ReasonList::default();
        let checked = check_with(e.bytes, step.keys, step.opts, &mut reasons, &mut collect);
        out.push(record_of(e, checked, reasons, step.keys));
    }
    step.tally.add(collect.prepared.len());
    let one_thread = batch::BatchOptions {
        threads: 1,
        chunk: PART_CHUNK,
    };
    let verdicts = batch::verify_all_with(&collect.prepared, &one_thread);
    for (((j, slot), e), asked) in out.iter_mut().enumerate().zip(part).zip(&collect.asked) {
        let failed = Collect::failed(asked, &verdicts);
        let keep = step.keep(slot);
        if failed || keep {
            let mut replay = Replay {
                asked: asked.iter(),
                verdicts: &verdicts,
                kept: Vec::new(),
            };
            let mut reasons = ReasonList::default();
            let checked = check_with(e.bytes, step.keys, step.opts, &mut reasons, &mut replay);
            *slot = record_of(e, checked, reasons, step.keys);
            if step.keep(slot) {
                let mut kept = step.known(first + j).to_vec();
                kept.extend(replay.kept);
                slot.verdicts = Some(kept);
            }
        }
    }
    out
}

/// Step 3 for entry number `index`, alone, on this thread.
fn alone<'a>(index: usize, e: &Entry<'a>, step: &Step3<'_>) -> Record<'a> {
    let known = step.known(index);
    let mut memo = Memo::new(known, step.tally);
    let mut reasons = ReasonList::default();
    let checked = check_with(e.bytes, step.keys, step.opts, &mut reasons, &mut memo);
    let mut record = record_of(e, checked, reasons, step.keys);
    if step.keep(&record) {
        let mut kept = known.to_vec();
        kept.extend(memo.learned);
        record.verdicts = Some(kept);
    }
    record
}
