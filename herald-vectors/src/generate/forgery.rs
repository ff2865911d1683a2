//! Envelope cases: forgery, tampering and the signature rules.

use super::*;

/// Forgery and tampering.
pub(super) fn forgery(g: &mut Gen, base: &Base) {
    let all = ALL;
    let b = bytes_of;
    let Base { g0, .. } = base;
    let mut m = forge::map(g0.as_bytes());
    let forged = forge::seal(
        &mut m,
        &[Signer {
            by: g.sigil("alice", SigilForm::Default),
            ..Signer::new(g.key("bob"), Scope::Origin, Kind::Message.origin_tag())
        }],
    );
    g.verify(
        "forged_origin",
        "from alice, origin signature made with bob's key",
        &[forged],
        &all,
        vec![invalid(&[(R::BadSignature, Some(0))])],
    );

    let reply = EnvelopeBuilder::reply(&g0.view(), T0 + 600)
        .to(g.key("alice").sigil(SigilForm::Default))
        .nonce(g.fresh_nonce())
        .expires(T0 + 2 * 86_400)
        .attest("model", Value::text("claude-opus-4-7"))
        .attest(
            "tools",
            Value::Array(vec![Value::text("search"), Value::text("python")]),
        )
        .payload(Value::text("a reply whose fields are tampered one by one"));
    let reply = g.build("bob", reply);
    let body_fault = [(R::IdMismatch, None), (R::BadSignature, Some(0))];
    let bob_sigil = g.sigil("bob", SigilForm::Default);
    let carol_sigil = g.sigil("carol", SigilForm::Default);
    type Tamper<'a> = (
        &'a str,
        Box<dyn Fn(&mut Map)>,
        Vec<(ReasonCode, Option<u32>)>,
    );
    let tampers: Vec<Tamper<'_>> = vec![
        (
            "v",
            Box::new(|m: &mut Map| {
                m.insert("v", Value::text("herald/0.3"));
            }),
            vec![
                (R::UnsupportedVersion, None),
                (R::IdMismatch, None),
                (R::BadSignature, Some(0)),
            ],
        ),
        (
            "from",
            Box::new(move |m: &mut Map| {
                m.insert("from", Value::text(carol_sigil.as_str()));
            }),
            vec![
                (R::IdMismatch, None),
                (R::OriginSignerMismatch, Some(0)),
                (R::BadSignature, Some(0)),
            ],
        ),
        (
            "to",
            Box::new(move |m: &mut Map| {
                m.insert("to", Value::text(bob_sigil.as_str()));
            }),
            body_fault.to_vec(),
        ),
        (
            "parent",
            Box::new(|m: &mut Map| {
                m.insert("parent", Value::Bytes(vec![7; 32]));
            }),
            vec![
                (R::IdMismatch, None),
                (R::BadSignature, Some(0)),
                (R::MissingParent, None),
            ],
        ),
        (
            "trace",
            Box::new(|m: &mut Map| {
                m.insert("trace", Value::Bytes(vec![7; 32]));
            }),
            vec![
                (R::IdMismatch, None),
                (R::BadSignature, Some(0)),
                (R::TraceMismatch, None),
            ],
        ),
        (
            "ts",
            Box::new(|m: &mut Map| {
                m.insert("ts", Value::Unsigned(T0 + 601));
            }),
            body_fault.to_vec(),
        ),
        (
            "nonce",
            Box::new(|m: &mut Map| {
                m.insert("nonce", Value::Bytes(vec![0; 16]));
            }),
            body_fault.to_vec(),
        ),
        (
            "expires",
            Box::new(|m: &mut Map| {
                m.insert("expires", Value::Unsigned(T0 + 3 * 86_400));
            }),
            body_fault.to_vec(),
        ),
        (
            "kind",
            Box::new(|m: &mut Map| {
                m.insert("kind", Value::text("posthumous_citation"));
            }),
            body_fault.to_vec(),
        ),
        (
            "attestations",
            Box::new(|m: &mut Map| {
                let mut a = Map::new();
                a.insert("type", Value::text("model"));
                a.insert("value", Value::text("another-model"));
                m.insert("attestations", Value::Array(vec![Value::Map(a)]));
            }),
            body_fault.to_vec(),
        ),
        (
            "payload",
            Box::new(|m: &mut Map| {
                m.insert("payload", Value::text("words never said"));
            }),
            body_fault.to_vec(),
        ),
        (
            "signature",
            Box::new(|m: &mut Map| {
                if let Some(Value::Array(sigs)) = m.get("signatures").cloned() {
                    let mut sigs = sigs;
                    if let Some(Value::Map(s)) = sigs.first_mut()
                        && let Some(Value::Bytes(sig)) = s.get("sig").cloned()
                    {
                        let mut sig = sig;
                        sig[10] ^= 1;
                        s.insert("sig", Value::Bytes(sig));
                    }
                    m.insert("signatures", Value::Array(sigs));
                }
            }),
            vec![(R::BadSignature, Some(0))],
        ),
        (
            "id",
            Box::new(|m: &mut Map| {
                m.insert("id", Value::Bytes(vec![9; 32]));
            }),
            vec![(R::IdMismatch, None)],
        ),
    ];
    for (field, f, reasons) in tampers {
        let tampered = forge::edit(reply.as_bytes(), f);
        g.verify(
            &format!("tampered_{field}"),
            &format!("a reply whose `{field}` was changed after signing"),
            &[b(g0), tampered],
            &all,
            vec![valid(), invalid(&reasons)],
        );
    }
    let genesis_id = forge::edit(g0.as_bytes(), |m| {
        m.insert("id", Value::Bytes(vec![9; 32]));
    });
    g.verify(
        "tampered_genesis_id",
        "a genesis whose id was changed: its trace no longer equals it",
        &[genesis_id],
        &all,
        vec![invalid(&[
            (R::IdMismatch, None),
            (R::GenesisTraceMismatch, None),
        ])],
    );
    let genesis_trace = forge::edit(g0.as_bytes(), |m| {
        m.insert("trace", Value::Bytes(vec![9; 32]));
    });
    g.verify(
        "genesis_trace_not_id",
        "a genesis whose trace is not its id (trace is outside a genesis body, P4)",
        &[genesis_trace],
        &all,
        vec![invalid(&[(R::GenesisTraceMismatch, None)])],
    );
}

/// Signature rules (P5, P6).
pub(super) fn signature_rules(g: &mut Gen, base: &Base) {
    let all = ALL;
    let b = bytes_of;
    let Base { g0, .. } = base;
    let alice_long = g.key("alice").sigil(SigilForm::Long);
    let dup = match g0.cosign_as(g.key("alice"), alice_long, Scope::HumanApproval, None) {
        Ok(e) => e,
        Err(e) => generator_bug(&e.to_string()),
    };
    g.verify(
        "duplicate_signer_two_forms",
        "alice co-signs her own envelope under her long sigil (spec §3.4)",
        &[b(&dup)],
        &all,
        vec![partial(&[(R::DuplicateSigner, Some(1))])],
    );
    let mut m = forge::map(g0.as_bytes());
    let alg1 = forge::seal(
        &mut m,
        &[
            origin(g),
            Signer {
                alg: "ed448".into(),
                ..Signer::new(g.key("human"), Scope::HumanApproval, b"")
            },
        ],
    );
    g.verify(
        "unknown_alg_cosignature",
        "a co-signature with alg ed448",
        &[alg1],
        &["alice", "human"],
        vec![partial(&[(R::UnknownAlg, Some(1))])],
    );
    let mut m = forge::map(g0.as_bytes());
    let alg0 = forge::seal(
        &mut m,
        &[Signer {
            alg: "ed448".into(),
            ..origin(g)
        }],
    );
    g.verify(
        "unknown_alg_origin",
        "an origin signature with alg ed448",
        &[alg0],
        &all,
        vec![invalid(&[(R::UnknownAlg, Some(0))])],
    );
    let mut m = forge::map(g0.as_bytes());
    let scope1 = forge::seal(
        &mut m,
        &[
            origin(g),
            Signer {
                scope: "bribe".into(),
                tag: b"herald.sig.bribe.v1".to_vec(),
                ..Signer::new(g.key("human"), Scope::HumanApproval, b"")
            },
        ],
    );
    g.verify(
        "unknown_scope",
        "a co-signature in an unregistered scope",
        &[scope1],
        &["alice", "human"],
        vec![partial(&[(R::UnknownScope, Some(1))])],
    );
    let mut m = forge::map(g0.as_bytes());
    let wrong_tag = forge::seal(
        &mut m,
        &[
            origin(g),
            Signer {
                tag: Scope::ToolSandbox.tag().unwrap_or_default().to_vec(),
                ..Signer::new(g.key("human"), Scope::HumanApproval, b"")
            },
        ],
    );
    g.verify(
        "domain_separation_scope",
        "a human_approval co-signature made under the tool_sandbox tag (spec §3.6)",
        &[wrong_tag],
        &["alice", "human"],
        vec![partial(&[(R::BadSignature, Some(1))])],
    );
    let mut molt = Map::new();
    molt.insert(
        "new_key",
        Value::Bytes(g.key("carol").public_key().as_bytes().to_vec()),
    );
    molt.insert("not_before", Value::Unsigned(T0 + 2 * 86_400));
    let n = g.fresh_nonce();
    let honest_molt = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0 + 1000)
            .kind(Kind::Molt)
            .nonce(n)
            .payload(Value::Map(molt)),
    );
    g.verify(
        "kind_molt",
        "a molt signed under herald.molt.v1 (P7)",
        &[b(&honest_molt)],
        &all,
        vec![valid()],
    );
    let mut m = forge::map(honest_molt.as_bytes());
    let molt_wrong_tag = forge::seal(&mut m, &[origin(g)]);
    g.verify(
        "domain_separation_kind",
        "a kind: molt envelope whose origin is signed under herald.origin.v1 (P5)",
        &[molt_wrong_tag],
        &all,
        vec![invalid(&[(R::BadSignature, Some(0))])],
    );
    let mut m = forge::map(g0.as_bytes());
    let swapped = forge::seal(
        &mut m,
        &[
            Signer::new(g.key("human"), Scope::HumanApproval, b""),
            origin(g),
        ],
    );
    g.verify(
        "origin_not_at_index_0",
        "a human_approval signature first, the origin second",
        &[swapped],
        &["alice", "human"],
        vec![invalid(&[
            (R::OriginMissing, Some(0)),
            (R::OriginSignerMismatch, Some(0)),
            (R::Malformed, Some(1)),
        ])],
    );
    let mut m = forge::map(g0.as_bytes());
    m.insert("from", Value::text("sigil:none"));
    let reserved_from = forge::seal(
        &mut m,
        &[Signer {
            by: "sigil:none".into(),
            ..origin(g)
        }],
    );
    g.verify(
        "reserved_sigil_from",
        "from the reserved sigil:none (P2)",
        &[reserved_from],
        &all,
        vec![invalid(&[(R::ReservedSigil, None)])],
    );
    let mut m = forge::map(g0.as_bytes());
    let reserved_by = forge::seal(
        &mut m,
        &[
            origin(g),
            Signer {
                by: "sigil:scribe".into(),
                ..Signer::new(g.key("human"), Scope::HumanApproval, b"")
            },
        ],
    );
    g.verify(
        "reserved_sigil_cosigner",
        "a co-signature by the reserved sigil:scribe",
        &[reserved_by],
        &all,
        vec![partial(&[(R::ReservedSigil, Some(1))])],
    );
    let herald_short = g.key("herald").sigil(SigilForm::Short);
    let short = match g0.cosign_as(
        g.key("herald"),
        herald_short,
        Scope::HeraldEndorsement,
        None,
    ) {
        Ok(e) => e,
        Err(e) => generator_bug(&e.to_string()),
    };
    g.verify(
        "short_sigil_herald",
        "a herald_endorsement by a short sigil (P2)",
        &[b(&short)],
        &["alice", "herald"],
        vec![partial(&[(R::ShortSigilMisuse, Some(1))])],
    );
    g.verify(
        "unknown_signer",
        "no key pinned for the signer",
        &[b(g0)],
        &[],
        vec![invalid(&[(R::UnknownSigner, Some(0))])],
    );
    let unknown_cosigner = g.cosign(g0, "human", Scope::HumanApproval, None);
    g.verify(
        "unknown_cosigner",
        "a co-signer with no pinned key",
        &[b(&unknown_cosigner)],
        &["alice"],
        vec![partial(&[(R::UnknownSigner, Some(1))])],
    );
}
