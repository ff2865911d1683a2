// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use herald_core::ReasonCode;
use herald_vectors::manifest::{Case, Manifest, PROOF_ERRORS};

fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/conformance")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("herald-vectors-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn committed_vectors_pass() {
    let outcome = herald_vectors::run(&committed()).unwrap();
    assert_eq!(outcome.failed, 0, "{:#?}", outcome.failures);
    assert!(outcome.passed >= 90, "only {} cases", outcome.passed);
    assert_eq!(outcome.vectors_digest.len(), 64);
}

#[test]
fn regenerating_gives_the_committed_bytes() {
    let out = scratch("regen");
    let outcome = herald_vectors::generate(&out).unwrap();
    assert_eq!(outcome.failed, 0);
    let mut files = Vec::new();
    collect(&out, &out, &mut files);
    let mut committed_files = Vec::new();
    collect(&committed(), &committed(), &mut committed_files);
    assert_eq!(
        files, committed_files,
        "file lists differ: run `cargo run -p herald-vectors`"
    );
    for rel in &files {
        assert_eq!(
            std::fs::read(out.join(rel)).unwrap(),
            std::fs::read(committed().join(rel)).unwrap(),
            "{rel} differs from the generator's output: run `cargo run -p herald-vectors`"
        );
    }
    std::fs::remove_dir_all(&out).unwrap();
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(root, &p, out);
        } else {
            out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
}

#[test]
fn a_one_byte_change_to_any_case_file_fails_loudly() {
    let dir = scratch("flip");
    copy_dir(&committed(), &dir);
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    // One envelope file, one CBOR case, one received envelope, an
    // inclusion and a consistency proof, and an envelope a proof's leaf must
    // match: each flipped once.
    let targets = [
        "cases/verify/reply_chain_5_hops.cbor",
        "cases/cbor/canonical_every_type.cbor",
        "cases/receive/live_reception-0.cbor",
        "cases/proof/inclusion_middle_leaf.cbor",
        "cases/proof/consistency_3_to_7.cbor",
        "cases/proof/inclusion_consented_metadata.envelope.cbor",
    ];
    for rel in targets {
        let path = dir.join(rel);
        let original = std::fs::read(&path).unwrap();
        let mut bytes = original.clone();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        let outcome = herald_vectors::run(&dir).unwrap();
        assert!(
            outcome.failed >= 1,
            "flipping a byte of {rel} went unnoticed"
        );
        assert!(
            outcome
                .failures
                .iter()
                .all(|f| manifest.cases.iter().any(|c| c.name() == f.case))
        );
        std::fs::write(&path, original).unwrap();
    }
    // The manifest itself: any byte change moves the digest.
    let before = herald_vectors::run(&dir).unwrap();
    assert_eq!(before.failed, 0);
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replacen("\"status\": \"valid\"", "\"status\": \"partial\"", 1),
    )
    .unwrap();
    let after = herald_vectors::run(&dir).unwrap();
    assert_ne!(before.vectors_digest, after.vectors_digest);
    assert_eq!(after.failed, 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Codes allowed to have no case yet (none: every code in the registry has
/// one). A code added to the registry must come with its case.
const PENDING_LIFECYCLE: &[ReasonCode] = &[];

#[test]
fn every_registry_code_has_a_case() {
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(committed().join("manifest.json")).unwrap()).unwrap();
    let mut covered = BTreeSet::new();
    for case in &manifest.cases {
        if let Case::Verify { expect, .. } | Case::Receive { expect, .. } = case {
            for e in expect {
                for r in &e.reasons {
                    covered.insert(ReasonCode::from_name(&r.code).unwrap());
                }
            }
        }
    }
    let missing: Vec<&str> = ReasonCode::ALL
        .iter()
        .filter(|c| !covered.contains(c) && !PENDING_LIFECYCLE.contains(c))
        .map(|c| c.name())
        .collect();
    assert!(
        missing.is_empty(),
        "reason codes without a conformance case: {missing:?}"
    );
    let stale: Vec<&str> = PENDING_LIFECYCLE
        .iter()
        .filter(|c| covered.contains(c))
        .map(|c| c.name())
        .collect();
    assert!(
        stale.is_empty(),
        "covered now, remove from PENDING_LIFECYCLE: {stale:?}"
    );
}

#[test]
fn every_p1_rule_the_issue_lists_has_a_case() {
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(committed().join("manifest.json")).unwrap()).unwrap();
    let rules: BTreeSet<String> = manifest
        .cases
        .iter()
        .filter_map(|c| match c {
            Case::Cbor { expect, .. } => expect.rule.clone(),
            _ => None,
        })
        .collect();
    for rule in [
        "non_shortest_head",
        "indefinite_length",
        "unsorted_keys",
        "duplicate_key",
        "non_text_key",
        "tag",
        "disallowed_simple",
        "non_finite_float",
        "negative_zero",
        "integral_float",
        "non_shortest_float",
        "invalid_utf8",
        "trailing_bytes",
        "truncated",
    ] {
        assert!(rules.contains(rule), "no CBOR case for {rule}");
    }
}

#[test]
fn every_proof_error_has_a_case() {
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(committed().join("manifest.json")).unwrap()).unwrap();
    let mut errors = BTreeSet::new();
    let mut verdicts = BTreeSet::new();
    for case in &manifest.cases {
        if let Case::Proof {
            name,
            object,
            envelope,
            expect,
            ..
        } = case
        {
            assert!(
                expect.valid == expect.error.is_none(),
                "{name}: `error` must be present exactly when invalid"
            );
            if let Some(e) = &expect.error {
                assert!(
                    PROOF_ERRORS.contains(&e.as_str()),
                    "{name}: unknown error {e:?}"
                );
                errors.insert(e.clone());
            }
            assert!(
                envelope.is_none() || object == "inclusion",
                "{name}: only an inclusion proof has an envelope"
            );
            verdicts.insert((object.clone(), expect.valid));
        }
    }
    let missing: Vec<&str> = PROOF_ERRORS
        .iter()
        .filter(|e| !errors.contains(**e))
        .copied()
        .collect();
    assert!(
        missing.is_empty(),
        "proof errors without a case: {missing:?}"
    );
    for object in ["inclusion", "consistency"] {
        for valid in [true, false] {
            assert!(
                verdicts.contains(&(object.to_string(), valid)),
                "no {object} case with valid = {valid}"
            );
        }
    }
}

#[test]
fn a_proof_case_run_as_the_other_object_or_without_its_envelope_changes_verdict() {
    // The runner decodes `input` as the object the case names: an inclusion
    // proof read as a consistency proof is a format error.
    let dir = committed();
    let bytes = std::fs::read(dir.join("cases/proof/inclusion_middle_leaf.cbor")).unwrap();
    let mut keys = herald_verify::Keyring::new();
    keys.parse(
        &std::fs::read_to_string(dir.join("keys/log.pub")).unwrap(),
        "log.pub",
    )
    .unwrap();
    let as_inclusion =
        herald_vectors::run::proof_verdict("inclusion", &bytes, &keys, None).unwrap();
    assert!(as_inclusion.valid);
    let as_consistency =
        herald_vectors::run::proof_verdict("consistency", &bytes, &keys, None).unwrap();
    assert_eq!(as_consistency.error.as_deref(), Some("format"));
    // Without its keyring the same proof's log is unknown.
    let empty = herald_verify::Keyring::new();
    let unknown = herald_vectors::run::proof_verdict("inclusion", &bytes, &empty, None).unwrap();
    assert_eq!(unknown.error.as_deref(), Some("unknown_log"));
    // An envelope with a consistency proof, or one that does not decode, is
    // a broken case, not a verdict.
    let consistency = std::fs::read(dir.join("cases/proof/consistency_3_to_7.cbor")).unwrap();
    let envelope =
        std::fs::read(dir.join("cases/proof/inclusion_middle_leaf.envelope.cbor")).unwrap();
    assert!(
        herald_vectors::run::proof_verdict("consistency", &consistency, &keys, Some(&envelope))
            .is_err()
    );
    assert!(herald_vectors::run::proof_verdict("inclusion", &bytes, &keys, Some(&[0xa0])).is_err());
    assert!(herald_vectors::run::proof_verdict("sth", &bytes, &keys, None).is_err());
}
