//! C2SP signed-note v1 with Ed25519 signatures: a UTF-8 text ending in a
//! newline, a blank line, then one line per signature,
//! `— <name> <base64(key id ‖ signature)>`. The key id is the first four
//! bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key), 0x01 naming Ed25519;
//! a verifier key is written `<name>+<hex key id>+<base64(0x01 ‖ key)>`.
//!
//! The signed message is the text itself, every byte up to and including
//! its final newline. A P9 signed tree head's message (`herald.sth.v1` then
//! a P1 map, whose head byte is a UTF-8 continuation byte) is never valid
//! UTF-8, so no note text is ever an STH message, and the log key may sign
//! both.

use core::fmt;

use data_encoding::{BASE64, HEXLOWER};
use herald_core::{PublicKey, SigningKey};
use sha2::{Digest, Sha256};

/// The signature type byte of Ed25519 in signed notes.
const ED25519: u8 = 0x01;

/// The em dash (U+2014) and space that start a signature line.
const DASH: &str = "\u{2014} ";

/// A signed note could not be read, made or checked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoteError {
    /// Not UTF-8, or a control character other than newline.
    NotText,
    /// The text is empty or does not end with a newline.
    BadText,
    /// No blank line separates the text from its signatures.
    NoSignatures,
    /// Signature line `line` (from 1) is not `— <name> <base64>`.
    BadSignatureLine {
        /// The line, counted among the signature lines.
        line: usize,
    },
    /// A key name is empty or holds whitespace or `+`.
    BadName,
    /// A verifier key is not `<name>+<hex id>+<base64(0x01 ‖ key)>`, or its
    /// id is not the one its name and key give.
    BadVerifier(&'static str),
    /// A signature by a known key does not verify.
    BadSignature {
        /// The key's name.
        name: String,
    },
    /// No signature by any of the given keys.
    Unverified,
}

impl fmt::Display for NoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotText => {
                f.write_str("a note is UTF-8 text without control characters but newlines")
            }
            Self::BadText => f.write_str("a note's text is not empty and ends with a newline"),
            Self::NoSignatures => f.write_str("no blank line before the signature lines"),
            Self::BadSignatureLine { line } => {
                write!(f, "signature line {line} is not \"— <name> <base64>\"")
            }
            Self::BadName => f.write_str("a key name is non-empty, without spaces or '+'"),
            Self::BadVerifier(why) => write!(f, "verifier key: {why}"),
            Self::BadSignature { name } => write!(f, "the signature by {name} does not verify"),
            Self::Unverified => f.write_str("no signature by a known key"),
        }
    }
}

impl std::error::Error for NoteError {}

fn check_name(name: &str) -> Result<(), NoteError> {
    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '+') {
        return Err(NoteError::BadName);
    }
    Ok(())
}

/// The key id of an Ed25519 key named `name`.
pub fn key_id(name: &str, key: &PublicKey) -> [u8; 4] {
    let digest = Sha256::new()
        .chain_update(name.as_bytes())
        .chain_update([b'\n', ED25519])
        .chain_update(key.as_bytes())
        .finalize();
    let mut id = [0u8; 4];
    id.copy_from_slice(&digest[..4]);
    id
}

/// A named Ed25519 key that verifies notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verifier {
    name: String,
    id: [u8; 4],
    key: PublicKey,
}

impl Verifier {
    /// The verifier of `key` under `name`.
    pub fn new(name: &str, key: PublicKey) -> Result<Self, NoteError> {
        check_name(name)?;
        Ok(Self {
            name: name.into(),
            id: key_id(name, &key),
            key,
        })
    }

    /// Read the text form `<name>+<hex key id>+<base64(0x01 ‖ key)>`
    /// (split on the first two `+`: base64 may hold more).
    pub fn parse(text: &str) -> Result<Self, NoteError> {
        let mut parts = text.trim_end().splitn(3, '+');
        let (Some(name), Some(id), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(NoteError::BadVerifier("not <name>+<hex id>+<base64 key>"));
        };
        check_name(name)?;
        let id = HEXLOWER
            .decode(id.as_bytes())
            .ok()
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .ok_or(NoteError::BadVerifier(
                "the key id is not 8 lowercase hex digits",
            ))?;
        let key = BASE64
            .decode(key.as_bytes())
            .map_err(|_| NoteError::BadVerifier("the key is not base64"))?;
        let key = match key.split_first() {
            Some((&ED25519, k)) => <[u8; 32]>::try_from(k)
                .map_err(|_| NoteError::BadVerifier("an Ed25519 key is 32 bytes"))?,
            _ => return Err(NoteError::BadVerifier("not an Ed25519 key (type 0x01)")),
        };
        let key = PublicKey::from_bytes(&key)
            .map_err(|_| NoteError::BadVerifier("not a usable Ed25519 key (P5)"))?;
        let verifier = Self::new(name, key)?;
        if verifier.id != id {
            return Err(NoteError::BadVerifier(
                "the key id does not match the name and key",
            ));
        }
        Ok(verifier)
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        let mut key = Vec::with_capacity(33);
        key.push(ED25519);
        key.extend_from_slice(self.key.as_bytes());
        std::format!(
            "{}+{}+{}",
            self.name,
            HEXLOWER.encode(&self.id),
            BASE64.encode(&key)
        )
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key id.
    pub fn id(&self) -> [u8; 4] {
        self.id
    }

    /// The public key.
    pub fn key(&self) -> &PublicKey {
        &self.key
    }
}

/// One signature line of a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The key's name.
    pub name: String,
    /// The key id.
    pub id: [u8; 4],
    /// The signature bytes after the key id.
    pub sig: Vec<u8>,
}

/// A signed note, read from its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note<'a> {
    text: &'a str,
    signatures: Vec<Signature>,
}

impl<'a> Note<'a> {
    /// Read a note: its text and every signature line (unknown keys
    /// included; [`Note::verify`] picks the ones it knows).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, NoteError> {
        let all = core::str::from_utf8(bytes).map_err(|_| NoteError::NotText)?;
        if all.chars().any(|c| c.is_control() && c != '\n') {
            return Err(NoteError::NotText);
        }
        // The text ends at the last blank line: signature lines hold none.
        let split = all.rfind("\n\n").ok_or(NoteError::NoSignatures)?;
        let (text, rest) = (&all[..=split], &all[split + 2..]);
        if text.len() < 2 {
            return Err(NoteError::BadText);
        }
        if rest.is_empty() || !rest.ends_with('\n') {
            return Err(NoteError::NoSignatures);
        }
        let mut signatures = Vec::new();
        for (n, line) in rest[..rest.len() - 1].split('\n').enumerate() {
            let bad = || NoteError::BadSignatureLine { line: n + 1 };
            let line = line.strip_prefix(DASH).ok_or_else(bad)?;
            let (name, b64) = line.split_once(' ').ok_or_else(bad)?;
            check_name(name).map_err(|_| bad())?;
            let raw = BASE64.decode(b64.as_bytes()).map_err(|_| bad())?;
            if raw.len() < 5 {
                return Err(bad());
            }
            let mut id = [0u8; 4];
            id.copy_from_slice(&raw[..4]);
            signatures.push(Signature {
                name: name.into(),
                id,
                sig: raw[4..].to_vec(),
            });
        }
        Ok(Self { text, signatures })
    }

    /// The text: the signed message, ending with its newline.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// Every signature line, in order.
    pub fn signatures(&self) -> &[Signature] {
        &self.signatures
    }

    /// The verifiers among `known` whose signature is on the note, each
    /// checked. A signature by a known key that does not verify is an
    /// error (fail closed); signatures by unknown keys are ignored; none by
    /// a known key is [`NoteError::Unverified`].
    pub fn verify<'k>(&self, known: &'k [Verifier]) -> Result<Vec<&'k Verifier>, NoteError> {
        let mut ok = Vec::new();
        for s in &self.signatures {
            let Some(v) = known.iter().find(|v| v.name == s.name && v.id == s.id) else {
                continue;
            };
            let sig =
                <[u8; 64]>::try_from(s.sig.as_slice()).map_err(|_| NoteError::BadSignature {
                    name: s.name.clone(),
                })?;
            v.key
                .verify(self.text.as_bytes(), &sig)
                .map_err(|_| NoteError::BadSignature {
                    name: s.name.clone(),
                })?;
            if !ok.contains(&v) {
                ok.push(v);
            }
        }
        if ok.is_empty() {
            return Err(NoteError::Unverified);
        }
        Ok(ok)
    }
}

/// The signature line of `key`, named `name`, over `text`.
pub fn signature_line(text: &str, name: &str, key: &SigningKey) -> Result<String, NoteError> {
    check_name(name)?;
    let sig = key.sign(text.as_bytes());
    let mut raw = Vec::with_capacity(68);
    raw.extend_from_slice(&key_id(name, &key.public_key()));
    raw.extend_from_slice(&sig);
    Ok(std::format!("{DASH}{name} {}\n", BASE64.encode(&raw)))
}

/// `text` signed by `key` as `name`: a whole note.
pub fn sign(text: &str, name: &str, key: &SigningKey) -> Result<String, NoteError> {
    if text.len() < 2 || !text.ends_with('\n') || text.ends_with("\n\n") {
        return Err(NoteError::BadText);
    }
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err(NoteError::NotText);
    }
    Ok(std::format!("{text}\n{}", signature_line(text, name, key)?))
}
