//! Envelope kinds and their origin tags (PROFILE.md P7).

use core::fmt;

/// The `kind` of an envelope (P7); absent means [`Kind::Message`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[non_exhaustive]
pub enum Kind {
    /// An ordinary message.
    #[default]
    Message,
    /// The first envelope of a sigil (spec §2.4).
    Birth,
    /// A key rotation (spec §2.4, P8).
    Molt,
    /// The sigil's retirement.
    Deprecation,
    /// A conduit's refusal to relay (spec §5.2).
    Refusal,
    /// A black envelope (spec §9).
    Duress,
    /// A capability manifest (spec §8.3).
    Manifest,
    /// A message to a deprecated sigil.
    PosthumousCitation,
    /// A Herald's claim about a sigil (spec §8.2, P14; profile revision 3).
    Certification,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 9] = [
        Self::Message,
        Self::Birth,
        Self::Molt,
        Self::Deprecation,
        Self::Refusal,
        Self::Duress,
        Self::Manifest,
        Self::PosthumousCitation,
        Self::Certification,
    ];

    /// The `kind` string.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Message => "message",
            Self::Birth => "birth",
            Self::Molt => "molt",
            Self::Deprecation => "deprecation",
            Self::Refusal => "refusal",
            Self::Duress => "duress",
            Self::Manifest => "manifest",
            Self::PosthumousCitation => "posthumous_citation",
            Self::Certification => "certification",
        }
    }

    /// The kind with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::from_name_bytes(name.as_bytes())
    }

    /// [`Kind::from_name`] of a name's bytes.
    pub(crate) fn from_name_bytes(name: &[u8]) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name().as_bytes() == name)
    }

    /// The domain-separation tag of this kind's origin signature (P7).
    pub const fn origin_tag(self) -> &'static [u8] {
        match self {
            Self::Message | Self::PosthumousCitation => b"herald.origin.v1",
            Self::Birth => b"herald.birth.v1",
            Self::Molt => b"herald.molt.v1",
            Self::Deprecation => b"herald.deprecation.v1",
            Self::Refusal => b"herald.refusal.v1",
            Self::Duress => b"herald.duress.v1",
            Self::Manifest => b"herald.manifest.v1",
            Self::Certification => b"herald.certification.v1",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
