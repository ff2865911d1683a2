//! The manifest format of `vectors/conformance/manifest.json` (see
//! `vectors/README.md`, which documents every field).

use serde::{Deserialize, Serialize};

/// The manifest's `format` value.
pub const FORMAT: &str = "herald-conformance-v1";

/// The whole manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The protocol version the cases target.
    pub protocol: String,
    /// The test keys (secret seeds included: test-only).
    pub keys: Vec<KeyEntry>,
    /// The cases, in a stable order.
    pub cases: Vec<Case>,
}

/// One test key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyEntry {
    /// Name cases use to refer to it.
    pub name: String,
    /// TEST ONLY: the RFC 8032 secret seed, hex.
    pub seed: String,
    /// The public key, hex.
    pub public: String,
    /// Its default sigil.
    pub sigil: String,
    /// Its long sigil.
    pub sigil_long: String,
    /// Its short sigil.
    pub sigil_short: String,
    /// The keyring file (CLI.md format) holding just this key.
    pub keyring_file: String,
}

/// One case; `type` says which.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Case {
    /// Strictly decode one CBOR item (P1).
    Cbor {
        /// Unique name.
        name: String,
        /// What it tests.
        description: String,
        /// The bytes, as a file path relative to the manifest.
        input: String,
        /// The same bytes in hex.
        hex: String,
        /// The verdict.
        expect: CborExpect,
    },
    /// Parse one sigil string (P2).
    Sigil {
        /// Unique name.
        name: String,
        /// What it tests.
        description: String,
        /// The string.
        input: String,
        /// The verdict.
        expect: SigilExpect,
    },
    /// Load one keyring file (CLI.md format; P2 sigils, P5 keys).
    Keyring {
        /// Unique name.
        name: String,
        /// What it tests.
        description: String,
        /// The keyring file, as a path relative to the manifest.
        input: String,
        /// The verdict.
        expect: KeyringExpect,
    },
    /// Verify a set of envelopes as a trace audit (P10 audit mode, P11, P13).
    Verify {
        /// Unique name.
        name: String,
        /// What it tests.
        description: String,
        /// The envelopes: a CBOR sequence file.
        input: String,
        /// The JSON display form, one envelope per line (non-normative).
        display: String,
        /// Names of the keys pinned for this case.
        keyring: Vec<String>,
        /// `now`, Unix seconds.
        now: u64,
        /// Skew tolerated, seconds.
        skew: u64,
        /// Scopes the policy requires.
        required_scopes: Vec<String>,
        /// Per envelope, in input order.
        expect: Vec<EnvelopeExpect>,
    },
    /// Receive envelopes one by one in live mode with a fresh replay cache (P10).
    Receive {
        /// Unique name.
        name: String,
        /// What it tests.
        description: String,
        /// One file per envelope, received in this order.
        inputs: Vec<String>,
        /// Names of the keys pinned for this case.
        keyring: Vec<String>,
        /// The receiver's clock, Unix seconds.
        now: u64,
        /// Per envelope, in order.
        expect: Vec<EnvelopeExpect>,
    },
    /// Verify one audit-log proof object against a keyring (P9, CLI.md
    /// `herald log verify-proof`).
    Proof {
        /// Unique name.
        name: String,
        /// What it tests.
        description: String,
        /// `inclusion` or `consistency`: the object `input` is decoded as.
        object: String,
        /// The proof's P1 bytes, as a file path relative to the manifest.
        input: String,
        /// The JSON display form, one line (non-normative).
        display: String,
        /// Names of the keys in the verifier's keyring.
        keyring: Vec<String>,
        /// An envelope (P1 bytes) the inclusion proof's leaf must be the
        /// leaf of, when given.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        envelope: Option<String>,
        /// The verdict.
        expect: ProofExpect,
    },
    /// Verify a proof bundle (`docs/audit-log.md`, "Proof bundle"): its
    /// envelopes as one set and its inclusion proofs against the pinned
    /// keys (P8 rule 3, P9, P10 audit mode, P11).
    Bundle {
        /// Unique name.
        name: String,
        /// What it tests.
        description: String,
        /// The bundle's bytes (`herald-bundle-v1`), as a file path.
        input: String,
        /// The JSON display form, one line (non-normative).
        display: String,
        /// Names of the keys pinned for this case.
        keyring: Vec<String>,
        /// `now`, Unix seconds.
        now: u64,
        /// Skew tolerated, seconds.
        skew: u64,
        /// Scopes the policy requires.
        required_scopes: Vec<String>,
        /// Per envelope and per proof, in bundle order.
        expect: BundleExpect,
    },
    /// Verify a set of envelopes as a `verify` case does, with the Heralds
    /// a verifier lists and the certifications it holds (PROFILE P14
    /// *Effects in a verification*).
    Heralds {
        /// Unique name.
        name: String,
        /// What it tests.
        description: String,
        /// The envelopes: a CBOR sequence file.
        input: String,
        /// The JSON display form, one envelope per line (non-normative).
        display: String,
        /// Names of the keys pinned for this case.
        keyring: Vec<String>,
        /// The verifier's Herald list (P14 *Herald list*), a file.
        heralds: String,
        /// The verifier's C2SP tlog-policy naming each Herald's log, a
        /// file.
        log_policy: String,
        /// The certifications it holds: a CBOR sequence of P1 maps
        /// `{certification, proof}` (CONDUIT.md `herald heraldry serve`).
        certifications: String,
        /// `now`, Unix seconds.
        now: u64,
        /// Skew tolerated, seconds.
        skew: u64,
        /// Scopes the policy requires.
        required_scopes: Vec<String>,
        /// Per envelope, in input order.
        expect: Vec<EnvelopeExpect>,
    },
}

impl Case {
    /// The case's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Cbor { name, .. }
            | Self::Sigil { name, .. }
            | Self::Keyring { name, .. }
            | Self::Verify { name, .. }
            | Self::Receive { name, .. }
            | Self::Proof { name, .. }
            | Self::Bundle { name, .. }
            | Self::Heralds { name, .. } => name,
        }
    }
}

/// Verdict of a CBOR case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CborExpect {
    /// Whether the strict decoder accepts (and re-encodes to the same bytes).
    pub accept: bool,
    /// The P1 rule broken (a `Rule::name`), when rejected.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rule: Option<String>,
    /// The byte offset of the fault, when rejected.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub offset: Option<usize>,
}

/// Verdict of a sigil case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigilExpect {
    /// Whether the string is a sigil.
    pub valid: bool,
    /// `default`, `long`, `short`, or `reserved`, when valid.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub form: Option<String>,
    /// The manifest key it names, when it is a key's sigil.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub key: Option<String>,
    /// The error name (`prefix`, `length`, `character`, `trailing_bits`), when invalid.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// Verdict of a keyring case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyringExpect {
    /// Whether the whole file loads (a refused line refuses the file).
    pub valid: bool,
    /// How many keys it holds, when valid.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub keys: Option<usize>,
    /// The 1-based line refused, when invalid.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line: Option<usize>,
    /// Why, when invalid: `syntax`, `sigil`, `sigil_mismatch`, or the key's
    /// fault `not_a_point`, `non_canonical`, `small_order`, `torsion` (P5).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// Verdict of a proof case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProofExpect {
    /// Whether the proof holds (and, with an envelope, the leaf is its leaf).
    pub valid: bool,
    /// The first check that fails (one of [`PROOF_ERRORS`]), when invalid.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// The stable error names of proof cases, in the order the checks run
/// (`vectors/README.md` defines each).
pub const PROOF_ERRORS: [&str; 10] = [
    "format",
    "log_mismatch",
    "short_sigil",
    "reserved_sigil",
    "unknown_log",
    "sth_signature",
    "size_mismatch",
    "split_view",
    "path",
    "envelope_mismatch",
];

/// Verdict of a bundle case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleExpect {
    /// Per envelope of the bundle, in order; a bundle whose container is
    /// not `herald-bundle-v1` is one `malformed` entry.
    pub envelopes: Vec<EnvelopeExpect>,
    /// Per inclusion proof of the bundle, in order (none when the
    /// container is bad).
    pub proofs: Vec<BundleProofExpect>,
}

/// Verdict of one inclusion proof of a bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleProofExpect {
    /// Whether it verifies under a pinned log key and its leaf is exactly
    /// the leaf of an envelope of the set.
    pub valid: bool,
}

/// Expected verdict of one envelope.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeExpect {
    /// `valid`, `partial` or `invalid`.
    pub status: String,
    /// Every reason, sorted by (code, index); codes are P11 names.
    pub reasons: Vec<ExpectReason>,
}

/// One expected reason.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ExpectReason {
    /// The P11 code.
    pub code: String,
    /// The signature index, when the reason is about one signature.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub index: Option<u32>,
}
