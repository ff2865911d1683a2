//! Building dishonest envelopes: edit a signed envelope's map, and re-seal
//! it by an independent implementation of P4/P5 (so the vectors also
//! cross-check the library's own body and signature code).

use herald_core::cbor::{Map, Value};
use herald_core::{Scope, SigningKey};
use sha2::{Digest, Sha256};

/// The map of envelope bytes.
pub fn map(bytes: &[u8]) -> Map {
    match Value::decode(bytes) {
        Ok(Value::Map(m)) => m,
        _ => Map::new(),
    }
}

/// Canonical bytes of a map.
pub fn encode(map: &Map) -> Vec<u8> {
    Value::Map(map.clone()).to_vec()
}

/// Edit a signed envelope without re-signing.
pub fn edit(bytes: &[u8], f: impl FnOnce(&mut Map)) -> Vec<u8> {
    let mut m = map(bytes);
    f(&mut m);
    encode(&m)
}

fn is_genesis(m: &Map) -> bool {
    matches!(m.get("parent"), Some(Value::Null))
}

/// `body(E, k)` (P4) of a map, built from scratch.
pub fn body(m: &Map, k: usize) -> Vec<u8> {
    let mut b = m.clone();
    b.remove("id");
    if is_genesis(m) {
        b.remove("trace");
    }
    let sigs = match m.get("signatures") {
        Some(Value::Array(a)) => a.iter().take(k).cloned().collect(),
        _ => Vec::new(),
    };
    b.insert("signatures", Value::Array(sigs));
    encode(&b)
}

/// One signature to add by [`seal`].
pub struct Signer<'k> {
    /// The key.
    pub key: &'k SigningKey,
    /// The `by` string.
    pub by: String,
    /// The `scope` string.
    pub scope: String,
    /// The tag signed over (normally the scope's or the kind's).
    pub tag: Vec<u8>,
    /// The `alg` string.
    pub alg: String,
}

impl<'k> Signer<'k> {
    /// An honest signature in `scope` by `key`, named by its default sigil;
    /// for `Scope::Origin`, `origin_tag` is the kind's tag.
    pub fn new(key: &'k SigningKey, scope: Scope, origin_tag: &[u8]) -> Self {
        Self {
            key,
            by: key.sigil(herald_core::SigilForm::Default).to_string(),
            scope: scope.name().into(),
            tag: scope
                .tag()
                .map_or_else(|| origin_tag.to_vec(), <[u8]>::to_vec),
            alg: "ed25519".into(),
        }
    }
}

/// Set `id` (and a genesis's `trace`) from the map, then append each
/// signature over `tag || body(E, k)`.
pub fn seal(m: &mut Map, signers: &[Signer<'_>]) -> Vec<u8> {
    m.insert("signatures", Value::Array(Vec::new()));
    let id: [u8; 32] = Sha256::digest(body(m, 0)).into();
    m.insert("id", Value::Bytes(id.to_vec()));
    if is_genesis(m) {
        m.insert("trace", Value::Bytes(id.to_vec()));
    }
    for (k, s) in signers.iter().enumerate() {
        let mut msg = s.tag.clone();
        msg.extend_from_slice(&body(m, k));
        let sig = s.key.sign(&msg);
        let mut sm = Map::new();
        sm.insert("alg", Value::text(s.alg.as_str()));
        sm.insert("by", Value::text(s.by.as_str()));
        sm.insert("scope", Value::text(s.scope.as_str()));
        sm.insert("sig", Value::Bytes(sig.to_vec()));
        if let Some(Value::Array(a)) = m.get("signatures").cloned() {
            let mut a = a;
            a.push(Value::Map(sm));
            m.insert("signatures", Value::Array(a));
        }
    }
    encode(m)
}

/// As [`seal`] with one honest origin signer, whose signature's R carries
/// the torsion component `EIGHT_TORSION[torsion]` (1..8): `R = [r]B + T`
/// and `S = r + k·a`, so the cofactored equation holds and the
/// cofactorless one does not. Only the holder of `seed` can make one; P5
/// revision 2 accepts it (CCTV `low_order_component_R`,
/// `low_order_residue`).
pub fn seal_torsion_origin(
    m: &mut Map,
    seed: &[u8; 32],
    origin_tag: &[u8],
    torsion: usize,
) -> Vec<u8> {
    use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};
    use curve25519_dalek::scalar::Scalar;
    use sha2::Sha512;
    let key = SigningKey::from_seed(seed);
    let a = ed25519_dalek::hazmat::ExpandedSecretKey::from(seed).scalar;
    m.insert("signatures", Value::Array(Vec::new()));
    let id: [u8; 32] = Sha256::digest(body(m, 0)).into();
    m.insert("id", Value::Bytes(id.to_vec()));
    if is_genesis(m) {
        m.insert("trace", Value::Bytes(id.to_vec()));
    }
    let mut msg = origin_tag.to_vec();
    msg.extend_from_slice(&body(m, 0));
    let r = Scalar::from_bytes_mod_order_wide(&Sha512::digest(&msg).into());
    let t = EIGHT_TORSION.get(torsion).copied().unwrap_or_default();
    let big_r = (ED25519_BASEPOINT_POINT * r + t).compress();
    let mut h = Sha512::new();
    h.update(big_r.as_bytes());
    h.update(key.public_key().as_bytes());
    h.update(&msg);
    let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
    let s = r + k * a;
    let mut sig = big_r.as_bytes().to_vec();
    sig.extend_from_slice(s.as_bytes());
    let mut sm = Map::new();
    sm.insert("alg", Value::text("ed25519"));
    sm.insert(
        "by",
        Value::text(key.sigil(herald_core::SigilForm::Default).to_string()),
    );
    sm.insert("scope", Value::text(Scope::Origin.name()));
    sm.insert("sig", Value::Bytes(sig));
    m.insert("signatures", Value::Array(vec![Value::Map(sm)]));
    encode(m)
}

/// A canonical key of mixed order: `[0x1234567]B` plus the torsion point
/// `EIGHT_TORSION[torsion]` (1..8). A point of the curve whose encoding is
/// canonical; P5 revision 2 refuses it (not of prime order).
pub fn mixed_order_key(torsion: usize) -> [u8; 32] {
    use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};
    use curve25519_dalek::scalar::Scalar;
    let t = EIGHT_TORSION.get(torsion).copied().unwrap_or_default();
    (ED25519_BASEPOINT_POINT * Scalar::from(0x123_4567u64) + t)
        .compress()
        .to_bytes()
}

/// The small-order point `EIGHT_TORSION[torsion]` (0..8), encoded.
pub fn small_order_key(torsion: usize) -> [u8; 32] {
    use curve25519_dalek::constants::EIGHT_TORSION;
    EIGHT_TORSION
        .get(torsion)
        .copied()
        .unwrap_or_default()
        .compress()
        .to_bytes()
}
