//! Walking a set of envelopes as traces (spec §3.3, §3.3a, §6; PROFILE.md
//! P10 trace-audit mode, P11, P13): [`audit`], in numbered steps, one
//! function each.
//!
//! 1. `split`: every input into items; a bundle gives its envelopes,
//!    keys and proofs.
//! 2. `learn_keys`: the keyring, the bundles' keys, and the keys of
//!    self-certifying births (P7).
//! 3. `check_each`: each envelope alone, its signatures verified in
//!    batches on every core (`check`).
//!    3b. bundled inclusion proofs ([`crate::bundle`]);
//!    3c. the identity lifecycle across the set ([`crate::lifecycle`]).
//! 4. `parents`: parents and the trace-parent binding.
//! 5. `replays`: `(from key, nonce)` pairs used twice in the set.
//! 6. `traces`: each trace's genesis, leaves and counts.
//! 7. the items that are not envelopes put back in input order.
//!
//! Each signature is verified once per audit and key: step 2's verdicts are
//! reused by step 3, and step 3's by 3c (`crate::verdicts`;
//! tests/verified_once.rs counts them).
//!
//! Nothing here recurses or follows parent links in a loop: parents are
//! hash-map lookups, so a forged cycle of parent ids or a 100 000-deep chain
//! costs the same as any other set of that size.

mod check;
mod entry;
mod group;
mod links;

use alloc::{collections::BTreeMap, vec::Vec};
use core::ops::ControlFlow;
use std::collections::{HashMap, HashSet};

use herald_core::attestation::BirthAttestation;
use herald_core::cbor::{Limits, MAX_NESTING};
use herald_core::{
    CheckOptions, EnvelopeRef, KeySource, Kind, PublicKey, ReasonCode, Scope, check_with,
};

use crate::bundle::{self, Bundle, ProofInput};
use crate::compact::{CompactEnvelope, CompactReasons, CompactReport, DetailTable};
use crate::facts::{Facts, Sender};
use crate::input::Input;
use crate::keyring::{Keyring, Provenance};
use crate::lifecycle::{self, Identity, identity};
use crate::reasons::ReasonList;
use crate::report::{EnvelopeReport, Report, Source, Summary};
use crate::sequence::{ItemEnds, Piece, for_each_piece, not_envelopes};
use crate::verdicts::{Memo, Tally, Verdict};
use check::{Record, Signatures, Step3, block_len, check_block};
pub(crate) use entry::named_fields;
use entry::{Entry, KindScan, may_be_envelope, merge_at_positions, place_pieces, unparsed};

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
    /// What a bundled proof's tree head must also meet: a witness policy
    /// (`--log-policy`, [`bundle::LogPolicy`]); `None`: the log key's
    /// signature is enough.
    pub log_policy: Option<std::sync::Arc<dyn bundle::LogPolicy>>,
    /// What the verifier's Heralds certify (PROFILE P14): certified
    /// `deprecated` claims act as witnessed deprecations, `lineage_proof`s
    /// are checked (`lineage_unproven`), and each report lists the claims
    /// certified about its sender. `None`: no Herald list, none of this.
    /// (Certified keys go into the keyring: [`crate::Certified::extend_keyring`].)
    pub heralds: Option<std::sync::Arc<crate::herald::quorum::Certified>>,
}

/// The default clock skew tolerated, seconds (P10), of an audit and of a
/// live receiver alike.
pub(crate) const DEFAULT_SKEW: u64 = 300;

impl Default for AuditOptions {
    fn default() -> Self {
        Self {
            now: None,
            skew: DEFAULT_SKEW,
            required_scopes: Vec::new(),
            limits: Limits::DEFAULT,
            // Items that are not envelopes past the first thousand cost
            // nothing; an envelope's state is its facts and its report as
            // codes, a few hundred bytes (the memory bound,
            // docs/performance.md).
            max_envelopes: 1_000_000,
            learn_birth_keys: true,
            log_policy: None,
            heralds: None,
        }
    }
}

/// Items that do not decode as envelopes (malformed, unsupported version)
/// listed in full in a report; past these, they are counted in
/// [`Report::unlisted`] and hold no memory (docs/performance.md *Memory
/// under hostile input*, B7).
pub const MAX_LISTED_UNPARSED: usize = 1_000;

/// Verify every envelope of `inputs` as one set (CLI.md: all files form one
/// set for parents and replays) against `keyring`.
///
/// Signatures are verified in batches on every core with exactly the
/// verdicts of single verification (P5 revision 2), and the report is the
/// one [`audit_sequential`] gives (tests/audit_parallel.rs), whatever the
/// order of the input (P10, P13 revision 2; tests/order.rs).
pub fn audit(inputs: &[Input], keyring: &Keyring, opts: &AuditOptions) -> Report {
    audit_compact(inputs, keyring, opts).into_report()
}

/// As [`audit`], each envelope's report kept as codes until it is formed
/// or written ([`CompactReport`]; the memory bound: a report's texts
/// cost more than a small envelope).
pub fn audit_compact<'a>(
    inputs: &'a [Input],
    keyring: &Keyring,
    opts: &AuditOptions,
) -> CompactReport<'a> {
    audit_compact_read(inputs, Vec::new(), keyring, opts)
}

/// As [`audit_compact`], each input's items cut where the reader found
/// them end (`ends[n]` from [`crate::read_sequence_items`] for `inputs[n]`),
/// instead of walked again; an input without its ends, or whose ends are
/// not of its bytes and the audit's limits, is walked here. The report is
/// [`audit_compact`]'s (CLI.md: all files form one set).
pub fn audit_compact_read<'a>(
    inputs: &'a [Input],
    ends: Vec<ItemEnds>,
    keyring: &Keyring,
    opts: &AuditOptions,
) -> CompactReport<'a> {
    audit_with(
        inputs,
        ends,
        keyring,
        opts,
        Signatures::Parallel,
        &Tally::default(),
    )
}

/// As [`audit`], checking one envelope after the other on this thread: the
/// reference the parallel path is tested and benchmarked against.
#[doc(hidden)]
pub fn audit_sequential(inputs: &[Input], keyring: &Keyring, opts: &AuditOptions) -> Report {
    audit_with(
        inputs,
        Vec::new(),
        keyring,
        opts,
        Signatures::Sequential,
        &Tally::default(),
    )
    .into_report()
}

/// As [`audit`] (or, with `parallel` false, [`audit_sequential`]), also
/// counting the signature equations computed.
#[doc(hidden)]
pub fn audit_counted(
    inputs: &[Input],
    keyring: &Keyring,
    opts: &AuditOptions,
    parallel: bool,
) -> (Report, usize) {
    let tally = Tally::default();
    let signatures = if parallel {
        Signatures::Parallel
    } else {
        Signatures::Sequential
    };
    let report = audit_with(inputs, Vec::new(), keyring, opts, signatures, &tally).into_report();
    (report, tally.get())
}

fn audit_with<'a>(
    inputs: &'a [Input],
    known: Vec<ItemEnds>,
    keyring: &Keyring,
    opts: &AuditOptions,
    signatures: Signatures,
    tally: &Tally,
) -> CompactReport<'a> {
    let check_opts = CheckOptions {
        now: opts.now,
        skew: opts.skew,
        limits: opts.limits,
        required_scopes: &opts.required_scopes,
        learn_birth_keys: opts.learn_birth_keys,
    };
    let mut items = split(inputs, known, opts);
    let learned = learn_keys(keyring, &mut items, &check_opts, tally);
    let step3 = Step3 {
        keys: &learned.keys,
        opts: &check_opts,
        signatures,
        known: &learned.known,
        molting: &learned.molting,
        tally,
    };
    let mut set = check_each(&mut items, &step3);
    drop((learned.known, core::mem::take(&mut items.entries)));

    // 3b. Bundled inclusion proofs, against the pinned keys and the set (P9).
    let ids: Vec<Option<&[u8; 32]>> = if items.proofs.is_empty() {
        Vec::new()
    } else {
        set.facts.iter().map(|f| f.map(|f| f.id)).collect()
    };
    let (proof_reports, proven) = bundle::check_proofs(
        &items.proofs,
        &set.bytes,
        &ids,
        &opts.limits,
        &learned.keys,
        opts.log_policy.as_deref(),
    );
    // 3c. The identity lifecycle across the set (P8), molts proven by 3b,
    //     deprecations a Herald quorum certified as witnessed (P14).
    let witnessed = crate::herald::effects::witnessed_deprecations(opts.heralds.as_deref());
    let lifecycle_set = lifecycle::audit::Set {
        witnessed: &witnessed,
        bytes: &set.bytes,
        facts: &set.facts,
        senders: &set.senders,
        proven: &proven,
        verdicts: &set.verdicts,
        tally,
    };
    lifecycle::audit::apply(
        &lifecycle_set,
        &mut set.reports,
        &mut set.details,
        &learned.keys,
        &check_opts,
    );
    // 3d. Lineage proofs against the Herald quorum (P14).
    if let Some(certified) = &opts.heralds {
        crate::herald::effects::lineage_proofs(
            certified,
            &set.bytes,
            &mut set.reports,
            &mut set.details,
            &opts.limits,
        );
        set.details.certified = crate::herald::effects::by_subject(certified);
    }

    links::parents(&mut set, inputs);
    links::replays(&mut set, inputs);
    // The senders are read by 3c and 5 only: gone before step 6 builds its tables.
    drop(core::mem::take(&mut set.senders));
    let (traces, leaves) = group::traces(&set, &opts.limits);

    // 7. Merge unparseable pieces back in input order, in place: a second
    //    vector of reports would double the peak (F2).
    let Checked {
        reports,
        dropped,
        facts,
        senders: _,
        computed,
        marks,
        bytes,
        details,
        verdicts,
    } = set;
    drop((computed, marks, verdicts, proven));
    let pieces = items
        .unsplittable
        .into_iter()
        .map(|(at, r)| (at, CompactEnvelope::formed(None, r)))
        .collect();
    let kept = merge_at_positions(reports, pieces);
    let mut details = details;
    details.resolved = keyring.resolved().map(|(k, at)| (k, at.clone())).collect();
    let mut summary = Summary::default();
    for e in &kept {
        summary.add(e.status());
    }
    summary.invalid += dropped;
    CompactReport {
        kept,
        facts,
        bytes,
        inputs,
        details,
        traces,
        leaves,
        summary,
        proofs: proof_reports,
        unlisted: dropped,
    }
}

/// Step 1's output: the items to check, and what is not an item.
struct Items<'a> {
    entries: Vec<Entry<'a>>,
    /// Pieces that are not items, each at its final position among all.
    unsplittable: Vec<(usize, EnvelopeReport)>,
    bundle_keys: Vec<PublicKey>,
    proofs: Vec<ProofInput<'a>>,
}

/// 1. Split every input into items, in argument order then file order. A
///    bundle contributes its envelopes as items, its keys and its proofs.
fn split<'a>(inputs: &'a [Input], mut known: Vec<ItemEnds>, opts: &AuditOptions) -> Items<'a> {
    let mut items = Items {
        entries: Vec::new(),
        unsplittable: Vec::new(),
        bundle_keys: Vec::new(),
        proofs: Vec::new(),
    };
    let cap = |position: usize, input: &Input, offset: usize| {
        let source = Source {
            input: input.name.clone(),
            offset,
        };
        let detail = std::format!("more than {} envelopes in one audit", opts.max_envelopes);
        (position, unparsed(source, detail))
    };
    for (n, input) in inputs.iter().enumerate() {
        let position = |items: &Items<'_>| items.entries.len() + items.unsplittable.len();
        if let Some(what) = not_envelopes(&input.bytes) {
            let source = Source {
                input: input.name.clone(),
                offset: 0,
            };
            let detail = std::format!("{}: {what}", input.name);
            let at = position(&items);
            items.unsplittable.push((at, unparsed(source, detail)));
            continue;
        }
        if bundle::is_bundle(&input.bytes) {
            match Bundle::decode(&input.bytes) {
                Ok(b) => {
                    for &(offset, bytes) in b.envelopes() {
                        if items.entries.len() >= opts.max_envelopes {
                            items
                                .unsplittable
                                .push(cap(position(&items), input, offset));
                            break;
                        }
                        items.entries.push(Entry { bytes });
                    }
                    items.bundle_keys.extend_from_slice(b.keys());
                    let checkpoints: Vec<&[u8]> = b.checkpoints().iter().map(|c| c.1).collect();
                    items
                        .proofs
                        .extend(b.proofs().iter().map(|&(offset, bytes)| ProofInput {
                            bytes,
                            source: Source {
                                input: input.name.clone(),
                                offset,
                            },
                            checkpoints: checkpoints.clone(),
                        }));
                }
                Err(e) => {
                    let source = Source {
                        input: input.name.clone(),
                        offset: 0,
                    };
                    let detail = std::format!("{}: {e}", input.name);
                    let at = position(&items);
                    items.unsplittable.push((at, unparsed(source, detail)));
                }
            }
            continue;
        }
        // The items past the cap are not used: the cap's entry is the last.
        let usable = opts
            .max_envelopes
            .saturating_sub(items.entries.len())
            .saturating_add(1);
        let max_size = opts.limits.max_size;
        let ends = known.get_mut(n).map(core::mem::take);
        let ends = ends
            .as_ref()
            .and_then(|e| e.of(&input.bytes, max_size, MAX_NESTING));
        // As many entries as the reader found, at once: grown by doubling,
        // the vector would hold up to twice their room through step 3
        // (the memory bound).
        let found = ends.map_or(0, <[u32]>::len).min(usable);
        items.entries.reserve_exact(found);
        let mut each = |piece| {
            let at = position(&items);
            match piece {
                Piece::Item { bytes, .. } if items.entries.len() < opts.max_envelopes => {
                    items.entries.push(Entry { bytes });
                }
                Piece::Item { offset, .. } => {
                    items.unsplittable.push(cap(at, input, offset));
                    return ControlFlow::Break(());
                }
                Piece::Unsplittable { offset, error } => {
                    let source = Source {
                        input: input.name.clone(),
                        offset,
                    };
                    let detail = std::format!("{}: byte {offset}: {error}", input.name);
                    items.unsplittable.push((at, unparsed(source, detail)));
                }
            }
            ControlFlow::Continue(())
        };
        // The items the reader found, then the rest walked here.
        let mut from = 0;
        let mut known_ends = ends.unwrap_or_default().iter();
        let flow = known_ends.try_for_each(|&end| {
            let end = end as usize;
            let bytes = input.bytes.get(from..end).unwrap_or_default();
            let flow = each(Piece::Item {
                offset: from,
                bytes,
            });
            from = end;
            flow
        });
        if flow.is_continue() {
            for_each_piece(&input.bytes, from, max_size, MAX_NESTING, usable, &mut each);
        }
    }
    items
}

/// Step 2's output.
struct Learned {
    keys: Keyring,
    /// The verdicts step 2 computed, by entry index, for step 3 to reuse.
    known: HashMap<usize, Vec<Verdict>>,
    /// Identities the set holds molts of.
    molting: HashSet<Identity>,
}

/// 2. Keys: the pinned keyring, the keys bundles carry, plus keys learned
///    from self-certifying births whose origin verifies (P7); and which
///    identities the set holds molts of (step 3 keeps the verdicts of
///    their envelopes for 3c).
fn learn_keys(
    keyring: &Keyring,
    items: &mut Items<'_>,
    opts: &CheckOptions<'_>,
    tally: &Tally,
) -> Learned {
    let mut keys = keyring.clone();
    for key in items.bundle_keys.drain(..) {
        keys.insert(key, Provenance::Bundle);
    }
    let mut known = HashMap::new();
    let mut molting = HashSet::new();
    let scan = KindScan::new();
    for (i, e) in items.entries.iter().enumerate() {
        let may_be = scan.scan(e.bytes);
        if may_be.molt
            && let Ok(v) = EnvelopeRef::decode_with(e.bytes, &opts.limits)
            && v.kind() == Kind::Molt
            && let Some(who) = identity(&v.from_sigil())
        {
            molting.insert(who);
        }
        if !opts.learn_birth_keys || !may_be.birth {
            continue;
        }
        let mut memo = Memo::new(&[], tally);
        let mut reasons = ReasonList::default();
        let checked = check_with(e.bytes, &(), opts, &mut reasons, &mut memo);
        let origin_ok = !reasons
            .codes()
            .any(|(code, index)| index == Some(0) || code == ReasonCode::IdMismatch);
        if let (Some(KeySource::Birth), true, Some(env)) =
            (checked.key_source, origin_ok, &checked.envelope)
            && let Some(b) = env
                .attestation("birth")
                .and_then(|v| BirthAttestation::parse(v).ok())
            && let Ok(key) = PublicKey::from_bytes(b.key)
        {
            keys.insert(key, Provenance::Birth);
        }
        if !memo.learned.is_empty() {
            known.insert(i, memo.learned);
        }
    }
    Learned {
        keys,
        known,
        molting,
    }
}

/// Step 3's output, one slot per listed entry.
struct Checked<'a> {
    reports: Vec<CompactEnvelope>,
    facts: Vec<Option<Facts<'a>>>,
    /// Until steps 3c and 5 have run.
    senders: Vec<Option<Sender<'a>>>,
    /// The first eight bytes of `sha256(body(E, 0))`, when the body could
    /// be formed ([`Marks::COMPUTED`]): what makes two items one node of
    /// the DAG, the rest recomputed where eight bytes do not decide.
    computed: Vec<u64>,
    marks: Vec<Marks>,
    bytes: Vec<&'a [u8]>,
    /// The details of the reasons kept as codes.
    details: DetailTable,
    /// Verdicts kept for 3c, by listed index.
    verdicts: BTreeMap<usize, Vec<Verdict>>,
    /// Entries not listed (undecodable past [`MAX_LISTED_UNPARSED`]).
    dropped: usize,
}

/// 3. Each envelope alone (P11 local reasons), in blocks whose signatures
///    are verified together on every core ([`check_block`]). Sized for the
///    entries that will be listed: at most those that may be envelopes,
///    plus the undecodable ones listed in full.
fn check_each<'a>(items: &mut Items<'a>, step: &Step3<'_>) -> Checked<'a> {
    let entries = &items.entries;
    let listed = entries
        .iter()
        .filter(|e| may_be_envelope(e.bytes))
        .count()
        .saturating_add(MAX_LISTED_UNPARSED)
        .min(entries.len());
    let mut set = Checked {
        reports: Vec::with_capacity(listed),
        facts: Vec::with_capacity(listed),
        senders: Vec::with_capacity(listed),
        computed: Vec::with_capacity(listed),
        marks: Vec::with_capacity(listed),
        bytes: Vec::with_capacity(listed),
        details: DetailTable::default(),
        verdicts: BTreeMap::new(),
        dropped: 0,
    };
    // Entries not listed are counted, and every unsplittable piece after
    // them moves up by as many.
    let mut undecoded = items.unsplittable.len();
    let mut placed = 0;
    let mut index = 0;
    let mut rest = &entries[..];
    while !rest.is_empty() {
        let (block, next) = rest.split_at(block_len(rest));
        rest = next;
        let records = check_block(index, block, step).into_iter().flatten();
        for (r, entry) in records.zip(block) {
            place_pieces(&mut items.unsplittable, &mut placed, index, set.dropped);
            index += 1;
            if r.facts.is_none() {
                undecoded += 1;
                if undecoded > MAX_LISTED_UNPARSED {
                    set.dropped += 1;
                    continue;
                }
            }
            set.push(entry, r);
        }
    }
    place_pieces(&mut items.unsplittable, &mut placed, index, set.dropped);
    set
}

impl<'a> Checked<'a> {
    fn push(&mut self, entry: &Entry<'a>, mut r: Record<'a>) {
        let listed = self.reports.len();
        if let Some(v) = r.verdicts {
            self.verdicts.insert(listed, v);
        }
        let at = u32::try_from(listed).ok();
        match &mut r.report {
            CompactEnvelope::AsCodes(c) => {
                c.entry = at.unwrap_or(u32::MAX);
                c.reasons = CompactReasons::of(&r.reasons, &mut self.details, c.entry);
            }
            CompactEnvelope::Formed { entry: e, .. } => *e = at.filter(|_| r.facts.is_some()),
        }
        self.bytes.push(entry.bytes);
        self.reports.push(r.report);
        self.facts.push(r.facts);
        self.senders.push(r.sender);
        let mut marks = Marks::default();
        if let Some(c) = r.computed {
            marks.set(Marks::COMPUTED);
            if r.id == Some(c) {
                marks.set(Marks::OWNS_ID);
            }
        }
        if r.claims {
            marks.set(Marks::CLAIMS);
        }
        self.computed.push(r.computed.as_ref().map_or(0, prefix));
        self.marks.push(marks);
    }
}

/// What steps 4–6 know of a listed entry beyond its facts, one bit each.
#[derive(Clone, Copy, Debug, Default)]
struct Marks(u8);

impl Marks {
    /// `sha256(body(E, 0))` could be formed.
    const COMPUTED: u8 = 1;
    /// Its wire id is its computed id: others may name it by that id (P13
    /// revision 2: an `id_mismatch` envelope is nobody's parent).
    const OWNS_ID: u8 = 2;
    /// Its origin verified, so it claims its `(from key, nonce)` (P10
    /// revision 2).
    const CLAIMS: u8 = 4;
    /// Another envelope of the set names it as parent.
    const HAS_CHILD: u8 = 8;

    fn has(self, mark: u8) -> bool {
        self.0 & mark != 0
    }

    fn set(&mut self, mark: u8) {
        self.0 |= mark;
    }
}

/// The first eight bytes of an id.
fn prefix(id: &[u8; 32]) -> u64 {
    let mut head = [0u8; 8];
    head.copy_from_slice(&id[..8]);
    u64::from_be_bytes(head)
}

impl Checked<'_> {
    /// Listed entry `i`'s mark.
    fn has(&self, i: usize, mark: u8) -> bool {
        self.marks.get(i).is_some_and(|m| m.has(mark))
    }

    /// The id others may name listed entry `i` by: its wire id, when that
    /// is its computed id.
    fn id(&self, i: usize) -> Option<&[u8; 32]> {
        self.facts
            .get(i)?
            .as_ref()
            .filter(|_| self.has(i, Marks::OWNS_ID))
            .map(|f| f.id)
    }
}
