//! What PROFILE.md P15 *Distributed lookup* puts on the Mainline DHT, as
//! pure functions (no network): the BEP 5 info-hash under which a sigil's
//! conduits announce themselves, and the BEP 44 mutable record in which an
//! agent, signing with its own key, names its conduit.
//!
//! Nothing read from the DHT is trusted beyond what hashes and signatures
//! prove (P15): a record counts only when its key hashes to the sigil (P2)
//! and its signature verifies under P5's rules, checked here with
//! herald-core's verifier whatever the DHT library already checked.

use herald_core::{PublicKey, Sigil, SigilForm, SigningKey};
use mainline::MutableItem;

/// The domain-separation prefix of the info-hash, and the BEP 44 salt of a
/// HERALD record (P15). A BEP 44 signed message starts with `4:salt13:`,
/// so it can never be taken for an envelope's signed message (P5: every
/// tag starts with `herald.`), nor the reverse.
pub const DOMAIN: &[u8] = b"herald.dht.v1";

/// The sigil digest length the info-hash covers (P15: the 16-byte digest of
/// a default sigil, the first 16 of a long one's 24).
pub(crate) const DIGEST_LEN: usize = 16;

/// BEP 44's limit on a value (its `v`), bytes.
pub(crate) const MAX_VALUE: usize = 1000;

/// `info_hash = SHA-1("herald.dht.v1" || 16-byte sigil digest)` (P15), or
/// `None` for a sigil that carries fewer than 16 digest bytes (a short or
/// a reserved one: it cannot be looked up on the DHT).
pub fn info_hash(sigil: &Sigil) -> Option<[u8; 20]> {
    let digest = sigil.hash_prefix().get(..DIGEST_LEN)?;
    let mut sha1 = sha1_smol::Sha1::new();
    sha1.update(DOMAIN);
    sha1.update(digest);
    Some(sha1.digest().bytes())
}

/// A HERALD record read from the DHT and checked: `sigil`'s own key says
/// its mail is delivered at `conduit`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct Record {
    /// The conduit URL the record names (`http://` or `https://`).
    pub(crate) conduit: String,
    /// The record's BEP 44 sequence number (its signer's Unix seconds when
    /// made with [`sign`]).
    pub(crate) seq: i64,
}

/// Why a BEP 44 item is not a record of the sigil asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordError {
    /// The item is signed by a key that does not hash to the sigil (P2).
    OtherKey,
    /// The item carries no HERALD salt.
    Salt,
    /// The signature does not verify under P5 (or the key is refused by it).
    Signature,
    /// The value breaks the record grammar.
    Value(&'static str),
}

impl core::fmt::Display for RecordError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::OtherKey => f.write_str("DHT record signed by a key that is not the sigil's"),
            Self::Salt => f.write_str("DHT record without the herald.dht.v1 salt"),
            Self::Signature => f.write_str("DHT record signature does not verify (P5)"),
            Self::Value(what) => write!(f, "DHT record value: {what}"),
        }
    }
}

impl std::error::Error for RecordError {}

/// The record value: P15's record text, `v=herald1; sigil=…; key=…;
/// conduit=…`, the same grammar as a DNS TXT record.
fn value_text(key: &PublicKey, conduit: &str) -> String {
    format!(
        "v=herald1; sigil={}; key={}; conduit={conduit}",
        key.sigil(SigilForm::Default),
        hex(key.as_bytes())
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// BEP 44's signed message: `4:salt<n>:<salt>3:seqi<seq>e1:v<n>:<v>`.
fn signable(seq: i64, value: &[u8]) -> Vec<u8> {
    let mut m = format!("4:salt{}:", DOMAIN.len()).into_bytes();
    m.extend_from_slice(DOMAIN);
    m.extend_from_slice(format!("3:seqi{seq}e1:v{}:", value.len()).as_bytes());
    m.extend_from_slice(value);
    m
}

/// Whether `url` may stand in a record: `http://` or `https://`, a host,
/// printable ASCII without spaces or `;` (the record separator).
pub fn valid_conduit_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    matches!(rest, Some(r) if !r.is_empty() && !r.starts_with('/'))
        && url.bytes().all(|b| b.is_ascii_graphic() && b != b';')
}

/// A record naming `conduit`, signed by `key` with sequence number `seq`
/// (P15): BEP 44 mutable item under `key` with salt `herald.dht.v1`. The
/// signature is made by herald-core, so the secret never reaches the DHT
/// library.
pub(crate) fn sign(key: &SigningKey, conduit: &str, seq: i64) -> Result<MutableItem, RecordError> {
    if !valid_conduit_url(conduit) {
        return Err(RecordError::Value(
            "the conduit must be an http:// or https:// URL",
        ));
    }
    let public = key.public_key();
    let value = value_text(&public, conduit);
    if value.len() > MAX_VALUE {
        return Err(RecordError::Value("longer than BEP 44's 1000 bytes"));
    }
    let signature = key.sign(&signable(seq, value.as_bytes()));
    Ok(MutableItem::new_signed_unchecked(
        *public.as_bytes(),
        signature,
        value.as_bytes(),
        seq,
        Some(DOMAIN),
    ))
}

/// Check `item`, read from the DHT, as a record of `sigil` (P15): its key
/// hashes to `sigil`, it carries the HERALD salt, its signature verifies
/// under P5, and its value names the same sigil and key and a conduit URL.
pub(crate) fn check(sigil: &Sigil, item: &MutableItem) -> Result<Record, RecordError> {
    if !sigil.names_key(item.key()) {
        return Err(RecordError::OtherKey);
    }
    if item.salt() != Some(DOMAIN) {
        return Err(RecordError::Salt);
    }
    let key = PublicKey::from_bytes(item.key()).map_err(|_| RecordError::Signature)?;
    key.verify(&signable(item.seq(), item.value()), item.signature())
        .map_err(|_| RecordError::Signature)?;
    let text = core::str::from_utf8(item.value()).map_err(|_| RecordError::Value("not UTF-8"))?;
    let mut version = false;
    let mut named_sigil = None;
    let mut named_key = None;
    let mut conduit = None;
    for pair in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or(RecordError::Value("a field without `=`"))?;
        let slot = match k.trim() {
            "v" => {
                if v.trim() != "herald1" {
                    return Err(RecordError::Value("not v=herald1"));
                }
                version = true;
                continue;
            }
            "sigil" => &mut named_sigil,
            "key" => &mut named_key,
            "conduit" => &mut conduit,
            // Unknown keys are ignored (P15).
            _ => continue,
        };
        if slot.replace(v.trim()).is_some() {
            return Err(RecordError::Value("a field given twice"));
        }
    }
    if !version {
        return Err(RecordError::Value("no v=herald1"));
    }
    let named = named_sigil
        .and_then(|s| Sigil::parse(s).ok())
        .ok_or(RecordError::Value("no valid sigil="))?;
    if !named.names_key(item.key()) || !named.same_key_as(sigil) {
        return Err(RecordError::Value("sigil= is not the signer's"));
    }
    if named_key != Some(hex(item.key()).as_str()) {
        return Err(RecordError::Value("key= is not the signer's"));
    }
    let conduit = conduit.ok_or(RecordError::Value("no conduit="))?;
    if !valid_conduit_url(conduit) {
        return Err(RecordError::Value(
            "conduit= is not an http:// or https:// URL",
        ));
    }
    Ok(Record {
        conduit: conduit.to_owned(),
        seq: item.seq(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn key(n: u8) -> SigningKey {
        SigningKey::from_seed(&[n; 32])
    }

    #[test]
    fn info_hash_is_sha1_of_domain_and_16_digest_bytes() {
        let k = key(1);
        let default = k.sigil(SigilForm::Default);
        let long = k.sigil(SigilForm::Long);
        // Both forms of one key meet under one info-hash; the short form has
        // too few digest bytes.
        assert_eq!(info_hash(&default), info_hash(&long));
        assert!(info_hash(&k.sigil(SigilForm::Short)).is_none());
        assert!(info_hash(&Sigil::parse("sigil:none").unwrap()).is_none());
        let mut sha1 = sha1_smol::Sha1::new();
        sha1.update(b"herald.dht.v1");
        sha1.update(&default.hash_prefix()[..16]);
        assert_eq!(info_hash(&default).unwrap(), sha1.digest().bytes());
        assert_ne!(
            info_hash(&default),
            info_hash(&key(2).sigil(SigilForm::Default))
        );
    }

    #[test]
    fn a_signed_record_checks_and_matches_mainline_signable() {
        let k = key(3);
        let sigil = k.sigil(SigilForm::Default);
        let item = sign(&k, "http://127.0.0.1:8470", 42).unwrap();
        let record = check(&sigil, &item).unwrap();
        assert_eq!(record.conduit, "http://127.0.0.1:8470");
        assert_eq!(record.seq, 42);
        assert_eq!(check(&k.sigil(SigilForm::Long), &item).unwrap(), record);
        // The DHT library signs the same message: its item from the same
        // seed has our signature (Ed25519 is deterministic).
        let theirs = MutableItem::new(
            mainline::SigningKey::from_bytes(&[3; 32]),
            item.value(),
            42,
            Some(DOMAIN),
        );
        assert_eq!(theirs.signature(), item.signature());
        assert_eq!(theirs.target(), item.target());
    }

    #[test]
    fn a_record_signed_by_another_key_is_refused() {
        let (alice, mallory) = (key(4), key(5));
        let item = sign(&mallory, "http://127.0.0.1:1", 1).unwrap();
        assert_eq!(
            check(&alice.sigil(SigilForm::Default), &item),
            Err(RecordError::OtherKey)
        );
        // Mallory's value, claiming alice, under mallory's signature.
        let value = format!(
            "v=herald1; sigil={}; key={}; conduit=http://127.0.0.1:1",
            alice.sigil(SigilForm::Default),
            hex(alice.public_key().as_bytes())
        );
        let sig = mallory.sign(&signable(1, value.as_bytes()));
        let forged = MutableItem::new_signed_unchecked(
            *alice.public_key().as_bytes(),
            sig,
            value.as_bytes(),
            1,
            Some(DOMAIN),
        );
        assert_eq!(
            check(&alice.sigil(SigilForm::Default), &forged),
            Err(RecordError::Signature)
        );
    }

    #[test]
    fn bad_values_are_refused() {
        let k = key(6);
        let sigil = k.sigil(SigilForm::Default);
        let signed = |value: &str, salt: Option<&[u8]>| {
            let mut m = Vec::new();
            if let Some(s) = salt {
                m.extend(format!("4:salt{}:", s.len()).bytes());
                m.extend_from_slice(s);
            }
            m.extend(format!("3:seqi1e1:v{}:", value.len()).bytes());
            m.extend_from_slice(value.as_bytes());
            MutableItem::new_signed_unchecked(
                *k.public_key().as_bytes(),
                k.sign(&m),
                value.as_bytes(),
                1,
                salt,
            )
        };
        let good = value_text(&k.public_key(), "http://a");
        assert!(check(&sigil, &signed(&good, Some(DOMAIN))).is_ok());
        assert_eq!(check(&sigil, &signed(&good, None)), Err(RecordError::Salt));
        let other = value_text(&key(7).public_key(), "http://a");
        assert!(matches!(
            check(&sigil, &signed(&other, Some(DOMAIN))),
            Err(RecordError::Value(_))
        ));
        for bad in [
            good.replace("herald1", "herald2"),
            good.replace("conduit=http://a", "conduit=ftp://a"),
            good.replace("; conduit=http://a", ""),
            format!("{good}; conduit=http://b"),
        ] {
            assert!(
                matches!(
                    check(&sigil, &signed(&bad, Some(DOMAIN))),
                    Err(RecordError::Value(_))
                ),
                "{bad}"
            );
        }
        assert!(check(&sigil, &signed(&format!("{good}; x=y"), Some(DOMAIN))).is_ok());
        assert!(sign(&k, "ftp://a", 1).is_err());
        assert!(sign(&k, "http://a;b", 1).is_err());
    }
}
