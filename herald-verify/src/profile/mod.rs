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

mod finding;
mod haven;
mod secrets;
mod valp;

pub use finding::{Finding, FindingCode, ProfileReport};

use alloc::{string::String, vec::Vec};
use core::fmt;

use herald_core::cbor::{MapRef, ValueRef};
use herald_core::{EnvelopeRef, Kind, ReasonCode, Status};

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
