//! C2SP signed-note v1.0.0: a UTF-8 text, a blank line, and signature lines
//! `— <key name> base64(key ID ‖ signature)`; Ed25519 signatures (type
//! 0x01), key ids, and the verifier-key text form
//! `<name>+<hex key ID>+<base64(type ‖ public key)>`.
//!
//! Parsing works on the bytes received: the text that is verified is the
//! exact prefix of the input, never a re-encoding.

use core::fmt;

use data_encoding::{BASE64, HEXLOWER};
use herald_core::{PublicKey, SigningKey};
use sha2::{Digest, Sha256};

use crate::cosignature;

/// The em dash that starts every signature line (U+2014).
const SIGNATURE_PREFIX: &str = "\u{2014} ";

/// Most signatures accepted on one note. C2SP signed-note asks verifiers to
/// accept at least 16; Go's `golang.org/x/mod/sumdb/note` accepts 100.
pub const MAX_SIGNATURES: usize = 100;

/// Signature type byte of plain Ed25519 note signatures (C2SP signed-note).
pub const TYPE_ED25519: u8 = 0x01;

/// Signature type byte of timestamped Ed25519 cosignatures (C2SP
/// tlog-cosignature v1).
pub const TYPE_COSIGNATURE: u8 = 0x04;

/// A note is not in the C2SP signed-note format. Offsets are byte offsets
/// into the input.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoteError {
    /// The bytes are not UTF-8.
    NotUtf8 {
        /// First byte that is not part of a UTF-8 character.
        offset: usize,
    },
    /// A control character other than newline.
    ControlCharacter {
        /// Where it is.
        offset: usize,
        /// The byte.
        byte: u8,
    },
    /// The text is empty or does not end with a newline.
    BadText,
    /// There is no blank line followed by signatures.
    NoSignatures,
    /// A signature line is not `— <name> <base64>`.
    BadSignatureLine {
        /// Where the line starts.
        offset: usize,
        /// What is wrong with it.
        rule: &'static str,
    },
    /// More than [`MAX_SIGNATURES`] signatures.
    TooManySignatures,
    /// A signature by a known key (name and key id match) does not verify.
    InvalidSignature {
        /// The key name.
        name: String,
    },
    /// No signature is by a known key.
    NoKnownSignature,
}

impl fmt::Display for NoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoteError::NotUtf8 { offset } => write!(f, "note: byte {offset} is not UTF-8"),
            NoteError::ControlCharacter { offset, byte } => write!(
                f,
                "note: byte {offset} is the control character 0x{byte:02x} (only newline allowed)"
            ),
            NoteError::BadText => f.write_str("note: the text is empty or lacks its final newline"),
            NoteError::NoSignatures => {
                f.write_str("note: no blank line followed by signature lines")
            }
            NoteError::BadSignatureLine { offset, rule } => {
                write!(f, "note: signature line at byte {offset}: {rule}")
            }
            NoteError::TooManySignatures => {
                write!(f, "note: more than {MAX_SIGNATURES} signatures")
            }
            NoteError::InvalidSignature { name } => {
                write!(
                    f,
                    "note: the signature by known key {name:?} does not verify"
                )
            }
            NoteError::NoKnownSignature => f.write_str("note: no signature by a known key"),
        }
    }
}

impl std::error::Error for NoteError {}

/// One signature line of a note: key name, key id, and the signature bytes
/// after the key id (C2SP signed-note).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteSignature {
    name: String,
    key_id: u32,
    signature: Vec<u8>,
}

impl NoteSignature {
    /// A signature by key `name`/`key_id` (C2SP signed-note); the name is
    /// checked by [`key_name_ok`].
    pub fn new(name: &str, key_id: u32, signature: Vec<u8>) -> Result<Self, NoteError> {
        if !key_name_ok(name) {
            return Err(NoteError::BadSignatureLine {
                offset: 0,
                rule: "key name is empty or holds a space or '+'",
            });
        }
        Ok(NoteSignature {
            name: name.to_owned(),
            key_id,
            signature,
        })
    }

    /// The key name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key id (big-endian first four bytes of the base64 payload).
    #[must_use]
    pub fn key_id(&self) -> u32 {
        self.key_id
    }

    /// The signature bytes after the key id.
    #[must_use]
    pub fn signature(&self) -> &[u8] {
        &self.signature
    }

    /// The signature line, `— <name> base64(key ID ‖ signature)\n`.
    #[must_use]
    pub fn line(&self) -> String {
        let mut payload = Vec::with_capacity(4 + self.signature.len());
        payload.extend_from_slice(&self.key_id.to_be_bytes());
        payload.extend_from_slice(&self.signature);
        format!(
            "{SIGNATURE_PREFIX}{} {}\n",
            self.name,
            BASE64.encode(&payload)
        )
    }

    /// Parse one line without its newline; `offset` locates it for errors.
    fn parse_line(line: &str, offset: usize) -> Result<Self, NoteError> {
        let bad = |rule| NoteError::BadSignatureLine { offset, rule };
        let rest = line
            .strip_prefix(SIGNATURE_PREFIX)
            .ok_or(bad("does not start with an em dash and a space"))?;
        let (name, b64) = rest
            .split_once(' ')
            .ok_or(bad("no space between key name and signature"))?;
        if !key_name_ok(name) {
            return Err(bad("key name is empty or holds a space or '+'"));
        }
        let payload = BASE64
            .decode(b64.as_bytes())
            .map_err(|_| bad("signature is not canonical base64"))?;
        let (id, signature) = payload
            .split_first_chunk::<4>()
            .ok_or(bad("signature is shorter than its 4-byte key id"))?;
        if signature.is_empty() {
            return Err(bad("signature is empty after its key id"));
        }
        Ok(NoteSignature {
            name: name.to_owned(),
            key_id: u32::from_be_bytes(*id),
            signature: signature.to_vec(),
        })
    }
}

/// Whether `name` may be a key name: non-empty, no Unicode space, no `+`
/// (C2SP signed-note).
#[must_use]
pub fn key_name_ok(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == '+')
}

/// A signed note: its text (ending in a newline) and its signatures (C2SP
/// signed-note).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    text: String,
    signatures: Vec<NoteSignature>,
}

impl Note {
    /// An unsigned note of `text`, which must be non-empty UTF-8 without
    /// control characters other than newline, ending in a newline and
    /// without a blank line at its end (C2SP signed-note).
    pub fn new(text: &str) -> Result<Self, NoteError> {
        check_chars(text.as_bytes())?;
        if !text.ends_with('\n') || text.ends_with("\n\n") || text == "\n" {
            return Err(NoteError::BadText);
        }
        Ok(Note {
            text: text.to_owned(),
            signatures: Vec::new(),
        })
    }

    /// Parse a signed note: the text is everything up to the last blank
    /// line, the signatures everything after (C2SP signed-note).
    pub fn parse(bytes: &[u8]) -> Result<Self, NoteError> {
        let all = check_chars(bytes)?;
        let split = all.rfind("\n\n").ok_or(NoteError::NoSignatures)?;
        let text = &all[..=split];
        let sigs = &all[split + 2..];
        if sigs.is_empty() {
            return Err(NoteError::NoSignatures);
        }
        let mut signatures = Vec::new();
        let mut offset = split + 2;
        let mut rest = sigs;
        while !rest.is_empty() {
            let Some((line, tail)) = rest.split_once('\n') else {
                return Err(NoteError::BadSignatureLine {
                    offset,
                    rule: "does not end with a newline",
                });
            };
            if signatures.len() == MAX_SIGNATURES {
                return Err(NoteError::TooManySignatures);
            }
            signatures.push(NoteSignature::parse_line(line, offset)?);
            offset += line.len() + 1;
            rest = tail;
        }
        Ok(Note {
            text: text.to_owned(),
            signatures,
        })
    }

    /// The note text, including its final newline.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The signatures, in order.
    #[must_use]
    pub fn signatures(&self) -> &[NoteSignature] {
        &self.signatures
    }

    /// Add a signature line (kept in order; an identical line is not added
    /// twice).
    pub fn push(&mut self, signature: NoteSignature) -> Result<(), NoteError> {
        if self.signatures.contains(&signature) {
            return Ok(());
        }
        if self.signatures.len() == MAX_SIGNATURES {
            return Err(NoteError::TooManySignatures);
        }
        self.signatures.push(signature);
        Ok(())
    }

    /// Sign the text with an Ed25519 key named `name` and add the line
    /// (C2SP signed-note, type 0x01).
    pub fn sign(&mut self, name: &str, key: &SigningKey) -> Result<(), NoteError> {
        let id = key_id(name, TYPE_ED25519, key.public_key().as_bytes());
        let sig = key.sign(self.text.as_bytes());
        self.push(NoteSignature::new(name, id, sig.to_vec())?)
    }

    /// The note as text: the text, a blank line, the signature lines.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = self.text.clone();
        out.push('\n');
        for s in &self.signatures {
            out.push_str(&s.line());
        }
        out
    }

    /// Verify the note against `verifiers` (C2SP signed-note): signatures
    /// whose name and key id match no verifier are ignored; one that matches
    /// but does not verify rejects the whole note; at least one must verify.
    /// Returns, for each verified signature, the index of its verifier and
    /// (for cosignatures) its timestamp.
    pub fn verify(&self, verifiers: &[NoteVerifier]) -> Result<Vec<Verified>, NoteError> {
        let mut verified = Vec::new();
        for sig in &self.signatures {
            for (index, v) in verifiers.iter().enumerate() {
                if v.name != sig.name || v.key_id != sig.key_id {
                    continue;
                }
                let time = v
                    .check(self.text.as_bytes(), &sig.signature)
                    .ok_or_else(|| NoteError::InvalidSignature {
                        name: sig.name.clone(),
                    })?;
                verified.push(Verified {
                    verifier: index,
                    time,
                });
            }
        }
        if verified.is_empty() {
            return Err(NoteError::NoKnownSignature);
        }
        Ok(verified)
    }
}

/// A signature that verified (see [`Note::verify`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Index of the verifier in the slice given.
    pub verifier: usize,
    /// The cosignature's timestamp (type 0x04); `None` for type 0x01.
    pub time: Option<u64>,
}

/// The input as UTF-8 without control characters other than newline.
fn check_chars(bytes: &[u8]) -> Result<&str, NoteError> {
    let text = core::str::from_utf8(bytes).map_err(|e| NoteError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    if let Some(offset) = bytes.iter().position(|&b| b < 0x20 && b != b'\n') {
        return Err(NoteError::ControlCharacter {
            offset,
            byte: bytes[offset],
        });
    }
    Ok(text)
}

/// The key id `SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4]`, big-endian
/// (C2SP signed-note).
#[must_use]
pub fn key_id(name: &str, signature_type: u8, public_key: &[u8]) -> u32 {
    let digest = Sha256::new()
        .chain_update(name.as_bytes())
        .chain_update([b'\n', signature_type])
        .chain_update(public_key)
        .finalize();
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// A verifier key is not in the form `<name>+<hex id>+<base64(type ‖ key)>`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifierKeyError {
    /// Not three `+`-separated parts.
    Shape,
    /// The name is empty or holds a space or `+`.
    Name,
    /// The key id is not 8 lowercase hex digits.
    KeyId,
    /// The key material is not canonical base64.
    Base64,
    /// The signature type is not one this crate verifies (0x01, 0x04).
    UnsupportedType(u8),
    /// The public key is not an acceptable Ed25519 key (PROFILE P5).
    PublicKey,
    /// The key id is not the one computed from name, type and key.
    KeyIdMismatch {
        /// The id written.
        written: u32,
        /// The id computed.
        computed: u32,
    },
}

impl fmt::Display for VerifierKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("verifier key: ")?;
        match self {
            VerifierKeyError::Shape => f.write_str("not <name>+<hex key id>+<base64 key>"),
            VerifierKeyError::Name => f.write_str("key name is empty or holds a space or '+'"),
            VerifierKeyError::KeyId => f.write_str("key id is not 8 lowercase hex digits"),
            VerifierKeyError::Base64 => f.write_str("key is not canonical base64"),
            VerifierKeyError::UnsupportedType(t) => {
                write!(
                    f,
                    "signature type 0x{t:02x} is not Ed25519 (0x01) or cosignature (0x04)"
                )
            }
            VerifierKeyError::PublicKey => f.write_str("not an acceptable Ed25519 public key"),
            VerifierKeyError::KeyIdMismatch { written, computed } => {
                write!(f, "key id {written:08x} is not the computed {computed:08x}")
            }
        }
    }
}

impl std::error::Error for VerifierKeyError {}

/// A known key: name, key id, signature type (0x01 Ed25519 or 0x04
/// cosignature) and the Ed25519 public key (C2SP signed-note "verifier
/// keys", tlog-cosignature).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteVerifier {
    name: String,
    key_id: u32,
    signature_type: u8,
    key: PublicKey,
}

impl NoteVerifier {
    /// The verifier of Ed25519 note signatures (type 0x01) by `key` named
    /// `name`.
    pub fn ed25519(name: &str, key: PublicKey) -> Result<Self, VerifierKeyError> {
        Self::with_type(name, TYPE_ED25519, key)
    }

    /// The verifier of tlog-cosignature v1 cosignatures (type 0x04) by
    /// `key` named `name`.
    pub fn cosigner(name: &str, key: PublicKey) -> Result<Self, VerifierKeyError> {
        Self::with_type(name, TYPE_COSIGNATURE, key)
    }

    fn with_type(name: &str, signature_type: u8, key: PublicKey) -> Result<Self, VerifierKeyError> {
        if !key_name_ok(name) {
            return Err(VerifierKeyError::Name);
        }
        Ok(NoteVerifier {
            name: name.to_owned(),
            key_id: key_id(name, signature_type, key.as_bytes()),
            signature_type,
            key,
        })
    }

    /// Parse `<name>+<hex key ID>+<base64(type ‖ key)>`, splitting on the
    /// first two `+` only (the base64 may hold `+`).
    pub fn parse(vkey: &str) -> Result<Self, VerifierKeyError> {
        let mut parts = vkey.splitn(3, '+');
        let (Some(name), Some(id), Some(b64)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(VerifierKeyError::Shape);
        };
        if !key_name_ok(name) {
            return Err(VerifierKeyError::Name);
        }
        let id_bytes: [u8; 4] = HEXLOWER
            .decode(id.as_bytes())
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or(VerifierKeyError::KeyId)?;
        let written = u32::from_be_bytes(id_bytes);
        let material = BASE64
            .decode(b64.as_bytes())
            .map_err(|_| VerifierKeyError::Base64)?;
        let (&signature_type, key) = material.split_first().ok_or(VerifierKeyError::Base64)?;
        if signature_type != TYPE_ED25519 && signature_type != TYPE_COSIGNATURE {
            return Err(VerifierKeyError::UnsupportedType(signature_type));
        }
        let key = PublicKey::from_slice(key).map_err(|_| VerifierKeyError::PublicKey)?;
        let v = Self::with_type(name, signature_type, key)?;
        if v.key_id != written {
            return Err(VerifierKeyError::KeyIdMismatch {
                written,
                computed: v.key_id,
            });
        }
        Ok(v)
    }

    /// The key name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key id.
    #[must_use]
    pub fn key_id(&self) -> u32 {
        self.key_id
    }

    /// The signature type byte (0x01 or 0x04).
    #[must_use]
    pub fn signature_type(&self) -> u8 {
        self.signature_type
    }

    /// The Ed25519 public key.
    #[must_use]
    pub fn public_key(&self) -> &PublicKey {
        &self.key
    }

    /// Check `signature` (the bytes after the key id) over `text`; `Some`
    /// with the cosignature time (or `None` inside for type 0x01) when it
    /// verifies.
    fn check(&self, text: &[u8], signature: &[u8]) -> Option<Option<u64>> {
        match self.signature_type {
            TYPE_COSIGNATURE => cosignature::verify(&self.key, text, signature).map(Some),
            _ => {
                let sig: &[u8; 64] = signature.try_into().ok()?;
                self.key.verify(text, sig).ok().map(|()| None)
            }
        }
    }
}

impl fmt::Display for NoteVerifier {
    /// The verifier-key text form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut material = Vec::with_capacity(33);
        material.push(self.signature_type);
        material.extend_from_slice(self.key.as_bytes());
        write!(
            f,
            "{}+{}+{}",
            self.name,
            HEXLOWER.encode(&self.key_id.to_be_bytes()),
            BASE64.encode(&material)
        )
    }
}
