//! Audit-log proof cases (PROFILE.md P9, spec §5.3, CLI.md `herald log`):
//! inclusion and consistency proofs over logs built in memory from fixed
//! keys and a fixed clock, each honest or broken in one way.
//!
//! Two logs: `log` holds seven envelopes (one of them with
//! `log_metadata_consent`), and `log2` is another log (another key). A
//! fork of `log` — the first four leaves, then three others — is what a
//! log showing two histories (a split view) signs.

use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeBuilder, Sigil, SigilForm, SigningKey};
use herald_merkle::{Hash, Tree, empty_root};
use herald_verify::{
    CONSENT_ATTESTATION, ConsistencyProof, InclusionProof, Leaf, SignedTreeHead, TreeHead,
};

use super::{Gen, T0, hex};
use crate::forge;
use crate::manifest::{Case, ProofExpect};

/// `ts` of the tree heads: two days after [`T0`] (plus the size, so that
/// heads of different sizes differ in `ts` too, as a real log's would).
const STH_TS: u64 = T0 + 2 * 86_400;

/// A log held in memory: its key's manifest name, its leaves and its tree.
pub(super) struct MemLog {
    key: &'static str,
    leaves: Vec<Leaf>,
    tree: Tree,
}

impl MemLog {
    pub(super) fn new(key: &'static str, leaves: Vec<Leaf>) -> Self {
        let tree = Tree::from_leaf_hashes(leaves.iter().map(Leaf::hash));
        Self { key, leaves, tree }
    }

    /// The honest tree head of this log at `size`.
    fn sth(&self, g: &Gen, size: u64) -> Result<SignedTreeHead, String> {
        let key = g.key(self.key);
        let root = self.tree.root_at(size).map_err(|e| e.to_string())?;
        TreeHead::new(key.sigil(SigilForm::Default), size, root, STH_TS + size)
            .sign(key)
            .map_err(|e| e.to_string())
    }

    /// The honest inclusion proof of leaf `index` in the tree of `size`.
    pub(super) fn inclusion(
        &self,
        g: &Gen,
        index: u64,
        size: u64,
    ) -> Result<InclusionProof, String> {
        let leaf = usize::try_from(index)
            .ok()
            .and_then(|i| self.leaves.get(i))
            .cloned()
            .ok_or_else(|| format!("no leaf {index}"))?;
        Ok(InclusionProof::new(
            index,
            leaf,
            self.path(index, size)?,
            self.sth(g, size)?,
        ))
    }

    /// The audit path of leaf `index` in the tree of `size`.
    fn path(&self, index: u64, size: u64) -> Result<Vec<Hash>, String> {
        self.tree
            .inclusion_proof(index, size)
            .map_err(|e| e.to_string())
    }

    /// The honest consistency proof from `size1` to `size2`.
    fn consistency(&self, g: &Gen, size1: u64, size2: u64) -> Result<ConsistencyProof, String> {
        let path = self
            .tree
            .consistency_proof(size1, size2)
            .map_err(|e| e.to_string())?;
        Ok(ConsistencyProof::new(
            path,
            self.sth(g, size1)?,
            self.sth(g, size2)?,
        ))
    }
}

/// A tree head signed by `key` whatever its `log` says: the forgeries
/// [`TreeHead::sign`] refuses to make (another key, a short sigil).
fn forged_sth(head: TreeHead, key: &SigningKey) -> SignedTreeHead {
    let sig = key.sign(&head.signed_message());
    SignedTreeHead::from_parts(head, sig)
}

/// `sth` with one bit of its signature flipped.
pub(super) fn flipped_sig(sth: &SignedTreeHead) -> SignedTreeHead {
    let mut sig = *sth.sig();
    sig[10] ^= 0x01;
    SignedTreeHead::from_parts(sth.head().clone(), sig)
}

/// `path` with one bit of hash `i` flipped.
pub(super) fn flipped(path: &[Hash], i: usize) -> Vec<Hash> {
    let mut path = path.to_vec();
    if let Some(h) = path.get_mut(i) {
        h[0] ^= 0x01;
    }
    path
}

/// `path` with a filler hash appended.
fn extended(path: &[Hash]) -> Vec<Hash> {
    let mut path = path.to_vec();
    path.push([0x5a; 32]);
    path
}

/// `path` without its last hash.
fn shortened(path: &[Hash]) -> Vec<Hash> {
    let mut path = path.to_vec();
    path.pop();
    path
}

/// Set `key` of the map in `bytes` to `value` (no re-signing).
fn with_field(bytes: &[u8], key: &str, value: Value) -> Vec<u8> {
    forge::edit(bytes, |m| {
        m.insert(key, value);
    })
}

/// The map in `bytes` encoded with the unsigned integer under `key` (below
/// 24) in a two-byte head instead of one: not canonical (P1
/// `non_shortest_head`), the same value.
fn non_shortest(bytes: &[u8], key: &str) -> Vec<u8> {
    let map = forge::map(bytes);
    let mut out = Vec::new();
    // At most 23 keys in any audit-log object: a one-byte map head.
    out.push(0xa0 | u8::try_from(map.len()).unwrap_or(0));
    for (k, v) in map.iter() {
        out.extend(Value::text(k).to_vec());
        match v {
            Value::Unsigned(n) if k == key && *n < 24 => {
                out.extend([0x18, u8::try_from(*n).unwrap_or(0)]);
            }
            _ => out.extend(v.to_vec()),
        }
    }
    out
}

fn sigil(g: &Gen, name: &str, form: SigilForm) -> Value {
    Value::text(g.sigil(name, form))
}

impl Gen {
    /// A `proof` case: `bytes` (an `object`), its JSON display, the keyring,
    /// the envelope the leaf must match, and the expected first error.
    #[allow(clippy::too_many_arguments)]
    fn proof_case(
        &mut self,
        name: &str,
        description: &str,
        object: &str,
        bytes: Vec<u8>,
        keyring: &[&str],
        envelope: Option<Vec<u8>>,
        error: Option<&str>,
    ) {
        let input = format!("cases/proof/{name}.cbor");
        let display = format!("cases/proof/{name}.json");
        let mut line = match herald_core::cbor::decode(&bytes) {
            Ok(v) => herald_verify::display_json(v),
            Err(_) => format!("{{\"non_canonical_hex\":\"{}\"}}", hex(&bytes)),
        };
        line.push('\n');
        let envelope = envelope.map(|e| {
            let rel = format!("cases/proof/{name}.envelope.cbor");
            self.files.insert(rel.clone(), e);
            rel
        });
        self.files.insert(input.clone(), bytes);
        self.files.insert(display.clone(), line.into_bytes());
        self.cases.push(Case::Proof {
            name: name.into(),
            description: description.into(),
            object: object.into(),
            input,
            display,
            keyring: keyring.iter().map(|s| (*s).into()).collect(),
            envelope,
            expect: ProofExpect {
                valid: error.is_none(),
                error: error.map(Into::into),
            },
        });
    }

    /// An inclusion case with the keyring `["log"]`.
    fn inclusion_case(
        &mut self,
        name: &str,
        description: &str,
        bytes: Vec<u8>,
        envelope: Option<&Envelope>,
        error: Option<&str>,
    ) {
        let envelope = envelope.map(|e| e.as_bytes().to_vec());
        self.proof_case(
            name,
            description,
            "inclusion",
            bytes,
            &["log"],
            envelope,
            error,
        );
    }

    /// A consistency case with the keyring `["log"]`.
    fn consistency_case(
        &mut self,
        name: &str,
        description: &str,
        bytes: Vec<u8>,
        error: Option<&str>,
    ) {
        self.proof_case(
            name,
            description,
            "consistency",
            bytes,
            &["log"],
            None,
            error,
        );
    }
}

/// Every proof case.
pub(super) fn proof_cases(g: &mut Gen) -> Result<(), String> {
    // The log's envelopes: two traces and a lone genesis; leaf 4 is sent
    // with `log_metadata_consent`, so its leaf carries `from`, `to`, `ts`.
    let e0 = g.msg("alice", "bob", None, "first");
    let e1 = g.msg("bob", "alice", Some(&e0), "second");
    let e2 = g.msg("alice", "bob", Some(&e1), "third");
    let e3 = g.msg("carol", "alice", None, "fourth");
    let n = g.fresh_nonce();
    let e4 = g.build(
        "bob",
        EnvelopeBuilder::reply(&e2.view(), e2.view().ts() + 60)
            .to(g.key("alice").sigil(SigilForm::Default))
            .nonce(n)
            .attest(CONSENT_ATTESTATION, Value::Bool(true))
            .payload(Value::text("fifth, logged with its metadata")),
    );
    let e5 = g.msg("alice", "carol", Some(&e3), "sixth");
    let e6 = g.msg("bob", "carol", None, "seventh");
    let envs = [&e0, &e1, &e2, &e3, &e4, &e5, &e6];
    let leaves: Vec<Leaf> = envs
        .iter()
        .map(|e| Leaf::from_envelope(&e.view()))
        .collect();
    let log = MemLog::new("log", leaves.clone());
    // Another log with the same leaves, under another key.
    let log2 = MemLog::new("log2", leaves.clone());
    // A fork of `log`: its first four leaves, then three others.
    let f4 = g.msg("carol", "bob", None, "fork one");
    let f5 = g.msg("carol", "bob", Some(&f4), "fork two");
    let f6 = g.msg("bob", "carol", Some(&f5), "fork three");
    let mut forked: Vec<Leaf> = leaves.iter().take(4).cloned().collect();
    forked.extend(
        [&f4, &f5, &f6]
            .iter()
            .map(|e| Leaf::from_envelope(&e.view())),
    );
    let fork = MemLog::new("log", forked);

    inclusion_valid(g, &log, &envs)?;
    inclusion_broken(g, &log, &log2, &envs)?;
    consistency_valid(g, &log)?;
    consistency_broken(g, &log, &log2)?;
    split_view(g, &log, &fork)?;
    Ok(())
}

fn inclusion_valid(g: &mut Gen, log: &MemLog, envs: &[&Envelope; 7]) -> Result<(), String> {
    let [e0, _, _, e3, e4, _, e6] = *envs;
    let p = log.inclusion(g, 0, 7)?;
    g.inclusion_case(
        "inclusion_first_leaf",
        "leaf 0 of a 7-leaf log, with its envelope",
        p.encode(),
        Some(e0),
        None,
    );
    let p = log.inclusion(g, 3, 7)?;
    g.inclusion_case(
        "inclusion_middle_leaf",
        "leaf 3 of a 7-leaf log, with its envelope",
        p.encode(),
        Some(e3),
        None,
    );
    let p = log.inclusion(g, 6, 7)?;
    g.inclusion_case(
        "inclusion_last_leaf",
        "leaf 6, the last of a 7-leaf log (its path has only two hashes), with its envelope",
        p.encode(),
        Some(e6),
        None,
    );
    let p = log.inclusion(g, 0, 1)?;
    g.inclusion_case(
        "inclusion_size_1",
        "the only leaf of the tree of size 1: an empty path, the root is the leaf hash",
        p.encode(),
        Some(e0),
        None,
    );
    let p = log.inclusion(g, 4, 7)?;
    g.inclusion_case(
        "inclusion_consented_metadata",
        "leaf 4, whose envelope carries log_metadata_consent = true: the leaf has from, to and ts (P9)",
        p.encode(),
        Some(e4),
        None,
    );
    let p = log.inclusion(g, 2, 4)?;
    g.inclusion_case(
        "inclusion_past_size",
        "leaf 2 in the log's past tree of size 4 (a complete tree), without an envelope",
        p.encode(),
        None,
        None,
    );
    // The long form names the same key; the proof repeats it exactly.
    let key = g.key("log");
    let head = TreeHead::new(
        key.sigil(SigilForm::Long),
        7,
        log.tree.root_at(7).map_err(|e| e.to_string())?,
        STH_TS + 7,
    );
    let sth = head.sign(key).map_err(|e| e.to_string())?;
    let leaf = log.leaves.get(5).cloned().ok_or("no leaf 5")?;
    let p = InclusionProof::new(5, leaf, log.path(5, 7)?, sth);
    g.inclusion_case(
        "inclusion_long_sigil_log",
        "a tree head whose log is the long form of the log key's sigil (the keyring resolves every form, P13), repeated in the proof",
        p.encode(),
        None,
        None,
    );
    Ok(())
}

#[allow(clippy::too_many_lines)]
fn inclusion_broken(
    g: &mut Gen,
    log: &MemLog,
    log2: &MemLog,
    envs: &[&Envelope; 7],
) -> Result<(), String> {
    let [_, _, e2, e3, e4, _, _] = *envs;
    let sth7 = log.sth(g, 7)?;
    let leaf = |i: usize| log.leaves.get(i).cloned().ok_or(format!("no leaf {i}"));
    let path2 = log.path(2, 7)?;
    let good = log.inclusion(g, 2, 7)?;
    let good_bytes = good.encode();

    // The Merkle path (RFC 9162 §2.1.3.2).
    let p = InclusionProof::new(2, leaf(2)?, flipped(&path2, 1), sth7.clone());
    g.inclusion_case(
        "inclusion_path_hash_flipped",
        "one bit of the second path hash flipped",
        p.encode(),
        None,
        Some("path"),
    );
    let p = InclusionProof::new(2, leaf(2)?, shortened(&path2), sth7.clone());
    g.inclusion_case(
        "inclusion_path_short",
        "the path without its last hash (one fewer than index and size determine)",
        p.encode(),
        None,
        Some("path"),
    );
    let p = InclusionProof::new(2, leaf(2)?, extended(&path2), sth7.clone());
    g.inclusion_case(
        "inclusion_path_extra",
        "the path with one hash too many",
        p.encode(),
        None,
        Some("path"),
    );
    let p = InclusionProof::new(3, leaf(2)?, path2.clone(), sth7.clone());
    g.inclusion_case(
        "inclusion_wrong_index",
        "leaf 2 and its path, claimed at index 3 (a path of the same length)",
        p.encode(),
        None,
        Some("path"),
    );
    let p = InclusionProof::new(7, leaf(6)?, log.path(6, 7)?, sth7.clone());
    g.inclusion_case(
        "inclusion_index_beyond_size",
        "index 7 in a tree of 7 leaves (index must be below size)",
        p.encode(),
        None,
        Some("path"),
    );
    let p = InclusionProof::new(1, leaf(1)?, log.path(1, 6)?, sth7.clone());
    g.inclusion_case(
        "inclusion_path_of_another_size",
        "leaf 1 with its path in the tree of size 6, under the head of size 7",
        p.encode(),
        None,
        Some("path"),
    );

    // Sizes and logs stated twice must agree.
    g.inclusion_case(
        "inclusion_size_mismatch",
        "the proof says size 6, its tree head size 7",
        with_field(&good_bytes, "size", Value::Unsigned(6)),
        None,
        Some("size_mismatch"),
    );
    g.inclusion_case(
        "inclusion_log_mismatch",
        "the proof's log is log2, its tree head log's",
        with_field(&good_bytes, "log", sigil(g, "log2", SigilForm::Default)),
        None,
        Some("log_mismatch"),
    );
    g.inclusion_case(
        "inclusion_log_other_form",
        "the proof's log is the long form of the tree head's log: the same key, not the same string",
        with_field(&good_bytes, "log", sigil(g, "log", SigilForm::Long)),
        None,
        Some("log_mismatch"),
    );

    // The tree head's signature (P2, P5, P9).
    let p = InclusionProof::new(2, leaf(2)?, path2.clone(), flipped_sig(&sth7));
    g.inclusion_case(
        "inclusion_sth_signature_flipped",
        "one bit of the tree head's signature flipped",
        p.encode(),
        None,
        Some("sth_signature"),
    );
    let p = InclusionProof::new(2, leaf(2)?, path2.clone(), log2.sth(g, 7)?);
    g.inclusion_case(
        "inclusion_unknown_log",
        "an honest proof of log2, whose key is not in the keyring",
        p.encode(),
        None,
        Some("unknown_log"),
    );
    let forged = forged_sth(sth7.head().clone(), g.key("log2"));
    let p = InclusionProof::new(2, leaf(2)?, path2.clone(), forged);
    g.inclusion_case(
        "inclusion_sth_wrong_key",
        "the tree head names log but is signed by log2's key",
        p.encode(),
        None,
        Some("sth_signature"),
    );
    let root7 = *sth7.root();
    let short = g.key("log").sigil(SigilForm::Short);
    let forged = forged_sth(TreeHead::new(short, 7, root7, STH_TS + 7), g.key("log"));
    let p = InclusionProof::new(2, leaf(2)?, path2.clone(), forged);
    g.inclusion_case(
        "inclusion_short_sigil_log",
        "the log is the short sigil of the log key, signed by that key: a short sigil may not sign a tree head (P2)",
        p.encode(),
        None,
        Some("short_sigil"),
    );
    let scribe = Sigil::parse("sigil:scribe").map_err(|e| e.to_string())?;
    let forged = forged_sth(TreeHead::new(scribe, 7, root7, STH_TS + 7), g.key("log"));
    let p = InclusionProof::new(2, leaf(2)?, path2.clone(), forged);
    g.inclusion_case(
        "inclusion_reserved_sigil_log",
        "the log is the reserved name sigil:scribe, which never signs (P2)",
        p.encode(),
        None,
        Some("reserved_sigil"),
    );

    // The envelope offered must be the leaf's (P4, P9).
    g.inclusion_case(
        "inclusion_envelope_other",
        "a valid proof of leaf 2, offered with the envelope of leaf 3",
        good_bytes.clone(),
        Some(e3),
        Some("envelope_mismatch"),
    );
    let tampered = forge::edit(e2.as_bytes(), |m| {
        m.insert("payload", Value::text("third, edited after signing"));
    });
    g.proof_case(
        "inclusion_envelope_id_not_body",
        "a valid proof of leaf 2, offered with leaf 2's envelope whose payload was edited after signing: its id is no longer the hash of its body (P4)",
        "inclusion",
        good_bytes.clone(),
        &["log"],
        Some(tampered),
        Some("envelope_mismatch"),
    );
    // A log of log2 holding the consented envelope's minimal leaf.
    let v4 = e4.view();
    let minimal = Leaf::from_parts(*v4.id(), v4.parent().copied(), *v4.trace(), v4.ts(), None);
    let lone = MemLog::new("log2", vec![minimal]);
    let p = lone.inclusion(g, 0, 1)?;
    g.proof_case(
        "inclusion_envelope_metadata_dropped",
        "a valid proof (log2) of a leaf with the envelope's id but without the from, to and ts its sender consented to: not that envelope's leaf (P9)",
        "inclusion",
        p.encode(),
        &["log2"],
        Some(e4.as_bytes().to_vec()),
        Some("envelope_mismatch"),
    );

    // Format (P1, CLI.md): decoding is strict.
    g.inclusion_case(
        "inclusion_non_canonical",
        "a valid proof with `index` (2) written with a two-byte head: not canonical CBOR (P1)",
        non_shortest(&good_bytes, "index"),
        None,
        Some("format"),
    );
    g.inclusion_case(
        "inclusion_unknown_field",
        "a valid proof with an extra field `note`",
        with_field(&good_bytes, "note", Value::text("hello")),
        None,
        Some("format"),
    );
    g.inclusion_case(
        "inclusion_missing_field",
        "a valid proof without its `leaf`",
        forge::edit(&good_bytes, |m| {
            m.remove("leaf");
        }),
        None,
        Some("format"),
    );
    let mut sth_extra = forge::map(&sth7.encode());
    sth_extra.insert("note", Value::text("hello"));
    let sth_extra = Value::Map(sth_extra);
    g.inclusion_case(
        "inclusion_sth_unknown_field",
        "a valid proof whose tree head has an extra field `note`",
        with_field(&good_bytes, "sth", sth_extra),
        None,
        Some("format"),
    );
    let mut bad_leaf = forge::map(good.leaf_bytes());
    bad_leaf.insert("bucket", Value::Unsigned(good.leaf().bucket() + 1));
    g.inclusion_case(
        "inclusion_leaf_not_p9",
        "the leaf's bucket is not a multiple of 3600: not a P9 leaf",
        with_field(&good_bytes, "leaf", Value::Bytes(forge::encode(&bad_leaf))),
        None,
        Some("format"),
    );
    let long: Vec<Value> = (0..65u8).map(|i| Value::Bytes(vec![i; 32])).collect();
    g.inclusion_case(
        "inclusion_path_too_long",
        "a path of 65 hashes: more than any tree of at most 2^64 - 1 leaves needs",
        with_field(&good_bytes, "path", Value::Array(long)),
        None,
        Some("format"),
    );
    g.inclusion_case(
        "inclusion_short_hash",
        "a path hash of 31 bytes (P9: hashes are exactly 32 bytes)",
        with_field(
            &good_bytes,
            "path",
            Value::Array(
                path2
                    .iter()
                    .enumerate()
                    .map(|(i, h)| Value::Bytes(if i == 0 { h[..31].to_vec() } else { h.to_vec() }))
                    .collect(),
            ),
        ),
        None,
        Some("format"),
    );
    Ok(())
}

fn consistency_valid(g: &mut Gen, log: &MemLog) -> Result<(), String> {
    for (size1, size2, name, description) in [
        (
            3,
            7,
            "consistency_3_to_7",
            "from the tree of 3 leaves to the tree of 7",
        ),
        (
            4,
            7,
            "consistency_4_to_7",
            "from a complete tree of 4 leaves (its root is not in the path) to 7",
        ),
        (1, 7, "consistency_1_to_7", "from the tree of 1 leaf to 7"),
        (
            7,
            7,
            "consistency_7_to_7",
            "a tree head and itself: equal sizes, an empty path, equal roots",
        ),
    ] {
        let p = log.consistency(g, size1, size2)?;
        g.consistency_case(name, description, p.encode(), None);
    }
    Ok(())
}

fn consistency_broken(g: &mut Gen, log: &MemLog, log2: &MemLog) -> Result<(), String> {
    let good = log.consistency(g, 3, 7)?;
    let good_bytes = good.encode();
    let path = good.path().to_vec();
    let (sth3, sth7) = (log.sth(g, 3)?, log.sth(g, 7)?);

    let key = g.key("log");
    let zero = TreeHead::new(key.sigil(SigilForm::Default), 0, empty_root(), STH_TS)
        .sign(key)
        .map_err(|e| e.to_string())?;
    let p = ConsistencyProof::new(Vec::new(), zero, sth7.clone());
    g.consistency_case(
        "consistency_size1_zero",
        "from the signed empty tree (size 0) to 7: size1 = 0 is an error (P9)",
        p.encode(),
        Some("path"),
    );
    let p = ConsistencyProof::new(path.clone(), sth7.clone(), sth3.clone());
    g.consistency_case(
        "consistency_sizes_reversed",
        "sth1 of size 7, sth2 of size 3, with the path from 3 to 7 (size1 > size2)",
        p.encode(),
        Some("path"),
    );
    let p = ConsistencyProof::new(flipped(&path, 0), sth3.clone(), sth7.clone());
    g.consistency_case(
        "consistency_path_flipped",
        "from 3 to 7 with one bit of the first path hash flipped",
        p.encode(),
        Some("path"),
    );
    let p = ConsistencyProof::new(shortened(&path), sth3.clone(), sth7.clone());
    g.consistency_case(
        "consistency_path_short",
        "from 3 to 7 with the path one hash short",
        p.encode(),
        Some("path"),
    );
    let p = ConsistencyProof::new(extended(&path), sth3.clone(), sth7.clone());
    g.consistency_case(
        "consistency_path_extra",
        "from 3 to 7 with one hash too many",
        p.encode(),
        Some("path"),
    );
    let p = ConsistencyProof::new(Vec::new(), sth7.clone(), sth7.clone());
    g.consistency_case(
        "consistency_equal_sizes_path",
        "a tree head and itself with a non-empty path (equal sizes need an empty one)",
        with_field(
            &p.encode(),
            "path",
            Value::Array(vec![Value::Bytes(sth7.root().to_vec())]),
        ),
        Some("path"),
    );

    // Tree heads of another log or key.
    let p = ConsistencyProof::new(path.clone(), sth3.clone(), log2.sth(g, 7)?);
    g.consistency_case(
        "consistency_sth2_other_log",
        "sth2 is log2's honest head of the same leaves; the proof and sth1 are log's",
        with_field(&p.encode(), "log", sigil(g, "log", SigilForm::Default)),
        Some("log_mismatch"),
    );
    let forged = forged_sth(sth7.head().clone(), g.key("log2"));
    let p = ConsistencyProof::new(path.clone(), sth3.clone(), forged);
    g.consistency_case(
        "consistency_sth2_wrong_key",
        "sth2 names log but is signed by log2's key",
        p.encode(),
        Some("sth_signature"),
    );
    let p = ConsistencyProof::new(path.clone(), sth3.clone(), flipped_sig(&sth7));
    g.consistency_case(
        "consistency_sth2_signature_flipped",
        "one bit of sth2's signature flipped",
        p.encode(),
        Some("sth_signature"),
    );
    let p = log2.consistency(g, 3, 7)?;
    g.consistency_case(
        "consistency_unknown_log",
        "an honest proof of log2, whose key is not in the keyring",
        p.encode(),
        Some("unknown_log"),
    );
    g.consistency_case(
        "consistency_size_mismatch",
        "the proof says size2 6, sth2 is of size 7",
        with_field(&good_bytes, "size2", Value::Unsigned(6)),
        Some("size_mismatch"),
    );
    g.consistency_case(
        "consistency_unknown_field",
        "a valid proof with an extra field `note`",
        with_field(&good_bytes, "note", Value::text("hello")),
        Some("format"),
    );
    g.consistency_case(
        "consistency_non_canonical",
        "a valid proof with `size1` (3) written with a two-byte head: not canonical CBOR (P1)",
        non_shortest(&good_bytes, "size1"),
        Some("format"),
    );
    Ok(())
}

fn split_view(g: &mut Gen, log: &MemLog, fork: &MemLog) -> Result<(), String> {
    let p = ConsistencyProof::new(Vec::new(), log.sth(g, 7)?, fork.sth(g, 7)?);
    g.consistency_case(
        "split_view_same_size",
        "two heads the log signed for size 7 with different roots (its history and a fork after leaf 3): a split view, whatever the path (spec §5.3)",
        p.encode(),
        Some("split_view"),
    );
    let path = fork
        .tree
        .consistency_proof(5, 7)
        .map_err(|e| e.to_string())?;
    let p = ConsistencyProof::new(path, log.sth(g, 5)?, fork.sth(g, 7)?);
    g.consistency_case(
        "split_view_fork",
        "the log's head of size 5 and its forked head of size 7 (they share only leaves 0-3): no consistency proof exists; the fork's own path is refuted",
        p.encode(),
        Some("path"),
    );
    Ok(())
}
