//! Signature scopes and their domain-separation tags (PROFILE.md P5, P6;
//! spec §3.4, §3.6).

use core::fmt;

/// A registered signature scope (P6). Anything else is `unknown_scope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Scope {
    /// Signature 0, by `from`; its tag depends on the kind (P7).
    Origin,
    /// A tool sandbox.
    ToolSandbox,
    /// A signing relay.
    ConduitReceipt,
    /// A human in the loop.
    HumanApproval,
    /// A Herald.
    HeraldEndorsement,
    /// A lineage parent, on a birth.
    LineageConsent,
    /// The registered duress witness.
    DuressWitness,
}

impl Scope {
    /// Every registered scope.
    pub const ALL: [Scope; 7] = [
        Self::Origin,
        Self::ToolSandbox,
        Self::ConduitReceipt,
        Self::HumanApproval,
        Self::HeraldEndorsement,
        Self::LineageConsent,
        Self::DuressWitness,
    ];

    /// The scope's canonical name (the `scope` field).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Origin => "origin",
            Self::ToolSandbox => "tool_sandbox",
            Self::ConduitReceipt => "conduit_receipt",
            Self::HumanApproval => "human_approval",
            Self::HeraldEndorsement => "herald_endorsement",
            Self::LineageConsent => "lineage_consent",
            Self::DuressWitness => "duress_witness",
        }
    }

    /// The scope with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::from_name_bytes(name.as_bytes())
    }

    /// [`Scope::from_name`] of a name's bytes.
    pub(crate) fn from_name_bytes(name: &[u8]) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name().as_bytes() == name)
    }

    /// The domain-separation tag of a non-origin scope (P6); `None` for
    /// [`Scope::Origin`], whose tag is the kind's ([`Kind::origin_tag`]).
    ///
    /// [`Kind::origin_tag`]: crate::Kind::origin_tag
    pub const fn tag(self) -> Option<&'static [u8]> {
        match self {
            Self::Origin => None,
            Self::ToolSandbox => Some(b"herald.sig.tool_sandbox.v1"),
            Self::ConduitReceipt => Some(b"herald.sig.conduit_receipt.v1"),
            Self::HumanApproval => Some(b"herald.sig.human_approval.v1"),
            Self::HeraldEndorsement => Some(b"herald.sig.herald_endorsement.v1"),
            Self::LineageConsent => Some(b"herald.sig.lineage_consent.v1"),
            Self::DuressWitness => Some(b"herald.sig.duress_witness.v1"),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Tag of a signed tree head (P9).
pub const STH_TAG: &[u8] = b"herald.sth.v1";
