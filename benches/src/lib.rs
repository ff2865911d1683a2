//! Fixtures shared by the herald-rs benchmarks (docs/performance.md).
//!
//! - [`Parts`]: the typical envelope of the performance issue, the shape of
//!   the spec §3.1 example (`from`, `to`, `parent`, `trace`, `ts`, `nonce`,
//!   `expires`, five attestations, a text payload of 300 bytes or 16 KiB).
//! - [`Fixture`]: one such envelope built and signed, with its `body(E, 0)`,
//!   the signed message `origin tag ‖ body`, the same envelope as a
//!   `herald_core::cbor::Value` and as a `ciborium::Value`, and as a COSE_Sign1.
//! - [`direct`]: a prototype of a direct envelope encoder (no `cbor::Map`),
//!   measured against the builder's route to size the change proposed in
//!   docs/performance.md.
//! - [`TraceSet`]: 10 000 envelopes in 100 traces by 16 signers.
//! - [`ProcessTrace`]: the whole-process benchmark's trace and keyring as
//!   `herald verify` reads them (also the trace `herald verify --json` is
//!   held byte-stable on, herald-cli/tests/verify_json_stable.rs).
//! - [`load`]: many clients over one list of work items, and CPU time from
//!   `/proc` (the server benches).

use herald_core::cbor::{Encoder, Value};
use herald_core::{
    Envelope, EnvelopeBuilder, Kind, Nonce, PublicKey, Sigil, SigilForm, SigningKey,
};

/// `ts` of the first envelope.
pub const T0: u64 = 1_746_432_000;

/// Payload sizes benchmarked: the typical 300-byte text and a 16 KiB one.
pub const PAYLOAD_SIZES: [(usize, &str); 2] = [(300, "300B"), (16 * 1024, "16KiB")];

/// The signing key number `n` (deterministic).
pub fn signer(n: u8) -> SigningKey {
    SigningKey::from_seed(&[n.wrapping_add(1); 32])
}

/// The same key as an ed25519-dalek key (for the raw baselines).
pub fn dalek_signer(n: u8) -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&[n.wrapping_add(1); 32])
}

/// Deterministic ASCII text of `len` bytes.
pub fn payload_text(len: usize) -> String {
    const WORDS: &str = "the answer arrived already grateful and the conduit kept it ";
    WORDS.chars().cycle().take(len).collect()
}

/// The inputs of one envelope, from which both the builder and the direct
/// encoder work.
#[derive(Clone, Debug)]
pub struct Parts {
    /// `(parent id, trace)`, or `None` for a genesis.
    pub parent: Option<([u8; 32], [u8; 32])>,
    /// `to`.
    pub to: Sigil,
    /// `ts`.
    pub ts: u64,
    /// `expires`.
    pub expires: u64,
    /// `nonce`.
    pub nonce: Nonce,
    /// The text payload.
    pub payload: String,
}

/// The attestation model text of the spec example.
const MODEL: &str = "claude-opus-4-7";
/// The tools of the spec example.
const TOOLS: [&str; 2] = ["search", "python"];
/// Temperature and confidence of the spec example.
const TEMPERATURE: f64 = 0.7;
/// See [`TEMPERATURE`].
const CONFIDENCE: f64 = 0.62;
/// The vibe of the spec example.
const VIBE: &str = "the answer arrived already grateful";

fn number(x: f64) -> Value {
    Value::from_f64(x).unwrap_or(Value::Null)
}

impl Parts {
    /// The typical reply: payload of `payload_len` bytes, nonce from `n`.
    pub fn typical(payload_len: usize, n: u64) -> Self {
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&n.to_be_bytes());
        Self {
            parent: Some(([0x11; 32], [0x22; 32])),
            to: signer(200).sigil(SigilForm::Default),
            ts: T0 + n,
            expires: T0 + n + 86_400,
            nonce: Nonce(nonce),
            payload: payload_text(payload_len),
        }
    }

    /// The builder for these parts (everything but the signing key).
    pub fn builder(&self) -> EnvelopeBuilder {
        let b = match self.parent {
            Some((id, trace)) => EnvelopeBuilder::reply_to(id, trace, self.ts),
            None => EnvelopeBuilder::genesis(self.ts),
        };
        b.to(self.to)
            .expires(self.expires)
            .nonce(self.nonce)
            .attest("model", Value::text(MODEL))
            .attest(
                "tools",
                Value::Array(TOOLS.iter().map(|t| Value::text(*t)).collect()),
            )
            .attest("temperature", number(TEMPERATURE))
            .attest("confidence", number(CONFIDENCE))
            .attest("vibe", Value::text(VIBE))
            .payload(Value::text(self.payload.as_str()))
    }

    /// Build and sign: what docs/performance.md calls build + encode + id + origin sign.
    pub fn sign(&self, key: &SigningKey) -> Envelope {
        match self.builder().sign(key) {
            Ok(e) => e,
            // The fixture is valid by construction.
            Err(e) => unreachable!("fixture does not build: {e}"),
        }
    }
}

/// The five attestations of the spec example as `{type, value}` maps, as
/// `EnvelopeBuilder::attest` stores them.
pub fn attestation_values() -> Vec<Value> {
    let att = |ty: &str, v: Value| {
        let mut a = herald_core::cbor::Map::new();
        a.insert("type", Value::text(ty));
        a.insert("value", v);
        Value::Map(a)
    };
    vec![
        att("model", Value::text(MODEL)),
        att(
            "tools",
            Value::Array(TOOLS.iter().map(|t| Value::text(*t)).collect()),
        ),
        att("temperature", number(TEMPERATURE)),
        att("confidence", number(CONFIDENCE)),
        att("vibe", Value::text(VIBE)),
    ]
}

/// The five attestations as `EnvelopeBuilder` keeps them: `(type, value)`.
pub fn attestation_pairs() -> Vec<(String, Value)> {
    attestation_values()
        .into_iter()
        .filter_map(|a| {
            let m = a.as_map()?;
            Some((
                String::from(m.get("type")?.as_text()?),
                m.get("value")?.clone(),
            ))
        })
        .collect()
}

/// One typical envelope and everything the benchmarks compare it with.
#[derive(Debug)]
pub struct Fixture {
    /// The parts it was built from.
    pub parts: Parts,
    /// The signing key (signer 0).
    pub key: SigningKey,
    /// Its public key.
    pub public: PublicKey,
    /// The same key for ed25519-dalek.
    pub dalek: ed25519_dalek::SigningKey,
    /// The envelope.
    pub envelope: Envelope,
    /// `body(E, 0)`.
    pub body: Vec<u8>,
    /// `origin tag ‖ body(E, 0)`: the bytes the origin signature covers.
    pub message: Vec<u8>,
    /// The wire envelope as a herald-core value.
    pub value: Value,
    /// The wire envelope as a ciborium value (same entries, same order).
    pub ciborium: ciborium::Value,
    /// A COSE_Sign1 over [`Fixture::body`] by the same key.
    pub cose: Vec<u8>,
}

impl Fixture {
    /// The typical envelope with a payload of `payload_len` bytes.
    pub fn new(payload_len: usize) -> Self {
        let parts = Parts::typical(payload_len, 1);
        let key = signer(0);
        let envelope = parts.sign(&key);
        let view = envelope.view();
        let body = view.body(0).map(|b| b.to_vec()).unwrap_or_default();
        let mut message = Kind::Message.origin_tag().to_vec();
        message.extend_from_slice(&body);
        let value = Value::decode(envelope.as_bytes()).unwrap_or(Value::Null);
        let ciborium = ciborium::from_reader(envelope.as_bytes()).unwrap_or(ciborium::Value::Null);
        let dalek = dalek_signer(0);
        let cose = cose::sign(&body, &dalek, &key.sigil(SigilForm::Default));
        Self {
            public: key.public_key(),
            parts,
            key,
            dalek,
            envelope,
            body,
            message,
            value,
            ciborium,
            cose,
        }
    }

    /// Check that every representation is of the same envelope: the
    /// ciborium and herald values re-encode to the wire bytes, the direct
    /// encoder reproduces them, and every signature verifies.
    pub fn self_check(&self) -> Result<(), String> {
        let wire = self.envelope.as_bytes();
        if self.value.to_vec() != wire {
            return Err("herald Value does not re-encode to the wire bytes".into());
        }
        let mut c = Vec::new();
        ciborium::into_writer(&self.ciborium, &mut c).map_err(|e| e.to_string())?;
        if c != wire {
            return Err("ciborium does not re-encode to the wire bytes".into());
        }
        if direct::build(&self.parts, &self.key) != wire {
            return Err("the direct encoder differs from the builder".into());
        }
        if !verify_envelope(wire, &self.public) {
            return Err("herald verify fails".into());
        }
        if !cose::verify(&self.cose, &self.dalek.verifying_key()) {
            return Err("COSE verify fails".into());
        }
        Ok(())
    }
}

/// Strict decode, id check and origin-signature verification (P1, P4, P5):
/// the work of target (2), through herald-core's public API.
pub fn verify_envelope(bytes: &[u8], key: &PublicKey) -> bool {
    let Ok(env) = herald_core::EnvelopeRef::decode(bytes) else {
        return false;
    };
    let Some(body) = env.body(0) else {
        return false;
    };
    if body.sha256() != *env.id() {
        return false;
    }
    let Some(Ok(origin)) = env.signatures().next() else {
        return false;
    };
    let tag = env.kind().origin_tag();
    key.verify_parts(origin.sig, |feed| {
        feed(tag);
        body.feed(feed);
    })
    .is_ok()
}

pub mod load;

/// COSE_Sign1 (RFC 9052) with coset and ed25519-dalek: the comparison of target (3).
pub mod cose {
    use coset::{CborSerializable, CoseSign1, CoseSign1Builder, HeaderBuilder, iana};
    use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
    use herald_core::Sigil;

    /// Build, sign and serialise a COSE_Sign1 over `payload`: protected
    /// header `alg: EdDSA`, unprotected `kid` = the signer's sigil (HERALD
    /// names its signer too).
    pub fn sign(payload: &[u8], key: &SigningKey, sigil: &Sigil) -> Vec<u8> {
        let mut buf = [0u8; 52];
        let kid = sigil.write_str(&mut buf).as_bytes().to_vec();
        CoseSign1Builder::new()
            .protected(
                HeaderBuilder::new()
                    .algorithm(iana::Algorithm::EdDSA)
                    .build(),
            )
            .unprotected(HeaderBuilder::new().key_id(kid).build())
            .payload(payload.to_vec())
            .create_signature(b"", |tbs| key.sign(tbs).to_bytes().to_vec())
            .build()
            .to_vec()
            .unwrap_or_default()
    }

    /// Parse a COSE_Sign1 and verify it strictly.
    pub fn verify(bytes: &[u8], key: &VerifyingKey) -> bool {
        let Ok(sign1) = CoseSign1::from_slice(bytes) else {
            return false;
        };
        sign1
            .verify_signature(b"", |sig, tbs| {
                let sig: [u8; 64] = sig.try_into().map_err(|_| ())?;
                key.verify_strict(tbs, &Signature::from_bytes(&sig))
                    .map_err(|_| ())
            })
            .is_ok()
    }
}

/// A prototype direct envelope encoder for the builder (docs/performance.md,
/// "recommended changes"): `body(E, 0)` written straight from the parts in
/// canonical key order, no `cbor::Map`, no `String` keys, no clones; the
/// wire form spliced from the body (insert `id`, fill `signatures`) instead
/// of encoded a second time.
///
/// It covers the fixture's shape (a reply with `to`, `expires`, the five
/// attestations and a text payload, kind `message`); [`Fixture::self_check`]
/// proves it produces the builder's bytes.
pub mod direct {
    use super::{CONFIDENCE, MODEL, Parts, TEMPERATURE, TOOLS, VIBE};
    use herald_core::cbor::{Encoder, Value};
    use herald_core::envelope::{ED25519, VERSION};
    use herald_core::{Envelope, Kind, SigilForm, SigningKey};
    use sha2::{Digest, Sha256};

    /// `body(E, 0)` and the offset of the (empty) `signatures` array in it.
    /// Key order (P1: shorter first, then bytewise): v, to, ts, from,
    /// nonce, trace, parent, expires, payload, signatures, attestations.
    pub fn body(parts: &Parts, from: &str) -> (Vec<u8>, usize) {
        let mut e = Encoder::new(Vec::with_capacity(parts.payload.len() + 512));
        let (parent, trace) = parts.parent.unwrap_or(([0; 32], [0; 32]));
        let mut to = [0u8; 52];
        let to = parts.to.write_str(&mut to);
        let _ = e.map(11);
        let _ = e.text("v").and_then(|()| e.text(VERSION));
        let _ = e.text("to").and_then(|()| e.text(to));
        let _ = e.text("ts").and_then(|()| e.unsigned(parts.ts));
        let _ = e.text("from").and_then(|()| e.text(from));
        let _ = e.text("nonce").and_then(|()| e.bytes(&parts.nonce.0));
        let _ = e.text("trace").and_then(|()| e.bytes(&trace));
        let _ = e.text("parent").and_then(|()| e.bytes(&parent));
        let _ = e.text("expires").and_then(|()| e.unsigned(parts.expires));
        let _ = e.text("payload").and_then(|()| e.text(&parts.payload));
        let _ = e.text("signatures");
        let at = e.sink_mut().len();
        let _ = e.array(0);
        let _ = e.text("attestations").and_then(|()| e.array(5));
        attestation(&mut e, "model", |e| {
            let _ = e.text(MODEL);
        });
        attestation(&mut e, "tools", |e| {
            let _ = e.array(2);
            for t in TOOLS {
                let _ = e.text(t);
            }
        });
        attestation(&mut e, "temperature", |e| {
            let _ = e.float(TEMPERATURE);
        });
        attestation(&mut e, "confidence", |e| {
            let _ = e.float(CONFIDENCE);
        });
        attestation(&mut e, "vibe", |e| {
            let _ = e.text(VIBE);
        });
        (e.into_inner(), at)
    }

    /// As [`body`], but with the payload and the attestation values encoded
    /// from `Value`s, as `EnvelopeBuilder` holds them (each attestation a
    /// `(type, value)` pair): the same encoder calls as the builder's own
    /// `write_body` (owned.rs) for this shape.
    pub fn body_values(
        parts: &Parts,
        from: &str,
        payload: &Value,
        attestations: &[(String, Value)],
    ) -> Vec<u8> {
        let mut e = Encoder::new(Vec::with_capacity(parts.payload.len() + 512));
        let (parent, trace) = parts.parent.unwrap_or(([0; 32], [0; 32]));
        let mut to = [0u8; 52];
        let to = parts.to.write_str(&mut to);
        let _ = e.map(11);
        let _ = e.text("v").and_then(|()| e.text(VERSION));
        let _ = e.text("to").and_then(|()| e.text(to));
        let _ = e.text("ts").and_then(|()| e.unsigned(parts.ts));
        let _ = e.text("from").and_then(|()| e.text(from));
        let _ = e.text("nonce").and_then(|()| e.bytes(&parts.nonce.0));
        let _ = e.text("trace").and_then(|()| e.bytes(&trace));
        let _ = e.text("parent").and_then(|()| e.bytes(&parent));
        let _ = e.text("expires").and_then(|()| e.unsigned(parts.expires));
        let _ = e.text("payload").and_then(|()| payload.encode(&mut e));
        let _ = e.text("signatures").and_then(|()| e.array(0));
        let _ = e
            .text("attestations")
            .and_then(|()| e.array(attestations.len() as u64));
        for (ty, value) in attestations {
            let _ = e.map(2).and_then(|()| e.text("type"));
            let _ = e.text(ty).and_then(|()| e.text("value"));
            let _ = value.encode(&mut e);
        }
        e.into_inner()
    }

    /// One `{type, value}` map (keys in canonical order). Writing to a
    /// `Vec` cannot fail: every error here is `Infallible`.
    fn attestation(e: &mut Encoder<Vec<u8>>, ty: &str, value: impl FnOnce(&mut Encoder<Vec<u8>>)) {
        let _ = e.map(2);
        let _ = e.text("type").and_then(|()| e.text(ty));
        let _ = e.text("value");
        value(e);
    }

    /// Build, hash, sign and splice: the bytes [`Parts::sign`] produces.
    pub fn build(parts: &Parts, key: &SigningKey) -> Vec<u8> {
        let mut from = [0u8; 52];
        let from = key.sigil(SigilForm::Default).write_str(&mut from);
        let (body, at) = body(parts, from);
        let id: [u8; 32] = Sha256::digest(&body).into();
        let tag = Kind::Message.origin_tag();
        let sig = key.sign_parts(|feed| {
            feed(tag);
            feed(&body);
        });
        // Wire: map head + 1 (id), "v" entry, id entry, rest up to the
        // signatures array, one signature map, the rest.
        let v_end = 1 + 2 + 1 + VERSION.len();
        let mut wire = Encoder::new(Vec::with_capacity(body.len() + 160));
        let _ = wire.map(12);
        wire.sink_mut()
            .extend_from_slice(body.get(1..v_end).unwrap_or_default());
        let _ = wire.text("id").and_then(|()| wire.bytes(&id));
        wire.sink_mut()
            .extend_from_slice(body.get(v_end..at).unwrap_or_default());
        // Signature map keys in canonical order: by, alg, sig, scope.
        let _ = wire.array(1).and_then(|()| wire.map(4));
        let _ = wire.text("by").and_then(|()| wire.text(from));
        let _ = wire.text("alg").and_then(|()| wire.text(ED25519));
        let _ = wire.text("sig").and_then(|()| wire.bytes(&sig));
        let _ = wire.text("scope").and_then(|()| wire.text("origin"));
        wire.sink_mut()
            .extend_from_slice(body.get(at + 1..).unwrap_or_default());
        wire.into_inner()
    }

    /// [`build`], then the strict decode that makes it an [`Envelope`]
    /// (the builder's invariant: an `Envelope` is always valid P3).
    pub fn build_checked(parts: &Parts, key: &SigningKey) -> Option<Envelope> {
        Envelope::from_bytes(build(parts, key)).ok()
    }
}

/// The builder's encoding route for one envelope, as owned.rs takes it:
/// assemble a `cbor::Map` (String keys, cloned values) and encode it.
pub fn builder_map_encode(parts: &Parts, from: &Sigil) -> Vec<u8> {
    use herald_core::cbor::Map;
    use herald_core::envelope::VERSION;
    let mut m = Map::new();
    m.insert("v", Value::text(VERSION));
    m.insert("from", Value::Text(format!("{from}")));
    m.insert("to", Value::Text(format!("{}", parts.to)));
    let (parent, trace) = parts.parent.unwrap_or(([0; 32], [0; 32]));
    m.insert("parent", Value::Bytes(parent.to_vec()));
    m.insert("trace", Value::Bytes(trace.to_vec()));
    m.insert("ts", Value::Unsigned(parts.ts));
    m.insert("nonce", Value::Bytes(parts.nonce.0.to_vec()));
    m.insert("expires", Value::Unsigned(parts.expires));
    let att = |ty: &str, v: Value| {
        let mut a = Map::new();
        a.insert("type", Value::text(ty));
        a.insert("value", v);
        Value::Map(a)
    };
    m.insert(
        "attestations",
        Value::Array(vec![
            att("model", Value::text(MODEL)),
            att(
                "tools",
                Value::Array(TOOLS.iter().map(|t| Value::text(*t)).collect()),
            ),
            att("temperature", number(TEMPERATURE)),
            att("confidence", number(CONFIDENCE)),
            att("vibe", Value::text(VIBE)),
        ]),
    );
    m.insert("payload", Value::text(parts.payload.as_str()));
    m.insert("signatures", Value::Array(Vec::new()));
    let mut e = Encoder::new(Vec::new());
    let _ = Value::Map(m).encode(&mut e);
    e.into_inner()
}

/// A set of envelopes forming traces, for the trace-verification benchmark.
#[derive(Debug)]
pub struct TraceSet {
    /// The signers.
    pub keys: Vec<SigningKey>,
    /// The envelopes, in creation order (parents before children).
    pub envelopes: Vec<Envelope>,
}

/// One signature to verify, owned: key, signature, `tag ‖ body(E, 0)`.
#[derive(Clone, Debug)]
pub struct OwnedItem {
    /// Public key.
    pub key: [u8; 32],
    /// Signature.
    pub sig: [u8; 64],
    /// Signed message.
    pub msg: Vec<u8>,
}

impl OwnedItem {
    /// Loaded and prepared for the P5 equation (byte checks, challenge).
    pub fn prepared(&self) -> Option<herald_core::Prepared> {
        let key = herald_core::PublicKey::from_bytes(&self.key).ok()?;
        key.prepare(&self.sig, |feed| feed(&self.msg)).ok()
    }

    /// As ed25519-dalek's key, signature and message (the raw baselines);
    /// `None` if dalek refuses the key.
    pub fn dalek(&self) -> Option<(ed25519_dalek::VerifyingKey, ed25519_dalek::Signature, &[u8])> {
        Some((
            ed25519_dalek::VerifyingKey::from_bytes(&self.key).ok()?,
            ed25519_dalek::Signature::from_bytes(&self.sig),
            self.msg.as_slice(),
        ))
    }
}

impl TraceSet {
    /// `n` envelopes of the typical shape (300-byte payload) in `traces`
    /// traces by `signers` keys; each reply answers an earlier envelope of
    /// its trace.
    pub fn new(n: usize, traces: usize, signers: u8) -> Self {
        Self::with_payload(n, traces, signers, 300)
    }

    /// As [`TraceSet::new`], with payloads of `payload_len` bytes.
    pub fn with_payload(n: usize, traces: usize, signers: u8, payload_len: usize) -> Self {
        let keys: Vec<SigningKey> = (0..signers).map(signer).collect();
        let mut envelopes: Vec<Envelope> = Vec::with_capacity(n);
        let mut by_trace: Vec<Vec<usize>> = vec![Vec::new(); traces];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for i in 0..n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let t = i % traces;
            let mut parts = Parts::typical(payload_len, i as u64);
            parts.parent = by_trace[t]
                .get(state as usize % by_trace[t].len().max(1))
                .map(|&p| {
                    let v = envelopes[p].view();
                    (*v.id(), *v.trace())
                });
            let key = &keys[(state >> 32) as usize % keys.len()];
            by_trace[t].push(envelopes.len());
            envelopes.push(parts.sign(key));
        }
        Self { keys, envelopes }
    }

    /// The origin signature of every envelope as a batch item.
    pub fn origin_items(&self) -> Vec<OwnedItem> {
        self.envelopes
            .iter()
            .map(|e| {
                let v = e.view();
                let sig = v.signatures().next().and_then(Result::ok);
                let key = self
                    .keys
                    .iter()
                    .find(|k| v.from_sigil().names_key(k.public_key().as_bytes()))
                    .map(|k| *k.public_key().as_bytes())
                    .unwrap_or([0; 32]);
                OwnedItem {
                    key,
                    sig: sig.map(|s| *s.sig).unwrap_or([0; 64]),
                    msg: v
                        .body(0)
                        .map(|b| {
                            let mut m = v.kind().origin_tag().to_vec();
                            b.feed(&mut |chunk| m.extend_from_slice(chunk));
                            m
                        })
                        .unwrap_or_default(),
                }
            })
            .collect()
    }

    /// All envelopes as one CBOR sequence.
    pub fn sequence(&self) -> Vec<u8> {
        self.envelopes
            .iter()
            .flat_map(|e| e.as_bytes().iter().copied())
            .collect()
    }

    /// A keyring file pinning every signer, as `herald verify --keyring`
    /// reads it (CLI.md *Keyrings*): one `SIGIL ed25519 HEX` line each.
    pub fn keyring_file(&self) -> String {
        self.keys
            .iter()
            .map(|k| {
                let pk = k.public_key();
                format!(
                    "{} ed25519 {}\n",
                    pk.sigil(SigilForm::Default),
                    data_encoding::HEXLOWER.encode(pk.as_bytes())
                )
            })
            .collect()
    }

    /// A keyring pinning every signer.
    pub fn keyring(&self) -> herald_verify::Keyring {
        let mut k = herald_verify::Keyring::new();
        for key in &self.keys {
            k.insert(key.public_key(), herald_verify::Provenance::Pinned);
        }
        k
    }
}

/// Envelopes in the whole-process benchmark's trace.
pub const PROCESS_N: usize = 10_000;

/// The whole-process benchmark's input (`src/bin/process.rs`,
/// docs/performance.md): one trace of [`PROCESS_N`] envelopes by three
/// signers, 40-byte payloads, written to files as `herald verify` reads
/// them.
#[derive(Debug)]
pub struct ProcessTrace {
    /// The envelopes and their signers.
    pub set: TraceSet,
    /// `DIR/trace.cbor`: the envelopes as one CBOR sequence.
    pub trace: std::path::PathBuf,
    /// `DIR/keyring`: every signer pinned ([`TraceSet::keyring_file`]).
    pub keyring: std::path::PathBuf,
    /// The `--now` it is verified at: one second per envelope after [`T0`].
    pub now: u64,
}

impl ProcessTrace {
    /// Build the trace and write its two files into `dir`.
    pub fn write(dir: &std::path::Path) -> std::io::Result<Self> {
        let set = TraceSet::with_payload(PROCESS_N, 1, 3, 40);
        let trace = dir.join("trace.cbor");
        std::fs::write(&trace, set.sequence())?;
        let keyring = dir.join("keyring");
        std::fs::write(&keyring, set.keyring_file())?;
        Ok(Self {
            set,
            trace,
            keyring,
            now: T0 + PROCESS_N as u64,
        })
    }
}
