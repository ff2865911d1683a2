//! `verify_prepared` gives exactly the verdict of single verification
//! (PROFILE.md P5, revision 2) on every item: the external edge-case sets
//! (ed25519-speccheck, C2SP CCTV, Wycheproof; see vectors/external/README.md),
//! whose verdicts come from each set's own labels and flags, mixed into
//! batches of valid signatures; and a property test that plants bad and
//! unusual signatures — byte flips, small-order and non-canonical R, S + L,
//! mixed-order R made by the key holder (valid), mixed-order keys (refused)
//! — at random positions in batches of 1 to 200.

// Tests unwrap and index: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;
use std::sync::OnceLock;

use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};
use curve25519_dalek::scalar::Scalar;
use ed25519_dalek::hazmat::ExpandedSecretKey;
use ed25519_dalek::{Signer, SigningKey};
use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Kind, Nonce, Prepared, PublicKey, SigningKey as HeraldKey};
use herald_verify::internal::{BatchCounts, verify_all_counted};
use herald_verify::{BatchOptions, verify_prepared};
use proptest::prelude::*;
use serde_json::Value as Json;
use sha2::{Digest, Sha512};

const SPECCHECK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../vectors/external/ed25519-speccheck/cases.json"
);
const CCTV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../vectors/external/ed25519-cctv/ed25519vectors.json"
);
const WYCHEPROOF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../vectors/external/ed25519-wycheproof/ed25519_test.json"
);

/// L, the prime order of the base point, little-endian.
const L: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

#[derive(Clone, Debug)]
struct Owned {
    key: [u8; 32],
    sig: [u8; 64],
    msg: Vec<u8>,
    name: String,
    /// CCTV's flags (empty elsewhere).
    flags: BTreeSet<&'static str>,
    /// Wycheproof's label (true elsewhere).
    valid: bool,
}

impl Owned {
    /// The verdict of single verification: load the key (P5 refuses some),
    /// then `PublicKey::verify`.
    fn single(&self) -> bool {
        PublicKey::from_bytes(&self.key).is_ok_and(|k| k.verify(&self.msg, &self.sig).is_ok())
    }

    /// Loaded and prepared, or `None` when a key or byte check refuses it.
    fn prepared(&self) -> Option<Prepared> {
        let key = PublicKey::from_bytes(&self.key).ok()?;
        key.prepare(&self.sig, |feed| feed(&self.msg)).ok()
    }
}

/// The verdicts of `items` with the prepared ones in batches, and what the
/// batches did.
fn batched(items: &[Owned], opts: &BatchOptions) -> (Vec<bool>, BatchCounts) {
    let prepared: Vec<Option<Prepared>> = items.iter().map(Owned::prepared).collect();
    let list: Vec<Prepared> = prepared.iter().flatten().copied().collect();
    let (verdicts, counts) = verify_all_counted(&list, opts);
    let mut verdicts = verdicts.into_iter();
    let out = prepared
        .iter()
        .map(|p| p.is_some() && verdicts.next().unwrap())
        .collect();
    assert!(verdicts.next().is_none());
    (out, counts)
}

fn load(path: &str) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn hex_array<const N: usize>(v: &Json, key: &str) -> Option<[u8; N]> {
    hex::decode(v[key].as_str()?).ok()?.try_into().ok()
}

fn speccheck() -> Vec<Owned> {
    load(SPECCHECK)
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, c)| Owned {
            key: hex_array(c, "pub_key").unwrap(),
            sig: hex_array(c, "signature").unwrap(),
            msg: hex::decode(c["message"].as_str().unwrap()).unwrap(),
            name: format!("speccheck #{i}"),
            flags: BTreeSet::new(),
            valid: false,
        })
        .collect()
}

fn cctv() -> Vec<Owned> {
    load(CCTV)
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Owned {
            key: hex_array(c, "key").unwrap(),
            sig: hex_array(c, "sig").unwrap(),
            // CCTV messages are ASCII strings, not hex (README §2–4).
            msg: c["msg"].as_str().unwrap().as_bytes().to_vec(),
            name: format!("cctv #{} {}", c["number"], c["flags"]),
            // Null for vector 305: the empty set (README).
            flags: c["flags"]
                .as_array()
                .map(|f| {
                    f.iter()
                        .map(|x| &*x.as_str().unwrap().to_owned().leak())
                        .collect()
                })
                .unwrap_or_default(),
            valid: false,
        })
        .collect()
}

/// Wycheproof v1 cases with a 32-byte key and a 64-byte signature (the
/// others cannot be a `SignedItem` and are rejected when parsed).
fn wycheproof() -> Vec<Owned> {
    let mut out = Vec::new();
    for group in load(WYCHEPROOF)["testGroups"].as_array().unwrap() {
        let Some(key) = hex_array::<32>(&group["publicKey"], "pk") else {
            continue;
        };
        for t in group["tests"].as_array().unwrap() {
            let Some(sig) = hex_array::<64>(t, "sig") else {
                continue;
            };
            out.push(Owned {
                key,
                sig,
                msg: hex::decode(t["msg"].as_str().unwrap()).unwrap(),
                name: format!("wycheproof tcId {}", t["tcId"]),
                flags: BTreeSet::new(),
                valid: t["result"] == "valid",
            });
        }
    }
    out
}

fn signer(i: usize) -> SigningKey {
    SigningKey::from_bytes(&[(i % 8) as u8 + 1; 32])
}

/// 200 valid signatures by 8 keys over messages of 0 to 300 bytes.
fn pool() -> &'static [Owned] {
    static POOL: OnceLock<Vec<Owned>> = OnceLock::new();
    POOL.get_or_init(|| {
        (0..200)
            .map(|i| {
                let key = signer(i);
                let msg: Vec<u8> = (0..(i * 37) % 301).map(|j| (i * 7 + j) as u8).collect();
                Owned {
                    key: key.verifying_key().to_bytes(),
                    sig: key.sign(&msg).to_bytes(),
                    msg,
                    name: format!("valid #{i}"),
                    flags: BTreeSet::new(),
                    valid: true,
                }
            })
            .collect()
    })
}

/// Every option combination gives the single verdict on every item;
/// returns what the batches did with the last one.
fn assert_agrees(items: &[Owned], configs: &[BatchOptions]) -> BatchCounts {
    let expected: Vec<bool> = items.iter().map(Owned::single).collect();
    let mut last = BatchCounts::default();
    for opts in configs {
        let (got, counts) = batched(items, opts);
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(
                g,
                e,
                "{} at {i} of {} with {opts:?}",
                items[i].name,
                items.len()
            );
        }
        last = counts;
    }
    last
}

const CONFIGS: [BatchOptions; 4] = [
    BatchOptions {
        chunk: 64,
        threads: 2,
    },
    BatchOptions {
        chunk: 7,
        threads: 3,
    },
    BatchOptions {
        chunk: 1,
        threads: 1,
    },
    BatchOptions {
        chunk: 256,
        threads: 1,
    },
];

/// `case` at `pos` in a batch of `len` signatures otherwise valid.
fn planted(case: &Owned, len: usize, pos: usize) -> Vec<Owned> {
    let mut items = pool()[..len].to_vec();
    items[pos] = case.clone();
    items
}

#[test]
fn valid_signatures_all_go_through_batches() {
    let items = pool();
    let counts = assert_agrees(items, &CONFIGS[..1]);
    assert_eq!(counts.failed, 0);
    assert_eq!(counts.singles, 0);
    assert_eq!(counts.equations, items.len().div_ceil(64));
}

#[test]
fn one_bad_signature_fails_its_chunk_only() {
    let mut items = pool().to_vec();
    items[70].msg.push(0);
    let counts = assert_agrees(
        &items,
        &[BatchOptions {
            chunk: 64,
            threads: 2,
        }],
    );
    assert_eq!((counts.failed, counts.singles), (1, 64));
}

/// A failed chunk larger than the retry piece (64) is batched again in
/// pieces: a lone bad signature then fails its chunk and its piece only,
/// only that piece is verified one by one, and no signature is verified
/// alone twice.
#[test]
fn a_failed_chunk_is_batched_again_in_pieces() {
    let one_chunk = |chunk| [BatchOptions { chunk, threads: 1 }];
    let counts = |equations, failed, singles| BatchCounts {
        equations,
        failed,
        singles,
    };
    let mut items = pool().to_vec();
    items[130].msg.push(0);
    // 200 in one chunk: the chunk, then pieces of 64, 64, 64 and 8; the
    // third holds the bad one.
    assert_eq!(assert_agrees(&items, &one_chunk(200)), counts(1 + 4, 2, 64));
    // Two bad signatures in two pieces: both pieces fail, the others hold.
    items[3].sig[40] ^= 1;
    assert_eq!(
        assert_agrees(&items, &one_chunk(200)),
        counts(1 + 4, 3, 128)
    );
    // The last piece, 8 long, holds one: 8 more alone.
    items[197].sig[40] ^= 1;
    assert_eq!(
        assert_agrees(&items, &one_chunk(200)),
        counts(1 + 4, 4, 136)
    );
    // A chunk of at most 64 that fails goes one by one at once.
    assert_eq!(
        assert_agrees(&items[..64], &one_chunk(64)),
        counts(1, 1, 64)
    );
}

#[test]
fn empty_input() {
    assert!(verify_prepared(&[]).is_empty());
    let (v, counts) = verify_all_counted(&[], &BatchOptions::default());
    assert!(v.is_empty());
    assert_eq!(counts, BatchCounts::default());
}

#[test]
fn speccheck_cases_in_batches() {
    let cases = speccheck();
    assert_eq!(cases.len(), 12);
    // README and P5 revision 2: none of the twelve is accepted.
    assert!(cases.iter().all(|c| !c.single()));
    for case in &cases {
        for (len, pos) in [(1, 0), (8, 0), (8, 7), (65, 31), (65, 64), (130, 129)] {
            assert_agrees(&planted(case, len, pos), &CONFIGS);
        }
    }
    // All twelve in one batch, between valid signatures.
    let mut all = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        all.extend_from_slice(&pool()[i * 5..i * 5 + 5]);
        all.push(case.clone());
    }
    assert_agrees(&all, &CONFIGS);
}

#[test]
fn cctv_vectors_in_batches() {
    let vectors = cctv();
    assert_eq!(vectors.len(), 914);
    // P5 revision 2 accepts exactly the vectors whose flags are a subset
    // of {low_order_component_R, low_order_residue}.
    let allowed = BTreeSet::from(["low_order_component_R", "low_order_residue"]);
    let mut residue_in_batches = 0;
    for v in &vectors {
        assert_eq!(v.single(), v.flags.is_subset(&allowed), "{}", v.name);
        if v.single() && v.flags.contains("low_order_residue") {
            residue_in_batches += 1;
        }
    }
    assert!(residue_in_batches > 0);
    // Each vector alone in a batch of 8, at a position that moves.
    for (i, v) in vectors.iter().enumerate() {
        assert_agrees(&planted(v, 8, i % 8), &CONFIGS[..2]);
    }
    // All of them interleaved with valid signatures in one input.
    let mut all = Vec::new();
    for (i, v) in vectors.iter().enumerate() {
        all.extend_from_slice(&pool()[(i * 3) % 197..(i * 3) % 197 + 3]);
        all.push(v.clone());
    }
    assert_agrees(&all, &CONFIGS);
}

#[test]
fn wycheproof_cases_in_batches() {
    let cases = wycheproof();
    assert!(cases.len() > 100);
    for (i, case) in cases.iter().enumerate() {
        assert_eq!(case.single(), case.valid, "{}", case.name);
        assert_agrees(&planted(case, 5, i % 5), &CONFIGS[..2]);
    }
}

#[test]
fn herald_origin_signatures() {
    let key = HeraldKey::from_seed(&[9; 32]);
    let env = EnvelopeBuilder::genesis(1_746_432_000)
        .nonce(Nonce([3; 16]))
        .payload(Value::text("batch"))
        .sign(&key)
        .unwrap();
    let view = env.view();
    let body = view.body(0).unwrap();
    let sig = view.signatures().next().unwrap().unwrap();
    let pk = key.public_key();
    let good = pk
        .prepare(sig.sig, |feed| {
            feed(Kind::Message.origin_tag());
            body.feed(feed);
        })
        .unwrap();
    // The same signature over the body fed in another tag: a wrong message.
    let bad = pk
        .prepare(sig.sig, |feed| {
            feed(Kind::Birth.origin_tag());
            body.feed(feed);
        })
        .unwrap();
    assert_eq!(verify_prepared(&[good, bad]), [true, false]);
}

// ---- planted faults ----

/// A signature by the holder of `key` whose R has the torsion component
/// `EIGHT_TORSION[t % 7 + 1]`: valid under the cofactored equation (P5
/// revision 2), rejected by the cofactorless one.
fn torsion_r_signature(key: &SigningKey, msg: &[u8], t: usize, nonce: u64) -> [u8; 64] {
    let a = ExpandedSecretKey::from(key.as_bytes()).scalar;
    let r = Scalar::from(nonce.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let big_r = (ED25519_BASEPOINT_POINT * r + EIGHT_TORSION[t % 7 + 1]).compress();
    let k = challenge(big_r.as_bytes(), key.verifying_key().as_bytes(), msg);
    let s = r + k * a;
    let mut sig = [0u8; 64];
    sig[..32].copy_from_slice(big_r.as_bytes());
    sig[32..].copy_from_slice(s.as_bytes());
    sig
}

/// A key A + T (T of order 8) and a signature under it that satisfies the
/// cofactorless equation (R carries exactly the torsion −[k]T, found by
/// trying nonces): what `verify_strict` accepts, and P5 revision 2 refuses
/// at load.
fn mixed_key_signature(seed: u8, msg: &[u8]) -> ([u8; 32], [u8; 64]) {
    let a = ExpandedSecretKey::from(&[seed; 32]).scalar;
    let torsion = EIGHT_TORSION[1];
    let big_a = (ED25519_BASEPOINT_POINT * a + torsion).compress();
    for n in 1u64.. {
        let r = Scalar::from(n);
        for t in EIGHT_TORSION {
            let big_r = (ED25519_BASEPOINT_POINT * r + t).compress();
            let k = challenge(big_r.as_bytes(), big_a.as_bytes(), msg);
            if (torsion * k) + t == EIGHT_TORSION[0] {
                let s = r + k * a;
                let mut sig = [0u8; 64];
                sig[..32].copy_from_slice(big_r.as_bytes());
                sig[32..].copy_from_slice(s.as_bytes());
                return (*big_a.as_bytes(), sig);
            }
        }
    }
    unreachable!()
}

fn challenge(r: &[u8; 32], a: &[u8; 32], msg: &[u8]) -> Scalar {
    let mut h = Sha512::new();
    h.update(r);
    h.update(a);
    h.update(msg);
    Scalar::from_hash(h)
}

/// S + L: the same signature with a non-canonical S.
fn add_l(sig: &mut [u8; 64]) {
    let mut carry = 0u16;
    for (b, l) in sig[32..].iter_mut().zip(L) {
        let v = u16::from(*b) + u16::from(l) + carry;
        *b = v as u8;
        carry = v >> 8;
    }
}

#[derive(Clone, Copy, Debug)]
enum Fault {
    FlipSig,
    FlipMsg,
    FlipKey,
    SmallOrderR,
    NonCanonicalR,
    SPlusL,
    TorsionR,
    MixedKey,
}

fn plant(item: &mut Owned, fault: Fault, aux: u64, pos: usize) {
    let byte = (aux % 64) as usize;
    let bit = 1u8 << ((aux >> 8) % 8);
    item.name = format!("{fault:?} ({aux}) at {pos}");
    match fault {
        Fault::FlipSig => item.sig[byte] ^= bit,
        Fault::FlipMsg => {
            if item.msg.is_empty() {
                item.msg.push(bit);
            } else {
                let i = (aux as usize >> 11) % item.msg.len();
                item.msg[i] ^= bit;
            }
        }
        Fault::FlipKey => item.key[byte % 32] ^= bit,
        Fault::SmallOrderR => {
            let r = EIGHT_TORSION[(aux % 8) as usize].compress();
            item.sig[..32].copy_from_slice(r.as_bytes());
        }
        Fault::NonCanonicalR => {
            // y ≥ p (y = p + small) or the sign bit on x = 0: CCTV's
            // non-canonical encodings (README section 2–4).
            const ENCODINGS: [[u8; 32]; 3] = {
                let mut e = [[0xff; 32]; 3];
                e[0][0] = 0xed;
                e[0][31] = 0x7f;
                e[1][0] = 0xee;
                e[2] = [0; 32];
                e[2][0] = 1;
                e[2][31] = 0x80;
                e
            };
            item.sig[..32].copy_from_slice(&ENCODINGS[(aux % 3) as usize]);
        }
        Fault::SPlusL => add_l(&mut item.sig),
        Fault::TorsionR => {
            let key = signer(pos);
            item.key = key.verifying_key().to_bytes();
            item.sig = torsion_r_signature(&key, &item.msg, (aux % 7) as usize, aux);
        }
        Fault::MixedKey => {
            let (key, sig) = mixed_key_signature((aux % 5) as u8 + 20, &item.msg);
            item.key = key;
            item.sig = sig;
        }
    }
}

#[test]
fn planted_faults_are_what_they_claim() {
    let base = &pool()[3];
    let planted_one = |f: Fault, aux: u64| {
        let mut item = base.clone();
        plant(&mut item, f, aux, 3);
        item
    };
    let strict = |o: &Owned| {
        ed25519_dalek::VerifyingKey::from_bytes(&o.key).is_ok_and(|k| {
            k.verify_strict(&o.msg, &ed25519_dalek::Signature::from_bytes(&o.sig))
                .is_ok()
        })
    };
    for aux in 0..8 {
        assert!(!planted_one(Fault::SmallOrderR, aux).single());
        assert!(!planted_one(Fault::NonCanonicalR, aux).single());
        // Valid cofactored only: P5 revision 2 accepts, verify_strict not.
        let torsion_r = planted_one(Fault::TorsionR, aux);
        assert!(torsion_r.single());
        assert!(!strict(&torsion_r));
        // A mixed-order key: verify_strict accepts, P5 refuses the key.
        let mixed = planted_one(Fault::MixedKey, aux);
        assert!(strict(&mixed));
        assert_eq!(
            PublicKey::from_bytes(&mixed.key),
            Err(herald_core::KeyError::Torsion)
        );
    }
    assert!(!planted_one(Fault::SPlusL, 0).single());
    // Torsion-R signatures in every position of a batch: all accepted.
    for pos in 0..16 {
        let mut items = pool()[..16].to_vec();
        plant(&mut items[pos], Fault::TorsionR, pos as u64, pos);
        let counts = assert_agrees(&items, &CONFIGS[..1]);
        assert_eq!(counts.failed, 0);
    }
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        Just(Fault::FlipSig),
        Just(Fault::FlipMsg),
        Just(Fault::FlipKey),
        Just(Fault::SmallOrderR),
        Just(Fault::NonCanonicalR),
        Just(Fault::SPlusL),
        Just(Fault::TorsionR),
        Just(Fault::MixedKey),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn planted_faults_get_the_single_verdict(
        len in 1usize..=200,
        plants in proptest::collection::vec((any::<prop::sample::Index>(), fault(), any::<u64>()), 0..8),
        chunk in prop_oneof![Just(1usize), Just(5), Just(16), Just(64), Just(256)],
        threads in 1usize..=3,
    ) {
        let mut items = pool()[..len].to_vec();
        for (at, f, aux) in &plants {
            let pos = at.index(len);
            plant(&mut items[pos], *f, *aux, pos);
        }
        let expected: Vec<bool> = items.iter().map(Owned::single).collect();
        let (got, _) = batched(&items, &BatchOptions { chunk, threads });
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            prop_assert_eq!(g, e, "{} at {}", items[i].name, i);
        }
    }
}
