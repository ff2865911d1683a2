//! Identity lifecycle cases (P7, P8).

use super::*;

pub(super) fn lifecycle_cases(g: &mut Gen) {
    let b = |e: &Envelope| e.as_bytes().to_vec();
    let day = 86_400;
    let alice = g.key("alice").sigil(SigilForm::Default);

    // Deprecation (P8): later envelopes from the sigil are rejected.
    let born = g.born("alice", T0, Vec::new(), Vec::new());
    let n = g.fresh_nonce();
    let death = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0 + 20)
            .kind(Kind::Deprecation)
            .nonce(n)
            .payload(Value::Map(Map::new())),
    );
    let after = g.said("alice", T0 + 30);
    let n = g.fresh_nonce();
    let citation = g.build(
        "bob",
        EnvelopeBuilder::genesis(T0 + 40)
            .kind(Kind::PosthumousCitation)
            .to(g.key("alice").sigil(SigilForm::Default))
            .nonce(n)
            .payload(Value::text("in memoriam")),
    );
    g.verify("deprecated_signer", "after a deprecation, envelopes from the sigil are rejected and envelopes to it are not (P8)", &[b(&born), b(&death), b(&after), b(&citation)], &["bob"], vec![valid(), valid(), invalid(&[(R::DeprecatedSigner, None)]), valid()]);

    // Duress co-signed by the registered witness (P8).
    let mut dw = Map::new();
    dw.insert("sigil", Value::Text(g.sigil("witness", SigilForm::Default)));
    let guarded = g.born(
        "alice",
        T0,
        Vec::new(),
        vec![("duress_witness", Value::Map(dw))],
    );
    let n = g.fresh_nonce();
    let black = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0 + 10)
            .kind(Kind::Duress)
            .nonce(n)
            .payload(Value::Map(Map::new())),
    );
    let black = g.cosign(&black, "witness", Scope::DuressWitness, None);
    let later = g.said("alice", T0 + 20);
    g.verify(
        "signer_under_duress",
        "a current duress envelope marks later envelopes with a warning; the verdict stays (P8)",
        &[b(&guarded), b(&black), b(&later)],
        &["witness"],
        vec![
            valid(),
            valid(),
            expect(Status::Valid, &[(R::SignerUnderDuress, None)]),
        ],
    );

    // Molts (P8 rules 2-5).
    let last = g.said("alice", T0 + 100);
    let hasty = g.molt("alice", "carol", T0 + 200, T0 + 100 + day - 1);
    g.verify("molt_cooloff", "a molt whose not_before is less than 24 h after the outgoing key's last envelope (P8 rule 2)", &[b(&born), b(&last), b(&hasty)], &[], vec![valid(), valid(), invalid(&[(R::MoltCooloff, None)])]);
    let not_before = T0 + 100 + day;
    let patient = g.molt("alice", "carol", T0 + 200, not_before);
    let new_key = g.speak_as("alice", "carol", not_before + 10);
    let old_key = g.said("alice", not_before + 20);
    g.verify(
        "molt_accepted",
        "an accepted molt: the new key's envelope lacks an inclusion proof (rule 3), the old key is rotated from not_before",
        &[b(&born), b(&last), b(&patient), b(&new_key), b(&old_key)],
        &[],
        vec![valid(), valid(), valid(), invalid(&[(R::MoltUnproven, None)]), invalid(&[(R::RotatedKey, None)])],
    );
    let mut policy = Map::new();
    policy.insert(
        "cosigners",
        Value::Array(vec![
            Value::Text(g.sigil("herald", SigilForm::Default)),
            Value::Text(g.sigil("human", SigilForm::Default)),
        ]),
    );
    policy.insert("threshold", Value::Unsigned(2));
    let governed = g.born(
        "alice",
        T0,
        Vec::new(),
        vec![("molt_policy", Value::Map(policy))],
    );
    let endorsed_once = g.molt("alice", "carol", T0 + 3600, T0 + 2 * day);
    let endorsed_once = g.cosign(&endorsed_once, "herald", Scope::HeraldEndorsement, None);
    g.verify(
        "molt_cosign_missing",
        "molt_policy needs two herald_endorsement co-signatures; the molt has one (P8 rule 4)",
        &[b(&governed), b(&endorsed_once)],
        &["herald", "human"],
        vec![valid(), invalid(&[(R::MoltCosignMissing, None)])],
    );
    let m1 = g.molt("alice", "bob", T0 + 10, T0 + 2 * day);
    let m2 = g.molt("alice", "carol", T0 + 20, T0 + 3 * day);
    let after_dispute = g.said("alice", T0 + 30);
    g.verify("disputed", "two molts of one key with overlapping windows: both void, the sigil disputed from then on (P8 rule 5)", &[b(&born), b(&m1), b(&m2), b(&after_dispute)], &[], vec![valid(), invalid(&[(R::Disputed, None)]), invalid(&[(R::Disputed, None)]), invalid(&[(R::Disputed, None)])]);

    // Lineage across births (spec §2.3).
    let bob = g.key("bob").sigil(SigilForm::Default);
    let x = g.born("alice", T0, vec![bob], Vec::new());
    let y = g.born(
        "bob",
        T0 + 1,
        vec![g.key("alice").sigil(SigilForm::Default)],
        Vec::new(),
    );
    g.verify(
        "lineage_cycle",
        "two births naming each other as lineage parents",
        &[b(&x), b(&y)],
        &[],
        vec![
            invalid(&[(R::LineageCycle, None)]),
            invalid(&[(R::LineageCycle, None)]),
        ],
    );
    let carol_born = g.born("carol", T0, Vec::new(), Vec::new());
    let n = g.fresh_nonce();
    let carol_dies = g.build(
        "carol",
        EnvelopeBuilder::genesis(T0 + 10)
            .kind(Kind::Deprecation)
            .nonce(n)
            .payload(Value::Map(Map::new())),
    );
    let orphan = g.born(
        "sandbox",
        T0 + 20,
        vec![g.key("carol").sigil(SigilForm::Default)],
        Vec::new(),
    );
    g.verify(
        "lineage_deprecated_parent",
        "a birth naming a parent deprecated before it",
        &[b(&carol_born), b(&carol_dies), b(&orphan)],
        &[],
        vec![
            valid(),
            valid(),
            invalid(&[(R::LineageDeprecatedParent, None)]),
        ],
    );
    let _ = alice;
}
