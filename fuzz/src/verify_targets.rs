//! Fuzz-target bodies over herald-verify's parsers (docs/fuzzing.md).
//!
//! Shared, unchanged, by the libFuzzer binaries (through `fuzz/src/lib.rs`)
//! and by `herald-verify/tests/fuzz_replay.rs` (through `#[path]`), so it
//! may only use what herald-verify's tests can: herald_verify, herald_core,
//! serde_json, std. Every function must never panic on any input; the
//! `assert!`s state the properties a failure would break.

use std::sync::OnceLock;

use herald_core::cbor::{self, Limits};
use herald_core::{Sigil, SigningKey, Status};
use herald_verify::keyring::key_line;
use herald_verify::merkle::{
    self, Hash, Tree, consistency_proof_len, inclusion_proof_len, leaf_hash, root_from_leaves,
    verify_consistency, verify_inclusion,
};
use herald_verify::sequence::{Piece, SplitError, split};
use herald_verify::{AuditOptions, Input, Keyring, Provenance, Summary, audit};

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
/// report per piece [`split`] cuts (so nothing is silently dropped), never
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
    assert_eq!(report.envelopes.len(), pieces.len(), "one report per piece");
    let mut summary = Summary::default();
    for e in &report.envelopes {
        summary.add(e.status);
        let worst = e
            .reasons
            .iter()
            .map(|r| r.status())
            .max()
            .unwrap_or(Status::Valid);
        assert_eq!(e.status, worst);
        if e.id.is_none() {
            assert_eq!(
                e.status,
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
    let json = report.to_json();
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
    }
}
