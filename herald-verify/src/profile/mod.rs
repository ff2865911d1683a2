//! Protocol profiles: rule sets checked over a verified trace, after the
//! ordinary verification (PROFILE P11, P13), for the agent protocols that
//! use HERALD as their signature layer (docs/haven.md, docs/valp.md).
//!
//! A profile reads only what signatures make third-party checkable: who
//! signed each step (by key: every sigil form of one key is one party) and
//! which step answers which (`parent`). It reports violations as
//! [`Finding`]s beside the P11 reasons and never changes an envelope's
//! status. An envelope whose signature, id or chain does not hold is not a
//! step of the protocol, only counted as skipped; one that is `invalid`
//! only by time (`expired`, `future_ts`, `stale`: an archived trace is
//! read long after its steps expired) or by `deprecated_signer` is read.
//!
//! - [`haven`]: Haven delegation (offer, claim, yields, evidence, receipts);
//! - [`valp`]: VALP messages (`valp-message.v1`), claims and leader epochs;
//! - [`secrets`]: the scanner for secret-shaped payload values.

mod haven;
mod secrets;
mod valp;

use alloc::{string::String, vec::Vec};
use core::fmt;

use herald_core::cbor::{MapRef, ValueRef};
use herald_core::{EnvelopeRef, Kind, ReasonCode, Status};
use serde::Serialize;

use crate::lifecycle::{Identity, identity};

/// A protocol profile (`herald verify --profile NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Profile {
    /// Haven delegation (docs/haven.md).
    Haven,
    /// VALP installation control plane messages (docs/valp.md).
    Valp,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Profile; 2] = [Self::Haven, Self::Valp];

    /// Its stable name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Haven => "haven",
            Self::Valp => "valp",
        }
    }

    /// The profile with this name.
    pub fn from_name(name: &str) -> Result<Self, ProfileError> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| ProfileError::Unknown(name.into()))
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a profile could not be run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProfileError {
    /// No profile has this name.
    Unknown(String),
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown(name) => write!(
                f,
                "{name:?} is not a profile (known: {})",
                Profile::ALL.map(Profile::name).join(", ")
            ),
        }
    }
}

impl core::error::Error for ProfileError {}

/// What a profile found wrong: a stable snake_case code (part of the
/// public API, like the P11 reason codes; `herald explain` does not list
/// them, [`FindingCode::meaning`] does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FindingCode {
    // Both profiles.
    /// A step without `expires`.
    MissingExpires,
    /// A payload value shaped like a secret ([`secrets`] rules).
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

/// One envelope given to a profile: its bytes and what its verdict says
/// of its signer.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Step<'a> {
    /// The envelope's bytes.
    pub bytes: &'a [u8],
    /// Its origin signature, id and chain hold: no reason that makes it
    /// `invalid` (P13) other than [`SIGNED_DESPITE`]'s.
    pub signed: bool,
    /// Whether its verdict has `deprecated_signer` (P8): sent by its
    /// signer after that sigil's deprecation.
    pub retired: bool,
}

/// The `invalid` reasons that leave an envelope a step of the protocol:
/// time (an archived trace is read after its steps expired) and the
/// signer's retirement (which the VALP profile reports in its own terms).
pub const SIGNED_DESPITE: [ReasonCode; 4] = [
    ReasonCode::Expired,
    ReasonCode::FutureTs,
    ReasonCode::Stale,
    ReasonCode::DeprecatedSigner,
];

impl<'a> Step<'a> {
    /// A step of `bytes`.
    pub fn new(bytes: &'a [u8], signed: bool, retired: bool) -> Self {
        Self {
            bytes,
            signed,
            retired,
        }
    }

    /// A step of `bytes` whose verdict has these reasons (code and
    /// signature index).
    pub fn of_reasons(
        bytes: &'a [u8],
        reasons: impl IntoIterator<Item = (ReasonCode, Option<u32>)>,
    ) -> Self {
        let (mut signed, mut retired) = (true, false);
        for (code, index) in reasons {
            retired |= code == ReasonCode::DeprecatedSigner;
            signed &= SIGNED_DESPITE.contains(&code)
                || crate::report::status_of(code, index) != Status::Invalid;
        }
        Self::new(bytes, signed, retired)
    }
}

/// Evidence bytes given to the verifier (VALP), named by the `content_ref`
/// the evidence envelopes carry.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Evidence<'e> {
    /// The `content_ref` these bytes are.
    pub content_ref: &'e str,
    /// The bytes.
    pub bytes: &'e [u8],
}

impl<'e> Evidence<'e> {
    /// `bytes` as the evidence named `content_ref`.
    pub fn new(content_ref: &'e str, bytes: &'e [u8]) -> Self {
        Self { content_ref, bytes }
    }
}

/// Run `profile` over `steps` (in input order, as the audit reported
/// them), with the evidence bytes given.
pub fn check<'a>(
    profile: Profile,
    steps: impl IntoIterator<Item = Step<'a>>,
    evidence: &[Evidence<'_>],
) -> ProfileReport {
    let set = Set::of(steps);
    let mut out = Findings::default();
    match profile {
        Profile::Haven => haven::check(&set, &mut out),
        Profile::Valp => valp::check(&set, evidence, &mut out),
    }
    let mut findings = out.0;
    findings.sort_by_key(|f| f.position);
    ProfileReport {
        profile,
        checked: set.entries.iter().filter(|e| e.signed).count(),
        skipped: set.skipped,
        findings,
    }
}

/// One decoded envelope of the set.
pub(crate) struct Entry<'a> {
    pub(crate) env: EnvelopeRef<'a>,
    /// The id recomputed from the bytes (P13: parents are found by it).
    pub(crate) id: [u8; 32],
    /// The signer, by key (every sigil form of one key is one party).
    pub(crate) signer: Option<Identity>,
    /// The origin verified: a step of the protocol.
    pub(crate) signed: bool,
    pub(crate) retired: bool,
    /// Its place among the steps given.
    pub(crate) position: usize,
}

impl<'a> Entry<'a> {
    /// The payload as a map, for a protocol step (kinds `message` and
    /// `posthumous_citation`; lifecycle kinds are not protocol steps).
    pub(crate) fn step_payload(&self) -> Option<Option<MapRef<'a>>> {
        match self.env.kind() {
            Kind::Message | Kind::PosthumousCitation => Some(self.env.payload().as_map()),
            _ => None,
        }
    }

    pub(crate) fn id_hex(&self) -> String {
        crate::report::hex(&self.id)
    }
}

/// The decoded envelopes, with a lookup by id.
pub(crate) struct Set<'a> {
    pub(crate) entries: Vec<Entry<'a>>,
    by_id: alloc::collections::BTreeMap<[u8; 32], usize>,
    skipped: usize,
}

impl<'a> Set<'a> {
    fn of(steps: impl IntoIterator<Item = Step<'a>>) -> Self {
        let mut entries = Vec::new();
        let mut by_id = alloc::collections::BTreeMap::new();
        let mut skipped = 0;
        for (position, step) in steps.into_iter().enumerate() {
            let signed = step.signed;
            let Ok(env) = EnvelopeRef::decode(step.bytes) else {
                skipped += 1;
                continue;
            };
            if !signed {
                skipped += 1;
            }
            let id = env.computed_id();
            by_id.entry(id).or_insert(entries.len());
            entries.push(Entry {
                signer: identity(&env.from_sigil()),
                env,
                id,
                signed,
                retired: step.retired,
                position,
            });
        }
        Self {
            entries,
            by_id,
            skipped,
        }
    }

    /// The entry with this id.
    pub(crate) fn get(&self, id: &[u8; 32]) -> Option<(usize, &Entry<'a>)> {
        let k = *self.by_id.get(id)?;
        Some((k, self.entries.get(k)?))
    }

    /// Entry `k`'s parent in the set.
    pub(crate) fn parent(&self, k: usize) -> Option<(usize, &Entry<'a>)> {
        self.get(self.entries.get(k)?.env.parent()?)
    }
}

/// The findings gathered.
#[derive(Default)]
pub(crate) struct Findings(Vec<Finding>);

impl Findings {
    pub(crate) fn add(&mut self, e: &Entry<'_>, code: FindingCode, detail: impl Into<String>) {
        self.0.push(Finding {
            code,
            id: e.id_hex(),
            detail: detail.into(),
            position: e.position,
        });
    }
}

/// The rules both profiles share: every step carries `expires`, and no
/// payload holds a secret-shaped value.
pub(crate) fn common(e: &Entry<'_>, out: &mut Findings) {
    if e.env.expires().is_none() {
        out.add(
            e,
            FindingCode::MissingExpires,
            "no `expires`: the step is valid forever",
        );
    }
    for hit in secrets::scan(e.env.payload()) {
        out.add(e, FindingCode::SecretInPayload, hit);
    }
}

/// Text field `key` of `map`.
pub(crate) fn text<'a>(map: &MapRef<'a>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(|v| v.as_text())
}

/// Unsigned field `key` of `map`.
pub(crate) fn unsigned(map: &MapRef<'_>, key: &str) -> Option<u64> {
    map.get(key).and_then(|v| v.as_unsigned())
}

/// Whether field `key` is present and not null.
pub(crate) fn present(map: &MapRef<'_>, key: &str) -> bool {
    !matches!(map.get(key), None | Some(ValueRef::Null))
}
