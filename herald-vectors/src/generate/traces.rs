//! Envelope cases: honest traces, multi-signature, the chain, order-proof audits.

use super::*;

/// Honest traces: a genesis, a reply chain, a fan-out.
pub(super) fn honest(g: &mut Gen) -> Base {
    let all = ALL;
    let b = bytes_of;
    let g0 = g.msg("alice", "bob", None, "hello, bob");
    g.verify(
        "genesis",
        "a genesis: parent null, trace == id (P4)",
        &[b(&g0)],
        &all,
        vec![valid()],
    );
    let mut chain = vec![g0.clone()];
    let speakers = ["bob", "carol", "alice", "bob", "carol"];
    for (i, who) in speakers.iter().enumerate() {
        let to = speakers.get(i + 1).copied().unwrap_or("alice");
        let next = g.msg(who, to, chain.last(), &format!("hop {}", i + 1));
        chain.push(next);
    }
    let chain_bytes: Vec<Vec<u8>> = chain.iter().map(b).collect();
    g.verify(
        "reply_chain_5_hops",
        "a genesis and five replies across three agents",
        &chain_bytes,
        &all,
        vec![valid(); 6],
    );
    let r1 = g.msg("bob", "alice", Some(&g0), "one question");
    let r2a = g.msg("alice", "bob", Some(&r1), "answer to bob");
    let r2b = g.msg("carol", "bob", Some(&r1), "carol also answers");
    let fan = vec![b(&g0), b(&r1), b(&r2a), b(&r2b)];
    g.verify(
        "fan_out",
        "two replies to one envelope: a DAG, not a chain (spec §3.3)",
        &fan,
        &all,
        vec![valid(); 4],
    );
    Base { g0, r1 }
}

/// Multi-signature in every non-origin scope, each by its own key.
pub(super) fn multisig(g: &mut Gen, base: &Base) {
    let all = ALL;
    let b = bytes_of;
    let Base { g0, .. } = base;
    let mut multi = g.msg("alice", "bob", None, "signed by many");
    for (by, scope) in [
        ("sandbox", Scope::ToolSandbox),
        ("conduit", Scope::ConduitReceipt),
        ("human", Scope::HumanApproval),
        ("herald", Scope::HeraldEndorsement),
        ("bob", Scope::LineageConsent),
        ("witness", Scope::DuressWitness),
    ] {
        let ts = (scope == Scope::ConduitReceipt).then_some(T0 + 5);
        multi = g.cosign(&multi, by, scope, ts);
    }
    let everyone = [
        "alice", "bob", "sandbox", "conduit", "human", "herald", "witness",
    ];
    g.verify(
        "multisig_every_scope",
        "origin plus one signature in each P6 scope, in order",
        &[b(&multi)],
        &everyone,
        vec![valid()],
    );
    let approved = g.cosign(g0, "human", Scope::HumanApproval, None);
    g.verify_with(
        "policy_satisfied",
        "the policy requires human_approval and it verifies",
        &[b(&approved)],
        &["alice", "human"],
        &[Scope::HumanApproval],
        vec![valid()],
    );
    g.verify_with(
        "required_signature_missing",
        "the policy requires human_approval; there is none",
        &[b(g0)],
        &all,
        &[Scope::HumanApproval],
        vec![partial(&[(R::RequiredSignatureMissing, None)])],
    );
}

/// The chain: parents, traces and nonces across envelopes (spec §3.3, §3.3a).
pub(super) fn chain(g: &mut Gen, base: &Base) {
    let all = ALL;
    let b = bytes_of;
    let Base { g0, r1, .. } = base;
    let other_genesis = g.msg("carol", "alice", None, "another conversation");
    let n = g.fresh_nonce();
    let cross = g.build(
        "bob",
        EnvelopeBuilder::reply_to(other_genesis.id(), *g0.view().trace(), T0 + 900)
            .nonce(n)
            .payload(Value::text("replayed into the wrong trace")),
    );
    g.verify(
        "cross_trace_parent_replay",
        "a reply naming a parent in another trace (spec §3.3a)",
        &[b(g0), b(&other_genesis), b(&cross)],
        &all,
        vec![valid(), valid(), invalid(&[(R::TraceMismatch, None)])],
    );
    g.verify(
        "missing_parent",
        "a reply whose parent is not in the set",
        &[b(r1)],
        &all,
        vec![invalid(&[(R::MissingParent, None)])],
    );
    let mut same_nonce = forge::map(r1.as_bytes());
    same_nonce.insert("payload", Value::text("same nonce, other words"));
    let same_nonce = forge::seal(
        &mut same_nonce,
        &[Signer::new(
            g.key("bob"),
            Scope::Origin,
            Kind::Message.origin_tag(),
        )],
    );
    g.verify(
        "nonce_replay_in_set",
        "the same (from key, nonce) again, as the same bytes and as a new envelope (P10 audit)",
        &[b(g0), b(r1), b(r1), same_nonce],
        &all,
        vec![
            valid(),
            valid(),
            invalid(&[(R::ReplayedNonce, None)]),
            invalid(&[(R::ReplayedNonce, None)]),
        ],
    );
}

/// Order-proof audit (P10, P13 revision 2).
pub(super) fn order(g: &mut Gen, base: &Base) {
    let all = ALL;
    let b = bytes_of;
    let Base { g0, r1, .. } = base;
    let mut forged_nonce = forge::map(r1.as_bytes());
    forged_nonce.insert("payload", Value::text("a forgery that copies bob's nonce"));
    let mut not_bob = Signer::new(g.key("carol"), Scope::Origin, Kind::Message.origin_tag());
    not_bob.by = g.sigil("bob", SigilForm::Default);
    let forged_nonce = forge::seal(&mut forged_nonce, &[not_bob]);
    g.verify(
        "forged_nonce_first",
        "a forgery under bob's name copying his nonce, placed before his real envelope: \
         only an envelope whose origin verifies claims a nonce (P10 revision 2)",
        &[forged_nonce, b(g0), b(r1)],
        &all,
        vec![invalid(&[(R::BadSignature, Some(0))]), valid(), valid()],
    );
    let junk_genesis = forge::edit(g0.as_bytes(), |m| {
        m.insert("payload", Value::text("junk that claims the genesis id"));
    });
    g.verify(
        "junk_genesis_id_first",
        "junk whose id field claims the genesis id, placed first: parents are found by \
         recomputed id (P13 revision 2)",
        &[junk_genesis, b(g0), b(r1)],
        &all,
        vec![
            invalid(&[(R::IdMismatch, None), (R::BadSignature, Some(0))]),
            valid(),
            valid(),
        ],
    );
    let short_sig = forge::edit(g0.as_bytes(), |m| {
        if let Some(Value::Array(sigs)) = m.get("signatures").cloned()
            && let Some(Value::Map(mut first)) = sigs.first().cloned()
        {
            first.insert("sig", Value::Bytes(vec![7; 63]));
            m.insert("signatures", Value::Array(vec![Value::Map(first)]));
        }
    });
    g.verify(
        "malformed_origin_map",
        "signature 0 with a 63-byte sig: malformed at index 0, not origin_missing \
         (P13 revision 2)",
        &[short_sig],
        &all,
        vec![invalid(&[(R::Malformed, Some(0))])],
    );
    let mut torsion = forge::map(g0.as_bytes());
    torsion.insert(
        "payload",
        Value::text("an origin whose R has a torsion component"),
    );
    let torsion =
        forge::seal_torsion_origin(&mut torsion, &seed("alice"), Kind::Message.origin_tag(), 3);
    g.verify(
        "mixed_order_r_origin",
        "alice's origin signature with R = [r]B + T (T of order 8): valid under the \
         cofactored equation, which verify_strict would refuse (P5 revision 2)",
        &[torsion],
        &all,
        vec![valid()],
    );
}
