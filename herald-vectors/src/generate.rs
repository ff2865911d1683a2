//! The generator: every case from fixed seeds, byte-stable across runs.
//!
//! Each case states its expected verdict here, by hand, from the profile;
//! [`generate`] then runs the conformance runner over what it wrote and
//! fails if this implementation disagrees with any stated expectation.

use std::collections::BTreeMap;
use std::path::Path;

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value};
use herald_core::{
    Envelope, EnvelopeBuilder, Kind, Nonce, ReasonCode, Scope, Sigil, SigilForm, SigningKey, Status,
};
use sha2::{Digest, Sha256};

mod bundle;
mod proof;

use crate::forge::{self, Signer};
use crate::manifest::{
    Case, CborExpect, EnvelopeExpect, ExpectReason, FORMAT, KeyEntry, KeyringExpect, Manifest,
    SigilExpect,
};

/// Base time of every envelope: the spec §3.1 example `ts`.
pub const T0: u64 = 1_746_432_000;
/// `now` of the verify cases: one day after [`T0`].
pub const NOW: u64 = T0 + 86_400;

/// The test keys, in manifest order (`log` and `log2` sign audit-log tree
/// heads).
pub const KEY_NAMES: [&str; 10] = [
    "alice", "bob", "carol", "sandbox", "conduit", "human", "herald", "witness", "log", "log2",
];

fn seed(name: &str) -> [u8; 32] {
    Sha256::digest(format!("herald-vectors/v1/key/{name}")).into()
}

fn nonce(n: u64) -> Nonce {
    let d = Sha256::digest(format!("herald-vectors/v1/nonce/{n}"));
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    Nonce(b)
}

fn hex(b: &[u8]) -> String {
    herald_verify::report::hex(b)
}

/// Expected verdict shorthand.
fn expect(status: Status, reasons: &[(ReasonCode, Option<u32>)]) -> EnvelopeExpect {
    let mut reasons: Vec<ExpectReason> = reasons
        .iter()
        .map(|(c, i)| ExpectReason {
            code: c.name().into(),
            index: *i,
        })
        .collect();
    reasons.sort();
    EnvelopeExpect {
        status: status.name().into(),
        reasons,
    }
}

fn valid() -> EnvelopeExpect {
    expect(Status::Valid, &[])
}

fn invalid(reasons: &[(ReasonCode, Option<u32>)]) -> EnvelopeExpect {
    expect(Status::Invalid, reasons)
}

fn partial(reasons: &[(ReasonCode, Option<u32>)]) -> EnvelopeExpect {
    expect(Status::Partial, reasons)
}

use ReasonCode as R;

struct Gen {
    keys: BTreeMap<&'static str, SigningKey>,
    files: BTreeMap<String, Vec<u8>>,
    cases: Vec<Case>,
    next_nonce: u64,
}

impl Gen {
    fn key(&self, name: &str) -> &SigningKey {
        &self.keys[name]
    }

    fn sigil(&self, name: &str, form: SigilForm) -> String {
        self.key(name).sigil(form).to_string()
    }

    fn fresh_nonce(&mut self) -> Nonce {
        self.next_nonce += 1;
        nonce(self.next_nonce)
    }

    /// An honest envelope by `from` (to `to`), a reply when `parent` is given.
    fn msg(&mut self, from: &str, to: &str, parent: Option<&Envelope>, text: &str) -> Envelope {
        let n = self.fresh_nonce();
        let ts = T0 + self.next_nonce * 60;
        let b = match parent {
            None => EnvelopeBuilder::genesis(ts),
            Some(p) => EnvelopeBuilder::reply(&p.view(), ts),
        };
        self.build(
            from,
            b.to(self.key(to).sigil(SigilForm::Default))
                .nonce(n)
                .payload(Value::text(text)),
        )
    }

    fn build(&self, from: &str, b: EnvelopeBuilder) -> Envelope {
        match b.sign(self.key(from)) {
            Ok(e) => e,
            Err(e) => generator_bug(&e.to_string()),
        }
    }

    /// A birth by `signer` carrying the birth attestation of `key` (P7),
    /// plus `extra` attestations.
    fn birth(
        &mut self,
        signer: &str,
        key: &herald_core::PublicKey,
        description: &str,
        ts: u64,
        lineage: &[Sigil],
        extra: Vec<(&str, Value)>,
    ) -> Envelope {
        let n = self.fresh_nonce();
        let mut b = EnvelopeBuilder::genesis(ts)
            .kind(Kind::Birth)
            .nonce(n)
            .attest("birth", birth_attestation(key, description, lineage));
        for (ty, v) in extra {
            b = b.attest(ty, v);
        }
        self.build(signer, b)
    }

    /// The birth of `who`, self-certified (P7), naming `lineage`.
    fn born(
        &mut self,
        who: &str,
        ts: u64,
        lineage: Vec<Sigil>,
        extra: Vec<(&str, Value)>,
    ) -> Envelope {
        let key = self.key(who).public_key();
        self.birth(who, &key, who, ts, &lineage, extra)
    }

    /// A plain genesis message by `who` at `ts`.
    fn said(&mut self, who: &str, ts: u64) -> Envelope {
        let n = self.fresh_nonce();
        self.build(
            who,
            EnvelopeBuilder::genesis(ts)
                .nonce(n)
                .payload(Value::text("words")),
        )
    }

    /// A molt of `who`'s key to `new`'s, effective from `not_before` (P8).
    fn molt(&mut self, who: &str, new: &str, ts: u64, not_before: u64) -> Envelope {
        let mut p = Map::new();
        p.insert(
            "new_key",
            Value::Bytes(self.key(new).public_key().as_bytes().to_vec()),
        );
        p.insert("not_before", Value::Unsigned(not_before));
        let n = self.fresh_nonce();
        self.build(
            who,
            EnvelopeBuilder::genesis(ts)
                .kind(Kind::Molt)
                .nonce(n)
                .payload(Value::Map(p)),
        )
    }

    /// A message from `identity`'s sigil signed by `signer`'s key (a
    /// molted-in key, P8).
    fn speak_as(&mut self, identity: &str, signer: &str, ts: u64) -> Envelope {
        let n = self.fresh_nonce();
        self.build(
            signer,
            EnvelopeBuilder::genesis(ts)
                .from_sigil(self.key(identity).sigil(SigilForm::Default))
                .nonce(n)
                .payload(Value::text("the new key speaks")),
        )
    }

    fn cosign(&self, e: &Envelope, by: &str, scope: Scope, ts: Option<u64>) -> Envelope {
        match e.cosign(self.key(by), scope, ts) {
            Ok(e) => e,
            Err(err) => generator_bug(&err.to_string()),
        }
    }

    fn verify(
        &mut self,
        name: &str,
        description: &str,
        envs: &[Vec<u8>],
        keyring: &[&str],
        expect: Vec<EnvelopeExpect>,
    ) {
        self.verify_with(name, description, envs, keyring, &[], expect);
    }

    fn verify_with(
        &mut self,
        name: &str,
        description: &str,
        envs: &[Vec<u8>],
        keyring: &[&str],
        required: &[Scope],
        expect: Vec<EnvelopeExpect>,
    ) {
        let input = format!("cases/verify/{name}.cbor");
        let display = format!("cases/verify/{name}.json");
        let bytes: Vec<u8> = envs.iter().flatten().copied().collect();
        let mut lines = String::new();
        for e in envs {
            match herald_core::cbor::decode(e) {
                Ok(v) => lines.push_str(&herald_verify::display::json(v)),
                Err(_) => lines.push_str(&format!("{{\"non_canonical_hex\":\"{}\"}}", hex(e))),
            }
            lines.push('\n');
        }
        self.files.insert(input.clone(), bytes);
        self.files.insert(display.clone(), lines.into_bytes());
        self.cases.push(Case::Verify {
            name: name.into(),
            description: description.into(),
            input,
            display,
            keyring: keyring.iter().map(|s| (*s).into()).collect(),
            now: NOW,
            skew: 300,
            required_scopes: required.iter().map(|s| s.name().into()).collect(),
            expect,
        });
    }

    fn cbor(&mut self, name: &str, description: &str, bytes: Vec<u8>, rule: Option<(&str, usize)>) {
        let input = format!("cases/cbor/{name}.cbor");
        self.cases.push(Case::Cbor {
            name: name.into(),
            description: description.into(),
            input: input.clone(),
            hex: hex(&bytes),
            expect: CborExpect {
                accept: rule.is_none(),
                rule: rule.map(|(r, _)| r.into()),
                offset: rule.map(|(_, o)| o),
            },
        });
        self.files.insert(input, bytes);
    }

    fn sigil_case(&mut self, name: &str, description: &str, input: &str, expect: SigilExpect) {
        self.cases.push(Case::Sigil {
            name: name.into(),
            description: description.into(),
            input: input.into(),
            expect,
        });
    }
}

/// The generator never fails on its own fixed inputs; were it to, that is
/// a bug in the generator, not bad input: it panics with the message (a
/// library never ends its caller's process), and the regeneration check
/// and `tests/conformance.rs` fail loudly.
#[allow(clippy::panic)]
fn generator_bug(message: &str) -> Envelope {
    panic!("herald-vectors: generator bug: {message}")
}

/// Build every case and write the vectors into `out`, then run them.
pub fn generate(out: &Path) -> Result<crate::run::Outcome, String> {
    let mut g = Gen {
        keys: KEY_NAMES
            .iter()
            .map(|n| (*n, SigningKey::from_seed(&seed(n))))
            .collect(),
        files: BTreeMap::new(),
        cases: Vec::new(),
        next_nonce: 0,
    };
    encoding_cases(&mut g);
    sigil_cases(&mut g);
    keyring_cases(&mut g);
    envelope_cases(&mut g);
    lifecycle_cases(&mut g);
    receive_cases(&mut g);
    proof::proof_cases(&mut g)?;
    // Last, so that every earlier case keeps its nonces and bytes.
    bundle::bundle_cases(&mut g)?;

    let mut keys = Vec::new();
    for name in KEY_NAMES {
        let k = g.key(name).public_key();
        let keyring_file = format!("keys/{name}.pub");
        let line = herald_verify::keyring::key_line(&k) + "\n";
        g.files.insert(keyring_file.clone(), line.into_bytes());
        keys.push(KeyEntry {
            name: name.into(),
            seed: hex(&seed(name)),
            public: hex(k.as_bytes()),
            sigil: g.sigil(name, SigilForm::Default),
            sigil_long: g.sigil(name, SigilForm::Long),
            sigil_short: g.sigil(name, SigilForm::Short),
            keyring_file,
        });
    }
    let manifest = Manifest {
        format: FORMAT.into(),
        protocol: herald_core::envelope::VERSION.into(),
        keys,
        cases: g.cases,
    };
    let mut json = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    json.push('\n');
    g.files.insert("manifest.json".into(), json.into_bytes());

    for (rel, bytes) in &g.files {
        let path = out.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    crate::run::run(out).map_err(|e| e.to_string())
}

fn encoding_cases(g: &mut Gen) {
    let mut all = Map::new();
    all.insert("uint", Value::Unsigned(1_000_000));
    all.insert("nint", Value::Negative(499));
    all.insert("bytes", Value::Bytes(vec![0xde, 0xad, 0xbe, 0xef]));
    all.insert("text", Value::text("sigil ✓"));
    all.insert(
        "array",
        Value::Array(vec![Value::Unsigned(1), Value::Array(Vec::new())]),
    );
    all.insert(
        "map",
        Value::Map([("k", Value::Null)].into_iter().collect()),
    );
    all.insert("f16", Value::from_f64(1.5).unwrap_or(Value::Null));
    all.insert("f32", Value::from_f64(100_000.5).unwrap_or(Value::Null));
    all.insert("f64", Value::from_f64(0.1).unwrap_or(Value::Null));
    all.insert("true", Value::Bool(true));
    all.insert("false", Value::Bool(false));
    all.insert("null", Value::Null);
    g.cbor(
        "canonical_every_type",
        "a map holding every type P1 allows, in canonical form",
        Value::Map(all).to_vec(),
        None,
    );
    let cases: [(&str, &str, &[u8], &str, usize); 16] = [
        (
            "non_shortest_head",
            "5 written with a one-byte argument",
            &[0x18, 0x05],
            "non_shortest_head",
            0,
        ),
        (
            "non_shortest_length",
            "a 1-byte string whose length uses a 2-byte argument",
            &[0x59, 0x00, 0x01, 0x61],
            "non_shortest_head",
            0,
        ),
        (
            "indefinite_length",
            "an indefinite-length array",
            &[0x9f, 0x01, 0xff],
            "indefinite_length",
            0,
        ),
        (
            "unsorted_keys",
            "map keys \"b\" then \"a\"",
            &[0xa2, 0x61, 0x62, 0x01, 0x61, 0x61, 0x02],
            "unsorted_keys",
            4,
        ),
        (
            "length_first_order",
            "keys \"aa\" then \"b\": bytewise-lexicographic, not canonical (shorter first)",
            &[0xa2, 0x62, 0x61, 0x61, 0x01, 0x61, 0x62, 0x02],
            "unsorted_keys",
            5,
        ),
        (
            "duplicate_key",
            "the key \"a\" twice",
            &[0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02],
            "duplicate_key",
            4,
        ),
        (
            "non_text_key",
            "an integer map key",
            &[0xa1, 0x01, 0x02],
            "non_text_key",
            1,
        ),
        (
            "tag",
            "tag 1 (epoch time)",
            &[0xc1, 0x1a, 0x68, 0x1a, 0x4e, 0x00],
            "tag",
            0,
        ),
        (
            "undefined",
            "the simple value undefined",
            &[0xf7],
            "disallowed_simple",
            0,
        ),
        (
            "nan",
            "a half-precision NaN",
            &[0xf9, 0x7e, 0x00],
            "non_finite_float",
            0,
        ),
        (
            "infinity",
            "a half-precision +Infinity",
            &[0xf9, 0x7c, 0x00],
            "non_finite_float",
            0,
        ),
        (
            "negative_zero",
            "-0.0",
            &[0xf9, 0x80, 0x00],
            "negative_zero",
            0,
        ),
        (
            "integral_float",
            "1.0 as a float (must be the integer 1)",
            &[0xf9, 0x3c, 0x00],
            "integral_float",
            0,
        ),
        (
            "non_shortest_float",
            "1.5 as binary32 (fits binary16)",
            &[0xfa, 0x3f, 0xc0, 0x00, 0x00],
            "non_shortest_float",
            0,
        ),
        (
            "invalid_utf8",
            "text holding the bytes c3 28",
            &[0x62, 0xc3, 0x28],
            "invalid_utf8",
            1,
        ),
        (
            "trailing_bytes",
            "a second item after the first",
            &[0x01, 0x01],
            "trailing_bytes",
            1,
        ),
    ];
    for (name, description, bytes, rule, offset) in cases {
        g.cbor(name, description, bytes.to_vec(), Some((rule, offset)));
    }
    g.cbor(
        "truncated",
        "a 2-byte string with 1 byte present (the offset names the head that claims too much)",
        vec![0x62, 0x61],
        Some(("truncated", 0)),
    );
}

/// Keyring files (CLI.md): a good one, and one refusal per P2/P5 rule a
/// key line can break. A refused line refuses the whole file.
fn keyring_cases(g: &mut Gen) {
    let line = |key: &[u8; 32], sigil: &Sigil| {
        let mut buf = [0u8; 52];
        format!("{} ed25519 {}\n", sigil.write_str(&mut buf), hex(key))
    };
    let named = |key: &[u8; 32]| line(key, &Sigil::from_key(key, SigilForm::Default));
    let public = |g: &Gen, name: &str| *g.key(name).public_key().as_bytes();
    let three = format!(
        "# three pinned keys\n{}\n{}{}",
        named(&public(g, "alice")),
        named(&public(g, "bob")),
        named(&public(g, "carol"))
    );
    let mixed = forge::mixed_order_key(1);
    let cases: [(&str, &str, String, KeyringExpect); 4] = [
        (
            "keyring_three_keys",
            "three key lines, a comment and a blank line",
            three,
            KeyringExpect {
                valid: true,
                keys: Some(3),
                line: None,
                error: None,
            },
        ),
        (
            "keyring_mixed_order_key",
            "line 2: a canonical key of mixed order ([0x1234567]B + an order-8 point), \
             under its own sigil: refused, not of prime order (P5 revision 2)",
            format!("{}{}", named(&public(g, "alice")), named(&mixed)),
            KeyringExpect {
                valid: false,
                keys: None,
                line: Some(2),
                error: Some("torsion".into()),
            },
        ),
        (
            "keyring_small_order_key",
            "an order-8 point under its own sigil: refused (P5)",
            named(&forge::small_order_key(1)),
            KeyringExpect {
                valid: false,
                keys: None,
                line: Some(1),
                error: Some("small_order".into()),
            },
        ),
        (
            "keyring_sigil_of_another_key",
            "bob's key under alice's sigil (P2)",
            line(
                &public(g, "bob"),
                &Sigil::from_key(&public(g, "alice"), SigilForm::Default),
            ),
            KeyringExpect {
                valid: false,
                keys: None,
                line: Some(1),
                error: Some("sigil_mismatch".into()),
            },
        ),
    ];
    for (name, description, text, expect) in cases {
        let input = format!("cases/keyring/{name}.pub");
        g.cases.push(Case::Keyring {
            name: name.into(),
            description: description.into(),
            input: input.clone(),
            expect,
        });
        g.files.insert(input, text.into_bytes());
    }
}

fn sigil_cases(g: &mut Gen) {
    for name in ["alice", "bob", "carol"] {
        for form in SigilForm::ALL {
            let s = g.sigil(name, form);
            let expect = SigilExpect {
                valid: true,
                form: Some(form.name().into()),
                key: Some(name.into()),
                error: None,
            };
            g.sigil_case(
                &format!("derive_{name}_{}", form.name()),
                &format!("the {} sigil of {name}'s key", form.name()),
                &s,
                expect,
            );
        }
    }
    let bad = |error: &str| SigilExpect {
        valid: false,
        form: None,
        key: None,
        error: Some(error.into()),
    };
    let alice = g.sigil("alice", SigilForm::Default);
    let body = alice.trim_start_matches("sigil:");
    g.sigil_case(
        "upper_case",
        "the default sigil in upper case",
        &format!("sigil:{}", body.to_uppercase()),
        bad("character"),
    );
    g.sigil_case(
        "padding",
        "base32 padding appended",
        &format!("{alice}======"),
        bad("character"),
    );
    g.sigil_case(
        "too_short",
        "one character missing",
        &alice[..alice.len() - 1],
        bad("length"),
    );
    g.sigil_case(
        "too_long",
        "one character too many",
        &format!("{alice}a"),
        bad("length"),
    );
    // 26 characters carry 130 bits for 128: the last character's low 2 bits must be zero.
    let alphabet = b"abcdefghijklmnopqrstuvwxyz234567";
    let last = alice.as_bytes()[alice.len() - 1];
    let v = alphabet.iter().position(|&c| c == last).unwrap_or(0);
    let with_bits = alphabet[(v & !3) | 1] as char;
    g.sigil_case(
        "trailing_bits",
        "the last character's unused low bits set",
        &format!("{}{with_bits}", &alice[..alice.len() - 1]),
        bad("trailing_bits"),
    );
    g.sigil_case(
        "prefix",
        "a wrong prefix",
        &format!("sigl:{body}"),
        bad("prefix"),
    );
    g.sigil_case(
        "spec_example",
        "the spec's illustrative sigil (has '9', and 22 characters)",
        "sigil:m7zr4hb2qa6kpl9xn3qg4w",
        bad("character"),
    );
    g.sigil_case(
        "long_prefix_default_length",
        "sigil:long: with a default-form body",
        &format!("sigil:long:{body}"),
        bad("length"),
    );
    for r in herald_core::Reserved::ALL {
        let expect = SigilExpect {
            valid: true,
            form: Some("reserved".into()),
            key: None,
            error: None,
        };
        g.sigil_case(
            &format!("reserved_{}", r.as_str().trim_start_matches("sigil:")),
            "a reserved name (spec §9)",
            r.as_str(),
            expect,
        );
    }
}

fn envelope_cases(g: &mut Gen) {
    let all = ["alice", "bob", "carol"];
    let b = |e: &Envelope| e.as_bytes().to_vec();

    // Honest traces.
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

    // Multi-signature in every non-origin scope, each by its own key.
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
    let approved = g.cosign(&g0, "human", Scope::HumanApproval, None);
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
        &[b(&g0)],
        &all,
        &[Scope::HumanApproval],
        vec![partial(&[(R::RequiredSignatureMissing, None)])],
    );

    // Forgery and tampering.
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
            &[b(&g0), tampered],
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

    // The chain.
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
        &[b(&g0), b(&other_genesis), b(&cross)],
        &all,
        vec![valid(), valid(), invalid(&[(R::TraceMismatch, None)])],
    );
    g.verify(
        "missing_parent",
        "a reply whose parent is not in the set",
        &[b(&r1)],
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
        &[b(&g0), b(&r1), b(&r1), same_nonce],
        &all,
        vec![
            valid(),
            valid(),
            invalid(&[(R::ReplayedNonce, None)]),
            invalid(&[(R::ReplayedNonce, None)]),
        ],
    );

    // Order-proof audit (P10, P13 revision 2).
    let mut forged_nonce = forge::map(r1.as_bytes());
    forged_nonce.insert("payload", Value::text("a forgery that copies bob's nonce"));
    let mut not_bob = Signer::new(g.key("carol"), Scope::Origin, Kind::Message.origin_tag());
    not_bob.by = g.sigil("bob", SigilForm::Default);
    let forged_nonce = forge::seal(&mut forged_nonce, &[not_bob]);
    g.verify(
        "forged_nonce_first",
        "a forgery under bob's name copying his nonce, placed before his real envelope: \
         only an envelope whose origin verifies claims a nonce (P10 revision 2)",
        &[forged_nonce, b(&g0), b(&r1)],
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
        &[junk_genesis, b(&g0), b(&r1)],
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

    // Signature rules.
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
        &[b(&g0)],
        &[],
        vec![invalid(&[(R::UnknownSigner, Some(0))])],
    );
    let unknown_cosigner = g.cosign(&g0, "human", Scope::HumanApproval, None);
    g.verify(
        "unknown_cosigner",
        "a co-signer with no pinned key",
        &[b(&unknown_cosigner)],
        &["alice"],
        vec![partial(&[(R::UnknownSigner, Some(1))])],
    );

    // Time (P10, audit mode with a given now).
    let n = g.fresh_nonce();
    let expired = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .expires(NOW - 301)
            .nonce(n)
            .payload(Value::text("too late")),
    );
    let n = g.fresh_nonce();
    let in_skew = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .expires(NOW - 300)
            .nonce(n)
            .payload(Value::text("just in time")),
    );
    let n = g.fresh_nonce();
    let future = g.build(
        "alice",
        EnvelopeBuilder::genesis(NOW + 301)
            .nonce(n)
            .payload(Value::text("from the future")),
    );
    g.verify(
        "expired",
        "expires one second before now - skew, and one exactly at it",
        &[b(&expired), b(&in_skew)],
        &all,
        vec![invalid(&[(R::Expired, None)]), valid()],
    );
    g.verify(
        "future_ts",
        "ts one second after now + skew",
        &[b(&future)],
        &all,
        vec![invalid(&[(R::FutureTs, None)])],
    );

    // Shapes.
    let n = g.fresh_nonce();
    let extra = g.build(
        "alice",
        match EnvelopeBuilder::genesis(T0)
            .nonce(n)
            .extra_field("x_note", Value::text("kept and signed"))
        {
            Ok(b) => b,
            Err(e) => {
                generator_bug(&e.to_string());
                return;
            }
        },
    );
    g.verify(
        "unknown_field",
        "a top-level key outside P3: a warning, the envelope stays valid",
        &[b(&extra)],
        &all,
        vec![expect(Status::Valid, &[(R::UnknownField, None)])],
    );
    let n = g.fresh_nonce();
    let shaky = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .nonce(n)
            .attest("confidence", Value::from_f64(1.5).unwrap_or(Value::Null))
            .attest("temperature", Value::Negative(0)),
    );
    g.verify(
        "attestation_malformed",
        "confidence 1.5 and temperature -1 (P12): warnings only",
        &[b(&shaky)],
        &all,
        vec![expect(
            Status::Valid,
            &[
                (R::AttestationMalformed, None),
                (R::AttestationMalformed, None),
            ],
        )],
    );
    let mut m = forge::map(g0.as_bytes());
    m.remove("nonce");
    let no_nonce = forge::seal(&mut m, &[origin(g)]);
    g.verify(
        "missing_nonce",
        "a signed envelope without nonce (P3)",
        &[no_nonce],
        &all,
        vec![invalid(&[(R::Malformed, None)])],
    );
    let noncanonical = vec![0xa2, 0x61, 0x62, 0x01, 0x61, 0x61, 0x02];
    g.verify(
        "non_canonical_item",
        "a non-canonical CBOR map between two envelopes",
        &[b(&g0), noncanonical, b(&r1)],
        &all,
        vec![valid(), invalid(&[(R::Malformed, None)]), valid()],
    );
    let mut m = forge::map(g0.as_bytes());
    let empty_sigs = forge::seal(&mut m, &[]);
    g.verify(
        "no_signatures",
        "signatures: []",
        &[empty_sigs],
        &all,
        vec![invalid(&[(R::OriginMissing, None)])],
    );

    // Births (P7) and the lineage rules decidable from one envelope.
    let alice_key = g.key("alice").public_key();
    let birth = g.birth(
        "alice",
        &alice_key,
        "a test agent",
        T0,
        &[g.key("bob").sigil(SigilForm::Long)],
        Vec::new(),
    );
    g.verify(
        "birth_self_certified",
        "a birth verified by the key it carries, with no keyring (P7)",
        &[b(&birth)],
        &[],
        vec![valid()],
    );
    let self_lineage = g.birth(
        "alice",
        &alice_key,
        "its own ancestor",
        T0,
        &[g.key("alice").sigil(SigilForm::Long)],
        Vec::new(),
    );
    g.verify(
        "lineage_self",
        "a birth naming its own sigil as a parent (spec §2.3)",
        &[b(&self_lineage)],
        &all,
        vec![invalid(&[(R::LineageSelf, None)])],
    );
    let short_parent = g.birth(
        "alice",
        &alice_key,
        "short parent",
        T0,
        &[g.key("bob").sigil(SigilForm::Short)],
        Vec::new(),
    );
    g.verify(
        "lineage_short_parent",
        "a short sigil as a lineage parent (P2)",
        &[b(&short_parent)],
        &all,
        vec![invalid(&[(R::ShortSigilMisuse, None)])],
    );
    let bob_key = g.key("bob").public_key();
    let n = g.fresh_nonce();
    let wrong_key = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .kind(Kind::Birth)
            .nonce(n)
            .attest("birth", birth_attestation(&bob_key, "not my key", &[])),
    );
    g.verify(
        "birth_key_not_from",
        "a birth whose key does not hash to from (P7)",
        &[b(&wrong_key)],
        &all,
        vec![invalid(&[(R::Malformed, None)])],
    );
    let n = g.fresh_nonce();
    let duress = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .kind(Kind::Duress)
            .nonce(n)
            .payload(Value::Map(Map::new())),
    );
    g.verify(
        "duress_without_witness",
        "a duress envelope lacking its duress_witness signature (P7)",
        &[b(&duress)],
        &all,
        vec![partial(&[(R::RequiredSignatureMissing, None)])],
    );

    // Several faults at once: every one is reported (spec §6).
    let mut m = forge::map(g0.as_bytes());
    m.insert("v", Value::text("herald/0.3"));
    m.insert("x_extra", Value::Bool(true));
    m.insert("expires", Value::Unsigned(NOW - 1000));
    let mut t = Map::new();
    t.insert("type", Value::text("temperature"));
    t.insert("value", Value::Negative(0));
    m.insert("attestations", Value::Array(vec![Value::Map(t)]));
    let sealed = forge::seal(
        &mut m,
        &[
            origin(g),
            Signer::new(g.key("human"), Scope::HumanApproval, b""),
            Signer {
                scope: "bribe".into(),
                tag: b"herald.sig.bribe.v1".to_vec(),
                ..Signer::new(g.key("sandbox"), Scope::ToolSandbox, b"")
            },
        ],
    );
    let many = forge::edit(&sealed, |m| {
        m.insert("id", Value::Bytes(vec![1; 32]));
        if let Some(Value::Array(mut sigs)) = m.get("signatures").cloned() {
            if let Some(Value::Map(s)) = sigs.get_mut(1) {
                s.insert("sig", Value::Bytes(vec![0x55; 64]));
            }
            m.insert("signatures", Value::Array(sigs));
        }
    });
    g.verify(
        "several_faults",
        "wrong version, forged id, expired, unknown field, malformed attestation, a bad co-signature and an unknown scope",
        &[many],
        &["alice", "human", "sandbox"],
        vec![invalid(&[
            (R::UnsupportedVersion, None),
            (R::IdMismatch, None),
            (R::GenesisTraceMismatch, None),
            (R::Expired, None),
            (R::UnknownField, None),
            (R::AttestationMalformed, None),
            (R::BadSignature, Some(1)),
            (R::UnknownScope, Some(2)),
        ])],
    );
}

/// Alice's honest origin signature over a message.
fn origin(g: &Gen) -> Signer<'_> {
    Signer::new(g.key("alice"), Scope::Origin, Kind::Message.origin_tag())
}

fn lifecycle_cases(g: &mut Gen) {
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

fn receive_cases(g: &mut Gen) {
    let day = 86_400;
    let now = NOW + 40 * day;
    let n = g.fresh_nonce();
    let fresh = g.build(
        "alice",
        EnvelopeBuilder::genesis(now - 10)
            .nonce(n)
            .payload(Value::text("live")),
    );
    let n = g.fresh_nonce();
    let stale = g.build(
        "alice",
        EnvelopeBuilder::genesis(now - 31 * day)
            .nonce(n)
            .payload(Value::text("a month old, no expires")),
    );
    let n = g.fresh_nonce();
    let old_but_expiring = g.build(
        "alice",
        EnvelopeBuilder::genesis(now - 31 * day)
            .expires(now + day)
            .nonce(n)
            .payload(Value::text("old, but expires later")),
    );
    let mut inputs = Vec::new();
    let mut expects = Vec::new();
    for (i, (e, want)) in [
        (&fresh, valid()),
        (&fresh, invalid(&[(R::ReplayedNonce, None)])),
        (&stale, invalid(&[(R::Stale, None)])),
        (&old_but_expiring, valid()),
    ]
    .into_iter()
    .enumerate()
    {
        let rel = format!("cases/receive/live_reception-{i}.cbor");
        g.files.insert(rel.clone(), e.as_bytes().to_vec());
        inputs.push(rel);
        expects.push(want);
    }
    g.cases.push(Case::Receive {
        name: "live_reception".into(),
        description: "live mode with a fresh cache: a valid envelope, its replay, a stale one (no expires, 31 days old), an old one whose expires is ahead (P10)".into(),
        inputs,
        keyring: vec!["alice".into()],
        now,
        expect: expects,
    });
}
