//! Keys (PROFILE.md P5, revision 2): non-point, non-canonical, small-order
//! and mixed-order public keys refused at load, R with a torsion component
//! accepted by the cofactored equation and R of small order refused by its
//! bytes, signing keys whose `Debug` shows the sigil and never the secret,
//! and seeds that round-trip inside `Zeroizing`.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;

use herald_core::{KeyError, PublicKey, SigilForm, SigningKey};
use herald_testkit::rng::CountingRng;
use sha2::{Digest, Sha512};
use zeroize::Zeroizing;

/// The 8 points of small order (dividing 8) on edwards25519, canonically
/// encoded. Source: C2SP CCTV `ed25519/ed25519vectors.json` (copy in
/// vectors/external/ed25519-cctv/), the keys of the vectors flagged
/// `low_order_A` without `non_canonical_A`; the same list appears in
/// ed25519-speccheck and in curve25519-dalek's `EIGHT_TORSION`. The test
/// below re-derives it from the file.
const SMALL_ORDER: [&str; 8] = [
    // identity (0, 1): order 1
    "0100000000000000000000000000000000000000000000000000000000000000",
    // (0, −1): order 2
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    // (±sqrt(−1), 0): order 4
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    // order 8
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
];

/// Non-canonical encodings of small-order points (y ≥ p, or x = −0), also
/// from CCTV's `non_canonical_A` vectors.
const SMALL_ORDER_NON_CANONICAL: [&str; 6] = [
    "0100000000000000000000000000000000000000000000000000000000000080",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
];

const CCTV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../vectors/external/ed25519-cctv/ed25519vectors.json"
);

fn key32(hex: &str) -> [u8; 32] {
    hex::decode(hex).unwrap().try_into().unwrap()
}

#[test]
fn the_small_order_list_is_cctvs() {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(CCTV).unwrap()).unwrap();
    let mut canonical = BTreeSet::new();
    let mut non_canonical = BTreeSet::new();
    for v in doc.as_array().unwrap() {
        let flags: Vec<&str> = v["flags"]
            .as_array()
            .map(|f| f.iter().map(|x| x.as_str().unwrap()).collect())
            .unwrap_or_default();
        if flags.contains(&"low_order_A") {
            let key = v["key"].as_str().unwrap().to_owned();
            if flags.contains(&"non_canonical_A") {
                non_canonical.insert(key);
            } else {
                canonical.insert(key);
            }
        }
    }
    assert_eq!(
        canonical,
        SMALL_ORDER.iter().map(|s| s.to_string()).collect()
    );
    assert_eq!(
        non_canonical,
        SMALL_ORDER_NON_CANONICAL
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}

#[test]
fn small_order_keys_are_refused() {
    for hex in SMALL_ORDER {
        assert_eq!(
            PublicKey::from_bytes(&key32(hex)),
            Err(KeyError::SmallOrder),
            "{hex}"
        );
        assert_eq!(
            PublicKey::from_slice(&key32(hex)),
            Err(KeyError::SmallOrder),
            "{hex}"
        );
    }
    // The non-canonical encodings decode (curve25519-dalek accepts y ≥ p
    // and x = −0) and are refused as non-canonical, checked first.
    for hex in SMALL_ORDER_NON_CANONICAL {
        assert_eq!(
            PublicKey::from_bytes(&key32(hex)),
            Err(KeyError::NonCanonical),
            "{hex}"
        );
    }
}

/// P5 revision 2: a key is refused unless of prime order. `[a]B + T` for
/// each of the 7 torsion points T ≠ 0 is a canonical point not of small
/// order (what `verify_strict` accepts) and is refused as `Torsion`.
#[test]
fn mixed_order_keys_are_refused() {
    use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT as B, EIGHT_TORSION};
    use curve25519_dalek::scalar::Scalar;
    let a = B * Scalar::from(0x1234_5678_9abc_def1_u64);
    assert!(PublicKey::from_bytes(&a.compress().to_bytes()).is_ok());
    for (j, t) in EIGHT_TORSION.iter().enumerate().skip(1) {
        let bytes = (a + t).compress().to_bytes();
        assert!(ed25519_dalek::VerifyingKey::from_bytes(&bytes).is_ok_and(|k| !k.is_weak()));
        assert_eq!(
            PublicKey::from_bytes(&bytes),
            Err(KeyError::Torsion),
            "torsion point {j}"
        );
    }
}

#[test]
fn a_non_point_is_refused() {
    // y = 2: (y² − 1) / (d·y² + 1) is not a square mod p, so no x exists.
    let mut y2 = [0u8; 32];
    y2[0] = 2;
    assert_eq!(PublicKey::from_bytes(&y2), Err(KeyError::NotAPoint));
    // y = 7, with either sign bit: not a point either.
    let mut y7 = [0u8; 32];
    y7[0] = 7;
    assert_eq!(PublicKey::from_bytes(&y7), Err(KeyError::NotAPoint));
    y7[31] = 0x80;
    assert_eq!(PublicKey::from_bytes(&y7), Err(KeyError::NotAPoint));
    // y = 3 is a point: loading it is refused, if at all, for its order
    // (it has a torsion component: CCTV-style mixed order), never as a
    // non-point, which shows the two refusals above are about the bytes.
    let mut y3 = [0u8; 32];
    y3[0] = 3;
    let point = curve25519_dalek::edwards::CompressedEdwardsY(y3)
        .decompress()
        .unwrap();
    let expected = if point.is_torsion_free() {
        Ok(())
    } else {
        Err(KeyError::Torsion)
    };
    assert_eq!(PublicKey::from_bytes(&y3).map(|_| ()), expected);
    // y = p + 3 is a non-canonical encoding of that same point.
    // curve25519-dalek decompresses y >= p and verify_strict does not ask
    // for a canonical A, but such a key would have a second sigil for one
    // point, so loading refuses it.
    let mut y3_nc = [0xffu8; 32];
    y3_nc[0] = 0xf0;
    y3_nc[31] = 0x7f;
    assert_eq!(PublicKey::from_bytes(&y3_nc), Err(KeyError::NonCanonical));
    // Wrong lengths.
    assert_eq!(PublicKey::from_slice(&[0x42; 31]), Err(KeyError::Length));
    assert_eq!(PublicKey::from_slice(&[0x42; 33]), Err(KeyError::Length));
    assert_eq!(PublicKey::from_slice(&[]), Err(KeyError::Length));
}

#[test]
fn a_real_key_loads_and_round_trips() {
    let sk = SigningKey::from_seed(&[0x42; 32]);
    let pk = sk.public_key();
    let again = PublicKey::from_bytes(pk.as_bytes()).unwrap();
    assert_eq!(again, pk);
    assert_eq!(again.as_dalek().as_bytes(), pk.as_bytes());
    for form in SigilForm::ALL {
        assert_eq!(sk.sigil(form), pk.sigil(form));
        assert!(pk.sigil(form).names_key(pk.as_bytes()));
    }
    let sig = sk.sign(b"msg");
    assert!(pk.verify(b"msg", &sig).is_ok());
    assert!(pk.verify(b"msh", &sig).is_err());
}

/// Every rendering of `bytes` a careless `Debug` might leak.
fn renderings(bytes: &[u8]) -> Vec<String> {
    use data_encoding::{BASE32, BASE64, BASE64_NOPAD, BASE64URL, BASE64URL_NOPAD, HEXUPPER};
    vec![
        hex::encode(bytes),
        HEXUPPER.encode(bytes),
        BASE64.encode(bytes),
        BASE64_NOPAD.encode(bytes),
        BASE64URL.encode(bytes),
        BASE64URL_NOPAD.encode(bytes),
        BASE32.encode(bytes),
        BASE32.encode(bytes).to_ascii_lowercase(),
        format!("{bytes:?}"),
        format!("{bytes:02x?}"),
    ]
}

#[test]
fn signing_key_debug_shows_the_sigil_and_no_secret() {
    // Seeds with distinct bytes, so any 8-byte window is distinctive.
    for seed in [
        core::array::from_fn::<u8, 32, _>(|i| (i as u8).wrapping_mul(37).wrapping_add(11)),
        key32("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"),
    ] {
        let sk = SigningKey::from_seed(&seed);
        // RFC 8032 §5.1.5: h = SHA-512(seed); the scalar is h[..32] clamped,
        // the nonce prefix h[32..].
        let h = Sha512::digest(seed);
        let mut scalar = [0u8; 32];
        scalar.copy_from_slice(&h[..32]);
        scalar[0] &= 248;
        scalar[31] &= 127;
        scalar[31] |= 64;
        let secrets: [&[u8]; 4] = [&seed, &h[..32], &scalar, &h[32..]];
        for debug in [format!("{sk:?}"), format!("{sk:#?}")] {
            assert!(
                debug.contains(&sk.sigil(SigilForm::Default).to_string()),
                "{debug}"
            );
            for secret in secrets {
                for r in renderings(secret) {
                    assert!(!debug.contains(&r), "{debug} leaks {r}");
                }
                // Not even an 8-byte window of it, in hex or bytes.
                for w in secret.windows(8) {
                    assert!(!debug.contains(&hex::encode(w)), "{debug}");
                    let list = format!("{w:?}");
                    assert!(!debug.contains(&list[1..list.len() - 1]), "{debug}");
                }
            }
        }
        // The public key's Debug is its sigil too.
        let pk = sk.public_key();
        assert_eq!(
            format!("{pk:?}"),
            format!("PublicKey({})", pk.sigil(SigilForm::Default))
        );
    }
}

#[test]
fn seeds_round_trip_in_zeroizing() {
    for seed in [
        [0u8; 32],
        [0xff; 32],
        [0x42; 32],
        core::array::from_fn(|i| i as u8),
    ] {
        let sk = SigningKey::from_seed(&seed);
        // Compile-time check: to_seed returns the Zeroizing wrapper.
        let out: Zeroizing<[u8; 32]> = sk.to_seed();
        assert_eq!(*out, seed);
        let again = SigningKey::from_seed(&out);
        assert_eq!(again.public_key(), sk.public_key());
        assert_eq!(again.sign(b"x"), sk.sign(b"x"));
    }
}

#[test]
fn generate_uses_the_rng_as_the_seed() {
    let sk = SigningKey::generate(&mut CountingRng(5));
    let seed: [u8; 32] = core::array::from_fn(|i| 5 + i as u8);
    assert_eq!(*sk.to_seed(), seed);
    assert_eq!(sk.public_key(), SigningKey::from_seed(&seed).public_key());
    let a = SigningKey::generate_os();
    let b = SigningKey::generate_os();
    assert_ne!(a.public_key(), b.public_key());
}

/// A signature by the prime-order key `A = [a]B` whose R is
/// `[r]B + EIGHT_TORSION[j]` (of small order when `r = 0`), with
/// `s = r + k·a`: `[s]B − [k]A = [r]B`, which differs from R by the torsion
/// point, so the cofactorless equation fails (for j ≠ 0) and the cofactored
/// one holds.
fn crafted(r: u64, j: usize) -> (PublicKey, Vec<u8>, [u8; 64]) {
    use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT as B, EIGHT_TORSION};
    use curve25519_dalek::scalar::Scalar;
    let a = Scalar::from(0x1234_5678_9abc_def1_u64);
    let key = PublicKey::from_bytes(&(B * a).compress().to_bytes()).unwrap();
    let r_bytes = (B * Scalar::from(r) + EIGHT_TORSION[j])
        .compress()
        .to_bytes();
    let message = b"crafted".to_vec();
    let mut h = Sha512::new();
    h.update(r_bytes);
    h.update(key.as_bytes());
    h.update(&message);
    let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
    let s = Scalar::from(r) + k * a;
    let mut sig = [0u8; 64];
    sig[..32].copy_from_slice(&r_bytes);
    sig[32..].copy_from_slice(s.as_bytes());
    (key, message, sig)
}

/// The cofactored equation `[8]([S]B − [k]A − R) = 0`, computed here from
/// curve25519-dalek's public arithmetic, independently of herald-core.
fn cofactored_holds(key: &PublicKey, message: &[u8], sig: &[u8; 64]) -> bool {
    use curve25519_dalek::constants::ED25519_BASEPOINT_POINT as B;
    use curve25519_dalek::edwards::CompressedEdwardsY;
    use curve25519_dalek::scalar::Scalar;
    use curve25519_dalek::traits::IsIdentity;
    let r = CompressedEdwardsY(sig[..32].try_into().unwrap())
        .decompress()
        .unwrap();
    let s = Scalar::from_canonical_bytes(sig[32..].try_into().unwrap()).unwrap();
    let a = CompressedEdwardsY(*key.as_bytes()).decompress().unwrap();
    let mut h = Sha512::new();
    h.update(&sig[..32]);
    h.update(key.as_bytes());
    h.update(message);
    let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
    (B * s - a * k - r).mul_by_cofactor().is_identity()
}

#[test]
fn small_order_r_is_refused_even_when_the_equation_holds() {
    // R of small order (r = 0), one case per torsion point: the cofactored
    // equation holds, and P5 refuses R by its bytes (speccheck cases 0, 2;
    // CCTV `low_order_R`).
    for j in 0..8 {
        let (key, message, sig) = crafted(0, j);
        assert!(cofactored_holds(&key, &message, &sig), "torsion point {j}");
        assert!(key.verify(&message, &sig).is_err(), "torsion point {j}");
    }
}

#[test]
fn mixed_order_r_is_accepted_by_the_cofactored_equation() {
    // R = [r]B + torsion is not of small order: valid under P5 revision 2
    // for every torsion part (CCTV `low_order_component_R` and
    // `low_order_residue`), where `verify_strict`, cofactorless, accepts
    // only the torsion-free one.
    for j in 0..8 {
        let (key, message, sig) = crafted(0x0bad_cafe, j);
        assert!(cofactored_holds(&key, &message, &sig), "torsion part {j}");
        assert!(key.verify(&message, &sig).is_ok(), "torsion part {j}");
        let signature = ed25519_dalek::Signature::from_bytes(&sig);
        assert_eq!(
            key.as_dalek().verify_strict(&message, &signature).is_ok(),
            j == 0,
            "torsion part {j}"
        );
        // One bit of S flipped, or another message: refused.
        let mut bad = sig;
        bad[40] ^= 1;
        assert!(key.verify(&message, &bad).is_err());
        assert!(!cofactored_holds(&key, b"other", &sig));
        assert!(key.verify(b"other", &sig).is_err());
    }
}

/// A molt's `new_key` is loaded by the same rule as every key (P5
/// revision 2): a mixed-order or small-order key makes the payload
/// malformed, naming the rule, and a prime-order key is taken.
#[test]
fn molt_new_key_is_refused_unless_of_prime_order() {
    use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT as B, EIGHT_TORSION};
    use curve25519_dalek::scalar::Scalar;
    use herald_core::cbor::{Map, Value};
    use herald_core::payload::Molt;
    let good = B * Scalar::from(77u64);
    let payload = |key: [u8; 32]| {
        let mut m = Map::new();
        m.insert("new_key", Value::Bytes(key.to_vec()));
        m.insert("not_before", Value::Unsigned(5));
        Value::Map(m).to_vec()
    };
    let bytes = payload(good.compress().to_bytes());
    let parsed = Molt::parse(herald_core::cbor::decode(&bytes).unwrap()).unwrap();
    assert_eq!(parsed.new_key, &good.compress().to_bytes());
    for (j, t) in EIGHT_TORSION.iter().enumerate().skip(1) {
        for key in [(good + t).compress().to_bytes(), t.compress().to_bytes()] {
            let bytes = payload(key);
            let err = Molt::parse(herald_core::cbor::decode(&bytes).unwrap()).unwrap_err();
            assert!(err.to_string().contains("prime order (P5)"), "{j}: {err}");
        }
    }
}
