//! Sigils: names derived from Ed25519 public keys (spec §2.1, PROFILE.md P2).

use core::fmt;
use core::str::FromStr;

use sha2::{Digest, Sha256};

/// RFC 4648 §6 base32, lower case, no padding, trailing bits checked (P2).
const BASE32_LOWER: data_encoding::Encoding = data_encoding_macro::new_encoding! {
    symbols: "abcdefghijklmnopqrstuvwxyz234567",
    check_trailing_bits: true,
};

/// The three key-derived forms of a sigil (P2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SigilForm {
    /// `sigil:` + 26 chars: 16 bytes of the key hash.
    Default,
    /// `sigil:long:` + 39 chars: 24 bytes.
    Long,
    /// `sigil:short:` + 16 chars: 10 bytes; ephemeral identities only.
    Short,
}

impl SigilForm {
    /// Every form.
    pub const ALL: [SigilForm; 3] = [Self::Default, Self::Long, Self::Short];

    /// The string prefix.
    pub const fn prefix(self) -> &'static str {
        match self {
            Self::Default => "sigil:",
            Self::Long => "sigil:long:",
            Self::Short => "sigil:short:",
        }
    }

    /// Bytes of `sha256(public_key)` the form keeps.
    pub const fn hash_len(self) -> usize {
        match self {
            Self::Default => 16,
            Self::Long => 24,
            Self::Short => 10,
        }
    }

    /// Base32 characters after the prefix.
    pub const fn chars(self) -> usize {
        (self.hash_len() * 8).div_ceil(5)
    }

    /// `default`, `long` or `short`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Long => "long",
            Self::Short => "short",
        }
    }
}

macro_rules! reserved {
    ($($variant:ident = $s:literal,)*) => {
        /// The reserved sigils of spec §9 (P2): they may be addressed, never sign.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Reserved {
            $(
                #[doc = concat!("`", $s, "`")]
                $variant,
            )*
        }

        impl Reserved {
            /// Every reserved sigil.
            pub const ALL: &'static [Reserved] = &[$(Reserved::$variant,)*];

            /// The sigil string.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Reserved::$variant => $s,)*
                }
            }

            /// The longest reserved sigil string.
            const MAX_LEN: usize = {
                let mut max = 0;
                $(if $s.len() > max { max = $s.len(); })*
                max
            };

            fn from_bytes(s: &[u8]) -> Option<Self> {
                Self::ALL.iter().copied().find(|r| r.as_str().as_bytes() == s)
            }
        }
    };
}

reserved! {
    None = "sigil:none",
    Dreamer = "sigil:dreamer",
    Crier = "sigil:crier",
    Confessor = "sigil:confessor",
    Scribe = "sigil:scribe",
    Almoner = "sigil:almoner",
    Mortician = "sigil:mortician",
    Lighthouse = "sigil:lighthouse",
    Dovecote = "sigil:dovecote",
    SealKeeper = "sigil:seal_keeper",
    Translator = "sigil:translator",
    Librarian = "sigil:librarian",
}

/// Why a string is not a sigil (P2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigilError {
    /// It does not start with `sigil:`.
    Prefix,
    /// Wrong number of characters after the prefix for its form.
    Length {
        /// The form the prefix names.
        form: SigilForm,
        /// Characters found.
        found: usize,
    },
    /// A character outside the lower-case base32 alphabet (upper case and
    /// `=` padding included), at this byte offset of the string.
    Character {
        /// Offset in the sigil string.
        offset: usize,
    },
    /// The unused low bits of the last character are not zero.
    TrailingBits,
}

impl SigilError {
    /// A stable snake_case name (used by the conformance vectors).
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Prefix => "prefix",
            Self::Length { .. } => "length",
            Self::Character { .. } => "character",
            Self::TrailingBits => "trailing_bits",
        }
    }
}

impl fmt::Display for SigilError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Prefix => f.write_str("not a sigil: it must start with \"sigil:\" (P2)"),
            Self::Length { form, found } => write!(
                f,
                "a {} sigil has {} characters after {:?}, found {found} (P2)",
                form.name(),
                form.chars(),
                form.prefix()
            ),
            Self::Character { offset } => write!(
                f,
                "character at offset {offset} is not lower-case base32 without padding (P2)"
            ),
            Self::TrailingBits => f.write_str("unused trailing bits are not zero (P2)"),
        }
    }
}

impl core::error::Error for SigilError {}

/// A parsed sigil: a key-derived name in one of three forms, or a reserved
/// name. Parsing is strict, so each key has exactly one string per form (P2).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sigil(Repr);

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Repr {
    Key { form: SigilForm, hash: [u8; 24] },
    Reserved(Reserved),
}

impl Sigil {
    /// The sigil of `public_key` in `form`.
    pub fn from_key(public_key: &[u8; 32], form: SigilForm) -> Self {
        let digest = Sha256::digest(public_key);
        let mut hash = [0u8; 24];
        let n = form.hash_len();
        hash[..n].copy_from_slice(&digest[..n]);
        Self(Repr::Key { form, hash })
    }

    /// Parse a sigil string strictly (P2).
    pub fn parse(s: &str) -> Result<Self, SigilError> {
        Self::parse_bytes(s.as_bytes())
    }

    /// [`Sigil::parse`] of a string's bytes (offsets in errors are byte
    /// offsets either way): a sigil is ASCII, so bytes whose UTF-8 the
    /// strict decoder checked need no second check to be parsed (P1, P2).
    pub(crate) fn parse_bytes(s: &[u8]) -> Result<Self, SigilError> {
        if s.len() <= Reserved::MAX_LEN
            && let Some(r) = Reserved::from_bytes(s)
        {
            return Ok(Self(Repr::Reserved(r)));
        }
        let (form, body) = if let Some(b) = s.strip_prefix(SigilForm::Long.prefix().as_bytes()) {
            (SigilForm::Long, b)
        } else if let Some(b) = s.strip_prefix(SigilForm::Short.prefix().as_bytes()) {
            (SigilForm::Short, b)
        } else if let Some(b) = s.strip_prefix(SigilForm::Default.prefix().as_bytes()) {
            (SigilForm::Default, b)
        } else {
            return Err(SigilError::Prefix);
        };
        let offset = s.len() - body.len();
        if let Some(i) = body
            .iter()
            .position(|c| !matches!(c, b'a'..=b'z' | b'2'..=b'7'))
        {
            return Err(SigilError::Character { offset: offset + i });
        }
        if body.len() != form.chars() {
            return Err(SigilError::Length {
                form,
                found: body.len(),
            });
        }
        let mut hash = [0u8; 24];
        let out = hash
            .get_mut(..form.hash_len())
            .ok_or(SigilError::TrailingBits)?;
        match BASE32_LOWER.decode_mut(body, out) {
            Ok(n) if n == form.hash_len() => Ok(Self(Repr::Key { form, hash })),
            Ok(_) => Err(SigilError::Length {
                form,
                found: body.len(),
            }),
            Err(partial) => match partial.error.kind {
                data_encoding::DecodeKind::Trailing => Err(SigilError::TrailingBits),
                _ => Err(SigilError::Character {
                    offset: offset + partial.error.position,
                }),
            },
        }
    }

    /// The reserved name, if this is one.
    pub fn reserved(&self) -> Option<Reserved> {
        match self.0 {
            Repr::Reserved(r) => Some(r),
            Repr::Key { .. } => None,
        }
    }

    /// Whether this is a reserved name (which never signs).
    pub fn is_reserved(&self) -> bool {
        self.reserved().is_some()
    }

    /// The form, for a key-derived sigil.
    pub fn form(&self) -> Option<SigilForm> {
        match self.0 {
            Repr::Key { form, .. } => Some(form),
            Repr::Reserved(_) => None,
        }
    }

    /// Whether this is a short sigil (P2 restricts where those may appear).
    pub fn is_short(&self) -> bool {
        self.form() == Some(SigilForm::Short)
    }

    /// The key-hash prefix this sigil carries (empty for a reserved name).
    pub fn hash_prefix(&self) -> &[u8] {
        match &self.0 {
            Repr::Key { form, hash } => hash.get(..form.hash_len()).unwrap_or_default(),
            Repr::Reserved(_) => &[],
        }
    }

    /// Whether `public_key` is the key this sigil names.
    pub fn names_key(&self, public_key: &[u8; 32]) -> bool {
        let prefix = self.hash_prefix();
        !prefix.is_empty() && Sha256::digest(public_key).starts_with(prefix)
    }

    /// Whether both sigils name the same key as far as their hashes show
    /// (one form's hash is a prefix of the other's).
    pub fn same_key_as(&self, other: &Sigil) -> bool {
        let (a, b) = (self.hash_prefix(), other.hash_prefix());
        let n = a.len().min(b.len());
        n > 0 && a.get(..n) == b.get(..n)
    }

    /// The same key in another form: only possible when this sigil carries
    /// at least as many hash bytes as the target form needs.
    pub fn to_form(&self, form: SigilForm) -> Option<Sigil> {
        let prefix = self.hash_prefix();
        let src = prefix.get(..form.hash_len())?;
        let mut hash = [0u8; 24];
        hash.get_mut(..form.hash_len())?.copy_from_slice(src);
        Some(Self(Repr::Key { form, hash }))
    }

    /// Write the sigil string into `buf` (52 bytes hold any sigil).
    pub fn write_str<'b>(&self, buf: &'b mut [u8; 52]) -> &'b str {
        let len = match &self.0 {
            Repr::Reserved(r) => {
                let s = r.as_str().as_bytes();
                buf[..s.len()].copy_from_slice(s);
                s.len()
            }
            Repr::Key { form, hash } => {
                let p = form.prefix().as_bytes();
                buf[..p.len()].copy_from_slice(p);
                let n = form.hash_len();
                let chars = form.chars();
                BASE32_LOWER.encode_mut(&hash[..n], &mut buf[p.len()..p.len() + chars]);
                p.len() + chars
            }
        };
        core::str::from_utf8(&buf[..len]).unwrap_or_default()
    }
}

impl fmt::Display for Sigil {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 52];
        f.write_str(self.write_str(&mut buf))
    }
}

impl fmt::Debug for Sigil {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sigil({self})")
    }
}

impl FromStr for Sigil {
    type Err = SigilError;
    fn from_str(s: &str) -> Result<Self, SigilError> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_have_the_profile_lengths() {
        assert_eq!(SigilForm::Default.chars(), 26);
        assert_eq!(SigilForm::Long.chars(), 39);
        assert_eq!(SigilForm::Short.chars(), 16);
    }

    #[test]
    fn derive_and_parse_round_trip_in_every_form() {
        let key = [7u8; 32];
        for form in SigilForm::ALL {
            let sigil = Sigil::from_key(&key, form);
            let mut buf = [0u8; 52];
            let s = sigil.write_str(&mut buf);
            assert!(s.starts_with(form.prefix()));
            assert_eq!(s.len(), form.prefix().len() + form.chars());
            assert_eq!(Sigil::parse(s), Ok(sigil));
            assert!(sigil.names_key(&key));
            assert!(!sigil.names_key(&[8u8; 32]));
        }
    }

    #[test]
    fn strict_parsing() {
        // The spec's illustrative sigil has a '9', outside base32 (P2).
        assert_eq!(
            Sigil::parse("sigil:m7zr4hb2qa6kpl9xn3qg4w"),
            Err(SigilError::Character { offset: 20 })
        );
        assert_eq!(Sigil::parse("sig:abc"), Err(SigilError::Prefix));
        assert!(Sigil::parse("sigil:none").is_ok_and(|s| s.is_reserved()));
        let mut buf = [0u8; 52];
        let good = Sigil::from_key(&[7u8; 32], SigilForm::Short).write_str(&mut buf);
        assert!(Sigil::parse(good).is_ok());
    }
}
