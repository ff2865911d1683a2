//! Walking a set of envelopes as traces (spec §3.3, §3.3a, §6; PROFILE.md
//! P10 trace-audit mode, P11, P13).
//!
//! Nothing here recurses or follows parent links in a loop: parents are
//! hash-map lookups, so a forged cycle of parent ids or a 100 000-deep chain
//! costs the same as any other set of that size.

use alloc::{boxed::Box, collections::BTreeMap, string::String, vec::Vec};
use std::collections::{HashMap, HashSet};

use herald_core::cbor::Limits;
use herald_core::{
    Body, CheckOptions, Checked, EnvelopeRef, KeySource, PublicKey, Reason, ReasonCode, Scope,
    SigilForm, SignatureVerifier, Status, check, check_parent, check_with,
};

use crate::batch;
use crate::bundle::{self, Bundle, ProofInput};
use crate::keyring::{Keyring, Provenance};
use crate::report::{EnvelopeReport, Report, ReportReason, Source, Summary, TraceReport, hex};
use crate::sequence::{Piece, pieces};

/// Options of a trace audit.
#[derive(Clone, Debug)]
pub struct AuditOptions {
    /// The time `expires` and `ts` are checked against (P10); `None` skips the time checks.
    pub now: Option<u64>,
    /// Clock skew tolerated, seconds (P10: 300).
    pub skew: u64,
    /// Scopes the policy requires (spec §3.4).
    pub required_scopes: Vec<Scope>,
    /// Decoder limits per envelope (P1).
    pub limits: Limits,
    /// Most envelopes in one audit; the rest are reported as one `malformed` entry.
    pub max_envelopes: usize,
    /// Learn keys from births whose key hashes to their sigil (P7).
    pub learn_birth_keys: bool,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self {
            now: None,
            skew: 300,
            required_scopes: Vec::new(),
            limits: Limits::DEFAULT,
            // Each entry costs ~1.5 KB of report even for a one-byte item
            // (docs/fuzzing.md, F2): a million bounds a hostile stream to ~1.5 GB.
            max_envelopes: 1_000_000,
            learn_birth_keys: true,
        }
    }
}

/// One input: a name for reports and its bytes.
#[derive(Clone, Debug)]
pub struct Input {
    /// A path, or `-` for standard input.
    pub name: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// Items that do not decode as envelopes (malformed, unsupported version)
/// listed in full in a report; past these, they are counted in
/// [`Report::unlisted`] and hold no memory (issue 14, B7).
pub const MAX_LISTED_UNPARSED: usize = 1_000;

/// One item to check: its bytes, inside its input's (the input is
/// borrowed, not copied per item, and the offset follows from the two
/// slices: 24 bytes an item; docs/fuzzing.md F2, issue 14 B7).
struct Entry<'a> {
    bytes: &'a [u8],
    input: &'a Input,
}

impl Entry<'_> {
    /// The byte offset of the item in its input.
    fn offset(&self) -> usize {
        (self.bytes.as_ptr() as usize).saturating_sub(self.input.bytes.as_ptr() as usize)
    }
}

fn reason(code: ReasonCode, detail: impl Into<String>) -> ReportReason {
    ReportReason {
        code,
        index: None,
        detail: detail.into(),
    }
}

fn unparsed(source: Source, detail: String) -> EnvelopeReport {
    let mut r = EnvelopeReport {
        id: None,
        from: None,
        status: Status::Valid,
        reasons: Vec::new(),
        key_source: None,
        source,
        trace: None,
        parent: None,
        ..EnvelopeReport::default()
    };
    r.push(reason(ReasonCode::Malformed, detail));
    r
}

/// How step 3 of an audit verifies signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Signatures {
    /// [`check`], one envelope after the other.
    Sequential,
    /// [`check_with`] preparing the signatures and [`batch::verify_all_with`]
    /// verifying them in batches, one part of each block per core, then the
    /// reasons of any envelope with a bad one from its recorded verdicts.
    Parallel,
}

/// Verify every envelope of `inputs` as one set (CLI.md: all files form one
/// set for parents and replays) against `keyring`.
///
/// Signatures are verified in batches on every core with exactly the
/// verdicts of single verification (P5 revision 2), and the report is the
/// one [`audit_sequential`] gives (tests/audit_parallel.rs), whatever the
/// order of the input (P10, P13 revision 2; tests/order.rs).
pub fn audit(inputs: &[Input], keyring: &Keyring, opts: &AuditOptions) -> Report {
    audit_with(inputs, keyring, opts, Signatures::Parallel)
}

/// As [`audit`], checking one envelope after the other on this thread: the
/// reference the parallel path is tested and benchmarked against.
#[doc(hidden)]
pub fn audit_sequential(inputs: &[Input], keyring: &Keyring, opts: &AuditOptions) -> Report {
    audit_with(inputs, keyring, opts, Signatures::Sequential)
}

fn audit_with(
    inputs: &[Input],
    keyring: &Keyring,
    opts: &AuditOptions,
    signatures: Signatures,
) -> Report {
    // 1. Split every input into items, in argument order then file order.
    //    A bundle contributes its envelopes as items, its keys and its proofs.
    let mut entries = Vec::new();
    let mut unsplittable: Vec<(usize, EnvelopeReport)> = Vec::new();
    let mut bundle_keys: Vec<PublicKey> = Vec::new();
    let mut proofs: Vec<ProofInput<'_>> = Vec::new();
    let cap = |position: usize, input: &Input, offset: usize| {
        let source = Source {
            input: input.name.clone(),
            offset,
        };
        let detail = std::format!("more than {} envelopes in one audit", opts.max_envelopes);
        (position, unparsed(source, detail))
    };
    for input in inputs {
        if bundle::is_bundle(&input.bytes) {
            match Bundle::decode(&input.bytes) {
                Ok(b) => {
                    for &(offset, bytes) in b.envelopes() {
                        if entries.len() >= opts.max_envelopes {
                            unsplittable.push(cap(
                                entries.len() + unsplittable.len(),
                                input,
                                offset,
                            ));
                            break;
                        }
                        entries.push(Entry { bytes, input });
                    }
                    bundle_keys.extend_from_slice(b.keys());
                    proofs.extend(b.proofs().iter().map(|&(offset, bytes)| ProofInput {
                        bytes,
                        source: Source {
                            input: input.name.clone(),
                            offset,
                        },
                    }));
                }
                Err(e) => {
                    let source = Source {
                        input: input.name.clone(),
                        offset: 0,
                    };
                    let detail = std::format!("{}: {e}", input.name);
                    unsplittable
                        .push((entries.len() + unsplittable.len(), unparsed(source, detail)));
                }
            }
            continue;
        }
        for piece in pieces(&input.bytes, opts.limits.max_size, 512) {
            let position = entries.len() + unsplittable.len();
            match piece {
                Piece::Item { bytes, .. } if entries.len() < opts.max_envelopes => {
                    entries.push(Entry { bytes, input });
                }
                Piece::Item { offset, .. } => {
                    unsplittable.push(cap(position, input, offset));
                    break;
                }
                Piece::Unsplittable { offset, error } => {
                    let source = Source {
                        input: input.name.clone(),
                        offset,
                    };
                    let detail = std::format!("{}: byte {offset}: {error}", input.name);
                    unsplittable.push((position, unparsed(source, detail)));
                }
            }
        }
    }

    // 2. Keys: the pinned keyring, the keys bundles carry, plus keys
    //    learned from self-certifying births (P7).
    let mut keys = keyring.clone();
    for key in bundle_keys {
        keys.insert(key, Provenance::Bundle);
    }
    let check_opts = CheckOptions {
        now: opts.now,
        skew: opts.skew,
        limits: opts.limits,
        required_scopes: &opts.required_scopes,
        learn_birth_keys: opts.learn_birth_keys,
    };
    if opts.learn_birth_keys {
        for e in entries.iter().filter(|e| may_be_birth(e.bytes)) {
            let mut reasons = Vec::new();
            let checked = check(e.bytes, &(), &check_opts, &mut reasons);
            let origin_ok = !reasons
                .iter()
                .any(|r| r.index == Some(0) || r.code == ReasonCode::IdMismatch);
            if let (Some(KeySource::Birth), true, Some(env)) =
                (checked.key_source, origin_ok, &checked.envelope)
                && let Some(b) = env
                    .attestation("birth")
                    .and_then(|v| herald_core::attestation::BirthAttestation::parse(v).ok())
                && let Ok(key) = herald_core::PublicKey::from_bytes(b.key)
            {
                keys.insert(key, Provenance::Birth);
            }
        }
    }

    // 3. Each envelope alone (P11 local reasons), in blocks whose
    //    signatures are verified together on every core (see `check_block`).
    //    Sized for the entries that will be listed: at most those that may
    //    be envelopes, plus the undecodable ones listed in full.
    let listed = entries
        .iter()
        .filter(|e| may_be_envelope(e.bytes))
        .count()
        .saturating_add(MAX_LISTED_UNPARSED)
        .min(entries.len());
    let mut reports: Vec<EnvelopeReport> = Vec::with_capacity(listed);
    let mut views: Vec<Option<Box<EnvelopeRef<'_>>>> = Vec::with_capacity(listed);
    let mut computed: Vec<Option<[u8; 32]>> = Vec::with_capacity(listed);
    let mut ids: Vec<Option<[u8; 32]>> = Vec::with_capacity(listed);
    let mut claims: Vec<bool> = Vec::with_capacity(listed);
    let mut bytes: Vec<&[u8]> = Vec::with_capacity(listed);
    // Entries not listed (undecodable past MAX_LISTED_UNPARSED) are
    // counted, and every unsplittable piece after them moves up by as many.
    let mut dropped = 0usize;
    let mut undecoded = unsplittable.len();
    let mut placed = 0;
    let mut index = 0;
    let mut rest = &entries[..];
    while !rest.is_empty() {
        let (block, next) = rest.split_at(block_len(rest));
        rest = next;
        for (c, entry) in check_block(block, &keys, &check_opts, signatures)
            .into_iter()
            .zip(block)
        {
            place_pieces(&mut unsplittable, &mut placed, index, dropped);
            index += 1;
            if c.view.is_none() {
                undecoded += 1;
                if undecoded > MAX_LISTED_UNPARSED {
                    dropped += 1;
                    continue;
                }
            }
            bytes.push(entry.bytes);
            reports.push(c.report);
            views.push(c.view);
            computed.push(c.computed);
            ids.push(c.id);
            claims.push(c.claims);
        }
    }

    place_pieces(&mut unsplittable, &mut placed, index, dropped);

    // 3b. Bundled inclusion proofs, against the pinned keys and the set (P9).
    let (proof_reports, proven) = bundle::check_proofs(&proofs, &views, &keys);

    // 3c. Identity lifecycle across the set (P8), molts proven by 3b.
    let set = crate::lifecycle::audit::Set {
        bytes: &bytes,
        views: &views,
        proven: &proven,
    };
    crate::lifecycle::audit::apply(&set, &mut reports, &keys, &check_opts);

    // 4. Parents and the trace-parent binding (spec §3.3a). An envelope is
    //    found by its recomputed id only (P13 revision 2), so junk that
    //    claims an id never stands in for the envelope that has it.
    let mut by_id: HashMap<[u8; 32], usize> = HashMap::new();
    for (i, id) in ids.iter().enumerate() {
        if let Some(id) = id {
            by_id.entry(*id).or_insert(i);
        }
    }
    let mut has_child: HashSet<usize> = HashSet::new();
    for (i, v) in views.iter().enumerate() {
        let Some(v) = v else { continue };
        let Some(parent_id) = v.parent() else {
            continue;
        };
        match by_id.get(parent_id) {
            None => reports[i].push(reason(
                ReasonCode::MissingParent,
                std::format!("parent {} is not in the set", hex(parent_id)),
            )),
            Some(&p) => {
                if p != i {
                    has_child.insert(p);
                }
                if let Some(parent) = &views[p]
                    && let Err(r) = check_parent(v, parent)
                {
                    reports[i].push((&r).into());
                }
            }
        }
    }

    // 5. Replays inside the set (P10 trace audit, revision 2): the first
    //    envelope whose origin verifies claims its (from key, nonce); every
    //    later one with that pair is `replayed_nonce`. A forgery never
    //    claims, so it cannot make the real envelope a replay.
    let mut seen: HashMap<([u8; 32], [u8; 16]), usize> = HashMap::new();
    for (i, v) in views.iter().enumerate() {
        let Some(v) = v else { continue };
        let signer = keys
            .lookup(&v.from_sigil())
            .map(|(k, _)| *k.as_bytes())
            .unwrap_or_else(|| sigil_identity(v));
        if let Some(&first) = seen.get(&(signer, *v.nonce())) {
            let detail = std::format!(
                "nonce already used by {} (entry {})",
                reports[first].id.as_deref().unwrap_or("?"),
                first
            );
            reports[i].push(reason(ReasonCode::ReplayedNonce, detail));
        } else if claims[i] {
            seen.insert((signer, *v.nonce()), i);
        }
    }

    // 6. Traces, in order of first appearance.
    let mut first: HashSet<[u8; 32]> = HashSet::new();
    let mut order: Vec<[u8; 32]> = Vec::new();
    let mut traces: BTreeMap<[u8; 32], TraceReport> = BTreeMap::new();
    for (i, v) in views.iter().enumerate() {
        let Some(v) = v else { continue };
        let t = traces.entry(*v.trace()).or_insert_with(|| {
            order.push(*v.trace());
            TraceReport {
                trace: hex(v.trace()),
                genesis: None,
                leaves: Vec::new(),
                valid: 0,
                partial: 0,
                invalid: 0,
            }
        });
        if v.is_genesis() && ids[i].as_ref() == Some(v.trace()) && t.genesis.is_none() {
            t.genesis = Some(hex(v.id()));
        }
        // A repeated envelope (the same body) is one node, listed once.
        if !has_child.contains(&i) && computed[i].is_some_and(|c| first.insert(c)) {
            t.leaves.push(hex(v.id()));
        }
        match reports[i].status {
            Status::Valid => t.valid += 1,
            Status::Partial => t.partial += 1,
            Status::Invalid => t.invalid += 1,
        }
    }

    // 7. Merge unparseable pieces back in input order, in place: a second
    //    vector of reports would double the peak (F2).
    drop((views, computed, ids, claims, by_id, has_child, seen, first));
    let envelopes = merge_at_positions(reports, unsplittable);
    let mut summary = Summary::default();
    for e in &envelopes {
        summary.add(e.status);
    }
    summary.invalid += dropped;
    Report {
        envelopes,
        traces: order.iter().filter_map(|t| traces.remove(t)).collect(),
        summary,
        proofs: proof_reports,
        unlisted: dropped,
    }
}

/// Move up, by the `dropped` entries not listed so far, every unsplittable
/// piece (`pieces[placed..]`, positions ascending) whose place comes after
/// exactly `entries` entries: a piece's entries before it are its position
/// less the pieces before it. `placed` advances past the pieces moved.
fn place_pieces(
    pieces: &mut [(usize, EnvelopeReport)],
    placed: &mut usize,
    entries: usize,
    dropped: usize,
) {
    while let Some((position, _)) = pieces.get_mut(*placed) {
        if *position - *placed != entries {
            break;
        }
        *position -= dropped;
        *placed += 1;
    }
}

/// `reports` with each `(position, report)` of `extra` (positions
/// ascending, each the report's final index) put in its place, the others
/// keeping their order; without a second vector.
fn merge_at_positions(
    mut reports: Vec<EnvelopeReport>,
    extra: Vec<(usize, EnvelopeReport)>,
) -> Vec<EnvelopeReport> {
    if extra.is_empty() {
        return reports;
    }
    let mut src = reports.len();
    let mut dst = src + extra.len();
    reports.resize_with(dst, EnvelopeReport::default);
    // From the back: reports that come after `position` move up past the
    // extras still to place (slots above `src` hold nothing of value).
    for (position, r) in extra.into_iter().rev() {
        let position = position.min(dst - 1);
        while dst > position + 1 && src > 0 {
            dst -= 1;
            src -= 1;
            reports.swap(src, dst);
        }
        dst -= 1;
        if let Some(slot) = reports.get_mut(dst) {
            *slot = r;
        }
    }
    reports
}

/// Whether `bytes` may decode as an envelope: it must start with the head
/// of a definite map of at least nine entries (P3's required fields; P1
/// forbids indefinite lengths). One byte, so the audit can size its
/// per-envelope vectors for what it will list before checking anything;
/// only a capacity hint (were it wrong, the vectors would grow).
fn may_be_envelope(bytes: &[u8]) -> bool {
    bytes.first().is_some_and(|&b| (0xa9..=0xbb).contains(&b))
}

/// `"kind": "birth"` as P1 writes it: text head and key, text head and value.
const KIND_BIRTH: &[u8] = b"\x64kind\x65birth";

/// Whether `bytes` could be a birth (P7) whose key step 2 learns: only an
/// envelope of kind birth gets [`KeySource::Birth`] from [`check`], and a
/// strictly decoded one holds the canonical entry `kind: "birth"`
/// (P1: shortest heads), so without those bytes `check` cannot learn a key
/// from it and step 2 skips the check.
fn may_be_birth(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == KIND_BIRTH[0])
        .any(|(i, _)| {
            bytes
                .get(i..)
                .is_some_and(|rest| rest.starts_with(KIND_BIRTH))
        })
}

/// Most envelope bytes in one block of step 3: a block's prepared
/// signatures wait for their batch, so this bounds them for any input size.
const BLOCK_BYTES: usize = 4 << 20;

/// Most envelopes in one block of step 3.
const BLOCK_ENVELOPES: usize = 8192;

/// How many entries from the start of `entries` form the next block: at
/// least one, then up to [`BLOCK_ENVELOPES`] and [`BLOCK_BYTES`].
fn block_len(entries: &[Entry<'_>]) -> usize {
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

/// What [`Collect`] answered for one signature, in the order [`check_with`]
/// asked.
#[derive(Clone, Copy)]
enum Asked {
    /// A byte check failed (P5): the verdict, known at once.
    Decided(bool),
    /// Prepared, waiting for the equation: its place in the batch.
    Pending(usize),
}

/// A [`SignatureVerifier`] that prepares every signature
/// ([`PublicKey::prepare`]: byte checks and the challenge, streamed over the
/// body, nothing copied) and answers `true` for those that pass the byte
/// checks; the equation's verdicts come later from [`batch::verify_all_with`].
#[derive(Default)]
struct Collect {
    prepared: Vec<herald_core::Prepared>,
    /// Per entry of the block, what was answered, in order.
    asked: Vec<Vec<Asked>>,
}

impl SignatureVerifier for Collect {
    fn verify(&mut self, key: &PublicKey, sig: &[u8; 64], tag: &[u8], body: &Body<'_>) -> bool {
        let answer = match key.prepare(sig, |feed| {
            feed(tag);
            body.feed(feed);
        }) {
            Ok(p) => {
                self.prepared.push(p);
                Asked::Pending(self.prepared.len() - 1)
            }
            Err(_) => Asked::Decided(false),
        };
        if let Some(list) = self.asked.last_mut() {
            list.push(answer);
        }
        matches!(answer, Asked::Pending(_))
    }
}

/// A [`SignatureVerifier`] that gives again, in order, the verdicts found
/// for one entry: [`check_with`] asks about the same signatures in the same
/// order for the same bytes and keys, so the second check sees the real
/// verdicts without verifying anything twice. Past the recorded answers
/// (which cannot happen) it fails closed.
struct Replay<'v> {
    asked: core::slice::Iter<'v, Asked>,
    verdicts: &'v [bool],
}

impl SignatureVerifier for Replay<'_> {
    fn verify(&mut self, _: &PublicKey, _: &[u8; 64], _: &[u8], _: &Body<'_>) -> bool {
        match self.asked.next() {
            Some(Asked::Decided(v)) => *v,
            Some(Asked::Pending(i)) => self.verdicts.get(*i).copied().unwrap_or(false),
            None => false,
        }
    }
}

/// One entry as step 3 leaves it.
struct Checked3<'a> {
    report: EnvelopeReport,
    /// Boxed: an item that did not decode costs a pointer, not a view (F2).
    view: Option<Box<EnvelopeRef<'a>>>,
    /// `sha256(body(E, 0))`, when the body could be formed: what makes two
    /// items one node of the DAG.
    computed: Option<[u8; 32]>,
    /// The id others may name it by: `computed` when the wire id equals it
    /// (P13 revision 2: an `id_mismatch` envelope is nobody's parent).
    id: Option<[u8; 32]>,
    /// Its origin signature verified, so it claims its `(from key, nonce)`
    /// (P10 revision 2).
    claims: bool,
}

/// The step-3 record of entry `e` from what [`check_with`] said.
fn report_of<'a>(
    e: &Entry<'a>,
    checked: Checked<'a>,
    reasons: &[Reason],
    keys: &Keyring,
) -> Checked3<'a> {
    let env = checked.envelope;
    let key_source = keys.source_name(checked.key_source, env.as_ref().map(|v| v.from_sigil()));
    let mut report = EnvelopeReport {
        id: env.as_ref().map(|v| hex(v.id())),
        from: env.as_ref().map(|v| String::from(v.from())),
        status: Status::Valid,
        // Exactly the reasons known now; most envelopes have none, and a
        // hostile stream of one-byte items has one each (F2).
        reasons: Vec::with_capacity(reasons.len()),
        key_source,
        source: Source {
            input: e.input.name.clone(),
            offset: e.offset(),
        },
        trace: env.as_ref().map(|v| hex(v.trace())),
        parent: env.as_ref().and_then(|v| v.parent()).map(|p| hex(p)),
        ..EnvelopeReport::default()
    };
    if report.id.is_none() {
        // Fields that did parse are still worth naming.
        report.id = id_field(e.bytes);
    }
    for r in reasons {
        report.push(r.into());
    }
    let id = match (&env, checked.computed_id) {
        (Some(v), Some(computed)) if *v.id() == computed => Some(computed),
        _ => None,
    };
    // The origin verified: its key was resolved and signature 0 drew no
    // reason (a wrong scope, a `by` other than `from`, a bad signature).
    let claims = env.is_some()
        && checked.key_source.is_some()
        && !reasons.iter().any(|r| r.index == Some(0));
    Checked3 {
        report,
        view: env.map(Box::new),
        computed: checked.computed_id,
        id,
        claims,
    }
}

/// Step 3 for every entry of `block`: its record, exactly as [`check`]
/// would give it one after the other.
///
/// With [`Signatures::Parallel`] the block is cut into one contiguous part
/// per core, and each part is checked on its own thread by
/// [`check_part`]: the records are independent of one another, so the
/// parts only have to be put back in order. A part whose thread died (a
/// bug, or out of memory) is checked again here, one entry after the
/// other: no verdict is ever guessed.
fn check_block<'a>(
    block: &[Entry<'a>],
    keys: &Keyring,
    opts: &CheckOptions<'_>,
    signatures: Signatures,
) -> Vec<Checked3<'a>> {
    if signatures == Signatures::Sequential {
        return block.iter().map(|e| alone(e, keys, opts)).collect();
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(block.len().div_ceil(PART_MIN));
    if threads <= 1 {
        return check_part(block, keys, opts);
    }
    let per = block.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = block
            .chunks(per)
            .map(|part| (part, scope.spawn(move || check_part(part, keys, opts))))
            .collect();
        let mut out = Vec::with_capacity(block.len());
        for (part, handle) in handles {
            match handle.join() {
                Ok(records) => out.extend(records),
                Err(_) => out.extend(part.iter().map(|e| alone(e, keys, opts))),
            }
        }
        out
    })
}

/// Fewest entries worth a thread of their own in [`check_block`].
const PART_MIN: usize = 64;

/// Step 3 for one part of a block, on one thread:
/// - A. [`check_with`] and [`Collect`]: every signature's byte checks and
///   challenge, the answers recorded;
/// - B. the prepared signatures' equations with [`batch::verify_all_with`]
///   on this thread, in batches: the verdicts of [`herald_core::Strict`]
///   (P5);
/// - C. [`check_with`] again with [`Replay`] for each entry with a
///   signature that failed B, so its reasons are those of the real
///   verdicts. Nothing is verified twice.
///
/// The result equals [`check`]'s for every entry: one whose prepared
/// signatures all verify got from `Collect` the answers `Strict` gives, and
/// every other entry is checked again with exactly those answers.
fn check_part<'a>(
    part: &[Entry<'a>],
    keys: &Keyring,
    opts: &CheckOptions<'_>,
) -> Vec<Checked3<'a>> {
    let mut collect = Collect::default();
    let mut out: Vec<Checked3<'a>> = Vec::with_capacity(part.len());
    for e in part {
        collect.asked.push(Vec::new());
        let mut reasons = Vec::new();
        let checked = check_with(e.bytes, keys, opts, &mut reasons, &mut collect);
        out.push(report_of(e, checked, &reasons, keys));
    }
    let one_thread = batch::BatchOptions {
        threads: 1,
        ..batch::BatchOptions::default()
    };
    let verdicts = batch::verify_all_with(&collect.prepared, &one_thread);
    for ((slot, e), asked) in out.iter_mut().zip(part).zip(&collect.asked) {
        let failed = asked
            .iter()
            .any(|a| matches!(a, Asked::Pending(i) if !verdicts.get(*i).copied().unwrap_or(false)));
        if failed {
            let mut replay = Replay {
                asked: asked.iter(),
                verdicts: &verdicts,
            };
            let mut reasons = Vec::new();
            let checked = check_with(e.bytes, keys, opts, &mut reasons, &mut replay);
            *slot = report_of(e, checked, &reasons, keys);
        }
    }
    out
}

/// [`check`] entry `e` alone and make its record.
fn alone<'a>(e: &Entry<'a>, keys: &Keyring, opts: &CheckOptions<'_>) -> Checked3<'a> {
    let mut reasons = Vec::new();
    let checked = check(e.bytes, keys, opts, &mut reasons);
    report_of(e, checked, &reasons, keys)
}

/// A stand-in for the signer's key when it is unknown: the sigil's hash
/// prefix in its shortest form, which every form of one key shares.
fn sigil_identity(v: &EnvelopeRef<'_>) -> [u8; 32] {
    let mut id = [0u8; 32];
    if let Some(short) = v.from_sigil().to_form(SigilForm::Short) {
        id[..10].copy_from_slice(short.hash_prefix());
    }
    id
}

/// The `id` field of an envelope that did not fully decode, if it has one.
fn id_field(bytes: &[u8]) -> Option<String> {
    let map = herald_core::cbor::decode(bytes).ok()?.as_map()?;
    let id = map.get("id")?.as_bytes()?;
    (id.len() == 32).then(|| hex(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(n: usize) -> EnvelopeReport {
        EnvelopeReport {
            source: Source {
                input: std::format!("{n}"),
                offset: n,
            },
            ..EnvelopeReport::default()
        }
    }

    /// The in-place merge puts every extra at its position and keeps the
    /// others in order, for every way of placing up to 4 extras among up
    /// to 9 slots.
    #[test]
    fn merge_at_positions_matches_a_plain_merge() {
        for total in 0..10usize {
            // Every subset of positions of size ≤ 4 (bit i: slot i is extra).
            for mask in 0u32..(1 << total) {
                if mask.count_ones() > 4 {
                    continue;
                }
                let want: Vec<String> = (0..total).map(|i| std::format!("{i}")).collect();
                let extra: Vec<(usize, EnvelopeReport)> = (0..total)
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| (i, named(i)))
                    .collect();
                let reports: Vec<EnvelopeReport> = (0..total)
                    .filter(|i| mask & (1 << i) == 0)
                    .map(named)
                    .collect();
                let got: Vec<String> = merge_at_positions(reports, extra)
                    .into_iter()
                    .map(|r| r.source.input)
                    .collect();
                assert_eq!(got, want, "mask {mask:b}");
            }
        }
    }
}
