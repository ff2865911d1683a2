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
mod certification;
mod encoding;
mod fields;
mod forgery;
mod heralds;
mod junk_cosignatures;
mod keyring;
mod lifecycle;
mod proof;
mod receive;
mod sigil;
mod traces;

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
    herald_verify::hex(b)
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
                Ok(v) => lines.push_str(&herald_verify::display_json(v)),
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

    /// A case verified with Heralds: the envelopes, and the verifier's
    /// `(Herald list, log policy, certification items)`.
    fn heralds(
        &mut self,
        name: &str,
        description: &str,
        envs: &[Vec<u8>],
        keyring: &[&str],
        (list, policy, items): (&str, &str, &[herald_verify::CertificationItem]),
        expect: Vec<EnvelopeExpect>,
    ) {
        let at = |ext: &str| format!("cases/heralds/{name}.{ext}");
        let (input, display) = (at("cbor"), at("json"));
        let (heralds, log_policy, certifications) =
            (at("heralds"), at("policy"), at("certifications.cbor"));
        let mut lines = String::new();
        for e in envs {
            if let Ok(v) = herald_core::cbor::decode(e) {
                lines.push_str(&herald_verify::display_json(v));
            }
            lines.push('\n');
        }
        self.files.insert(input.clone(), envs.concat());
        self.files.insert(display.clone(), lines.into_bytes());
        self.files.insert(heralds.clone(), list.as_bytes().to_vec());
        self.files
            .insert(log_policy.clone(), policy.as_bytes().to_vec());
        self.files.insert(
            certifications.clone(),
            herald_verify::CertificationItem::encode_sequence(items),
        );
        self.cases.push(Case::Heralds {
            name: name.into(),
            description: description.into(),
            input,
            display,
            keyring: keyring.iter().map(|s| (*s).into()).collect(),
            heralds,
            log_policy,
            certifications,
            now: NOW,
            skew: 300,
            required_scopes: Vec::new(),
            expect,
        });
    }

    /// A live-reception case: each envelope received in order at `now`
    /// with a fresh cache, and what it must come out as.
    fn receive(
        &mut self,
        name: &str,
        description: &str,
        steps: &[(Vec<u8>, EnvelopeExpect)],
        keyring: &[&str],
        now: u64,
    ) {
        let mut inputs = Vec::new();
        let mut expect = Vec::new();
        for (i, (bytes, want)) in steps.iter().enumerate() {
            let rel = format!("cases/receive/{name}-{i}.cbor");
            self.files.insert(rel.clone(), bytes.clone());
            inputs.push(rel);
            expect.push(want.clone());
        }
        self.cases.push(Case::Receive {
            name: name.into(),
            description: description.into(),
            inputs,
            keyring: keyring.iter().map(|s| (*s).into()).collect(),
            now,
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
    encoding::encoding_cases(&mut g);
    sigil::sigil_cases(&mut g);
    keyring::keyring_cases(&mut g);
    envelope_cases(&mut g);
    lifecycle::lifecycle_cases(&mut g);
    receive::receive_cases(&mut g);
    proof::proof_cases(&mut g)?;
    // Last, so that every earlier case keeps its nonces and bytes.
    bundle::bundle_cases(&mut g)?;
    junk_cosignatures::junk_cosignature_cases(&mut g);
    fields::handles(&mut g);
    certification::certification_cases(&mut g);
    heralds::herald_cases(&mut g)?;

    let mut keys = Vec::new();
    for name in KEY_NAMES {
        let k = g.key(name).public_key();
        let keyring_file = format!("keys/{name}.pub");
        let line = herald_verify::key_line(&k) + "\n";
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

/// Alice's honest origin signature over a message.
fn origin(g: &Gen) -> Signer<'_> {
    Signer::new(g.key("alice"), Scope::Origin, Kind::Message.origin_tag())
}

/// The names of the three keys most cases pin.
const ALL: [&str; 3] = ["alice", "bob", "carol"];

/// An envelope's bytes.
fn bytes_of(e: &Envelope) -> Vec<u8> {
    e.as_bytes().to_vec()
}

/// The envelopes the later envelope cases build on.
struct Base {
    /// Alice's genesis to Bob.
    g0: Envelope,
    /// Bob's reply to it.
    r1: Envelope,
}

/// Every single-envelope and set case (spec §3, §6; P3–P6, P10, P11, P13),
/// in the order that fixes their nonces and bytes.
fn envelope_cases(g: &mut Gen) {
    let base = traces::honest(g);
    traces::multisig(g, &base);
    forgery::forgery(g, &base);
    traces::chain(g, &base);
    traces::order(g, &base);
    forgery::signature_rules(g, &base);
    fields::time(g);
    fields::shapes(g, &base);
    fields::births(g);
    fields::faults(g, &base);
}
