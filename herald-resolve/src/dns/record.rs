//! The P15 TXT record grammar (PROFILE.md P15): a record's strings,
//! concatenated, are `v=herald1; sigil=<sigil>; key=<64 hex>` with an
//! optional `; conduit=<URL>`. Strict on the known keys; unknown `k=v`
//! pairs are ignored; a TXT record not starting with `v=herald1` is not a
//! HERALD record (a name may carry other TXT records).

use core::fmt;

use herald_core::{PublicKey, Sigil};

/// Longest HERALD record (its strings concatenated), in bytes.
pub(crate) const MAX_RECORD_LEN: usize = 1024;

/// Longest `conduit=` URL, in bytes.
pub(crate) const MAX_URL_LEN: usize = 512;

/// A HERALD TXT record: a sigil, the key claimed for it, and maybe its
/// conduit. The key is NOT checked against the sigil here (the resolver
/// does, for every channel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) sigil: Sigil,
    pub(crate) key: PublicKey,
    pub(crate) conduit: Option<String>,
}

/// Why a `v=herald1` record is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RecordError {
    /// Longer than [`MAX_RECORD_LEN`], or not UTF-8.
    Text,
    /// A pair without `=`.
    Pair,
    /// A known key given twice.
    Repeated(&'static str),
    /// `sigil` or `key` missing.
    Missing(&'static str),
    /// `sigil` does not parse (P2), or is a reserved name.
    Sigil,
    /// `key` is not 64 lowercase hex digits of a usable Ed25519 key.
    Key,
    /// `conduit` is not an `http://` or `https://` URL of at most
    /// [`MAX_URL_LEN`] bytes.
    Conduit,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text => write!(f, "not UTF-8 text of at most {MAX_RECORD_LEN} bytes"),
            Self::Pair => f.write_str("a part is not k=v"),
            Self::Repeated(k) => write!(f, "'{k}' given twice"),
            Self::Missing(k) => write!(f, "no '{k}'"),
            Self::Sigil => f.write_str("'sigil' is not a sigil (P2)"),
            Self::Key => f.write_str("'key' is not 64 lowercase hex digits of an Ed25519 key"),
            Self::Conduit => write!(
                f,
                "'conduit' is not an http(s) URL of at most {MAX_URL_LEN} bytes"
            ),
        }
    }
}

/// The first pair of every HERALD record.
const VERSION: &str = "v=herald1";

/// Parse one TXT record's strings. `Ok(None)`: not a HERALD record.
pub(crate) fn parse(strings: &[&[u8]]) -> Result<Option<Record>, RecordError> {
    let len: usize = strings.iter().map(|s| s.len()).sum();
    if len > MAX_RECORD_LEN {
        // Still ignore a long record that is not ours.
        let first = strings.first().copied().unwrap_or_default();
        return if first.starts_with(VERSION.as_bytes()) {
            Err(RecordError::Text)
        } else {
            Ok(None)
        };
    }
    let bytes: Vec<u8> = strings.concat();
    let Ok(text) = core::str::from_utf8(&bytes) else {
        return if bytes.starts_with(VERSION.as_bytes()) {
            Err(RecordError::Text)
        } else {
            Ok(None)
        };
    };
    let mut parts = text.split(';').map(str::trim);
    if parts.next() != Some(VERSION) {
        return Ok(None);
    }
    let (mut sigil, mut key, mut conduit) = (None, None, None);
    for part in parts {
        if part.is_empty() {
            continue; // a trailing `;`
        }
        let (k, v) = part.split_once('=').ok_or(RecordError::Pair)?;
        let slot = match k.trim() {
            "sigil" => &mut sigil,
            "key" => &mut key,
            "conduit" => &mut conduit,
            "v" => return Err(RecordError::Repeated("v")),
            _ => continue,
        };
        if slot.replace(v.trim()).is_some() {
            return Err(RecordError::Repeated(match k.trim() {
                "sigil" => "sigil",
                "key" => "key",
                _ => "conduit",
            }));
        }
    }
    let sigil = sigil.ok_or(RecordError::Missing("sigil"))?;
    let sigil = Sigil::parse(sigil).map_err(|_| RecordError::Sigil)?;
    if sigil.is_reserved() {
        return Err(RecordError::Sigil);
    }
    let key = parse_key(key.ok_or(RecordError::Missing("key"))?)?;
    let conduit = conduit.map(parse_url).transpose()?;
    Ok(Some(Record {
        sigil,
        key,
        conduit,
    }))
}

/// 64 lowercase hex digits, a usable key (P5).
fn parse_key(hex: &str) -> Result<PublicKey, RecordError> {
    if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(RecordError::Key);
    }
    let mut bytes = [0u8; 32];
    for (i, byte) in bytes.iter_mut().enumerate() {
        let pair = hex.get(2 * i..2 * i + 2).ok_or(RecordError::Key)?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| RecordError::Key)?;
    }
    PublicKey::from_bytes(&bytes).map_err(|_| RecordError::Key)
}

/// An `http://` or `https://` URL without spaces or control characters.
fn parse_url(url: &str) -> Result<String, RecordError> {
    let ok = url.len() <= MAX_URL_LEN
        && (url.starts_with("https://") || url.starts_with("http://"))
        && url.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        Ok(url.to_owned())
    } else {
        Err(RecordError::Conduit)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use herald_core::{SigilForm, SigningKey};

    fn line(key: &PublicKey) -> String {
        let hex: String = key.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "v=herald1; sigil={}; key={hex}",
            key.sigil(SigilForm::Default)
        )
    }

    fn one(text: &str) -> Result<Option<Record>, RecordError> {
        parse(&[text.as_bytes()])
    }

    #[test]
    fn the_grammar() {
        let key = SigningKey::from_seed(&[7; 32]).public_key();
        let text = line(&key);
        let r = one(&text).unwrap().unwrap();
        assert_eq!(
            (r.sigil, r.key, r.conduit),
            (key.sigil(SigilForm::Default), key, None)
        );
        // Strings concatenated, at any split.
        let (a, b) = text.split_at(20);
        assert_eq!(
            parse(&[a.as_bytes(), b.as_bytes()]).unwrap().unwrap().key,
            key
        );
        // Unknown pairs ignored, a conduit kept, a trailing `;`.
        let r = one(&format!("{text}; x-note=hi; conduit=https://c.example/; "))
            .unwrap()
            .unwrap();
        assert_eq!(r.conduit.as_deref(), Some("https://c.example/"));
        // Not ours.
        assert_eq!(one("v=spf1 -all"), Ok(None));
        assert_eq!(one("v=herald2; sigil=x"), Ok(None));
        assert_eq!(parse(&[&[0xff, 0xfe][..]]), Ok(None));
    }

    #[test]
    fn strict_on_known_keys() {
        let key = SigningKey::from_seed(&[7; 32]).public_key();
        let text = line(&key);
        for (bad, err) in [
            (format!("{text}; key=00"), RecordError::Repeated("key")),
            (format!("{text}; sigil=x"), RecordError::Repeated("sigil")),
            (format!("{text}; v=herald1"), RecordError::Repeated("v")),
            (format!("{text}; novalue"), RecordError::Pair),
            (format!("{text}; conduit=ftp://x"), RecordError::Conduit),
            (
                "v=herald1; key=00".to_owned(),
                RecordError::Missing("sigil"),
            ),
            (
                "v=herald1; sigil=sigil:none; key=00".to_owned(),
                RecordError::Sigil,
            ),
            (
                text.replace("sigil=sigil:", "sigil=sigil:x"),
                RecordError::Sigil,
            ),
            (text.replace("key=", "key=0"), RecordError::Key),
            (
                format!("{text}{}", " ".repeat(MAX_RECORD_LEN)),
                RecordError::Text,
            ),
        ] {
            assert_eq!(one(&bad), Err(err), "{bad}");
        }
        let hex_upper = {
            let (head, hex) = text.split_once("key=").unwrap();
            format!("{head}key={}", hex.to_uppercase())
        };
        assert_eq!(one(&hex_upper), Err(RecordError::Key));
    }
}
