//! Keyrings: the pinned-cache channel of spec §2.1, in the text format of
//! CLI.md (`<sigil> ed25519 <64 lowercase hex>` per line), each line
//! optionally ending with a label naming the key for people (`… alice`,
//! see [`is_label`]). A label is a display name only: it never
//! changes which key verifies what.
//!
//! Loading is bounded (docs/performance.md *Memory under hostile input*,
//! B3/B6): a keyring file is read only if it is a regular file of at most
//! [`MAX_KEYRING_BYTES`] (a FIFO, a device or `/dev/zero` is refused by
//! name, never opened for reading); a directory's `*.pub` files together
//! are capped the same way and counted against [`MAX_KEYRING_FILES`], and a
//! `*.pub` entry that is not a regular file (a FIFO, a directory, a broken
//! or looping symbolic link) is skipped and reported in
//! [`Loaded::skipped`].

use alloc::{collections::BTreeMap, string::String, vec::Vec};
use core::fmt;
use std::path::{Path, PathBuf};

use herald_core::{KeyError, KeyResolver, KeySource, PublicKey, Sigil, SigilError, SigilForm};
use herald_fs::{self as files, FileError, Io};
use sha2::{Digest, Sha256};

/// Where a key in a [`Keyring`] came from (reported per envelope, P7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// A keyring file or directory (a pinned, trusted channel).
    Pinned,
    /// Learned from a birth envelope whose key hashes to its sigil (P7).
    Birth,
    /// Carried by a proof bundle (`crate::bundle`): the key hashes to its
    /// sigil, so it may verify that sigil's envelopes, but it is never
    /// trusted as a log's or a Herald's key.
    Bundle,
    /// Resolved through DNS (PROFILE P15): a TXT record at a handle named
    /// the sigil with this key, which hashes to it.
    Dns,
    /// Resolved through a conduit's `GET /v1/keys/{sigil}` (PROFILE P15,
    /// CONDUIT.md), checked by hash and the P8 rules.
    Conduit,
    /// A `key` claim a quorum of the verifier's Heralds certified (PROFILE
    /// P14), which hashes to its subject.
    Herald,
}

impl Provenance {
    /// How much a key's channel is trusted: a pinned key outranks one a
    /// bundle carried or a resolution found (each checked against its
    /// sigil), which outranks one learned from a birth.
    fn rank(self) -> u8 {
        match self {
            Self::Birth => 0,
            Self::Bundle | Self::Dns | Self::Conduit | Self::Herald => 1,
            Self::Pinned => 2,
        }
    }
}

/// Where the key that made an envelope's origin signature came from (P7,
/// P8), as its report names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrigin {
    /// A key the verifier pinned (a keyring).
    Keyring,
    /// A birth envelope's own key, which hashes to its sigil (P7).
    Birth,
    /// A key a proof bundle carried, which hashes to its sigil.
    Bundle,
    /// The new key of a molt the verifier accepted (P8).
    Molt,
    /// A key resolved through DNS at a handle (PROFILE P15).
    Dns,
    /// A key resolved through a conduit (PROFILE P15).
    Conduit,
    /// A key a quorum of the verifier's Heralds certified (PROFILE P14).
    Herald,
}

impl KeyOrigin {
    /// The name in reports: `keyring`, `birth`, `bundle`, `molt`, `dns`,
    /// `conduit`, `herald`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Keyring => "keyring",
            Self::Birth => "birth",
            Self::Bundle => "bundle",
            Self::Molt => "molt",
            Self::Dns => "dns",
            Self::Conduit => "conduit",
            Self::Herald => "herald",
        }
    }

    /// The origin of a key [`herald_core::check`] resolved as `source`,
    /// when that is not the keyring (whose keys have a [`Provenance`]).
    pub fn of_source(source: KeySource) -> Option<Self> {
        match source {
            KeySource::Keyring => Some(Self::Keyring),
            KeySource::Birth => Some(Self::Birth),
            KeySource::Molt => Some(Self::Molt),
            _ => None,
        }
    }
}

impl From<Provenance> for KeyOrigin {
    fn from(p: Provenance) -> Self {
        match p {
            Provenance::Pinned => Self::Keyring,
            Provenance::Birth => Self::Birth,
            Provenance::Bundle => Self::Bundle,
            Provenance::Dns => Self::Dns,
            Provenance::Conduit => Self::Conduit,
            Provenance::Herald => Self::Herald,
        }
    }
}

/// What a resolution said of a key besides the key (CLI.md *Resolution and
/// Heralds*): the handle it was found at, and whether DNSSEC validated it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResolvedAt {
    /// The handle (`alice@acme.com`) whose record named the key.
    pub handle: String,
    /// Whether the DNS answer was DNSSEC-validated (`None`: not DNS).
    pub dnssec: Option<bool>,
}

impl ResolvedAt {
    /// Found at `handle`, DNSSEC-validated or not (`None`: not said).
    pub fn new(handle: String, dnssec: Option<bool>) -> Self {
        Self { handle, dnssec }
    }
}

/// Largest keyring: one file, or all the `*.pub` files of a directory
/// together (16 MiB, about 140 000 key lines).
pub const MAX_KEYRING_BYTES: u64 = 16 << 20;

/// Most `*.pub` files read from one keyring directory.
pub const MAX_KEYRING_FILES: usize = 10_000;

/// What [`Keyring::load`] did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Loaded {
    /// Key lines read.
    pub keys: usize,
    /// `*.pub` entries of a directory that were not read, and why.
    pub skipped: Vec<(PathBuf, String)>,
}

/// A keyring line or file could not be used. Commands exit 2 on this (CLI.md).
#[derive(Debug)]
#[non_exhaustive]
pub enum KeyringError {
    /// The file or directory could not be read.
    Io(Io),
    /// The file is not a regular file, or is past [`MAX_KEYRING_BYTES`].
    File(FileError),
    /// A directory holds more than [`MAX_KEYRING_FILES`] `*.pub` files, or
    /// more than [`MAX_KEYRING_BYTES`] of them together.
    TooLarge {
        /// The directory.
        path: PathBuf,
    },
    /// A line is not `<sigil> ed25519 <64 lowercase hex chars>`.
    Syntax {
        /// Where.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// The sigil does not parse (P2).
    Sigil {
        /// Where.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// Why.
        error: SigilError,
    },
    /// The key is not usable (not a point, or of small order; P5).
    Key {
        /// Where.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// Why.
        error: KeyError,
    },
    /// The sigil is not the key's (P2).
    SigilMismatch {
        /// Where.
        origin: String,
        /// 1-based line number.
        line: usize,
    },
}

impl fmt::Display for KeyringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(io) => write!(f, "{}: {}", io.path.display(), io.error),
            Self::File(e) => write!(f, "{e}"),
            Self::TooLarge { path } => write!(
                f,
                "{}: more than {MAX_KEYRING_FILES} keyring files or {MAX_KEYRING_BYTES} bytes \
                 of them",
                path.display()
            ),
            Self::Syntax {
                origin,
                line,
                problem,
            } => write!(f, "{origin}:{line}: {problem}"),
            Self::Sigil {
                origin,
                line,
                error,
            } => write!(f, "{origin}:{line}: {error}"),
            Self::Key {
                origin,
                line,
                error,
            } => write!(f, "{origin}:{line}: {error}"),
            Self::SigilMismatch { origin, line } => {
                write!(f, "{origin}:{line}: the sigil is not this key's (P2)")
            }
        }
    }
}

impl std::error::Error for KeyringError {}

/// A set of public keys resolving every sigil form of each key (P13).
#[derive(Clone, Debug, Default)]
pub struct Keyring {
    /// Keyed by the 10-byte hash prefix every sigil form shares.
    keys: BTreeMap<[u8; 10], Vec<Held>>,
    /// The label of a key, by its bytes: the first one given for it.
    labels: BTreeMap<[u8; 32], String>,
    /// Where a resolution found a key, by its bytes (PROFILE P15).
    resolved: BTreeMap<[u8; 32], ResolvedAt>,
}

/// A key of a [`Keyring`], with the SHA-256 of its bytes, which every
/// sigil naming it starts with (P2): hashed once when the key is added,
/// not at every lookup (an audit looks its senders up several times per
/// envelope, docs/performance.md).
#[derive(Clone, Copy, Debug)]
struct Held {
    key: PublicKey,
    provenance: Provenance,
    hash: [u8; 32],
}

/// Longest label, in bytes.
pub(crate) const MAX_LABEL_LEN: usize = 64;

/// Whether `text` may be a keyring line's label: 1 to [`MAX_LABEL_LEN`]
/// ASCII letters, digits, `.`, `_`, `-`, `@` or `+` (no `:`, so a label is
/// never read as a sigil).
pub(crate) fn is_label(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_LABEL_LEN
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-@+".contains(&b))
}

impl Keyring {
    /// An empty keyring.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a key.
    pub fn insert(&mut self, key: PublicKey, provenance: Provenance) {
        let short = key.sigil(SigilForm::Short);
        let mut prefix = [0u8; 10];
        prefix.copy_from_slice(short.hash_prefix());
        let slot = self.keys.entry(prefix).or_default();
        match slot.iter_mut().find(|h| h.key == key) {
            // A pinned key stays pinned even if a birth or a bundle also
            // teaches it; a better channel upgrades a known key.
            Some(h) if h.provenance.rank() < provenance.rank() => h.provenance = provenance,
            Some(_) => {}
            None => slot.push(Held {
                key,
                provenance,
                hash: Sha256::digest(key.as_bytes()).into(),
            }),
        }
    }

    /// Add a key a resolution channel found (PROFILE P15; `provenance`
    /// [`Provenance::Dns`] or [`Provenance::Conduit`]), with the handle it
    /// was found at. The caller has checked the key against its sigil.
    pub fn insert_resolved(
        &mut self,
        key: PublicKey,
        provenance: Provenance,
        at: Option<ResolvedAt>,
    ) {
        self.insert(key, provenance);
        if let Some(at) = at {
            self.resolved.entry(*key.as_bytes()).or_insert(at);
        }
    }

    /// Where a resolution found `key`, if one did and said.
    pub fn resolved_at(&self, key: &PublicKey) -> Option<&ResolvedAt> {
        self.resolved.get(key.as_bytes())
    }

    /// Every key a resolution found at a handle, with what it said.
    pub fn resolved(&self) -> impl Iterator<Item = (PublicKey, &ResolvedAt)> + '_ {
        self.resolved
            .iter()
            .filter_map(|(k, at)| Some((PublicKey::from_bytes(k).ok()?, at)))
    }

    /// Every key, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = PublicKey> + '_ {
        self.keys.values().flatten().map(|h| h.key)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.values().map(Vec::len).sum()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The label a keyring line gave `key`, if any.
    pub fn label(&self, key: &PublicKey) -> Option<&str> {
        self.labels.get(key.as_bytes()).map(String::as_str)
    }

    /// Every key labelled `label` (more than one is an ambiguity for the
    /// caller to report).
    pub fn keys_labelled(&self, label: &str) -> Vec<PublicKey> {
        self.keys()
            .filter(|k| self.label(k) == Some(label))
            .collect()
    }

    /// The key `sigil` names, and where it came from: the first key whose
    /// hash starts with the sigil's ([`Sigil::names_key`]).
    pub fn lookup(&self, sigil: &Sigil) -> Option<(PublicKey, Provenance)> {
        let hash = sigil.hash_prefix();
        let prefix: [u8; 10] = hash.get(..10)?.try_into().ok()?;
        self.keys
            .get(&prefix)?
            .iter()
            .find(|h| h.hash.starts_with(hash))
            .map(|h| (h.key, h.provenance))
    }

    /// Parse keyring text (CLI.md); `origin` names it in errors. Its keys
    /// are [`Provenance::Pinned`].
    pub fn parse(&mut self, text: &str, origin: &str) -> Result<usize, KeyringError> {
        self.parse_as(text, origin, Provenance::Pinned)
    }

    /// Parse keyring text (CLI.md) whose keys came through `provenance`.
    pub fn parse_as(
        &mut self,
        text: &str,
        origin: &str,
        provenance: Provenance,
    ) -> Result<usize, KeyringError> {
        let mut added = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let syntax = |problem| KeyringError::Syntax {
                origin: origin.into(),
                line,
                problem,
            };
            let mut parts = trimmed.split_ascii_whitespace();
            let (Some(sigil), Some(alg), Some(hex), label, None) = (
                parts.next(),
                parts.next(),
                parts.next(),
                parts.next(),
                parts.next(),
            ) else {
                return Err(syntax("expected `<sigil> ed25519 <64 hex chars> [label]`"));
            };
            if label.is_some_and(|l| !is_label(l)) {
                return Err(syntax(
                    "a label is 1 to 64 ASCII letters, digits, `.`, `_`, `-`, `@` or `+`",
                ));
            }
            if alg != "ed25519" {
                return Err(syntax("only ed25519 keys are supported"));
            }
            let sigil = Sigil::parse(sigil).map_err(|error| KeyringError::Sigil {
                origin: origin.into(),
                line,
                error,
            })?;
            let bytes =
                decode_hex32(hex).ok_or(syntax("the key must be 64 lowercase hex characters"))?;
            let key = PublicKey::from_bytes(&bytes).map_err(|error| KeyringError::Key {
                origin: origin.into(),
                line,
                error,
            })?;
            if sigil.is_reserved() || !sigil.names_key(key.as_bytes()) {
                return Err(KeyringError::SigilMismatch {
                    origin: origin.into(),
                    line,
                });
            }
            self.insert(key, provenance);
            if let Some(label) = label {
                self.labels
                    .entry(*key.as_bytes())
                    .or_insert_with(|| label.into());
            }
            added += 1;
        }
        Ok(added)
    }

    /// Load a keyring file, or every `*.pub` file of a directory (CLI.md),
    /// within the caps of the module documentation.
    pub fn load(&mut self, path: &Path) -> Result<Loaded, KeyringError> {
        let io = |error| KeyringError::Io(Io::new(path, "read", error));
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_dir() {
            let text = read_text(path, MAX_KEYRING_BYTES)?;
            return Ok(Loaded {
                keys: self.parse(&text, &path.display().to_string())?,
                skipped: Vec::new(),
            });
        }
        let mut loaded = Loaded::default();
        let mut files: Vec<PathBuf> = Vec::new();
        for entry in std::fs::read_dir(path).map_err(io)? {
            let file = entry.map_err(io)?.path();
            if file.extension().is_none_or(|x| x != "pub") {
                continue;
            }
            // `metadata` follows links: a broken or looping one errs here.
            match std::fs::metadata(&file) {
                Ok(m) if m.is_file() => files.push(file),
                Ok(m) => loaded
                    .skipped
                    .push((file, files::kind(&m.file_type()).into())),
                Err(e) => loaded.skipped.push((file, std::format!("{e}"))),
            }
            if files.len() > MAX_KEYRING_FILES {
                return Err(KeyringError::TooLarge {
                    path: path.to_path_buf(),
                });
            }
        }
        files.sort();
        loaded.skipped.sort();
        let mut budget = MAX_KEYRING_BYTES;
        for file in files {
            let text = read_text(&file, budget).map_err(|e| match e {
                KeyringError::File(FileError::TooLarge { .. }) => KeyringError::TooLarge {
                    path: path.to_path_buf(),
                },
                e => e,
            })?;
            budget -= text.len() as u64;
            loaded.keys += self.parse(&text, &file.display().to_string())?;
        }
        Ok(loaded)
    }
}

/// The text of the keyring file `path`, at most `limit` bytes.
fn read_text(path: &Path, limit: u64) -> Result<String, KeyringError> {
    let bytes = files::read_capped(path, limit, "keyring").map_err(KeyringError::File)?;
    String::from_utf8(bytes).map_err(|_| KeyringError::Syntax {
        origin: path.display().to_string(),
        line: 1,
        problem: "not UTF-8 text",
    })
}

impl KeyResolver for Keyring {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        self.lookup(sigil).map(|(k, _)| k)
    }
}

/// The keys of a [`Keyring`] that the verifier pinned
/// ([`Provenance::Pinned`]), as a resolver: a signed tree head must verify
/// under one of these (P8 rule 3: "an audit log whose STH the verifier
/// accepts"), never under a key a birth or a bundle taught.
#[derive(Clone, Copy, Debug)]
pub struct Pinned<'a>(&'a Keyring);

impl KeyResolver for Pinned<'_> {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        self.0
            .lookup(sigil)
            .filter(|(_, p)| *p == Provenance::Pinned)
            .map(|(k, _)| k)
    }
}

impl Keyring {
    /// Only the pinned keys, as a resolver.
    pub fn pinned(&self) -> Pinned<'_> {
        Pinned(self)
    }

    /// The report's `key_source` (CLI.md) for an origin key `check` resolved
    /// as `source` for the signer `from`: `keyring` for a pinned key,
    /// `birth` for one learned from a birth, `molt` for a molted-in key.
    pub fn source_name(&self, source: Option<KeySource>, from: Option<Sigil>) -> Option<KeyOrigin> {
        match source? {
            KeySource::Keyring => self.lookup(&from?).map(|(_, p)| p.into()),
            other => KeyOrigin::of_source(other),
        }
    }
}

/// The keyring line for `key` with `label` at its end when it is one (1
/// to 64 ASCII letters, digits, `.`, `_`, `-`, `@` or `+`: CLI.md
/// keyrings); otherwise the line without a label.
pub fn labelled_key_line(key: &PublicKey, label: &str) -> String {
    let mut line = key_line(key);
    if is_label(label) {
        line.push(' ');
        line.push_str(label);
    }
    line
}

/// The keyring line for `key` (CLI.md): `<sigil> ed25519 <hex>`.
pub fn key_line(key: &PublicKey) -> String {
    let mut line = std::format!("{} ed25519 ", key.sigil(SigilForm::Default));
    for b in key.as_bytes() {
        line.push_str(&std::format!("{b:02x}"));
    }
    line
}

fn decode_hex32(s: &str) -> Option<[u8; 32]> {
    let bytes = s.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        *o = (nibble(*pair.first()?)? << 4) | nibble(*pair.get(1)?)?;
    }
    Some(out)
}

use alloc::string::ToString;

#[cfg(test)]
mod label_tests {
    use super::*;
    use herald_core::SigningKey;

    #[test]
    fn a_line_may_end_with_a_label() {
        let key = SigningKey::from_seed(&[7; 32]).public_key();
        let other = SigningKey::from_seed(&[8; 32]).public_key();
        let text = std::format!(
            "{}\n{}\n",
            labelled_key_line(&key, "alice"),
            key_line(&other)
        );
        let mut ring = Keyring::new();
        assert_eq!(ring.parse(&text, "t").unwrap(), 2);
        assert_eq!(ring.label(&key), Some("alice"));
        assert_eq!(ring.label(&other), None);
        assert_eq!(ring.keys_labelled("alice"), std::vec![key]);
        // Not a label: rejected, never silently dropped.
        let bad = std::format!("{} bad:label\n", key_line(&key));
        assert!(Keyring::new().parse(&bad, "t").is_err());
        let five = std::format!("{} a b\n", key_line(&key));
        assert!(Keyring::new().parse(&five, "t").is_err());
        assert_eq!(labelled_key_line(&key, "has space"), key_line(&key));
    }
}
