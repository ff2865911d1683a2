//! What a profile reports: [`FindingCode`] (one registry of stable
//! snake_case codes for both profiles), [`Finding`] and [`ProfileReport`]
//! (the `profile` member of `herald verify --json`).

use alloc::{string::String, vec::Vec};
use core::fmt;

use serde::Serialize;

use super::Profile;

/// What a profile found wrong: a stable snake_case code (part of the
/// public API, like the P11 reason codes; docs/haven.md and docs/valp.md
/// list each with its rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FindingCode {
    // Both profiles.
    /// A step without `expires`.
    MissingExpires,
    /// A payload value shaped like a secret (the scanner rules of
    /// docs/haven.md *Secrets*).
    SecretInPayload,
    // Haven.
    /// A Haven step whose payload is not the shape its `type` needs.
    MalformedStep,
    /// A step that belongs to no offered packet.
    NoPacket,
    /// A claim by the packet's offerer.
    ClaimByOfferer,
    /// A claim while another party holds the packet.
    SecondClaimer,
    /// A worker's step (yield, evidence, complete, release) by a party
    /// other than the packet's claimer.
    NotClaimer,
    /// A completion with no evidence step from the claimer before it.
    CompletionWithoutEvidence,
    /// A settlement by a party other than the offerer.
    SettleByNonOfferer,
    /// A settlement while the claimer's last step had not yet expired.
    SettleBeforeSilence,
    /// An acceptance or outcome receipt by the worker itself.
    SelfReceipt,
    /// A child packet with a budget (`maxSteps`, `maxTicks`) above its
    /// parent's, or without one where its parent has it.
    BudgetWidened,
    /// A child packet whose `depth` is not below its parent's.
    DepthWidened,
    /// A child packet without the objective its parent has.
    ObjectiveDropped,
    /// A child packet whose `parent` or `root` does not name the packet it
    /// descends from.
    LineageMismatch,
    // VALP.
    /// A payload that is not a `valp-message.v1`.
    MalformedMessage,
    /// `payload_digest` is not the digest of `payload`.
    PayloadDigestMismatch,
    /// `causation_id` does not name the message of the envelope's parent.
    CausationMismatch,
    /// A `message_id` seen before in the set.
    ReplayedMessage,
    /// A leader epoch below one already seen in the log.
    EpochRollback,
    /// A gate-bearing claim citing no evidence, or evidence not in the set.
    EvidenceMissing,
    /// Evidence whose `content_digest` does not match its bytes.
    EvidenceDigestMismatch,
    /// Cited evidence whose bytes were not given, so its digest is unchecked.
    EvidenceUnverifiable,
    /// A review of a claim by the claim's own signer.
    SelfVerification,
    /// A message signed by a sigil after its deprecation (P8).
    AcceptedAfterRetirement,
}

impl FindingCode {
    /// Every code.
    pub const ALL: [FindingCode; 25] = [
        Self::MissingExpires,
        Self::SecretInPayload,
        Self::MalformedStep,
        Self::NoPacket,
        Self::ClaimByOfferer,
        Self::SecondClaimer,
        Self::NotClaimer,
        Self::CompletionWithoutEvidence,
        Self::SettleByNonOfferer,
        Self::SettleBeforeSilence,
        Self::SelfReceipt,
        Self::BudgetWidened,
        Self::DepthWidened,
        Self::ObjectiveDropped,
        Self::LineageMismatch,
        Self::MalformedMessage,
        Self::PayloadDigestMismatch,
        Self::CausationMismatch,
        Self::ReplayedMessage,
        Self::EpochRollback,
        Self::EvidenceMissing,
        Self::EvidenceDigestMismatch,
        Self::EvidenceUnverifiable,
        Self::SelfVerification,
        Self::AcceptedAfterRetirement,
    ];

    /// The stable snake_case code.
    pub const fn name(self) -> &'static str {
        match self {
            Self::MissingExpires => "missing_expires",
            Self::SecretInPayload => "secret_in_payload",
            Self::MalformedStep => "malformed_step",
            Self::NoPacket => "no_packet",
            Self::ClaimByOfferer => "claim_by_offerer",
            Self::SecondClaimer => "second_claimer",
            Self::NotClaimer => "not_claimer",
            Self::CompletionWithoutEvidence => "completion_without_evidence",
            Self::SettleByNonOfferer => "settle_by_non_offerer",
            Self::SettleBeforeSilence => "settle_before_silence",
            Self::SelfReceipt => "self_receipt",
            Self::BudgetWidened => "budget_widened",
            Self::DepthWidened => "depth_widened",
            Self::ObjectiveDropped => "objective_dropped",
            Self::LineageMismatch => "lineage_mismatch",
            Self::MalformedMessage => "malformed_message",
            Self::PayloadDigestMismatch => "payload_digest_mismatch",
            Self::CausationMismatch => "causation_mismatch",
            Self::ReplayedMessage => "replayed_message",
            Self::EpochRollback => "epoch_rollback",
            Self::EvidenceMissing => "evidence_missing",
            Self::EvidenceDigestMismatch => "evidence_digest_mismatch",
            Self::EvidenceUnverifiable => "evidence_unverifiable",
            Self::SelfVerification => "self_verification",
            Self::AcceptedAfterRetirement => "accepted_after_retirement",
        }
    }

    /// The code with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The profiles that report it.
    pub fn profiles(self) -> &'static [Profile] {
        match self {
            Self::MissingExpires | Self::SecretInPayload => &Profile::ALL,
            Self::MalformedStep
            | Self::NoPacket
            | Self::ClaimByOfferer
            | Self::SecondClaimer
            | Self::NotClaimer
            | Self::CompletionWithoutEvidence
            | Self::SettleByNonOfferer
            | Self::SettleBeforeSilence
            | Self::SelfReceipt
            | Self::BudgetWidened
            | Self::DepthWidened
            | Self::ObjectiveDropped
            | Self::LineageMismatch => &[Profile::Haven],
            _ => &[Profile::Valp],
        }
    }
}

impl fmt::Display for FindingCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One finding: its code, the envelope it is about (id, hex) and a
/// detail that names what is wrong (never a secret's value).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The stable code.
    #[serde(serialize_with = "code_name")]
    pub code: FindingCode,
    /// The envelope's id, lowercase hex.
    pub id: String,
    /// What is wrong.
    pub detail: String,
    /// The envelope's place among the steps given (not part of the JSON).
    #[serde(skip)]
    pub position: usize,
}

fn code_name<S: serde::Serializer>(code: &FindingCode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(code.name())
}

/// A profile's result: in `herald verify --json` the `profile` object
/// `{"name", "checked", "skipped", "findings": [{"code", "id", "detail"}]}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProfileReport {
    /// The profile.
    #[serde(rename = "name", serialize_with = "profile_name")]
    pub profile: Profile,
    /// Envelopes read as steps of the protocol (their origin verified).
    pub checked: usize,
    /// Envelopes not read: invalid ones (P13), whose signer is not proven.
    pub skipped: usize,
    /// The findings, in the steps' order.
    pub findings: Vec<Finding>,
}

fn profile_name<S: serde::Serializer>(p: &Profile, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name())
}

impl ProfileReport {
    /// Whether the profile found nothing wrong.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }
}
