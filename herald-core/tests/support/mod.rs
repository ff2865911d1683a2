//! Shared helpers of the envelope tests: three fixed keys, a deterministic
//! RNG, an independent re-implementation of P2 (sigil strings), P4 (body and
//! id) and P5 (tagged signatures) over `herald_core::cbor::Map`, so tests can
//! make envelopes the builder refuses to make, and reason-set assertions.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
// Each test crate uses a different part of this module.
#![allow(dead_code, unreachable_pub)]

use herald_core::cbor::{Map, Value};
use herald_core::rand_core::{Infallible, TryCryptoRng, TryRng};
use herald_core::{
    CheckOptions, Checked, KeyResolver, PublicKey, Reason, ReasonCode, SigningKey, Status, check,
};
use sha2::{Digest, Sha256};

/// A fixed `ts` (2025-05-05T08:00:00Z, the spec's example).
pub const TS: u64 = 1_746_432_000;

pub const ALICE_SEED: [u8; 32] = [0x11; 32];
pub const BOB_SEED: [u8; 32] = [0x22; 32];
pub const CAROL_SEED: [u8; 32] = [0x33; 32];

pub fn alice() -> SigningKey {
    SigningKey::from_seed(&ALICE_SEED)
}

pub fn bob() -> SigningKey {
    SigningKey::from_seed(&BOB_SEED)
}

pub fn carol() -> SigningKey {
    SigningKey::from_seed(&CAROL_SEED)
}

/// A further key, for tests that need more than three distinct signers.
pub fn key(n: u8) -> SigningKey {
    SigningKey::from_seed(&[n; 32])
}

/// The keyring of the three fixed keys.
pub fn keyring() -> [PublicKey; 3] {
    [
        alice().public_key(),
        bob().public_key(),
        carol().public_key(),
    ]
}

/// SplitMix64: deterministic, and good enough to draw test nonces. It is
/// not a CSPRNG; the marker trait is only there because the API asks for it.
#[derive(Clone, Debug)]
pub struct TestRng(u64);

impl TestRng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
}

impl TestRng {
    fn step(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl TryRng for TestRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.step() >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.step())
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dest.chunks_mut(8) {
            let n = self.step().to_le_bytes();
            chunk.copy_from_slice(&n[..chunk.len()]);
        }
        Ok(())
    }
}

impl TryCryptoRng for TestRng {}

// ---------------------------------------------------------------------------
// Independent tables (PROFILE.md P6, P7), written out rather than read from
// the library, so a test comparing them is a cross-check.

/// P7: kind name → origin tag.
pub const ORIGIN_TAGS: [(&str, &[u8]); 9] = [
    ("message", b"herald.origin.v1"),
    ("birth", b"herald.birth.v1"),
    ("molt", b"herald.molt.v1"),
    ("deprecation", b"herald.deprecation.v1"),
    ("refusal", b"herald.refusal.v1"),
    ("duress", b"herald.duress.v1"),
    ("manifest", b"herald.manifest.v1"),
    ("posthumous_citation", b"herald.origin.v1"),
    ("certification", b"herald.certification.v1"),
];

/// P6: non-origin scope name → tag.
pub const SCOPE_TAGS: [(&str, &[u8]); 6] = [
    ("tool_sandbox", b"herald.sig.tool_sandbox.v1"),
    ("conduit_receipt", b"herald.sig.conduit_receipt.v1"),
    ("human_approval", b"herald.sig.human_approval.v1"),
    ("herald_endorsement", b"herald.sig.herald_endorsement.v1"),
    ("lineage_consent", b"herald.sig.lineage_consent.v1"),
    ("duress_witness", b"herald.sig.duress_witness.v1"),
];

pub const MESSAGE_TAG: &[u8] = b"herald.origin.v1";

pub fn origin_tag(kind: &str) -> &'static [u8] {
    ORIGIN_TAGS.iter().find(|(k, _)| *k == kind).unwrap().1
}

pub fn scope_tag(scope: &str) -> &'static [u8] {
    SCOPE_TAGS.iter().find(|(s, _)| *s == scope).unwrap().1
}

// ---------------------------------------------------------------------------
// P2, independently: prefix + lower-case unpadded RFC 4648 base32 of a
// prefix of sha256(key).

pub fn sigil_string(pk: &PublicKey, prefix: &str, n: usize) -> String {
    let digest = Sha256::digest(pk.as_bytes());
    let b32 = data_encoding::BASE32_NOPAD
        .encode(&digest[..n])
        .to_ascii_lowercase();
    format!("{prefix}{b32}")
}

pub fn default_sigil(k: &SigningKey) -> String {
    sigil_string(&k.public_key(), "sigil:", 16)
}

pub fn long_sigil(k: &SigningKey) -> String {
    sigil_string(&k.public_key(), "sigil:long:", 24)
}

pub fn short_sigil(k: &SigningKey) -> String {
    sigil_string(&k.public_key(), "sigil:short:", 10)
}

// ---------------------------------------------------------------------------
// P4 and P5, independently, over an owned map.

/// An envelope under construction, as a plain map: nothing about it is
/// checked, so it can hold anything the profile forbids.
#[derive(Clone, Debug)]
pub struct Raw(pub Map);

impl Raw {
    /// A genesis message from `from` at `ts`: `payload: null`, no signatures.
    pub fn genesis(from: &SigningKey, ts: u64) -> Self {
        let mut m = Map::new();
        m.insert("v", Value::text("herald/0.2"));
        m.insert("from", Value::text(default_sigil(from)));
        m.insert("parent", Value::Null);
        m.insert("ts", Value::Unsigned(ts));
        m.insert("nonce", Value::Bytes(vec![0x5a; 16]));
        m.insert("payload", Value::Null);
        m.insert("signatures", Value::Array(Vec::new()));
        Self(m)
    }

    /// A reply: `parent` and `trace` as given.
    pub fn reply(from: &SigningKey, parent: [u8; 32], trace: [u8; 32], ts: u64) -> Self {
        let mut r = Self::genesis(from, ts);
        r.0.insert("parent", Value::Bytes(parent.to_vec()));
        r.0.insert("trace", Value::Bytes(trace.to_vec()));
        r
    }

    /// Decode existing envelope bytes into a map.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        match Value::decode(bytes).unwrap() {
            Value::Map(m) => Self(m),
            other => panic!("not a map: {other:?}"),
        }
    }

    pub fn set(mut self, key: &str, value: Value) -> Self {
        self.0.insert(key, value);
        self
    }

    pub fn remove(mut self, key: &str) -> Self {
        self.0.remove(key);
        self
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// Whether `parent` is `null` (P4: the body then leaves out `trace`).
    pub fn is_genesis(&self) -> bool {
        matches!(self.0.get("parent"), Some(Value::Null))
    }

    pub fn signatures(&self) -> Vec<Value> {
        match self.0.get("signatures") {
            Some(Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        }
    }

    pub fn set_signatures(&mut self, sigs: Vec<Value>) {
        self.0.insert("signatures", Value::Array(sigs));
    }

    /// `body(E, k)` (P4): without `id`, without `trace` for a genesis, and
    /// `signatures` cut to its first k maps. A missing `signatures` becomes
    /// `[]` only for k = 0.
    pub fn body(&self, k: usize) -> Vec<u8> {
        let mut m = self.0.clone();
        m.remove("id");
        if self.is_genesis() {
            m.remove("trace");
        }
        let sigs: Vec<Value> = self.signatures().into_iter().take(k).collect();
        m.insert("signatures", Value::Array(sigs));
        Value::Map(m).to_vec()
    }

    /// `sha256(body(E, 0))`.
    pub fn computed_id(&self) -> [u8; 32] {
        Sha256::digest(self.body(0)).into()
    }

    /// Write `id` (and a genesis's `trace`) from the current body.
    pub fn reid(mut self) -> Self {
        let id = self.computed_id();
        self.0.insert("id", Value::Bytes(id.to_vec()));
        if self.is_genesis() {
            self.0.insert("trace", Value::Bytes(id.to_vec()));
        }
        self
    }

    /// Ed25519 over `tag || body(E, k)`.
    pub fn signature_over(&self, k: usize, key: &SigningKey, tag: &[u8]) -> [u8; 64] {
        let mut msg = tag.to_vec();
        msg.extend_from_slice(&self.body(k));
        key.sign(&msg)
    }

    /// Append a signature map `{alg: ed25519, by, scope, sig}` signing
    /// `tag || body(E, k)` for the current count k.
    pub fn sign_as(self, key: &SigningKey, by: &str, scope: &str, tag: &[u8]) -> Self {
        self.sign_full(key, "ed25519", by, scope, tag, None)
    }

    /// As [`Raw::sign_as`] with every field chosen.
    pub fn sign_full(
        mut self,
        key: &SigningKey,
        alg: &str,
        by: &str,
        scope: &str,
        tag: &[u8],
        ts: Option<u64>,
    ) -> Self {
        let mut sigs = self.signatures();
        let sig = self.signature_over(sigs.len(), key, tag);
        sigs.push(sig_map(alg, by, scope, &sig, ts));
        self.set_signatures(sigs);
        self
    }

    /// Re-id with `signatures: []`, then add the origin signature by `key`
    /// named as `from` is (its text), under `tag`.
    pub fn seal(mut self, key: &SigningKey, tag: &[u8]) -> Self {
        let by = match self.0.get("from") {
            Some(Value::Text(t)) => t.clone(),
            _ => default_sigil(key),
        };
        self.set_signatures(Vec::new());
        self.reid().sign_as(key, &by, "origin", tag)
    }

    /// Seal as a message (tag `herald.origin.v1`).
    pub fn sealed(self, key: &SigningKey) -> Self {
        self.seal(key, MESSAGE_TAG)
    }

    /// Co-sign in a registered non-origin scope, `by` the default sigil.
    pub fn cosign(self, key: &SigningKey, scope: &str) -> Self {
        let by = default_sigil(key);
        self.sign_as(key, &by, scope, scope_tag(scope))
    }

    /// Edit signature map `k` (after signing: the edit is not re-signed).
    pub fn edit_sig(mut self, k: usize, f: impl FnOnce(&mut Map)) -> Self {
        let mut sigs = self.signatures();
        let Value::Map(m) = &mut sigs[k] else {
            panic!("signature {k} is not a map")
        };
        f(m);
        self.set_signatures(sigs);
        self
    }

    /// Flip one bit of `sig` in signature map `k`.
    pub fn corrupt_sig(self, k: usize) -> Self {
        self.edit_sig(k, |m| {
            let Some(Value::Bytes(b)) = m.get("sig").cloned() else {
                panic!("no sig")
            };
            let mut b = b;
            b[10] ^= 0x01;
            m.insert("sig", Value::Bytes(b));
        })
    }

    pub fn id(&self) -> [u8; 32] {
        match self.0.get("id") {
            Some(Value::Bytes(b)) => b.as_slice().try_into().unwrap(),
            _ => panic!("no id"),
        }
    }

    pub fn bytes(&self) -> Vec<u8> {
        Value::Map(self.0.clone()).to_vec()
    }
}

pub fn sig_map(alg: &str, by: &str, scope: &str, sig: &[u8; 64], ts: Option<u64>) -> Value {
    let mut m = Map::new();
    m.insert("alg", Value::text(alg));
    m.insert("by", Value::text(by));
    m.insert("scope", Value::text(scope));
    m.insert("sig", Value::Bytes(sig.to_vec()));
    if let Some(ts) = ts {
        m.insert("ts", Value::Unsigned(ts));
    }
    Value::Map(m)
}

pub fn text_array(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|s| Value::text(*s)).collect())
}

pub fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(entries.into_iter().collect())
}

pub fn attestation(ty: &str, value: Value) -> Value {
    map(vec![("type", Value::text(ty)), ("value", value)])
}

/// A `birth` attestation value (P7), built by hand.
pub fn birth_value(key: &SigningKey, lineage: &[&str]) -> Value {
    map(vec![
        ("key", Value::Bytes(key.public_key().as_bytes().to_vec())),
        ("description", Value::text("a test agent")),
        ("lineage", text_array(lineage)),
    ])
}

// ---------------------------------------------------------------------------
// Checking.

/// What one check said: the status, every `(code, index)` pair sorted (so
/// duplicates count), and the reasons themselves.
#[derive(Debug)]
pub struct Outcome {
    pub status: Status,
    pub pairs: Vec<(ReasonCode, Option<u32>)>,
    pub reasons: Vec<Reason>,
    pub key_source: Option<herald_core::KeySource>,
    pub decoded: bool,
    pub computed_id: Option<[u8; 32]>,
}

pub fn run(bytes: &[u8], keys: &dyn KeyResolver, opts: &CheckOptions<'_>) -> Outcome {
    let mut reasons = Vec::new();
    let Checked {
        status,
        envelope,
        computed_id,
        key_source,
    } = check(bytes, keys, opts, &mut reasons);
    let mut pairs: Vec<_> = reasons.iter().map(|r| (r.code, r.index)).collect();
    pairs.sort();
    // P13: the status is the worst of the reasons' statuses.
    let worst = reasons
        .iter()
        .map(Reason::status)
        .max()
        .unwrap_or(Status::Valid);
    assert_eq!(status, worst, "status is not derived from the reasons");
    Outcome {
        status,
        pairs,
        reasons,
        key_source,
        decoded: envelope.is_some(),
        computed_id,
    }
}

/// Assert `bytes` checks (keyring of the three keys, `opts`) to exactly
/// `expected` reasons, as a multiset, and to `status`.
#[track_caller]
pub fn expect_with(
    bytes: &[u8],
    keys: &dyn KeyResolver,
    opts: &CheckOptions<'_>,
    status: Status,
    expected: &[(ReasonCode, Option<u32>)],
) -> Outcome {
    let out = run(bytes, keys, opts);
    let mut want = expected.to_vec();
    want.sort();
    assert_eq!(
        out.pairs, want,
        "reasons differ; full reasons: {:#?}",
        out.reasons
    );
    assert_eq!(out.status, status, "status; reasons: {:#?}", out.reasons);
    out
}

/// [`expect_with`] with the three-key keyring and default options.
#[track_caller]
pub fn expect(bytes: &[u8], status: Status, expected: &[(ReasonCode, Option<u32>)]) -> Outcome {
    expect_with(bytes, &keyring(), &CheckOptions::DEFAULT, status, expected)
}
