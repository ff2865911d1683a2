//! Verification reports (PROFILE.md P11, P13; the JSON shape of CLI.md
//! `herald verify --json`).

use alloc::{string::String, vec::Vec};

use herald_core::{ReasonCode, Status};

use crate::keyring::KeyOrigin;
use crate::reasons::Unlisted;
use serde::Serialize;

/// One reason in a report: a P11 code, the signature index when it is about
/// one signature, and a human-readable detail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReportReason {
    /// The stable code.
    #[serde(serialize_with = "code_name")]
    pub code: ReasonCode,
    /// The signature index, when about one signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Detail text (may be empty).
    pub detail: String,
}

fn code_name<S: serde::Serializer>(code: &ReasonCode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(code.name())
}

/// One claim a quorum of the verifier's Heralds certified about an
/// envelope's sender (PROFILE P14), as its report lists it (CLI.md
/// *Resolution and Heralds*: `{"claim", "value", "heralds": [sigil]}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReportedClaim {
    /// The claim's name.
    pub claim: String,
    /// Its value in the P3 JSON display form.
    pub value: serde_json::Value,
    /// The Heralds that certified it.
    pub heralds: Vec<String>,
}

/// Which of a signer's keys made an origin signature (P8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignedBy {
    /// The sigil's own key, the one its birth announced.
    Birth,
    /// The new key of the identity's `n`-th accepted molt (1-based).
    Molt(usize),
}

impl core::fmt::Display for SignedBy {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Birth => f.write_str("birth"),
            Self::Molt(n) => write!(f, "molt {n}"),
        }
    }
}

fn status_name<S: serde::Serializer>(status: &Status, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(status.name())
}

impl ReportReason {
    /// A reason about the whole envelope (no signature index).
    pub fn new(code: ReasonCode, detail: impl Into<String>) -> Self {
        Self {
            code,
            index: None,
            detail: detail.into(),
        }
    }

    /// The status this reason imposes (P13).
    pub fn status(&self) -> Status {
        status_of(self.code, self.index)
    }
}

/// The status a reason with `code` about signature `index` imposes (P13).
pub(crate) fn status_of(code: ReasonCode, index: Option<u32>) -> Status {
    herald_core::Reason {
        code,
        index,
        detail: herald_core::Detail::None,
    }
    .status()
}

impl ReportReason {
    /// The report form of `reason`, found in `envelope`: as [`From`], and
    /// an unknown field named by the key the envelope holds at the
    /// reason's offset (the detail names the field).
    pub fn of(reason: &herald_core::Reason, envelope: &[u8]) -> Self {
        if let herald_core::Detail::UnknownKey { offset } = reason.detail
            && let Some(Ok((herald_core::cbor::ValueRef::Text(key), _))) = envelope
                .get(offset..)
                .map(|b| herald_core::cbor::decode_prefix(b, &herald_core::cbor::Limits::DEFAULT))
        {
            return Self {
                code: reason.code,
                index: reason.index,
                detail: std::format!(
                    "{key:?}: a top-level field outside P3: signed and kept, not interpreted"
                ),
            };
        }
        reason.into()
    }
}

impl From<&herald_core::Reason> for ReportReason {
    fn from(r: &herald_core::Reason) -> Self {
        Self {
            code: r.code,
            index: r.index,
            detail: std::format!("{}", r.detail),
        }
    }
}

/// One envelope's verdict (P11). Its status is not stored: it follows from
/// its reasons (P13), so the two can never disagree ([`EnvelopeReport::status`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnvelopeReport {
    /// The id carried, lowercase hex; `None` when the input did not parse.
    pub id: Option<String>,
    /// The `from` sigil, when it parsed.
    pub from: Option<String>,
    /// The reasons (P11 revision 3): every one that names a signature, and
    /// of those that name none the first [`crate::LISTED_PER_CODE`] of each
    /// code.
    pub reasons: Vec<ReportReason>,
    /// The reasons given beyond those listed, by code: repeats of a code
    /// that name no signature, past the first [`crate::LISTED_PER_CODE`].
    /// In the JSON `unlisted_reasons`, `{code: count}`, when there are any.
    pub unlisted_reasons: Vec<Unlisted>,
    /// Where the origin key came from (P7, P8); in the JSON `"keyring"`,
    /// `"birth"`, `"bundle"` or `"molt"`.
    pub key_source: Option<KeyOrigin>,
    /// Which of the signer's keys made the origin signature (P8); in the
    /// JSON `"birth"` or `"molt N"`.
    pub signing_key: Option<SignedBy>,
    /// The handle a resolution found the origin key at (PROFILE P15, CLI.md
    /// *Resolution and Heralds*); in the JSON `"handle"`, when said.
    pub handle: Option<String>,
    /// Whether that DNS answer was DNSSEC-validated; in the JSON
    /// `"dnssec"`, when said.
    pub dnssec: Option<bool>,
    /// For a birth: the lineage parents that co-signed `lineage_consent`
    /// (spec §2.3: a consent graph, not proof of training).
    pub lineage_consents: Vec<String>,
    /// The claims a quorum of the verifier's Heralds certified about its
    /// `from` (PROFILE P14; CLI.md *Resolution and Heralds*); in the JSON
    /// `"certified"`, when there are any.
    pub certified: Vec<ReportedClaim>,
    /// The input it came from and the byte offset there (not part of the JSON contract).
    pub source: Source,
    /// The `trace` field, hex (not part of the JSON contract).
    pub trace: Option<String>,
    /// The `parent` field, hex (not part of the JSON contract).
    pub parent: Option<String>,
    /// The `kind` (P7), when it decoded (not part of the JSON contract).
    pub kind: Option<herald_core::Kind>,
}

impl EnvelopeReport {
    /// The verdict: the most severe status any reason imposes, `valid`
    /// without one (P13).
    pub fn status(&self) -> Status {
        self.reasons
            .iter()
            .map(ReportReason::status)
            .max()
            .unwrap_or(Status::Valid)
    }

    /// Add a reason.
    pub fn push(&mut self, reason: ReportReason) {
        self.reasons.push(reason);
    }

    /// Whether a reason with this code is present.
    pub fn has(&self, code: ReasonCode) -> bool {
        self.reasons.iter().any(|r| r.code == code)
    }

    /// Whether signature `k` verified: no reason but a warning names it
    /// (every reason that names a signature is listed, P11 revision 3).
    pub fn signature_verified(&self, k: u32) -> bool {
        crate::reasons::verified(self.reasons.iter().map(|r| (r.code, r.index)), k)
    }
}

/// The CLI.md JSON shape: `id`, `from`, `status`, `reasons`, then
/// `unlisted_reasons`, `key_source`, `handle`, `dnssec`, `signing_key`,
/// `lineage_consents` and `certified` when they say something; `source`, `trace` and `parent` are not part of it.
impl Serialize for EnvelopeReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("EnvelopeReport", 11)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("from", &self.from)?;
        st.serialize_field("status", self.status().name())?;
        st.serialize_field("reasons", &self.reasons)?;
        if self.unlisted_reasons.is_empty() {
            st.skip_field("unlisted_reasons")?;
        } else {
            st.serialize_field("unlisted_reasons", &Counts(&self.unlisted_reasons))?;
        }
        match self.key_source {
            Some(k) => st.serialize_field("key_source", k.name())?,
            None => st.skip_field("key_source")?,
        }
        match &self.handle {
            Some(h) => st.serialize_field("handle", h)?,
            None => st.skip_field("handle")?,
        }
        match self.dnssec {
            Some(d) => st.serialize_field("dnssec", &d)?,
            None => st.skip_field("dnssec")?,
        }
        match &self.signing_key {
            Some(by) => st.serialize_field("signing_key", &std::format!("{by}"))?,
            None => st.skip_field("signing_key")?,
        }
        if self.lineage_consents.is_empty() {
            st.skip_field("lineage_consents")?;
        } else {
            st.serialize_field("lineage_consents", &self.lineage_consents)?;
        }
        if self.certified.is_empty() {
            st.skip_field("certified")?;
        } else {
            st.serialize_field("certified", &self.certified)?;
        }
        st.end()
    }
}

/// Unlisted reasons as the JSON writes them: `{code: count}`.
struct Counts<'u>(&'u [Unlisted]);

impl Serialize for Counts<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|u| (u.code.name(), u.count)))
    }
}

/// Where an envelope was read from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    /// Input name (a path, or `-` for standard input).
    pub input: String,
    /// Byte offset in that input.
    pub offset: usize,
}

/// One trace: the envelopes whose `trace` field names it (CLI.md).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceReport {
    /// The trace id, hex.
    pub trace: String,
    /// The genesis (`parent: null`, id == trace), hex, if in the set.
    pub genesis: Option<String>,
    /// Envelopes of the trace that no other envelope of the set names as parent.
    pub leaves: Vec<String>,
    /// Count of valid envelopes.
    pub valid: usize,
    /// Count of partial envelopes.
    pub partial: usize,
    /// Count of invalid envelopes.
    pub invalid: usize,
}

/// The CLI.md JSON shape of one trace, for [`TraceReport`] and
/// [`crate::compact::CompactReport`] alike: an audited trace's leaves are
/// written as they are formed (one trace may have a million).
#[derive(Serialize)]
#[serde(rename = "TraceReport")]
pub(crate) struct TraceShape<'r, L> {
    pub(crate) trace: &'r str,
    pub(crate) genesis: Option<&'r str>,
    pub(crate) leaves: L,
    pub(crate) valid: usize,
    pub(crate) partial: usize,
    pub(crate) invalid: usize,
}

impl Serialize for TraceReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TraceShape {
            trace: &self.trace,
            genesis: self.genesis.as_deref(),
            leaves: &self.leaves,
            valid: self.valid,
            partial: self.partial,
            invalid: self.invalid,
        }
        .serialize(s)
    }
}

/// Counts per status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Summary {
    /// Valid envelopes.
    pub valid: usize,
    /// Partial envelopes.
    pub partial: usize,
    /// Invalid envelopes (and unparseable input).
    pub invalid: usize,
}

impl Summary {
    /// Count one status.
    pub fn add(&mut self, status: Status) {
        match status {
            Status::Valid => self.valid += 1,
            Status::Partial => self.partial += 1,
            Status::Invalid => self.invalid += 1,
        }
    }
}

/// One inclusion proof of a bundle (`crate::bundle`): `valid` when it
/// verifies under a pinned log key and its leaf is exactly the leaf of an
/// envelope of the set (P9), else `invalid` with the reason in `detail`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProofReport {
    /// The leaf's envelope id, hex; `None` when the proof did not decode.
    pub id: Option<String>,
    /// The log's sigil, when the proof decoded.
    pub log: Option<String>,
    /// The leaf's index in the log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// The size of the tree the proof is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// `valid` or `invalid` (never `partial`).
    #[serde(serialize_with = "status_name")]
    pub status: Status,
    /// Why it is invalid (empty when valid).
    pub detail: String,
    /// With a log policy (`--log-policy`): who vouches for its tree head
    /// (the witnesses that cosigned its checkpoint).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witnessed: Option<String>,
    /// The bundle it came from and the byte offset there (not part of the JSON contract).
    #[serde(skip)]
    pub source: Source,
}

/// A whole verification: every envelope in input order, every trace, a summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// Per envelope, in input order.
    pub envelopes: Vec<EnvelopeReport>,
    /// Per trace, in order of first appearance.
    pub traces: Vec<TraceReport>,
    /// Counts.
    pub summary: Summary,
    /// Per inclusion proof of the bundles among the inputs, in input order
    /// (absent from the JSON when there are none).
    pub proofs: Vec<ProofReport>,
    /// Items that did not decode as envelopes past the first
    /// [`crate::trace::MAX_LISTED_UNPARSED`]: counted in `summary` as
    /// invalid, not listed in `envelopes` (docs/performance.md *Memory
    /// under hostile input*, B7: a report per one-byte item once cost a
    /// kilobyte each). Absent from the JSON when 0.
    pub unlisted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn no_proofs(p: &&[ProofReport]) -> bool {
    p.is_empty()
}

/// The CLI.md JSON shape of a whole verification, for [`Report`] and
/// [`crate::compact::CompactReport`] alike (one shape, two ways of holding the
/// envelopes' reports).
#[derive(Serialize)]
#[serde(rename = "Report")]
pub(crate) struct Shape<'r, E, T> {
    pub(crate) envelopes: E,
    pub(crate) traces: T,
    pub(crate) summary: Summary,
    #[serde(skip_serializing_if = "no_proofs")]
    pub(crate) proofs: &'r [ProofReport],
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) unlisted: usize,
    /// A protocol profile's report, when one was run (`--profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) profile: Option<&'r crate::ProfileReport>,
}

impl Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.shape(None).serialize(s)
    }
}

impl Report {
    fn shape<'r>(
        &'r self,
        profile: Option<&'r crate::ProfileReport>,
    ) -> Shape<'r, &'r [EnvelopeReport], &'r [TraceReport]> {
        Shape {
            envelopes: &self.envelopes,
            traces: &self.traces,
            summary: self.summary,
            proofs: &self.proofs,
            unlisted: self.unlisted,
            profile,
        }
    }
}

/// A [`Report`] with a protocol profile's report (`"profile"`).
struct WithProfile<'r>(&'r Report, &'r crate::ProfileReport);

impl Serialize for WithProfile<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.shape(Some(self.1)).serialize(s)
    }
}

/// Whether a verification passes (exit code 0, CLI.md; a bundle is
/// verified as a unit): at least one envelope, every one valid, none
/// unlisted, every bundled proof valid.
pub(crate) fn all_valid(
    mut statuses: impl ExactSizeIterator<Item = Status>,
    unlisted: usize,
    proofs: &[ProofReport],
) -> bool {
    statuses.len() > 0
        && unlisted == 0
        && statuses.all(|s| s == Status::Valid)
        && proofs.iter().all(|p| p.status == Status::Valid)
}

impl Report {
    /// Whether every envelope is valid and every bundled proof holds (exit
    /// code 0, CLI.md; a bundle is verified as a unit).
    pub fn all_valid(&self) -> bool {
        all_valid(
            self.envelopes.iter().map(EnvelopeReport::status),
            self.unlisted,
            &self.proofs,
        )
    }

    /// Write the CLI.md JSON form to `out`, streamed (no string of the
    /// whole report is built).
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer(out, self).map_err(std::io::Error::other)
    }

    /// Write the report as `herald verify --json` prints it (without the
    /// final newline): the CLI.md JSON form with `"format":
    /// "herald-verify/1"` as its first member (additive), so a reader can
    /// tell which shape it has. The CLI and the inspector's WASM build both
    /// write this.
    pub fn write_document(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        write_document(self, out)
    }

    /// As [`Report::write_document`], with `profile`'s report as a last
    /// member `"profile"` (as `herald verify --profile P --json` writes it).
    pub fn write_document_with_profile(
        &self,
        profile: &crate::ProfileReport,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        write_document(&WithProfile(self, profile), out)
    }
}

/// `value`'s JSON with [`FORMAT`] as its first member, streamed to `out`:
/// the object's opening brace is replaced as it passes.
pub(crate) fn write_document(
    value: &impl Serialize,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut formatted = Formatted { out, seen: 0 };
    serde_json::to_writer(&mut formatted, value).map_err(std::io::Error::other)
}

/// A writer that puts `"format"` after the first byte, `{`, of a JSON
/// object (and a comma when the object has other members).
struct Formatted<'w> {
    out: &'w mut dyn std::io::Write,
    /// Bytes seen so far, up to 2.
    seen: u8,
}

impl std::io::Write for Formatted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while self.seen < 2 {
            let Some((&b, tail)) = rest.split_first() else {
                return Ok(buf.len());
            };
            match (self.seen, b) {
                (0, b'{') => write!(self.out, "{{\"format\":\"{FORMAT}\"")?,
                // Not an object: written as it is.
                (0, _) => {
                    self.seen = 1;
                    self.out.write_all(&[b])?;
                }
                (_, b'}') => self.out.write_all(&[b])?,
                _ => {
                    self.out.write_all(b",")?;
                    self.out.write_all(&[b])?;
                }
            }
            self.seen += 1;
            rest = tail;
        }
        self.out.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The `"format"` member of a `herald verify --json` document.
pub(crate) const FORMAT: &str = "herald-verify/1";

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    data_encoding::HEXLOWER.encode(bytes)
}
