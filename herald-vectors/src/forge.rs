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
