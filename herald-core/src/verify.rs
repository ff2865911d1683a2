//! The single-envelope check (PROFILE.md P5, P11, P13): every reason that
//! can be decided from the envelope alone, a key resolver and a clock —
//! never only the first. Allocates nothing.

use crate::attestation::{BirthAttestation, RawAttestation};
use crate::cbor::Limits;
use crate::envelope::{Body, ED25519, EnvelopeRef, RawSignature, body_of, scan};
use crate::key::PublicKey;
use crate::kind::Kind;
use crate::payload;
use crate::reason::{Detail, Reason, ReasonCode, ReasonSink, Status};
use crate::scope::Scope;
use crate::sigil::Sigil;

mod duplicate_signer;
use duplicate_signer::DuplicateSigners;

/// Resolves a sigil to the public key a trusted channel binds it to (spec §2.1).
///
/// [`KeyResolver::resolve`] must only return a key the sigil names (its
/// hash prefix matches); [`check`] re-checks this and treats a mismatch as
/// unresolved. The one exception is explicit: after a molt the verifier
/// accepted (P8), the sigil is signed for by a key it does not name, which
/// [`KeyResolver::resolve_molted`] returns.
pub trait KeyResolver {
    /// The key for `sigil`, if this resolver knows it.
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey>;

    /// A key bound to `sigil` by an accepted molt (P8), to try when the
    /// sigil's own key is not the signer. None by default.
    fn resolve_molted(&self, _sigil: &Sigil) -> Option<PublicKey> {
        None
    }
}

impl KeyResolver for () {
    fn resolve(&self, _: &Sigil) -> Option<PublicKey> {
        None
    }
}

impl KeyResolver for [PublicKey] {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        self.iter().copied().find(|k| sigil.names_key(k.as_bytes()))
    }
}

impl<const N: usize> KeyResolver for [PublicKey; N] {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        self.as_slice().resolve(sigil)
    }
}

impl<T: KeyResolver + ?Sized> KeyResolver for &T {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        (**self).resolve(sigil)
    }
    fn resolve_molted(&self, sigil: &Sigil) -> Option<PublicKey> {
        (**self).resolve_molted(sigil)
    }
}

/// The signature step of [`check_with`]: is `sig` by `key` a valid
/// Ed25519 signature over `tag ‖ body` (P5)?
///
/// [`check`] uses [`Strict`]. Another verifier may defer the work (collect
/// the signatures and verify them later, e.g. in a batch on every core);
/// whatever it answers, [`check_with`] treats it as the verdict, so the
/// result equals [`check`]'s only where the answers equal [`Strict`]'s.
/// Nothing here needs an allocator.
pub trait SignatureVerifier {
    /// The verdict for signature `sig` by `key` over `tag ‖ body`.
    fn verify(&mut self, key: &PublicKey, sig: &[u8; 64], tag: &[u8], body: &Body<'_>) -> bool;
}

/// The verifier of [`check`]: [`PublicKey::verify_parts`], the P5
/// (revision 2) rule for one signature, streaming the body.
#[derive(Clone, Copy, Debug, Default)]
pub struct Strict;

impl SignatureVerifier for Strict {
    fn verify(&mut self, key: &PublicKey, sig: &[u8; 64], tag: &[u8], body: &Body<'_>) -> bool {
        key.verify_parts(sig, |feed| {
            feed(tag);
            body.feed(feed);
        })
        .is_ok()
    }
}

/// Where the origin signer's key came from (P7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeySource {
    /// A trusted channel: a keyring or pinned cache.
    Keyring,
    /// The envelope's own `birth` attestation, whose key hashes to `from`.
    Birth,
    /// A key a molt accepted by the verifier bound to the sigil (P8).
    Molt,
}

impl KeySource {
    /// `keyring` or `birth`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Keyring => "keyring",
            Self::Birth => "birth",
            Self::Molt => "molt",
        }
    }
}

/// Options of [`check`].
#[derive(Clone, Copy, Debug)]
pub struct CheckOptions<'p> {
    /// The time to check `expires` and `ts` against; `None` skips those checks.
    pub now: Option<u64>,
    /// Clock skew tolerated, seconds (P10 default 300).
    pub skew: u64,
    /// Decoder limits (P1).
    pub limits: Limits,
    /// Scopes the application's policy requires a valid signature in (spec §3.4).
    pub required_scopes: &'p [Scope],
    /// Accept a birth's self-certified key for its origin signature (P7).
    pub learn_birth_keys: bool,
}

impl CheckOptions<'_> {
    /// P10 defaults: no clock, skew 300 s, P1 limits, no policy, birth keys learned.
    pub const DEFAULT: CheckOptions<'static> = CheckOptions {
        now: None,
        skew: 300,
        limits: Limits::DEFAULT,
        required_scopes: &[],
        learn_birth_keys: true,
    };
}

impl Default for CheckOptions<'_> {
    fn default() -> Self {
        CheckOptions::DEFAULT
    }
}

/// What [`check`] concluded.
#[derive(Clone, Debug)]
pub struct Checked<'a> {
    /// The status implied by every reason reported (P13).
    pub status: Status,
    /// The envelope, when its fields have their P3 types.
    pub envelope: Option<EnvelopeRef<'a>>,
    /// `sha256(body(E, 0))`, when the body could be formed.
    pub computed_id: Option<[u8; 32]>,
    /// Where the origin key came from, when it was resolved.
    pub key_source: Option<KeySource>,
}

struct Tally<'s> {
    out: &'s mut dyn ReasonSink,
    status: Status,
}

impl Tally<'_> {
    fn push(&mut self, r: Reason) {
        self.status = self.status.max(r.status());
        self.out.push(r);
    }
}

fn note(code: ReasonCode, text: &'static str) -> Reason {
    Reason::new(code, Detail::Note(text))
}

/// Check one envelope: P1–P7, P12 and the signature rules of P5/P6, with
/// every reason written to `out` (P11) and the status derived by P13.
///
/// Decided here: `malformed`, `unsupported_version`, `id_mismatch`,
/// `genesis_trace_mismatch`, `origin_missing`, `origin_signer_mismatch`,
/// `bad_signature`, `unknown_alg`, `unknown_scope`, `duplicate_signer`,
/// `unknown_signer`, `reserved_sigil`, `short_sigil_misuse`,
/// `required_signature_missing`, `lineage_self`, `expired`, `future_ts`
/// (with `now`), and the warnings `unknown_field`, `attestation_malformed`.
/// Trace, replay and lifecycle rules need more than one envelope: see
/// [`check_parent`] and the herald-verify crate.
pub fn check<'a>(
    bytes: &'a [u8],
    keys: &dyn KeyResolver,
    opts: &CheckOptions<'_>,
    out: &mut dyn ReasonSink,
) -> Checked<'a> {
    check_with(bytes, keys, opts, out, &mut Strict)
}

/// As [`check`], with `verifier` deciding each signature whose key was
/// resolved and whose other checks passed (P5). `check` is
/// `check_with(…, &mut Strict)`.
pub fn check_with<'a>(
    bytes: &'a [u8],
    keys: &dyn KeyResolver,
    opts: &CheckOptions<'_>,
    out: &mut dyn ReasonSink,
    verifier: &mut dyn SignatureVerifier,
) -> Checked<'a> {
    let mut t = Tally {
        out,
        status: Status::Valid,
    };
    let Some(fields) = scan::scan(bytes, &opts.limits, scan::Shapes::Check, &mut |r| t.push(r))
    else {
        return Checked {
            status: t.status,
            envelope: None,
            computed_id: None,
            key_source: None,
        };
    };
    let kind = fields.kind.unwrap_or_default();
    let from = fields.from;

    // P4: the id and the genesis rule, over the received bytes.
    let computed_id = body_of(&fields, 0).map(|b| b.sha256());
    if let (Some(wire), Some(computed)) = (fields.id, computed_id)
        && *wire != computed
    {
        t.push(note(
            ReasonCode::IdMismatch,
            "id is not sha256(body(E, 0)) (P4)",
        ));
    }
    if let (Some(None), Some(trace), Some(id)) = (fields.parent, fields.trace, fields.id)
        && trace != id
    {
        t.push(note(
            ReasonCode::GenesisTraceMismatch,
            "a genesis carries trace == id (P4)",
        ));
    }

    // P10: time, when a clock is given.
    if let Some(now) = opts.now {
        if fields
            .expires
            .is_some_and(|x| x < now.saturating_sub(opts.skew))
        {
            t.push(note(
                ReasonCode::Expired,
                "expires is before now - skew (P10)",
            ));
        }
        if fields
            .ts
            .is_some_and(|ts| ts > now.saturating_add(opts.skew))
        {
            t.push(note(ReasonCode::FutureTs, "ts is after now + skew (P10)"));
        }
    }

    // P2: who may appear where.
    if let Some(f) = from {
        if f.sigil.is_reserved() {
            t.push(note(
                ReasonCode::ReservedSigil,
                "a reserved sigil never signs (P2)",
            ));
        }
        if kind == Kind::Manifest && f.sigil.is_short() {
            t.push(note(
                ReasonCode::ShortSigilMisuse,
                "a short sigil cannot be a manifest subject (P2)",
            ));
        }
    }

    // P7: kind-specific shapes.
    if let Some((payload, _)) = fields.payload
        && let Err(d) = payload::check_raw(kind, payload)
    {
        t.push(Reason::new(ReasonCode::Malformed, d));
    }
    // P2, P14: a certification's subject is a default or long sigil.
    if kind == Kind::Certification
        && let Some(payload) = fields.payload.as_ref().and_then(|(p, _)| p.value())
        && let Ok(c) = payload::Certification::parse(payload)
        && c.subject.is_short()
    {
        t.push(Reason::new(
            ReasonCode::ShortSigilMisuse,
            Detail::Field {
                field: "payload.subject",
                problem: "a short sigil cannot be a Herald's subject (P2, P14)",
            },
        ));
    }
    match (kind, fields.parent) {
        (Kind::Birth, Some(Some(_))) => t.push(Reason::new(
            ReasonCode::Malformed,
            Detail::Field {
                field: "parent",
                problem: "a birth is a genesis: parent must be null (P7)",
            },
        )),
        (Kind::Refusal, Some(None)) => t.push(Reason::new(
            ReasonCode::Malformed,
            Detail::Field {
                field: "parent",
                problem: "a refusal's parent is the refused envelope (P7)",
            },
        )),
        _ => {}
    }

    // P12 (and the birth of P7).
    let birth = check_attestations(&fields, kind, &mut t);

    // P5/P6: signatures in array order.
    let mut key_source = None;
    let mut valid_scopes = [false; Scope::ALL.len()];
    if let Some(signatures) = fields.signatures {
        if signatures.is_empty() {
            t.push(note(ReasonCode::OriginMissing, "signatures is empty (P5)"));
        }
        let mut items = signatures.iter();
        let mut duplicates = DuplicateSigners::new(signatures);
        let mut k = 0u32;
        while let Some((_, value)) = items.next_spanned() {
            let sig = match RawSignature::parse_knowing(
                value,
                from.map(|f| (f.text.as_bytes(), f.sigil)),
            ) {
                Ok(sig) => sig,
                Err(d) => {
                    // P13 revision 2: a map that breaks the P3 shape is
                    // `malformed` at its index, index 0 included.
                    t.push(Reason::at(ReasonCode::Malformed, k, d));
                    k += 1;
                    continue;
                }
            };
            let verdict = check_signature(
                &fields, kind, from, birth, keys, opts, k, &sig, verifier, &mut t,
            );
            if let Some((scope, source)) = verdict {
                if k == 0 {
                    key_source = Some(source);
                }
                if let Some(i) = Scope::ALL.iter().position(|s| *s == scope)
                    && let Some(slot) = valid_scopes.get_mut(i)
                {
                    *slot = true;
                }
            }
            // spec §3.4: the same signer (public key) never appears twice.
            if duplicates.is_duplicate(k as usize) {
                t.push(Reason::at(
                    ReasonCode::DuplicateSigner,
                    k,
                    Detail::Note("the same key signed earlier (spec §3.4)"),
                ));
            }
            k += 1;
        }
    }
    let has_valid = |scope: Scope| {
        Scope::ALL
            .iter()
            .position(|s| *s == scope)
            .and_then(|i| valid_scopes.get(i).copied())
            .unwrap_or(false)
    };
    if kind == Kind::Duress && !has_valid(Scope::DuressWitness) {
        t.push(note(
            ReasonCode::RequiredSignatureMissing,
            "a duress envelope needs a duress_witness signature (P7)",
        ));
    }
    for &scope in opts.required_scopes {
        if !has_valid(scope) {
            t.push(Reason::new(
                ReasonCode::RequiredSignatureMissing,
                Detail::Note(scope.name()),
            ));
        }
    }

    let status = t.status;
    Checked {
        status,
        envelope: EnvelopeRef::from_fields(fields),
        computed_id,
        key_source,
    }
}

/// Check signature `k`; on success return its scope and key source.
#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename the parameters
fn check_signature(
    fields: &scan::Fields<'_>,
    kind: Kind,
    from: Option<scan::SigilField<'_>>,
    birth: Option<BirthAttestation<'_>>,
    keys: &dyn KeyResolver,
    opts: &CheckOptions<'_>,
    k: u32,
    sig: &RawSignature<'_>,
    verifier: &mut dyn SignatureVerifier,
    t: &mut Tally<'_>,
) -> Option<(Scope, KeySource)> {
    let scope = Scope::from_name_bytes(sig.scope);
    if k == 0 {
        if scope != Some(Scope::Origin) {
            t.push(Reason::at(
                ReasonCode::OriginMissing,
                0,
                Detail::Note("signature 0 must be scope origin (P5)"),
            ));
        }
        if from.is_some_and(|f| f.text.as_bytes() != sig.by) {
            t.push(Reason::at(
                ReasonCode::OriginSignerMismatch,
                0,
                Detail::Note("origin by must be the from string (P13)"),
            ));
        }
    } else if scope == Some(Scope::Origin) {
        t.push(Reason::at(
            ReasonCode::Malformed,
            k,
            Detail::Note("scope origin is only for signature 0 (P5)"),
        ));
        return None;
    }
    let mut ok = true;
    if sig.alg != ED25519.as_bytes() {
        t.push(Reason::at(
            ReasonCode::UnknownAlg,
            k,
            Detail::Note("only ed25519 is registered (spec §3.4)"),
        ));
        ok = false;
    }
    let Some(scope) = scope else {
        t.push(Reason::at(
            ReasonCode::UnknownScope,
            k,
            Detail::Note("scope outside the P6 registry"),
        ));
        return None;
    };
    if sig.signer.is_reserved() {
        // For a reserved `from`, the envelope-level reason already says it.
        if !(k == 0 && from.is_some_and(|f| f.sigil == sig.signer)) {
            t.push(Reason::at(
                ReasonCode::ReservedSigil,
                k,
                Detail::Note("a reserved sigil never signs (P2)"),
            ));
        }
        return None;
    }
    if scope == Scope::HeraldEndorsement && sig.signer.is_short() {
        t.push(Reason::at(
            ReasonCode::ShortSigilMisuse,
            k,
            Detail::Note("a short sigil cannot be a Herald (P2)"),
        ));
        ok = false;
    }
    if !ok {
        return None;
    }
    let resolved = keys
        .resolve(&sig.signer)
        .filter(|key| sig.signer.names_key(key.as_bytes()))
        .map(|key| (key, KeySource::Keyring))
        .or_else(|| {
            keys.resolve_molted(&sig.signer)
                .map(|key| (key, KeySource::Molt))
        });
    let learned = || {
        let b = birth?;
        (opts.learn_birth_keys && k == 0 && kind == Kind::Birth && sig.signer.names_key(b.key))
            .then(|| PublicKey::from_bytes(b.key).ok())
            .flatten()
            .map(|key| (key, KeySource::Birth))
    };
    let Some((key, source)) = resolved.or_else(learned) else {
        t.push(Reason::at(
            ReasonCode::UnknownSigner,
            k,
            Detail::Note("no trusted key for this sigil (spec §2.1)"),
        ));
        return None;
    };
    let tag = match scope {
        Scope::Origin => kind.origin_tag(),
        other => other.tag().unwrap_or_default(),
    };
    let body = body_of(fields, k as usize)?;
    if verifier.verify(&key, sig.sig, tag, &body) {
        Some((scope, source))
    } else {
        t.push(Reason::at(
            ReasonCode::BadSignature,
            k,
            Detail::Note("does not verify under the key its `by` sigil resolves to (P5)"),
        ));
        None
    }
}

/// P12 shapes (warnings) and, on a birth, the P7 birth rules (errors).
fn check_attestations<'a>(
    fields: &scan::Fields<'a>,
    kind: Kind,
    t: &mut Tally<'_>,
) -> Option<BirthAttestation<'a>> {
    let mut birth = None;
    let mut births = 0;
    // The scan checked the shapes and found no birth unless told to read
    // them again (each attestation is then parsed twice, as before).
    if let Some(list) = fields.attestations
        && fields.attestations_to_read
    {
        for item in list.iter() {
            // A bad element shape was reported by the scan (P3).
            let Ok(a) = RawAttestation::parse(item) else {
                continue;
            };
            if a.ty == b"birth" {
                births += 1;
                match BirthAttestation::parse_raw(a.value) {
                    Ok(b) => birth = birth.or(Some(b)),
                    Err(d) if kind == Kind::Birth => t.push(Reason::new(ReasonCode::Malformed, d)),
                    Err(d) => t.push(Reason::new(ReasonCode::AttestationMalformed, d)),
                }
                continue;
            }
            if let Err(d) = a.check_shape() {
                t.push(Reason::new(ReasonCode::AttestationMalformed, d));
            }
        }
    }
    if kind != Kind::Birth {
        return None;
    }
    let malformed = |problem| {
        Reason::new(
            ReasonCode::Malformed,
            Detail::Field {
                field: "birth",
                problem,
            },
        )
    };
    if births > 1 {
        t.push(malformed("a birth carries one birth attestation (P7)"));
    }
    let Some(b) = birth else {
        if births == 0 {
            t.push(malformed("a birth must carry a birth attestation (P7)"));
        }
        return None;
    };
    if let Some(f) = fields.from
        && !f.sigil.names_key(b.key)
    {
        t.push(malformed("the birth key's sigil is not from (P7)"));
    }
    if PublicKey::from_bytes(b.key).is_err() {
        t.push(malformed(
            "the birth key must be a canonical Ed25519 key of prime order (P5)",
        ));
    }
    for parent in b.parents() {
        if parent.is_short() {
            t.push(note(
                ReasonCode::ShortSigilMisuse,
                "a short sigil cannot be a lineage parent (P2)",
            ));
        }
        if parent.names_key(b.key) {
            t.push(note(
                ReasonCode::LineageSelf,
                "a birth's lineage contains its own sigil (spec §2.3)",
            ));
        }
    }
    Some(b)
}

/// The trace-parent binding (spec §3.3a): `child.trace == parent.trace`,
/// where `parent` is the envelope `child.parent` names.
pub fn check_parent(child: &EnvelopeRef<'_>, parent: &EnvelopeRef<'_>) -> Result<(), Reason> {
    check_parent_link(
        &ParentLink {
            parent: child.parent(),
            trace: child.trace(),
        },
        parent.id(),
        parent.trace(),
    )
}

/// What [`check_parent_link`] reads of a child envelope: the `parent` and
/// `trace` fields.
#[derive(Clone, Copy, Debug)]
pub struct ParentLink<'a> {
    /// The child's `parent` field.
    pub parent: Option<&'a [u8; 32]>,
    /// The child's `trace` field.
    pub trace: &'a [u8; 32],
}

/// [`check_parent`] over the fields it reads, for a caller that keeps only
/// those of the set's envelopes (spec §3.3a): the parent is the envelope of
/// id `parent_id` and trace `parent_trace`.
pub fn check_parent_link(
    child: &ParentLink<'_>,
    parent_id: &[u8; 32],
    parent_trace: &[u8; 32],
) -> Result<(), Reason> {
    if child.parent != Some(parent_id) {
        return Err(note(
            ReasonCode::MissingParent,
            "this is not the envelope parent names",
        ));
    }
    if child.trace != parent_trace {
        return Err(note(
            ReasonCode::TraceMismatch,
            "trace differs from the parent's (spec §3.3a)",
        ));
    }
    Ok(())
}
