//! Fuzz-target bodies over herald-verify's parsers (docs/fuzzing.md).
//!
//! Shared, unchanged, by the libFuzzer binaries (through `fuzz/src/lib.rs`)
//! and by `herald-verify/tests/fuzz_replay.rs` (through `#[path]`), so it
//! may only use what herald-verify's tests can: herald_verify, herald_core,
//! serde_json, sha2, std. Every function must never panic on any input; the
//! `assert!`s state the properties a failure would break.

use std::path::Path;
use std::sync::OnceLock;

use herald_core::cbor::{self, Limits};
use herald_core::{PublicKey, Sigil, SigningKey, Status};
use herald_verify::auditlog::leaf::MAX_LEAF_LEN;
use herald_verify::auditlog::{
    AuditObject, CheckError, ConsistencyProof, InclusionProof, Leaf, LogError, SignedTreeHead,
    SthError, TreeHead,
};
use herald_verify::bundle::{self, Bundle};
use herald_verify::internal::{HEADER_LEN, LeafScan, scan_leaf_file};
use herald_verify::keyring::key_line;
use herald_verify::merkle::{
    self, Hash, Tree, consistency_proof_len, inclusion_proof_len, leaf_hash, root_from_leaves,
    verify_consistency, verify_inclusion,
};
use herald_verify::sequence::{self, Piece, ReadLimits, SplitError, split};
use herald_verify::trace::MAX_LISTED_UNPARSED;
use herald_verify::{AuditOptions, Input, Keyring, Provenance, Summary, audit};
use sha2::{Digest, Sha256};

/// The clock of the fuzzed audits: one hour after the tests' fixed `ts`.
pub const NOW: u64 = 1_746_432_000 + 3_600;

/// The seeds of the two pinned keys (the tests' Alice and Bob).
pub const KEY_SEEDS: [[u8; 32]; 2] = [[0x11; 32], [0x22; 32]];

/// The fixed keyring of `trace_audit`: the two keys, pinned.
pub fn fuzz_keyring() -> &'static Keyring {
    static RING: OnceLock<Keyring> = OnceLock::new();
    RING.get_or_init(|| {
        let mut ring = Keyring::new();
        for seed in KEY_SEEDS {
            ring.insert(
                SigningKey::from_seed(&seed).public_key(),
                Provenance::Pinned,
            );
        }
        ring
    })
}

/// `trace_audit`: [`audit`] over the input as one CBOR-sequence file. One
/// report per piece [`split`] cuts, listed or (undecodable past
/// `MAX_LISTED_UNPARSED`) counted as unlisted, so nothing is silently
/// dropped; never
/// an empty report, each status the P13 maximum of its reasons, a summary
/// and trace counts that add up, a JSON form that parses, and the same
/// report twice (no dependence on hash-map order).
pub fn trace_audit(data: &[u8]) {
    let inputs = [Input {
        name: "fuzz".into(),
        bytes: data.to_vec(),
    }];
    let opts = AuditOptions {
        now: Some(NOW),
        ..AuditOptions::default()
    };
    let report = audit(&inputs, fuzz_keyring(), &opts);
    assert!(!report.envelopes.is_empty(), "no input verifies as nothing");
    let pieces = split(data, opts.limits.max_size, 512);
    assert_eq!(
        report.envelopes.len() + report.unlisted,
        pieces.len(),
        "one report per piece"
    );
    // Not decoded as an envelope: no `trace` (an `id` may still be named
    // from the raw map, so it cannot tell).
    let listed_unparsed = report
        .envelopes
        .iter()
        .filter(|e| e.trace.is_none())
        .count();
    assert!(report.unlisted == 0 || listed_unparsed == MAX_LISTED_UNPARSED);
    let mut summary = Summary {
        invalid: report.unlisted,
        ..Summary::default()
    };
    for e in &report.envelopes {
        summary.add(e.status());
        let worst = e
            .reasons
            .iter()
            .map(|r| r.status())
            .max()
            .unwrap_or(Status::Valid);
        assert_eq!(e.status(), worst);
        if e.id.is_none() {
            assert_eq!(
                e.status(),
                Status::Invalid,
                "an envelope without id is invalid"
            );
        }
    }
    assert_eq!(summary, report.summary);
    let in_traces: usize = report
        .traces
        .iter()
        .map(|t| t.valid + t.partial + t.invalid)
        .sum();
    assert!(in_traces <= report.envelopes.len());
    for t in &report.traces {
        assert!(
            t.valid + t.partial + t.invalid > 0,
            "a trace has an envelope"
        );
    }
    let json = serde_json::to_string(&report).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
    assert_eq!(
        audit(&inputs, fuzz_keyring(), &opts),
        report,
        "deterministic"
    );

    let unlearned = AuditOptions {
        learn_birth_keys: false,
        now: None,
        max_envelopes: 2,
        ..AuditOptions::default()
    };
    let capped = audit(&inputs, &Keyring::new(), &unlearned);
    assert!(!capped.envelopes.is_empty());
    assert!(capped.envelopes.len() <= report.envelopes.len());
}

/// `keyring_parse`: [`Keyring::parse`] over the input as lossy UTF-8. On
/// success every key line's sigil resolves to a key whose own keyring line
/// parses back; errors display.
pub fn keyring_parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut ring = Keyring::new();
    match ring.parse(&text, "fuzz") {
        Ok(added) => {
            assert!(ring.len() <= added, "duplicates are kept once");
            assert_eq!(ring.is_empty(), added == 0);
            for line in text.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let sigil = line.split_ascii_whitespace().next().map(Sigil::parse);
                assert!(
                    matches!(sigil, Some(Ok(_))),
                    "an accepted line starts with a sigil"
                );
                let Some(Ok(sigil)) = sigil else { return };
                let found = ring.lookup(&sigil);
                assert!(found.is_some(), "every accepted sigil resolves");
                let Some((key, provenance)) = found else {
                    return;
                };
                assert_eq!(provenance, Provenance::Pinned);
                let mut again = Keyring::new();
                assert_eq!(again.parse(&key_line(&key), "again").ok(), Some(1));
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

fn u64_at(data: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    for (dst, src) in b.iter_mut().zip(data.iter().skip(at)) {
        *dst = *src;
    }
    u64::from_le_bytes(b)
}

/// `merkle_proof`: RFC 9162 proofs from arbitrary bytes (P9).
///
/// Layout: byte 0 = mode, bytes 1..9 = `a`, 9..17 = `b` (u64 LE), the rest
/// = hashes. Mode bit 0: consistency (else inclusion); bit 1: each hash is
/// prefixed by a length byte (`len % 40`, to reach non-32-byte hashes),
/// else 32-byte chunks; bit 2: sizes reduced to 0..1024; bit 3: also build
/// a small tree from `a`, `b` and check that its own proofs verify and that
/// a flipped bit does not.
///
/// For the arbitrary proof: the call must not panic, and whenever it
/// verifies, the proof has the length the sizes determine; a root
/// recomputed from an inclusion proof verifies against itself.
pub fn merkle_proof(data: &[u8]) {
    let mode = data.first().copied().unwrap_or(0);
    let (mut a, mut b) = (u64_at(data, 1), u64_at(data, 9));
    if mode & 4 != 0 {
        a %= 1024;
        b %= 1024;
    }
    let rest = data.get(17..).unwrap_or(&[]);
    let mut hashes: Vec<&[u8]> = Vec::new();
    if mode & 2 != 0 {
        let mut at = 0;
        while let Some(&len) = rest.get(at) {
            let len = usize::from(len % 40);
            let end = (at + 1 + len).min(rest.len());
            hashes.push(rest.get(at + 1..end).unwrap_or(&[]));
            at = end;
        }
    } else {
        hashes.extend(rest.chunks(32));
    }
    let first = hashes.first().copied().unwrap_or(&[]);
    let second = hashes.get(1).copied().unwrap_or(&[]);
    let proof = hashes.get(2..).unwrap_or(&[]);
    if mode & 1 == 0 {
        if verify_inclusion(first, a, b, proof, second).is_ok() {
            assert_eq!(inclusion_proof_len(a, b).ok(), Some(proof.len()));
        }
        if let Ok(root) = merkle::root_from_inclusion_proof(first, a, b, proof) {
            assert_eq!(verify_inclusion(first, a, b, proof, &root), Ok(()));
        }
    } else if verify_consistency(a, b, proof, first, second).is_ok() {
        assert_eq!(consistency_proof_len(a, b).ok(), Some(proof.len()));
    }
    if mode & 8 != 0 {
        own_tree(a, b, mode, rest);
    }
}

/// Proofs from a small tree verify; with one bit flipped they do not.
fn own_tree(a: u64, b: u64, mode: u8, salt: &[u8]) {
    let n = a % 300 + 1;
    let leaves: Vec<Hash> = (0..n)
        .map(|i| {
            let mut leaf = i.to_le_bytes().to_vec();
            leaf.extend_from_slice(salt.get(..salt.len().min(8)).unwrap_or(&[]));
            leaf_hash(&leaf)
        })
        .collect();
    let tree = Tree::from_leaf_hashes(leaves.iter().copied());
    assert_eq!(tree.len(), n);
    assert_eq!(
        Tree::from_levels(tree.levels().to_vec()).as_ref(),
        Ok(&tree)
    );
    let size = b % n + 1;
    let index = (b >> 16) % size;
    let size1 = (a >> 16) % size + 1;
    let root = tree.root_at(size);
    let prefix = usize::try_from(size).ok().and_then(|s| leaves.get(..s));
    assert_eq!(root.ok(), prefix.map(root_from_leaves));
    let roots = (tree.root_at(size), tree.root_at(size1));
    assert!(
        roots.0.is_ok() && roots.1.is_ok(),
        "roots exist up to the tree's size"
    );
    let (Ok(root), Ok(root1)) = roots else { return };
    let leaf = usize::try_from(index).ok().and_then(|i| leaves.get(i));
    let path = tree.inclusion_proof(index, size);
    assert!(
        leaf.is_some() && path.is_ok(),
        "proofs exist up to the tree's size"
    );
    let (Some(leaf), Ok(path)) = (leaf, path) else {
        return;
    };
    assert_eq!(verify_inclusion(leaf, index, size, &path, &root), Ok(()));
    let consistency = tree.consistency_proof(size1, size);
    assert!(consistency.is_ok());
    let Ok(consistency) = consistency else { return };
    assert_eq!(
        verify_consistency(size1, size, &consistency, &root1, &root),
        Ok(())
    );

    // One flipped bit, chosen by `mode`, breaks each proof.
    let bit = usize::from(mode >> 4);
    let flip = |h: &Hash| {
        let mut h = *h;
        if let Some(byte) = h.get_mut(bit % 32) {
            *byte ^= 1 << (bit % 8);
        }
        h
    };
    assert!(verify_inclusion(&flip(leaf), index, size, &path, &root).is_err());
    assert!(verify_inclusion(leaf, index, size, &path, &flip(&root)).is_err());
    if let Some(p) = path.first() {
        let mut bad = path.clone();
        bad[0] = flip(p);
        assert!(verify_inclusion(leaf, index, size, &bad, &root).is_err());
    }
    assert!(verify_consistency(size1, size, &consistency, &root1, &flip(&root)).is_err());
    if size1 != size {
        assert!(verify_consistency(size1, size, &consistency, &flip(&root1), &root).is_err());
    }
    if let Some(p) = consistency.last() {
        let mut bad = consistency.clone();
        let last = bad.len() - 1;
        bad[last] = flip(p);
        assert!(verify_consistency(size1, size, &bad, &root1, &root).is_err());
    }
}

/// `sequence_split`: [`split`] at two settings (the audit's 1 MiB / depth
/// 512, and a tight 64 bytes / depth 4). The pieces tile the input in
/// order, at most one `Unsplittable` and only last, items within the size
/// limit; and wherever the strict decoder (P1, same limits) reads an item,
/// the splitter cuts exactly that item (strict acceptance implies
/// well-formedness).
pub fn sequence_split(data: &[u8]) {
    for (max_item, max_depth) in [(1usize << 20, 512usize), (64, 4)] {
        let pieces = split(data, max_item, max_depth);
        assert!(!pieces.is_empty());
        let strict_limits = Limits {
            max_depth,
            max_items: Limits::DEFAULT.max_items,
            max_size: max_item,
        };
        let mut pos = 0;
        for (i, piece) in pieces.iter().enumerate() {
            let here = data.get(pos..).unwrap_or(&[]);
            let strict = cbor::decode_prefix(here, &strict_limits).ok();
            match *piece {
                Piece::Item { offset, bytes } => {
                    assert_eq!(offset, pos, "pieces tile the input");
                    assert!(!bytes.is_empty() && bytes.len() <= max_item);
                    assert_eq!(data.get(pos..pos + bytes.len()), Some(bytes));
                    if let Some((_, end)) = strict {
                        assert_eq!(bytes.len(), end, "split cuts the item strict reads");
                    }
                    pos += bytes.len();
                }
                Piece::Unsplittable { offset, error } => {
                    assert_eq!(offset, pos);
                    assert_eq!(i + 1, pieces.len(), "Unsplittable comes last");
                    assert_eq!(error == SplitError::Empty, data.is_empty());
                    assert!(strict.is_none(), "strict read an item split refused");
                    let _ = error.to_string();
                }
            }
        }
        if matches!(pieces.last(), Some(Piece::Item { .. })) {
            assert_eq!(pos, data.len(), "items cover the whole input");
        }
        // sequence::read stops where split stops being used: what it read
        // is a prefix of the input and splits into the same first pieces.
        for max_items in [usize::MAX, 2] {
            let limits = ReadLimits {
                max_item,
                max_depth,
                max_items,
                max_bytes: u64::MAX,
            };
            let step = 1 + usize::from(data.first().copied().unwrap_or(0) % 16) * 97;
            let mut reader = Trickle {
                data,
                step,
                given: 0,
            };
            let got = sequence::read(&mut reader, &limits);
            assert!(
                got.is_ok(),
                "reading a slice with no byte limit fails only on I/O"
            );
            let got = got.unwrap_or_default();
            assert!(data.starts_with(&got), "read returns a prefix");
            assert_eq!(got.len(), reader.given, "read keeps what it read");
            let n = max_items.saturating_add(1);
            let from_read: Vec<Piece<'_>> = split(&got, max_item, max_depth)
                .into_iter()
                .take(n)
                .collect();
            let from_all: Vec<Piece<'_>> = pieces.iter().copied().take(n).collect();
            assert_eq!(from_read, from_all, "the pieces an audit uses are all read");
        }
    }
}

/// A reader handing out `step` bytes per call, like a pipe.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
    given: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = self.data.get(self.given..).unwrap_or(&[]);
        let n = self.step.min(buf.len()).min(rest.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.given += n;
        Ok(n)
    }
}

// ---- log_file ---------------------------------------------------------------

/// Size of the `leaves.dat` header block (docs/audit-log.md, "Files").
const LOG_HEADER: usize = HEADER_LEN as usize;
/// The header's mark: magic, acknowledged end, acknowledged count, checksum.
const LOG_MARK: usize = 64;
/// Length prefix and checksum around each leaf.
const LOG_RECORD_OVERHEAD: usize = 4 + 32;

fn sha(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn be64(bytes: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}

fn be32(bytes: &[u8], at: usize) -> Option<usize> {
    let b: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    usize::try_from(u32::from_be_bytes(b)).ok()
}

/// The header mark acknowledging `count` records up to byte `end`, built
/// from the documented layout (docs/audit-log.md, "Files"), independently
/// of the reader.
pub fn log_mark(end: u64, count: u64) -> [u8; LOG_MARK] {
    let mut out = [0u8; LOG_MARK];
    out[..16].copy_from_slice(b"herald-leaves-v1");
    out[16..24].copy_from_slice(&end.to_be_bytes());
    out[24..32].copy_from_slice(&count.to_be_bytes());
    let check = sha(&[&out[..32]]);
    out[32..].copy_from_slice(&check);
    out
}

/// The `leaves.dat` bytes a `log_file` input stands for. Byte 0 is a mode,
/// the rest the file:
///
/// - bit 0, compact: the rest is the header's 64-byte mark, then the
///   records; the mark is padded with zeros to the 4096-byte header block
///   (so short inputs reach the records);
/// - bit 1, seal the header: its checksum (bytes 32..64) is recomputed, so
///   mutated acknowledged ends and counts get past it;
/// - bit 2, seal the records: walking the records from byte 4096 while
///   their lengths are within 1..=1024 and they fit, each checksum is
///   recomputed for its position, so mutated leaves reach the leaf decoder
///   and the duplicate-id check.
pub fn log_file_bytes(data: &[u8]) -> Vec<u8> {
    let mode = data.first().copied().unwrap_or(0);
    let rest = data.get(1..).unwrap_or(&[]);
    let mut file = if mode & 1 != 0 {
        let split = rest.len().min(LOG_MARK);
        let (mark, records) = rest.split_at(split);
        let mut file = mark.to_vec();
        file.resize(LOG_HEADER, 0);
        file.extend_from_slice(records);
        file
    } else {
        rest.to_vec()
    };
    if mode & 2 != 0 && file.len() >= LOG_MARK {
        let check = sha(&[&file[..32]]);
        file[32..LOG_MARK].copy_from_slice(&check);
    }
    if mode & 4 != 0 {
        let mut at = LOG_HEADER;
        let mut index = 0u64;
        while let Some(n) = be32(&file, at) {
            let whole = n + LOG_RECORD_OVERHEAD;
            if n == 0 || n > MAX_LEAF_LEN || at + whole > file.len() {
                break;
            }
            let check = sha(&[&index.to_be_bytes(), &file[at + 4..at + 4 + n]]);
            file[at + 4 + n..at + whole].copy_from_slice(&check);
            at += whole;
            index += 1;
        }
    }
    file
}

/// What [`herald_verify::Log::open`] leaves on disk after repairing a leaf
/// file it scanned (docs/audit-log.md, "Crash safety"): the kept records
/// only, and a header acknowledging all of them. Built here from the
/// documented layout; `herald-verify/tests/fuzz_replay.rs` checks it
/// against what `open` really writes.
pub fn log_file_repaired(file: &[u8], scan: &LeafScan) -> Vec<u8> {
    let end = usize::try_from(scan.end()).unwrap_or(usize::MAX);
    let mut out = file.get(..end).unwrap_or(file).to_vec();
    if let Some(head) = out.get_mut(..LOG_MARK) {
        head.copy_from_slice(&log_mark(scan.end(), scan.len()));
    }
    out
}

/// The path the `log_file` target names in errors.
pub const LOG_FILE_PATH: &str = "fuzz/leaves.dat";

/// `log_file`: the audit log's leaf-file reader, [`scan_leaf_file`] (the
/// reader [`herald_verify::Log::open`] runs), over [`log_file_bytes`] of
/// the input (docs/audit-log.md, "Files" and "Crash safety").
///
/// Accepted: the kept records tile the file from byte 4096 to
/// [`LeafScan::end`], each with a length in 1..=1024 and the checksum of
/// its position; every leaf decodes (P9) and re-encodes to the record's
/// bytes, its hash is the tree's leaf, its id indexes it and no id repeats;
/// the tree is the one rebuilt from those leaves; every acknowledged record
/// is kept (the header's end is a record boundary at its count); a torn
/// tail starts at the end of the kept records, else they reach the end of
/// the file; without a repair the tree's size is the acknowledged count and
/// the header's end the file's end. A repaired file (the tail cut, the
/// header moved, as `open` writes it) is accepted again, needing no repair,
/// with the same leaves and tree (idempotent).
///
/// Refused: `NotALog` exactly when a file of at least 4096 bytes lacks the
/// magic; otherwise `Corrupted` naming the path, at the offset the format
/// says (the file's length, 16 for the header, or an acknowledged record's
/// offset), never `Io` (the bytes are in memory). The same bytes scan the
/// same way twice.
pub fn log_file(data: &[u8]) {
    let file = log_file_bytes(data);
    let path = Path::new(LOG_FILE_PATH);
    let result = scan_leaf_file(file.as_slice(), file.len() as u64, path);
    match &result {
        Ok(scan) => {
            check_log_scan(&file, scan);
            let repaired = log_file_repaired(&file, scan);
            if !scan.needs_repair() {
                assert_eq!(repaired, file, "an intact file needs no change");
            }
            let again = scan_leaf_file(repaired.as_slice(), repaired.len() as u64, path);
            assert!(again.is_ok(), "a repaired file is accepted again");
            if let Ok(again) = again {
                check_log_scan(&repaired, &again);
                assert!(!again.needs_repair(), "a repaired file needs no repair");
                assert_eq!(again.acknowledged(), scan.len());
                assert_eq!(again.tree(), scan.tree());
                assert_eq!(again.offsets(), scan.offsets());
                assert_eq!(again.end(), scan.end());
            }
        }
        Err(e) => check_log_error(&file, e),
    }
    let twice = scan_leaf_file(file.as_slice(), file.len() as u64, path);
    assert_eq!(result.is_ok(), twice.is_ok(), "deterministic");
    match (&result, &twice) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "deterministic"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "deterministic"),
        _ => {}
    }
}

/// The properties of an accepted leaf file (see [`log_file`]).
fn check_log_scan(file: &[u8], scan: &LeafScan) {
    let header = (be64(file, 16), be64(file, 24));
    assert!(file.len() >= LOG_HEADER, "an accepted file has a header");
    let (Some(marked_end), Some(marked_count)) = header else {
        return;
    };
    assert_eq!(scan.acknowledged(), marked_count);
    assert_eq!(scan.offsets().len() as u64, scan.len());
    assert_eq!(scan.tree().len(), scan.len());
    assert!(
        scan.len() >= marked_count,
        "every acknowledged record is kept"
    );
    let mut at = LOG_HEADER;
    let mut hashes = Vec::new();
    for (i, &offset) in scan.offsets().iter().enumerate() {
        let index = i as u64;
        assert_eq!(offset, at as u64, "records tile the file");
        if index == marked_count {
            assert_eq!(offset, marked_end, "the acknowledged end is a boundary");
        }
        let n = be32(file, at);
        assert!(n.is_some_and(|n| (1..=MAX_LEAF_LEN).contains(&n)));
        let n = n.unwrap_or(0);
        let leaf = file.get(at + 4..at + 4 + n).unwrap_or(&[]);
        let check = file.get(at + 4 + n..at + n + LOG_RECORD_OVERHEAD);
        assert_eq!(leaf.len(), n, "a kept record is complete");
        assert_eq!(check, Some(&sha(&[&index.to_be_bytes(), leaf])[..]));
        let decoded = Leaf::decode(leaf);
        assert!(decoded.is_ok(), "a kept record is a P9 leaf");
        if let Ok(decoded) = decoded {
            assert_eq!(decoded.encode(), leaf, "a leaf re-encodes to its bytes");
            assert_eq!(scan.index_of(decoded.id()), Some(index), "ids are unique");
            assert_eq!(decoded.hash(), leaf_hash(leaf));
        }
        assert_eq!(scan.tree().leaf(index), Some(leaf_hash(leaf)));
        hashes.push(leaf_hash(leaf));
        at += n + LOG_RECORD_OVERHEAD;
    }
    let end = at as u64;
    assert_eq!(scan.end(), end);
    if scan.len() == marked_count {
        assert_eq!(marked_end, end, "the acknowledged end is a boundary");
    }
    assert_eq!(scan.tree(), &Tree::from_leaf_hashes(hashes.iter().copied()));
    assert_eq!(scan.tree().root(), root_from_leaves(&hashes));
    match scan.torn() {
        Some((torn_at, why)) => {
            assert_eq!(torn_at, end, "the tail is cut after the kept records");
            assert!(torn_at < file.len() as u64 && !why.is_empty());
            assert!(scan.needs_repair());
        }
        None => assert_eq!(end, file.len() as u64, "the kept records reach the end"),
    }
    if !scan.needs_repair() {
        assert_eq!(
            scan.len(),
            marked_count,
            "the tree is the acknowledged leaves"
        );
        assert_eq!(marked_end, end);
    }
}

/// The properties of a refused leaf file (see [`log_file`]).
fn check_log_error(file: &[u8], e: &LogError) {
    let len = file.len() as u64;
    let magic = file.get(..16) == Some(b"herald-leaves-v1".as_slice());
    let text = e.to_string();
    assert!(
        text.contains(LOG_FILE_PATH),
        "the error names the file: {text}"
    );
    assert!(
        matches!(e, LogError::NotALog { .. } | LogError::Corrupted { .. }),
        "not a format error: {text}"
    );
    if let LogError::NotALog { path, .. } = e {
        assert_eq!(path, Path::new(LOG_FILE_PATH));
        assert!(len >= HEADER_LEN && !magic, "NotALog only without magic");
    }
    if let LogError::Corrupted { path, offset, .. } = e {
        assert_eq!(path, Path::new(LOG_FILE_PATH));
        assert!(
            text.contains(&format!("corrupted at byte {offset}:")),
            "{text}"
        );
        assert!(len < HEADER_LEN || magic, "no magic is NotALog");
        if len < HEADER_LEN {
            assert_eq!(*offset, len, "a file ending in its header");
        }
        // Past the header, only acknowledged data is an error: the records
        // between byte 4096 and a header end that its checksum vouches for.
        let sealed = file.len() >= LOG_MARK && file[32..LOG_MARK] == sha(&[&file[..32]]);
        let marked_end = be64(file, 16).unwrap_or(0);
        assert!(
            *offset == len
                || *offset == 16
                || (sealed && (HEADER_LEN..=marked_end).contains(offset)),
            "offset {offset} is the file's end, the header, or acknowledged data"
        );
    }
}

/// `bundle_verify`: [`audit`] over the input as one file that may be a
/// proof bundle (`herald_verify::bundle`), with the two keys pinned (Bob's
/// doubles as the seed logs' key). [`Bundle::decode`] succeeds only on
/// input [`bundle::is_bundle`] recognises. A recognised bundle that decodes
/// gives one report per envelope, at its offset, which is where its bytes
/// stand in the input, and one per proof, in order; a valid proof names an
/// envelope of the set and has no detail, an invalid one says why; what the
/// bundle holds re-encodes to a bundle that decodes to the same items; exit
/// status 0 exactly when every envelope and proof is valid. A recognised
/// bundle that does not decode is one `malformed` entry and no proofs;
/// anything else has no proofs. Each status is the P13 maximum of its
/// reasons, and the report is the same twice.
pub fn bundle_verify(data: &[u8]) {
    let recognised = bundle::is_bundle(data);
    let decoded = Bundle::decode(data);
    if decoded.is_ok() {
        assert!(recognised, "a bundle that decodes is recognised");
    }
    let inputs = [Input {
        name: "fuzz".into(),
        bytes: data.to_vec(),
    }];
    let opts = AuditOptions {
        now: Some(NOW),
        ..AuditOptions::default()
    };
    let report = audit(&inputs, fuzz_keyring(), &opts);
    assert!(!report.envelopes.is_empty(), "no input verifies as nothing");
    for e in &report.envelopes {
        let worst = e
            .reasons
            .iter()
            .map(|r| r.status())
            .max()
            .unwrap_or(Status::Valid);
        assert_eq!(e.status(), worst);
    }
    match (recognised, &decoded) {
        (true, Ok(b)) => {
            assert_eq!(report.envelopes.len(), b.envelopes().len());
            assert_eq!(report.proofs.len(), b.proofs().len());
            for (&(offset, env), r) in b.envelopes().iter().zip(&report.envelopes) {
                assert_eq!(data.get(offset..offset + env.len()), Some(env));
                assert_eq!(r.source.offset, offset);
            }
            for (&(offset, _), p) in b.proofs().iter().zip(&report.proofs) {
                assert_eq!(p.source.offset, offset);
                if p.status == Status::Valid {
                    assert!(p.detail.is_empty());
                    assert!(
                        report
                            .envelopes
                            .iter()
                            .any(|e| e.id.is_some() && e.id == p.id),
                        "a valid proof names an envelope of the set"
                    );
                } else {
                    assert_eq!(p.status, Status::Invalid);
                    assert!(!p.detail.is_empty(), "an invalid proof says why");
                }
            }
            let envs: Vec<&[u8]> = b.envelopes().iter().map(|e| e.1).collect();
            let proofs: Vec<&[u8]> = b.proofs().iter().map(|p| p.1).collect();
            let again = bundle::encode(&envs, &proofs, b.keys());
            assert!(bundle::is_bundle(&again));
            let b2 = Bundle::decode(&again);
            assert!(b2.is_ok(), "the re-encoded bundle decodes: {b2:?}");
            if let Ok(b2) = b2 {
                let envs2: Vec<&[u8]> = b2.envelopes().iter().map(|e| e.1).collect();
                let proofs2: Vec<&[u8]> = b2.proofs().iter().map(|p| p.1).collect();
                assert_eq!(envs2, envs);
                assert_eq!(proofs2, proofs);
                assert_eq!(b2.keys(), b.keys());
            }
            let all = report.envelopes.iter().all(|e| e.status() == Status::Valid)
                && report.proofs.iter().all(|p| p.status == Status::Valid);
            assert_eq!(report.all_valid(), all);
        }
        (true, Err(e)) => {
            assert_eq!(report.envelopes.len(), 1, "a bad bundle is one entry");
            assert_eq!(report.envelopes[0].status(), Status::Invalid);
            let detail = &report.envelopes[0].reasons[0].detail;
            assert!(detail.contains(&std::format!("{e}")), "{detail}");
            assert!(report.proofs.is_empty());
        }
        (false, _) => assert!(report.proofs.is_empty()),
    }
    let json = serde_json::to_string(&report).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
    assert_eq!(
        audit(&inputs, fuzz_keyring(), &opts),
        report,
        "deterministic"
    );
}

// ---- proof_object -----------------------------------------------------------

/// The seed of the audit-log key `proof_object` pins: the conformance
/// vectors' `log` key (vectors/README.md: seeds are
/// `sha256("herald-vectors/v1/key/" + name)`), so the `proof` cases of
/// `vectors/conformance/` and the seed generator's own log verify under
/// the same keyring.
pub fn proof_log_seed() -> [u8; 32] {
    Sha256::digest(b"herald-vectors/v1/key/log").into()
}

/// The pinned log key of `proof_object` and a keyring holding it alone.
pub fn proof_keyring() -> &'static (SigningKey, Keyring) {
    static RING: OnceLock<(SigningKey, Keyring)> = OnceLock::new();
    RING.get_or_init(|| {
        let key = SigningKey::from_seed(&proof_log_seed());
        let mut ring = Keyring::new();
        ring.insert(key.public_key(), Provenance::Pinned);
        (key, ring)
    })
}

/// `proof_object`: the audit log's proof objects (P9, CLI.md `herald log`)
/// from untrusted bytes, as `herald log verify-proof` and bundles read them.
///
/// Layout: byte 0 selects the object (`byte & 3`: 0 inclusion proof, 1
/// consistency proof, 2 signed tree head, 3 whichever [`AuditObject`] tells
/// apart by its keys; the other bits are ignored), the rest is the object.
///
/// For every kind: decoding is deterministic, [`AuditObject::decode`]
/// agrees with the kind's own decoder (same object, or both refuse);
/// accepted ⇒ `encode()` gives back exactly the bytes (P1: a canonical item
/// has one encoding, a sigil one spelling per form) and re-decodes to an
/// equal object; verification under the pinned log key is deterministic,
/// returns that key and only for a `log` sigil naming it; under an empty
/// keyring nothing verifies, and it fails at the tree head (never at a
/// size or the path). See [`check_inclusion`], [`check_consistency`] and
/// [`check_sth`] for what a verified object must also satisfy.
pub fn proof_object(data: &[u8]) {
    let kind = data.first().copied().unwrap_or(0) & 3;
    let rest = data.get(1..).unwrap_or(&[]);
    let object = AuditObject::decode(rest);
    assert_eq!(object, AuditObject::decode(rest), "deterministic");
    match kind {
        0 => one_kind(
            rest,
            &object,
            InclusionProof::decode,
            AuditObject::Inclusion,
            |o| matches!(o, AuditObject::Inclusion(_)),
            check_inclusion,
        ),
        1 => one_kind(
            rest,
            &object,
            ConsistencyProof::decode,
            AuditObject::Consistency,
            |o| matches!(o, AuditObject::Consistency(_)),
            check_consistency,
        ),
        2 => one_kind(
            rest,
            &object,
            SignedTreeHead::decode,
            AuditObject::TreeHead,
            |o| matches!(o, AuditObject::TreeHead(_)),
            check_sth,
        ),
        _ => {
            if let Ok(o) = &object {
                assert_eq!(o.encode(), rest, "P1: one encoding");
                assert_eq!(AuditObject::decode(&o.encode()).as_ref(), Ok(o));
                let (key, ring) = proof_keyring();
                let verified = o.verify(ring);
                assert_eq!(verified, o.verify(ring), "deterministic");
                if let Ok(k) = &verified {
                    assert_eq!(*k, key.public_key(), "the pinned key");
                }
                assert!(o.verify(&Keyring::new()).is_err());
                assert!(o.verify(&()).is_err());
                // The object is the one its own kind decodes and verifies.
                let (same, own) = match o {
                    AuditObject::Inclusion(p) => (
                        InclusionProof::decode(rest).as_ref() == Ok(p),
                        p.verify(ring),
                    ),
                    AuditObject::Consistency(p) => (
                        ConsistencyProof::decode(rest).as_ref() == Ok(p),
                        p.verify(ring),
                    ),
                    AuditObject::TreeHead(s) => (
                        SignedTreeHead::decode(rest).as_ref() == Ok(s),
                        s.verify(ring).map_err(|error| CheckError::Sth {
                            which: "sth",
                            error,
                        }),
                    ),
                };
                assert!(same, "AuditObject decodes as its kind does");
                assert_eq!(own, verified, "AuditObject verifies as its kind does");
            }
        }
    }
}

/// `rest` decoded as one kind of object: deterministic; when it decodes,
/// [`AuditObject::decode`] gives the same object (`wrap`) and `check`
/// holds; when it does not, `AuditObject` did not decode it as that kind
/// (`is`) either.
fn one_kind<T, E>(
    rest: &[u8],
    object: &Result<AuditObject, herald_verify::auditlog::FormatError>,
    decode: fn(&[u8]) -> Result<T, E>,
    wrap: fn(T) -> AuditObject,
    is: fn(&AuditObject) -> bool,
    check: fn(&[u8], &T),
) where
    T: Clone + PartialEq + core::fmt::Debug,
    E: PartialEq + core::fmt::Debug,
{
    let decoded = decode(rest);
    assert_eq!(decoded, decode(rest), "deterministic");
    match &decoded {
        Ok(p) => {
            assert_eq!(object.as_ref().ok(), Some(&wrap(p.clone())));
            check(rest, p);
        }
        Err(_) => assert!(
            !object.as_ref().is_ok_and(is),
            "AuditObject decoded what its kind refused"
        ),
    }
}

/// Under a resolver that knows no key (an empty keyring, `()`: the same
/// result), a proof fails at its first tree head: the `log` fields
/// disagree, or the head's signer is refused or unknown (never a size or
/// the path, which are checked after).
fn refused_without_keys(empty: Result<PublicKey, CheckError>, unit: Result<PublicKey, CheckError>) {
    assert_eq!(empty, unit);
    assert!(empty.is_err(), "no keys, no proof");
    let Err(e) = &empty else { return };
    assert!(
        matches!(
            e,
            CheckError::LogMismatch { .. }
                | CheckError::Sth {
                    error: SthError::UnknownLog { .. }
                        | SthError::ShortSigil { .. }
                        | SthError::ReservedSigil { .. },
                    ..
                }
        ),
        "with no keys: {e}"
    );
}

/// Verify `sth` as the pinned key: the same result as the ring gives, the
/// signature the holder of the key would have made (Ed25519 signing is
/// deterministic, RFC 8032, and strict verification admits no second
/// encoding of a signature), and a flipped bit of the root or the
/// signature breaks it.
fn check_signed_head(sth: &SignedTreeHead, key: &PublicKey) {
    let (signing, _) = proof_keyring();
    assert!(!sth.log().is_short() && !sth.log().is_reserved());
    assert!(
        sth.log().names_key(key.as_bytes()),
        "the log sigil names the key"
    );
    assert_eq!(sth.verify_with_key(key), Ok(()));
    assert_eq!(sth.head().clone().sign(signing).as_ref(), Ok(sth));
    let head = sth.head();
    let mut root = *head.root();
    root[0] ^= 1;
    let moved = TreeHead::new(*head.log(), head.size(), root, head.ts());
    assert!(
        SignedTreeHead::from_parts(moved, *sth.sig())
            .verify_with_key(key)
            .is_err()
    );
    let mut sig = *sth.sig();
    sig[63] ^= 0x80;
    assert!(
        SignedTreeHead::from_parts(head.clone(), sig)
            .verify_with_key(key)
            .is_err()
    );
}

/// A decoded signed tree head (`proof_object` kind 2): it re-encodes to its
/// bytes and to an equal head; `verify` with the pinned key agrees with
/// `verify_with_key` and is deterministic; verified ⇒ the pinned key, and
/// [`check_signed_head`]; with no keys it never verifies.
fn check_sth(bytes: &[u8], sth: &SignedTreeHead) {
    assert_eq!(sth.encode(), bytes, "P1: one encoding");
    assert_eq!(SignedTreeHead::decode(&sth.encode()).as_ref(), Ok(sth));
    let head = sth.head();
    let rebuilt = TreeHead::new(*head.log(), head.size(), *head.root(), head.ts());
    assert_eq!(&rebuilt, head);
    assert_eq!(&SignedTreeHead::from_parts(rebuilt, *sth.sig()), sth);
    let (key, ring) = proof_keyring();
    let public = key.public_key();
    let verified = sth.verify(ring);
    assert_eq!(verified, sth.verify(ring), "deterministic");
    assert_eq!(
        verified.is_ok(),
        sth.verify_with_key(&public).is_ok(),
        "the ring holds the one key"
    );
    if let Ok(k) = &verified {
        assert_eq!(*k, public, "the pinned key");
        check_signed_head(sth, k);
    }
    let none = sth.verify(&Keyring::new());
    assert!(
        matches!(
            none,
            Err(SthError::UnknownLog { .. }
                | SthError::ShortSigil { .. }
                | SthError::ReservedSigil { .. })
        ),
        "with no keys: {none:?}"
    );
    assert_eq!(none, sth.verify(&()));
}

/// A decoded inclusion proof (`proof_object` kind 0): it re-encodes to its
/// bytes and to an equal proof, its leaf re-encodes to its leaf bytes, its
/// path has at most 64 hashes. Verified under the pinned key (the same
/// result twice): the key is the pinned one, `log` and `size` are the
/// tree head's and the head verifies on its own ([`check_signed_head`]);
/// `index < size` and the path has `inclusion_proof_len(index, size)`
/// hashes; `merkle::verify_inclusion` of the leaf hash accepts it against
/// the head's root, and the root recomputed from the path is that root;
/// [`InclusionProof::new`] from its parts gives the same proof. With no
/// keys it never verifies and fails at the head.
fn check_inclusion(bytes: &[u8], p: &InclusionProof) {
    assert_eq!(p.encode(), bytes, "P1: one encoding");
    assert_eq!(InclusionProof::decode(&p.encode()).as_ref(), Ok(p));
    assert_eq!(
        p.leaf().encode(),
        p.leaf_bytes(),
        "P9: the leaf's one encoding"
    );
    assert_eq!(Leaf::decode(p.leaf_bytes()).as_ref(), Ok(p.leaf()));
    assert!(p.path().len() <= herald_verify::auditlog::MAX_PATH);
    assert_eq!(
        SignedTreeHead::decode(&p.sth().encode()).as_ref(),
        Ok(p.sth())
    );
    let (key, ring) = proof_keyring();
    let verified = p.verify(ring);
    assert_eq!(verified, p.verify(ring), "deterministic");
    if let Ok(k) = &verified {
        assert_eq!(*k, key.public_key(), "the pinned key");
        let sth = p.sth();
        assert_eq!((p.log(), p.size()), (sth.log(), sth.size()));
        assert_eq!(sth.verify(ring).as_ref(), Ok(k));
        check_signed_head(sth, k);
        assert!(p.index() < p.size());
        assert_eq!(
            inclusion_proof_len(p.index(), p.size()).ok(),
            Some(p.path().len())
        );
        let leaf = leaf_hash(p.leaf_bytes());
        assert_eq!(p.leaf().hash(), leaf);
        assert_eq!(
            verify_inclusion(&leaf, p.index(), sth.size(), p.path(), sth.root()),
            Ok(())
        );
        assert_eq!(
            merkle::root_from_inclusion_proof(&leaf, p.index(), p.size(), p.path()).as_ref(),
            Ok(sth.root())
        );
        let rebuilt =
            InclusionProof::new(p.index(), p.leaf().clone(), p.path().to_vec(), sth.clone());
        assert_eq!(&rebuilt, p);
    }
    refused_without_keys(p.verify(&Keyring::new()), p.verify(&()));
}

/// A decoded consistency proof (`proof_object` kind 1): it re-encodes to
/// its bytes and to an equal proof, its path has at most 64 hashes.
/// Verified under the pinned key (the same result twice): the key is the
/// pinned one, `log`, `size1`, `size2` are the heads' and both heads verify
/// on their own ([`check_signed_head`]); `0 < size1 ≤ size2`, the path has
/// `consistency_proof_len(size1, size2)` hashes, `merkle::verify_consistency`
/// accepts it between the two roots, equal sizes have equal roots;
/// [`ConsistencyProof::new`] from its parts gives the same proof. With no
/// keys it never verifies and fails at the first head.
fn check_consistency(bytes: &[u8], p: &ConsistencyProof) {
    assert_eq!(p.encode(), bytes, "P1: one encoding");
    assert_eq!(ConsistencyProof::decode(&p.encode()).as_ref(), Ok(p));
    assert!(p.path().len() <= herald_verify::auditlog::MAX_PATH);
    let (key, ring) = proof_keyring();
    let verified = p.verify(ring);
    assert_eq!(verified, p.verify(ring), "deterministic");
    if let Ok(k) = &verified {
        assert_eq!(*k, key.public_key(), "the pinned key");
        let (sth1, sth2) = (p.sth1(), p.sth2());
        assert_eq!((p.log(), p.size1()), (sth1.log(), sth1.size()));
        assert_eq!((p.log(), p.size2()), (sth2.log(), sth2.size()));
        assert_eq!(sth1.verify(ring).as_ref(), Ok(k));
        assert_eq!(sth2.verify(ring).as_ref(), Ok(k));
        check_signed_head(sth1, k);
        check_signed_head(sth2, k);
        assert!(0 < p.size1() && p.size1() <= p.size2());
        assert_eq!(
            consistency_proof_len(p.size1(), p.size2()).ok(),
            Some(p.path().len())
        );
        assert_eq!(
            verify_consistency(p.size1(), p.size2(), p.path(), sth1.root(), sth2.root()),
            Ok(())
        );
        if p.size1() == p.size2() {
            assert_eq!(sth1.root(), sth2.root(), "one size, one root");
        }
        let rebuilt = ConsistencyProof::new(p.path().to_vec(), sth1.clone(), sth2.clone());
        assert_eq!(&rebuilt, p);
    }
    refused_without_keys(p.verify(&Keyring::new()), p.verify(&()));
}
