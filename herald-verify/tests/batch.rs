//! `batch::verify_all` gives exactly the verdict of ed25519-dalek
//! `verify_strict` (PROFILE.md P5) on every item: the external edge-case sets
//! (ed25519-speccheck, C2SP CCTV, Wycheproof; see vectors/external/README.md)
//! mixed into batches of valid signatures, and a property test that plants
//! bad signatures — byte flips, small-order R, S + L, and cofactored-only
//! signatures over a mixed-order R made by the key holder — at random
//! positions in batches of 1 to 200.

// Tests unwrap and index: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::OnceLock;

use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};
use curve25519_dalek::scalar::Scalar;
use ed25519_dalek::hazmat::ExpandedSecretKey;
use ed25519_dalek::{Signer, SigningKey};
use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Kind, Nonce, SigningKey as HeraldKey};
use herald_verify::batch::{
    BatchOptions, BatchStats, SignedItem, message, verify_all, verify_all_counted, verify_each,
    verify_strict,
};
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
}

impl Owned {
    fn item(&self) -> SignedItem<'_> {
        SignedItem {
            key: &self.key,
            signature: &self.sig,
            message: &self.msg,
        }
    }
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
                }
            })
            .collect()
    })
}

/// Every option combination gives the strict verdict on every item.
fn assert_agrees(items: &[Owned], configs: &[BatchOptions]) -> BatchStats {
    let signed: Vec<SignedItem<'_>> = items.iter().map(Owned::item).collect();
    let expected: Vec<bool> = signed.iter().map(verify_strict).collect();
    assert_eq!(verify_all(&signed), expected, "default options");
    assert_eq!(verify_each(&signed, 0), expected, "verify_each");
    assert_eq!(verify_each(&signed, 1), expected, "verify_each, 1 thread");
    let mut last = BatchStats::default();
    for opts in configs {
        let (got, stats) = verify_all_counted(&signed, opts);
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(
                g,
                e,
                "{} at {i} of {} with {opts:?}",
                items[i].name,
                items.len()
            );
        }
        assert_eq!(
            stats.rejected + stats.single + stats.batched,
            items.len(),
            "{stats:?}"
        );
        last = stats;
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
    let stats = assert_agrees(items, &CONFIGS[..1]);
    assert_eq!(stats.batched, items.len());
    assert_eq!(stats.failed_chunks, 0);
    assert_eq!(stats.chunks, items.len().div_ceil(64));
}

#[test]
fn one_bad_signature_fails_its_chunk_only() {
    let mut items = pool().to_vec();
    items[70].msg.push(0);
    let stats = assert_agrees(
        &items,
        &[BatchOptions {
            chunk: 64,
            threads: 2,
        }],
    );
    assert_eq!(stats.failed_chunks, 1);
}

#[test]
fn empty_input() {
    assert!(verify_all(&[]).is_empty());
    let (v, stats) = verify_all_counted(&[], &BatchOptions::default());
    assert!(v.is_empty());
    assert_eq!(stats, BatchStats::default());
}

#[test]
fn speccheck_cases_in_batches() {
    let cases = speccheck();
    assert_eq!(cases.len(), 12);
    // README: verify_strict accepts exactly case 3.
    let accepted: Vec<usize> = (0..cases.len())
        .filter(|&i| verify_strict(&cases[i].item()))
        .collect();
    assert_eq!(accepted, [3]);
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
    // README: verify_strict accepts exactly 43.
    let strict = vectors.iter().filter(|v| verify_strict(&v.item())).count();
    assert_eq!(strict, 43);
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
    let stats = assert_agrees(&all, &CONFIGS);
    assert!(stats.single > 0 && stats.rejected > 0, "{stats:?}");
}

#[test]
fn wycheproof_cases_in_batches() {
    let cases = wycheproof();
    assert!(cases.len() > 100);
    for (i, case) in cases.iter().enumerate() {
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
    let msg = message(Kind::Message.origin_tag(), &view.body(0).unwrap());
    let sig = view.signatures().next().unwrap().unwrap();
    let pk = key.public_key();
    let mut bad = msg.clone();
    bad[0] ^= 1;
    let items = [
        SignedItem {
            key: pk.as_bytes(),
            signature: sig.sig,
            message: &msg,
        },
        SignedItem {
            key: pk.as_bytes(),
            signature: sig.sig,
            message: &bad,
        },
    ];
    assert_eq!(verify_all(&items), [true, false]);
    assert!(pk.verify(&msg, sig.sig).is_ok());
}

// ---- planted faults ----

/// A signature by the holder of `key` whose R has the torsion component
/// `EIGHT_TORSION[t]` (t in 1..8): valid under the cofactored equation,
/// rejected by verify_strict, and accepted by a batch whenever the batch's
/// coefficient for it kills the torsion.
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

/// A key A + T (T of order 8) and a signature under it that verify_strict
/// accepts: R carries exactly the torsion −[k]T, found by trying nonces.
fn mixed_key_valid_signature(seed: u8, msg: &[u8]) -> ([u8; 32], [u8; 64]) {
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
    SPlusL,
    TorsionR,
    MixedKeyValid,
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
        Fault::SPlusL => add_l(&mut item.sig),
        Fault::TorsionR => {
            let key = signer(pos);
            item.key = key.verifying_key().to_bytes();
            item.sig = torsion_r_signature(&key, &item.msg, (aux % 7) as usize, aux);
        }
        Fault::MixedKeyValid => {
            let (key, sig) = mixed_key_valid_signature((aux % 5) as u8 + 20, &item.msg);
            item.key = key;
            item.sig = sig;
        }
    }
}

#[test]
fn planted_faults_are_what_they_claim() {
    let base = &pool()[3];
    let verdict = |f: Fault, aux: u64| {
        let mut item = base.clone();
        plant(&mut item, f, aux, 3);
        verify_strict(&item.item())
    };
    for aux in 0..8 {
        assert!(!verdict(Fault::SmallOrderR, aux));
        assert!(!verdict(Fault::TorsionR, aux));
        assert!(verdict(Fault::MixedKeyValid, aux));
    }
    assert!(!verdict(Fault::SPlusL, 0));
    // The torsion-R signature is valid under the cofactored equation, so a
    // plain batch accepts it in some positions: the case the pre-checks exist for.
    let mut plain_batch_accepts = 0;
    for pos in 0..16 {
        let mut items = pool()[..16].to_vec();
        plant(&mut items[pos], Fault::TorsionR, pos as u64, pos);
        let keys: Vec<_> = items
            .iter()
            .map(|i| ed25519_dalek::VerifyingKey::from_bytes(&i.key).unwrap())
            .collect();
        let sigs: Vec<_> = items
            .iter()
            .map(|i| ed25519_dalek::Signature::from_bytes(&i.sig))
            .collect();
        let msgs: Vec<&[u8]> = items.iter().map(|i| i.msg.as_slice()).collect();
        if ed25519_dalek::verify_batch(&msgs, &sigs, &keys).is_ok() {
            plain_batch_accepts += 1;
        }
        assert_agrees(&items, &CONFIGS[..1]);
    }
    assert!(
        plain_batch_accepts > 0,
        "expected some plain batches to accept"
    );
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        Just(Fault::FlipSig),
        Just(Fault::FlipMsg),
        Just(Fault::FlipKey),
        Just(Fault::SmallOrderR),
        Just(Fault::SPlusL),
        Just(Fault::TorsionR),
        Just(Fault::MixedKeyValid),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn planted_faults_get_the_strict_verdict(
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
        let signed: Vec<SignedItem<'_>> = items.iter().map(Owned::item).collect();
        let expected: Vec<bool> = signed.iter().map(verify_strict).collect();
        let (got, _) = verify_all_counted(&signed, &BatchOptions { chunk, threads });
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            prop_assert_eq!(g, e, "{} at {}", items[i].name, i);
        }
        prop_assert_eq!(verify_each(&signed, threads), expected);
    }
}
