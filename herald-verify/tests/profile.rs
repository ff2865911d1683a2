//! Protocol profiles over verified traces (docs/haven.md, docs/valp.md):
//! each example trace of `herald_testkit::protocols`, built from the
//! protocol's own operation sequence, gives exactly the findings its rules
//! call for (derived here from the rules, step by step), and a profile
//! never changes a verdict.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use herald_testkit::protocols::{Trace, haven, valp};
use herald_testkit::{T0, key};
use herald_verify::{
    AuditOptions, CompactReport, FindingCode as C, Input, Keyring, Profile, ProfileEvidence,
    ProfileReport, Provenance, audit_compact,
};

fn keyring() -> Keyring {
    let mut k = Keyring::new();
    for n in 10..=23 {
        k.insert(key(n).public_key(), Provenance::Pinned);
    }
    k
}

fn inputs(tr: &Trace) -> Vec<Input> {
    vec![Input {
        name: "trace".into(),
        bytes: tr.bytes(),
    }]
}

fn run(
    profile: Profile,
    inputs: &[Input],
    now: Option<u64>,
    evidence: &[ProfileEvidence<'_>],
) -> (ProfileReport, bool) {
    let options = AuditOptions {
        now,
        ..AuditOptions::default()
    };
    let report: CompactReport<'_> = audit_compact(inputs, &keyring(), &options);
    (report.check_profile(profile, evidence), report.all_valid())
}

/// The findings as (code, step index).
fn found(r: &ProfileReport) -> Vec<(C, usize)> {
    r.findings.iter().map(|f| (f.code, f.position)).collect()
}

fn haven(tr: &Trace) -> Vec<(C, usize)> {
    let (r, valid) = run(Profile::Haven, &inputs(tr), None, &[]);
    assert!(valid, "every example step verifies");
    assert_eq!(r.checked, tr.steps.len());
    found(&r)
}

fn given() -> [ProfileEvidence<'static>; 1] {
    [ProfileEvidence::new(valp::EVIDENCE_REF, valp::EVIDENCE)]
}

fn valp(tr: &Trace) -> Vec<(C, usize)> {
    let (r, _) = run(Profile::Valp, &inputs(tr), None, &given());
    found(&r)
}

#[test]
fn haven_claim_endings_are_clean() {
    // complete: offer, claim, yield, evidence, complete, acceptance.
    assert_eq!(haven(&haven::complete()), []);
    // release: the first claimer releases, a second proves and completes.
    assert_eq!(haven(&haven::release()), []);
    // silence-then-settle: the offerer settles after the claim expired.
    assert_eq!(haven(&haven::settle()), []);
    // A child packet narrower than its parent.
    assert_eq!(haven(&haven::delegated()), []);
}

#[test]
fn settling_reads_an_expired_claim_as_a_step() {
    // Audited at the settlement's time, the silent claim has expired
    // (P10 `expired`, invalid) but it is still the claimer's signed step.
    let tr = haven::settle();
    let settled_at = tr.steps[2].view().ts();
    let (r, valid) = run(Profile::Haven, &inputs(&tr), Some(settled_at), &[]);
    assert!(!valid, "the claim has expired by then");
    assert_eq!((r.checked, r.skipped), (3, 0));
    assert_eq!(found(&r), []);
}

#[test]
fn haven_bad_inputs_give_their_findings() {
    // Step 2 completes with no evidence step from the claimer.
    assert_eq!(
        haven(&haven::unproven()),
        [(C::CompletionWithoutEvidence, 2)]
    );
    // Step 4 is the worker's acceptance of its own work.
    assert_eq!(haven(&haven::self_accepted()), [(C::SelfReceipt, 4)]);
    // Step 2, the child offer, allows 50 steps under a parent's 20.
    assert_eq!(haven(&haven::widened()), [(C::BudgetWidened, 2)]);
    // Step 1 is the offerer's key (long form, naming the worker).
    assert_eq!(haven(&haven::offerer_claims()), [(C::ClaimByOfferer, 1)]);
    // Step 2 claims what step 1's claimer still holds.
    assert_eq!(haven(&haven::two_claimers()), [(C::SecondClaimer, 2)]);
    // Step 2 has no expires and a password; step 3 settles while the
    // claimer's last step (step 2) never expires.
    assert_eq!(
        haven(&haven::hasty()),
        [
            (C::MissingExpires, 2),
            (C::SecretInPayload, 2),
            (C::SettleBeforeSilence, 3)
        ]
    );
}

#[test]
fn a_secret_finding_never_shows_the_secret() {
    let (r, _) = run(Profile::Haven, &inputs(&haven::hasty()), None, &[]);
    let secret = r
        .findings
        .iter()
        .find(|f| f.code == C::SecretInPayload)
        .unwrap();
    assert_eq!(secret.detail, "secret_field at payload.password");
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("hunter2"), "{json}");
}

#[test]
fn valp_activation_and_gate_bearing_claim_are_clean() {
    assert_eq!(valp(&valp::activation()), []);
    // Without the evidence bytes, the claim's evidence is unchecked.
    let (r, _) = run(Profile::Valp, &inputs(&valp::activation()), None, &[]);
    assert_eq!(found(&r), [(C::EvidenceUnverifiable, 3)]);
}

#[test]
fn valp_bad_inputs_give_their_findings() {
    // Step 3 attests a digest of other bytes than the evidence given.
    assert_eq!(valp(&valp::forged()), [(C::EvidenceDigestMismatch, 3)]);
    // Step 5, the review, is by the claim's own key.
    assert_eq!(valp(&valp::self_reviewed()), [(C::SelfVerification, 5)]);
    // Step 6 is message msg-5 again under another correlation id.
    assert_eq!(valp(&valp::replayed()), [(C::ReplayedMessage, 6)]);
    // Step 6 is from epoch 0 after epoch 1 was activated.
    assert_eq!(valp(&valp::rollback()), [(C::EpochRollback, 6)]);
    // Step 7 comes from the installation after its deprecation (step 6).
    let tr = valp::retired();
    assert_eq!(valp(&tr), [(C::AcceptedAfterRetirement, 7)]);
}

#[test]
fn a_replay_names_both_correlations() {
    let (r, _) = run(Profile::Valp, &inputs(&valp::replayed()), None, &given());
    assert_eq!(
        r.findings[0].detail,
        "message \"msg-5\" was seen before under correlation \"corr-task-1\", now under \
         \"corr-task-2\""
    );
}

#[test]
fn an_invalid_step_is_skipped_not_read() {
    // Step 2 claims to be the worker's evidence but another key signed it
    // (`bad_signature`): it is no step of the worker's, so the completion
    // after it has no evidence from the claimer.
    use herald_core::cbor::Value;
    use herald_testkit::protocols::map;
    let mut tr = Trace::new(90_000);
    let offer = tr.step(
        None,
        &haven::offerer(),
        0,
        map(&haven::packet("p", 9, 9, 1)),
        true,
    );
    let claim = tr.step(
        Some(offer),
        &haven::worker(),
        10,
        map(&[("type", Value::text("claim"))]),
        true,
    );
    let forged = tr.step_with(
        Some(claim),
        &haven::other(),
        20,
        map(&[("type", Value::text("evidence"))]),
        |b| {
            b.from_sigil(valp::sigil(&haven::worker()))
                .expires(T0 + 999)
        },
    );
    tr.step(
        Some(forged),
        &haven::worker(),
        30,
        map(&[("type", Value::text("complete"))]),
        true,
    );
    let (r, valid) = run(Profile::Haven, &inputs(&tr), None, &[]);
    assert!(!valid);
    assert_eq!((r.checked, r.skipped), (3, 1));
    assert_eq!(found(&r), [(C::CompletionWithoutEvidence, 3)]);
}

#[test]
fn a_profile_adds_one_member_and_changes_no_verdict() {
    let inputs = inputs(&haven::unproven());
    let options = AuditOptions {
        now: Some(T0 + 600),
        ..AuditOptions::default()
    };
    let report = audit_compact(&inputs, &keyring(), &options);
    let profile = report.check_profile(Profile::Haven, &[]);
    let mut plain = Vec::new();
    report.write_document(&mut plain).unwrap();
    let mut with = Vec::new();
    report
        .write_document_with_profile(&profile, &mut with)
        .unwrap();
    let plain = String::from_utf8(plain).unwrap();
    let with = String::from_utf8(with).unwrap();
    let member = format!(
        ",\"profile\":{}}}",
        serde_json::to_string(&profile).unwrap()
    );
    assert_eq!(with, format!("{}{member}", &plain[..plain.len() - 1]));
    assert!(report.all_valid(), "the finding leaves every step valid");
    let doc: serde_json::Value = serde_json::from_str(&with).unwrap();
    assert_eq!(doc["profile"]["name"], "haven");
    assert_eq!(
        doc["profile"]["findings"][0]["code"],
        "completion_without_evidence"
    );
}

#[test]
fn every_finding_code_has_one_name() {
    let mut names: Vec<&str> = C::ALL.iter().map(|c| c.name()).collect();
    for c in C::ALL {
        assert_eq!(C::from_name(c.name()), Some(c));
        assert!(!c.profiles().is_empty());
        assert!(
            c.name()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_')
        );
    }
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), C::ALL.len());
    assert_eq!(Profile::from_name("valp"), Ok(Profile::Valp));
    assert_eq!(
        Profile::from_name("a2a").unwrap_err().to_string(),
        "\"a2a\" is not a profile (known: haven, valp)"
    );
}

mod each_rule {
    //! The rules the example traces do not break, each on a minimal input.
    use super::*;
    use herald_core::cbor::Value;
    use herald_testkit::protocols::map;

    fn op(ty: &str) -> Value {
        map(&[("type", Value::text(ty))])
    }

    fn haven_of(tr: &Trace) -> Vec<(C, usize)> {
        found(&run(Profile::Haven, &inputs(tr), None, &[]).0)
    }

    fn valp_of(tr: &Trace) -> Vec<(C, usize)> {
        found(&run(Profile::Valp, &inputs(tr), None, &given()).0)
    }

    #[test]
    fn haven_workers_and_settlers() {
        let (alice, bob, dave) = (haven::offerer(), haven::worker(), haven::other());
        let mut tr = Trace::new(50_000);
        let offer = tr.step(None, &alice, 0, map(&haven::packet("p", 9, 9, 1)), true);
        let claim = tr.step(Some(offer), &bob, 10, op("claim"), true);
        // Dave yields on Bob's claim; Dave settles Alice's packet.
        tr.step(Some(claim), &dave, 20, op("yield"), true);
        tr.step(Some(offer), &dave, 30, op("settle"), true);
        // A step under no offer, and a payload with no known type.
        tr.step(None, &bob, 40, op("claim"), true);
        tr.step(
            Some(claim),
            &bob,
            50,
            map(&[("type", Value::text("dance"))]),
            true,
        );
        tr.step(Some(claim), &bob, 60, Value::text("not a map"), true);
        assert_eq!(
            haven_of(&tr),
            [
                (C::NotClaimer, 2),
                (C::SettleByNonOfferer, 3),
                (C::NoPacket, 4),
                (C::MalformedStep, 5),
                (C::MalformedStep, 6)
            ]
        );
    }

    #[test]
    fn haven_narrowing() {
        let mut child = haven::packet("pkt-4.1", 5, 300, 2);
        child.retain(|(k, _)| *k != "objective");
        // Depth 2 under a parent's 2, no objective; delegated_with sets
        // parent and root right, so only those two fire.
        assert_eq!(
            haven_of(&haven::delegated_with(&child)),
            [(C::DepthWidened, 2), (C::ObjectiveDropped, 2)]
        );
        // A child naming another root.
        let mut tr = Trace::new(60_000);
        let offer = tr.step(
            None,
            &haven::offerer(),
            0,
            map(&haven::packet("a", 9, 9, 2)),
            true,
        );
        let claim = tr.step(Some(offer), &haven::worker(), 10, op("claim"), true);
        let mut fields = haven::packet("a.1", 9, 9, 1);
        fields.retain(|(k, _)| *k != "root");
        fields.push(("root", Value::text("elsewhere")));
        fields.push(("parent", Value::text("a")));
        tr.step(Some(claim), &haven::worker(), 20, map(&fields), true);
        assert_eq!(haven_of(&tr), [(C::LineageMismatch, 2)]);
    }

    #[test]
    fn valp_message_shape_digest_causation_and_evidence() {
        let (inst, leader) = (valp::installation(), valp::leader());
        let mut tr = Trace::new(70_000);
        let root = tr.step(
            None,
            &inst,
            0,
            valp::message(
                "m1",
                "c",
                None,
                "i",
                "command.installation.init",
                0,
                op("x"),
            ),
            true,
        );
        // A digest of another payload.
        let mut bad = valp::message("m2", "c", Some("m1"), "i", "command.x", 0, op("x"));
        if let Value::Map(m) = &mut bad {
            m.insert("payload_digest", Value::text(valp::digest(b"other")));
        }
        tr.step(Some(root), &inst, 10, bad, true);
        // Causation naming a message other than the parent's.
        tr.step(
            Some(root),
            &inst,
            20,
            valp::message("m3", "c", Some("m9"), "i", "command.x", 0, op("x")),
            true,
        );
        // A gate-bearing claim citing evidence no message adds.
        tr.step(
            Some(root),
            &leader,
            30,
            valp::message(
                "m4",
                "c",
                Some("m1"),
                "l",
                "claim.declare",
                0,
                map(&[
                    ("claim_id", Value::text("k")),
                    ("claim_kind", Value::text("stable_release")),
                    ("evidence_refs", Value::Array(vec![Value::text("nowhere")])),
                ]),
            ),
            true,
        );
        // Not a VALP message at all.
        tr.step(Some(root), &leader, 40, op("hello"), true);
        assert_eq!(
            valp_of(&tr),
            [
                (C::PayloadDigestMismatch, 1),
                (C::CausationMismatch, 2),
                (C::EvidenceMissing, 3),
                (C::MalformedMessage, 4)
            ]
        );
    }
}

#[test]
fn a_formed_report_writes_the_same_document() {
    let inputs = inputs(&valp::forged());
    let report = audit_compact(&inputs, &keyring(), &AuditOptions::default());
    let profile = report.check_profile(Profile::Valp, &given());
    let mut compact = Vec::new();
    report
        .write_document_with_profile(&profile, &mut compact)
        .unwrap();
    let mut formed = Vec::new();
    report
        .into_report()
        .write_document_with_profile(&profile, &mut formed)
        .unwrap();
    assert_eq!(String::from_utf8(compact), String::from_utf8(formed));
}

#[test]
fn a_long_chain_is_read_in_linear_time() {
    // 20 000 yields, each answering the one before: each step's packet is
    // found once (walking up from every step would be 2·10⁸ lookups).
    use herald_core::cbor::Value;
    use herald_testkit::protocols::map;
    let mut tr = Trace::new(100_000);
    let offer = tr.step(
        None,
        &haven::offerer(),
        0,
        map(&haven::packet("p", 9, 9, 1)),
        true,
    );
    let mut at = tr.step(
        Some(offer),
        &haven::worker(),
        1,
        map(&[("type", Value::text("claim"))]),
        true,
    );
    for n in 0..20_000 {
        at = tr.step(
            Some(at),
            &haven::worker(),
            2 + n / 100,
            map(&[("type", Value::text("yield"))]),
            true,
        );
    }
    let inputs = inputs(&tr);
    let report = audit_compact(&inputs, &keyring(), &AuditOptions::default());
    let started = std::time::Instant::now();
    let profile = report.check_profile(Profile::Haven, &[]);
    let took = started.elapsed();
    assert_eq!((profile.checked, found(&profile)), (20_002, vec![]));
    // About 2 s in a debug build; walking up from every step, minutes.
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
}
