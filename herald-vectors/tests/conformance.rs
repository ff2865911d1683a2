// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use herald_core::ReasonCode;
use herald_core::Status;
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
    // inclusion and a consistency proof, an envelope a proof's leaf must
    // match, and a proof bundle: each flipped once.
    let targets = [
        "cases/verify/reply_chain_5_hops.cbor",
        "cases/cbor/canonical_every_type.cbor",
        "cases/receive/live_reception-0.cbor",
        "cases/proof/inclusion_middle_leaf.cbor",
        "cases/proof/consistency_3_to_7.cbor",
        "cases/proof/inclusion_consented_metadata.envelope.cbor",
        "cases/bundle/bundle_molt_proven.cbor",
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

/// Codes allowed to have no case yet: a code added to the registry must
/// come with its case (`lineage_unproven`, which only a verifier given
/// Heralds raises, has its `heralds` cases).
const PENDING_LIFECYCLE: &[ReasonCode] = &[];

#[test]
fn every_registry_code_has_a_case() {
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(committed().join("manifest.json")).unwrap()).unwrap();
    let mut covered = BTreeSet::new();
    for case in &manifest.cases {
        let envelopes = match case {
            Case::Verify { expect, .. }
            | Case::Receive { expect, .. }
            | Case::Heralds { expect, .. } => expect,
            Case::Bundle { expect, .. } => &expect.envelopes,
            _ => continue,
        };
        for e in envelopes {
            for r in &e.reasons {
                covered.insert(ReasonCode::from_name(&r.code).unwrap());
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

fn manifest_of(dir: &Path) -> Manifest {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

#[test]
fn bundle_cases_cover_proven_unproven_and_broken_bundles() {
    let manifest = manifest_of(&committed());
    let mut proven = false;
    let mut unproven_with_a_valid_proof = false;
    let mut invalid_proof = false;
    let mut broken_container = false;
    let mut bad_item_among_good = false;
    for case in &manifest.cases {
        let Case::Bundle { name, expect, .. } = case else {
            continue;
        };
        let codes: Vec<&str> = expect
            .envelopes
            .iter()
            .flat_map(|e| e.reasons.iter().map(|r| r.code.as_str()))
            .collect();
        let any_valid_proof = expect.proofs.iter().any(|p| p.valid);
        proven |=
            any_valid_proof && codes.contains(&"rotated_key") && !codes.contains(&"molt_unproven");
        unproven_with_a_valid_proof |= any_valid_proof && codes.contains(&"molt_unproven");
        invalid_proof |= expect.proofs.iter().any(|p| !p.valid);
        if expect.envelopes.len() == 1 && codes == ["malformed"] {
            assert!(
                expect.proofs.is_empty(),
                "{name}: a broken container has no proofs"
            );
            broken_container = true;
        }
        bad_item_among_good |= expect.envelopes.len() > 1
            && codes.contains(&"malformed")
            && expect.envelopes.iter().any(|e| e.status == "valid");
    }
    assert!(proven, "no bundle proves a molt");
    assert!(
        unproven_with_a_valid_proof,
        "no bundle with a valid proof that proves no molt"
    );
    assert!(invalid_proof, "no bundle with an invalid proof");
    assert!(broken_container, "no bundle with a broken container");
    assert!(
        bad_item_among_good,
        "no bundle with a bad envelope among good ones"
    );
}

/// A bundle case's input audited as the runner does.
fn audit_case(name: &str) -> herald_verify::Report {
    let dir = committed();
    let manifest = manifest_of(&dir);
    let Some(Case::Bundle {
        input,
        keyring,
        now,
        ..
    }) = manifest.cases.iter().find(|c| c.name() == name)
    else {
        panic!("no bundle case {name}");
    };
    let mut keys = herald_verify::Keyring::new();
    for k in keyring {
        let file = format!("keys/{k}.pub");
        keys.parse(&std::fs::read_to_string(dir.join(&file)).unwrap(), &file)
            .unwrap();
    }
    let opts = herald_verify::AuditOptions {
        now: Some(*now),
        ..herald_verify::AuditOptions::default()
    };
    let inputs = [herald_verify::Input {
        name: input.clone(),
        bytes: std::fs::read(dir.join(input)).unwrap(),
    }];
    herald_verify::audit(&inputs, &keys, &opts)
}

#[test]
fn each_invalid_bundle_proof_fails_for_the_reason_its_case_names() {
    // The manifest states validity only; here this implementation's detail
    // shows each case breaks what its description says, and nothing else.
    for (case, detail) in [
        ("bundle_log_key_not_pinned", "no key for log"),
        ("bundle_proof_of_another_molt", "no envelope of the set"),
        ("bundle_proof_path_flipped", "Merkle path"),
        ("bundle_proof_sth_signature_flipped", "bad_signature"),
    ] {
        let r = audit_case(case);
        assert_eq!(r.proofs.len(), 1, "{case}");
        assert_eq!(r.proofs[0].status, Status::Invalid, "{case}");
        assert!(
            r.proofs[0].detail.contains(detail),
            "{case}: {}",
            r.proofs[0].detail
        );
    }
    // The log key travels in that bundle: a bundle key, not a pinned one.
    let r = audit_case("bundle_log_key_not_pinned");
    assert!(
        r.envelopes
            .iter()
            .all(|e| e.key_source != Some(herald_verify::KeyOrigin::Keyring))
    );
    // The proven molt's new key speaks as its molt (P8 rule 3).
    let r = audit_case("bundle_molt_proven");
    assert_eq!(
        r.envelopes[3].signing_key.map(|k| k.to_string()).as_deref(),
        Some("molt 1")
    );
    assert_eq!(r.envelopes[3].status(), Status::Valid);
    // The sender known only by the bundle is verified by the bundle's key.
    let r = audit_case("bundle_keys_verify_unpinned_sender");
    assert_eq!(
        r.envelopes[0].key_source,
        Some(herald_verify::KeyOrigin::Bundle)
    );
    // A broken container names its fault.
    for (case, fault) in [
        ("bundle_unknown_field", "unknown field `note`"),
        ("bundle_no_envelopes", "`envelopes` is empty"),
        ("bundle_key_not_its_sigil", "`keys` item 0"),
    ] {
        let r = audit_case(case);
        assert!(
            r.envelopes[0].reasons[0].detail.contains(fault),
            "{case}: {}",
            r.envelopes[0].reasons[0].detail
        );
    }
}

/// A change to a bundle case's expectation.
type Edit = fn(&mut herald_vectors::manifest::BundleExpect);

#[test]
fn the_runner_compares_every_envelope_and_proof_of_a_bundle() {
    let dir = scratch("bundle-expect");
    copy_dir(&committed(), &dir);
    let original = manifest_of(&dir);
    let edits: [(&str, Edit); 4] = [
        ("proof 0: expected valid = false", |e| {
            e.proofs[0].valid = false
        }),
        ("expected 0 proofs, got 1", |e| e.proofs.clear()),
        ("envelope 4", |e| e.envelopes[4].reasons.clear()),
        ("expected 4 envelopes, got 5", |e| {
            e.envelopes.pop();
        }),
    ];
    for (message, edit) in edits {
        let mut manifest = original.clone();
        for case in &mut manifest.cases {
            if let Case::Bundle { name, expect, .. } = case
                && name == "bundle_molt_proven"
            {
                edit(expect);
            }
        }
        std::fs::write(
            dir.join("manifest.json"),
            serde_json::to_string_pretty(&manifest).unwrap(),
        )
        .unwrap();
        let outcome = herald_vectors::run(&dir).unwrap();
        assert_eq!(outcome.failed, 1, "{message}");
        assert_eq!(outcome.failures[0].case, "bundle_molt_proven");
        assert!(
            outcome.failures[0].message.contains(message),
            "{}",
            outcome.failures[0].message
        );
    }
    // A bundle case whose input is not a bundle is a broken case.
    let mut manifest = original;
    for case in &mut manifest.cases {
        if let Case::Bundle { name, input, .. } = case
            && name == "bundle_molt_proven"
        {
            *input = "cases/verify/genesis.cbor".into();
        }
    }
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let outcome = herald_vectors::run(&dir).unwrap();
    assert_eq!(outcome.failed, 1);
    assert!(outcome.failures[0].message.contains("not a bundle"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_vectors_directory_that_cannot_be_read_names_the_file_and_the_operation() {
    let dir = scratch("unreadable");
    std::fs::create_dir_all(&dir).unwrap();
    let err = herald_vectors::run(&dir).unwrap_err();
    let manifest = dir.join("manifest.json");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: cannot read: No such file or directory (os error 2)",
            manifest.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
