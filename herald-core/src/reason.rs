//! The one registry of verification reason codes (PROFILE.md P11) and how
//! each one bears on an envelope's status (P13).

use core::fmt;

use crate::cbor::DecodeError;
use crate::sigil::SigilError;

macro_rules! reason_codes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// A reason code: stable snake_case names, part of the public API (P11).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ReasonCode {
            $($(#[$doc])* $variant,)*
        }

        impl ReasonCode {
            /// Every code in the registry, in P11 order.
            pub const ALL: &'static [ReasonCode] = &[$(ReasonCode::$variant,)*];

            /// The code's stable name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(ReasonCode::$variant => $name,)*
                }
            }

            /// The code with this stable name.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $($name => Some(ReasonCode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

reason_codes! {
    /// A P1, P3 or P7 shape or type error (a bad sigil string, an unknown
    /// kind, a birth without a self-certifying `birth` attestation, …).
    Malformed = "malformed",
    /// `v` is not `herald/0.2`.
    UnsupportedVersion = "unsupported_version",
    /// The `id` carried does not hash the canonical body (P4).
    IdMismatch = "id_mismatch",
    /// A genesis whose `trace` is not its `id` (P4).
    GenesisTraceMismatch = "genesis_trace_mismatch",
    /// `trace` differs from the parent's `trace` (spec §3.3a).
    TraceMismatch = "trace_mismatch",
    /// The parent is not in the set walked.
    MissingParent = "missing_parent",
    /// No signature, or index 0 is not `scope: origin`.
    OriginMissing = "origin_missing",
    /// The origin's `by` is not the `from` string.
    OriginSignerMismatch = "origin_signer_mismatch",
    /// A signature does not verify (strict Ed25519, P5).
    BadSignature = "bad_signature",
    /// A signature `alg` other than `ed25519`.
    UnknownAlg = "unknown_alg",
    /// A signature scope outside the P6 registry.
    UnknownScope = "unknown_scope",
    /// The same public key signs twice (spec §3.4).
    DuplicateSigner = "duplicate_signer",
    /// No trusted channel resolves the signer's sigil to a key (spec §2.1).
    UnknownSigner = "unknown_signer",
    /// A reserved sigil as a signer (P2).
    ReservedSigil = "reserved_sigil",
    /// A short sigil where the spec forbids one (P2).
    ShortSigilMisuse = "short_sigil_misuse",
    /// A signature the policy (or the kind) requires is absent or invalid.
    RequiredSignatureMissing = "required_signature_missing",
    /// A `(from key, nonce)` pair seen before (P10).
    ReplayedNonce = "replayed_nonce",
    /// `expires` is before `now − skew` (P10).
    Expired = "expired",
    /// No `expires`, and `ts` older than the replay cache vouches for (P10).
    Stale = "stale",
    /// `ts` after `now + skew` (P10).
    FutureTs = "future_ts",
    /// The signer was deprecated before `ts` (P8).
    DeprecatedSigner = "deprecated_signer",
    /// Signed by a key that a molt retired (P8).
    RotatedKey = "rotated_key",
    /// The signer has overlapping molts (P8 rule 5).
    Disputed = "disputed",
    /// A molt inside the 24-hour cool-off (P8 rule 2).
    MoltCooloff = "molt_cooloff",
    /// Signed by a molted-to key without an inclusion proof of the molt (P8 rule 3).
    MoltUnproven = "molt_unproven",
    /// A molt without the co-signatures its `molt_policy` requires (P8 rule 4).
    MoltCosignMissing = "molt_cosign_missing",
    /// A birth naming its own sigil in its lineage (spec §2.3).
    LineageSelf = "lineage_self",
    /// A lineage that closes a cycle (spec §2.3).
    LineageCycle = "lineage_cycle",
    /// A lineage parent deprecated at the birth's `ts` (spec §2.3).
    LineageDeprecatedParent = "lineage_deprecated_parent",
    /// A current duress envelope from the signer (warning, P8).
    SignerUnderDuress = "signer_under_duress",
    /// A top-level key outside P3 (warning).
    UnknownField = "unknown_field",
    /// A standard attestation of the wrong shape (warning, P12).
    AttestationMalformed = "attestation_malformed",
    /// An envelope's `lineage_proof` names a `lineage` claim about its
    /// `from` that a verifier's Herald quorum has not certified (warning,
    /// P14, revision 3). Only a verifier given Heralds can raise it.
    LineageUnproven = "lineage_unproven",
}

impl ReasonCode {
    /// Whether this code is a warning, which never changes the status (P13).
    pub const fn is_warning(self) -> bool {
        matches!(
            self,
            Self::SignerUnderDuress
                | Self::UnknownField
                | Self::AttestationMalformed
                | Self::LineageUnproven
        )
    }

    /// Whether the code, when about signature k ≥ 1, makes the envelope
    /// `partial` rather than `invalid` (P13).
    const fn is_signature_code(self) -> bool {
        matches!(
            self,
            Self::Malformed
                | Self::ReservedSigil
                | Self::ShortSigilMisuse
                | Self::UnknownSigner
                | Self::BadSignature
                | Self::UnknownAlg
                | Self::UnknownScope
        )
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An envelope's verdict (P11), ordered from best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Status {
    /// The origin and every required signature verify.
    #[default]
    Valid,
    /// The origin verifies; another signature is invalid or a required one missing.
    Partial,
    /// Something breaks the origin, the id, the chain, replay, time or lifecycle.
    Invalid,
}

impl Status {
    /// `valid`, `partial` or `invalid`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Valid => "valid",
            Self::Partial => "partial",
            Self::Invalid => "invalid",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The text of [`Detail::UnknownKey`]: every reason has a non-empty detail.
const UNKNOWN_KEY: &str = "a top-level field outside P3: signed and kept, not interpreted";

/// What a reason says beyond its code. `Hash`, so a verifier can keep
/// each distinct detail once (the memory bound).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Detail {
    /// Nothing more.
    None,
    /// A fixed explanation.
    Note(&'static str),
    /// A field and what is wrong with it.
    Field {
        /// The field, e.g. `nonce` or `payload.new_key`.
        field: &'static str,
        /// What is wrong.
        problem: &'static str,
    },
    /// The strict decoder's error (offset and rule).
    Decode(DecodeError),
    /// A sigil string that does not parse, in this field.
    Sigil {
        /// The field holding the sigil.
        field: &'static str,
        /// Why it does not parse.
        error: SigilError,
    },
    /// A top-level key outside P3; the key is in the envelope's bytes,
    /// its text head at this byte offset (a verifier with the bytes can
    /// name it).
    UnknownKey {
        /// Offset of the key's CBOR text head in the envelope.
        offset: usize,
    },
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => Ok(()),
            Self::UnknownKey { offset } => write!(f, "{UNKNOWN_KEY} (its key at byte {offset})"),
            Self::Note(n) => f.write_str(n),
            Self::Field { field, problem } => write!(f, "{field}: {problem}"),
            Self::Decode(e) => e.fmt(f),
            Self::Sigil { field, error } => write!(f, "{field}: {error}"),
        }
    }
}

/// One finding about an envelope: a code, the signature it concerns if any,
/// and a detail (P11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reason {
    /// The code.
    pub code: ReasonCode,
    /// The signature index, when the reason is about one signature.
    pub index: Option<u32>,
    /// What more there is to say.
    pub detail: Detail,
}

impl Reason {
    /// A reason about the envelope as a whole.
    pub const fn new(code: ReasonCode, detail: Detail) -> Self {
        Self {
            code,
            index: None,
            detail,
        }
    }

    /// A reason about signature `index`.
    pub const fn at(code: ReasonCode, index: u32, detail: Detail) -> Self {
        Self {
            code,
            index: Some(index),
            detail,
        }
    }

    /// The status this reason alone imposes (P13).
    pub const fn status(&self) -> Status {
        if self.code.is_warning() {
            return Status::Valid;
        }
        match (self.code, self.index) {
            (ReasonCode::DuplicateSigner | ReasonCode::RequiredSignatureMissing, _) => {
                Status::Partial
            }
            (code, Some(k)) if k >= 1 && code.is_signature_code() => Status::Partial,
            _ => Status::Invalid,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code.name())?;
        if let Some(i) = self.index {
            write!(f, "[{i}]")?;
        }
        match self.detail {
            Detail::None => Ok(()),
            d => write!(f, ": {d}"),
        }
    }
}

/// Where a check writes its reasons: a `Vec` (with `alloc`), a fixed
/// [`Reasons`] list, or anything else.
pub trait ReasonSink {
    /// Record one reason.
    fn push(&mut self, reason: Reason);
}

#[cfg(feature = "alloc")]
impl ReasonSink for alloc::vec::Vec<Reason> {
    fn push(&mut self, reason: Reason) {
        alloc::vec::Vec::push(self, reason);
    }
}

impl<F: FnMut(Reason)> ReasonSink for F {
    fn push(&mut self, reason: Reason) {
        self(reason)
    }
}

/// A fixed-capacity reason list for targets without an allocator. Reasons
/// past `N` are counted, not stored; the status is kept exact either way.
#[derive(Clone, Debug, Default)]
pub struct Reasons<const N: usize> {
    list: heapless::Vec<Reason, N>,
    dropped: usize,
    status: Status,
}

impl<const N: usize> Reasons<N> {
    /// An empty list.
    pub const fn new() -> Self {
        Self {
            list: heapless::Vec::new(),
            dropped: 0,
            status: Status::Valid,
        }
    }

    /// The reasons stored.
    pub fn as_slice(&self) -> &[Reason] {
        &self.list
    }

    /// How many reasons did not fit.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The worst status of every reason pushed, stored or not.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Whether a reason with this code was pushed and stored.
    pub fn contains(&self, code: ReasonCode) -> bool {
        self.list.iter().any(|r| r.code == code)
    }
}

impl<const N: usize> ReasonSink for Reasons<N> {
    fn push(&mut self, reason: Reason) {
        self.status = self.status.max(reason.status());
        if self.list.push(reason).is_err() {
            self.dropped += 1;
        }
    }
}
