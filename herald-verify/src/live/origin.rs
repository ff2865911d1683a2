//! Which key made an envelope's origin signature, in live mode (P7, P8):
//! the sigil's own key (pinned, or the witnessed birth key), else a
//! witnessed molt's new key.

use alloc::vec::Vec;

use herald_core::attestation::BirthAttestation;
use herald_core::cbor::{self, Limits};
use herald_core::{
    Body, CheckOptions, Checked, EnvelopeRef, KeyResolver, KeySource, PublicKey, ReasonCode, Scope,
    Sigil, SignatureVerifier, check_with,
};

use crate::keyring::KeyOrigin;
use crate::keyring::Keyring;
use crate::lifecycle::{Identity, IdentityRecord, Molted, Signer, identity, origin_ok_of};
use crate::reasons::{ReasonList, Unlisted};
use crate::report::ReportReason;

/// The identity `bytes` claims to be from, read from its `from` field
/// before anything is verified (to fetch what was witnessed about it).
pub(crate) fn claimed_identity(bytes: &[u8], limits: &Limits) -> Option<Identity> {
    let value = cbor::decode_with(bytes, limits).ok()?;
    let from = value.as_map()?.get("from")?.as_text()?;
    identity(&Sigil::parse(from).ok()?)
}

/// The keyring, plus the witnessed birth key of one identity.
struct Known<'a> {
    keys: &'a Keyring,
    who: Identity,
    birth: Option<PublicKey>,
}

impl KeyResolver for Known<'_> {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        self.keys.resolve(sigil).or_else(|| {
            self.birth
                .filter(|_| identity(sigil) == Some(self.who))
                .filter(|k| sigil.names_key(k.as_bytes()))
        })
    }
}

/// One envelope checked against the keyring and its identity's record.
#[derive(Clone)]
pub(crate) struct Origin<'b> {
    /// What [`check`] concluded, for the key that verified (if any).
    pub(crate) checked: Checked<'b>,
    /// The reasons [`check`] gave, as listed ([`crate::reasons`]).
    pub(crate) reasons: Vec<ReportReason>,
    /// The reasons given beyond those listed, by code.
    pub(crate) unlisted: Vec<Unlisted>,
    /// The identity's key that made the origin signature.
    pub(crate) signer: Option<Signer>,
    /// The report's `key_source`.
    pub(crate) key_source: Option<KeyOrigin>,
    /// Co-signatures were left unverified behind an origin whose verdict
    /// was pending ([`Gate::Defer`]): once it verifies, check again.
    pub(crate) deferred: bool,
}

/// When [`check_origin`] verifies co-signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// All of them (P11: every applicable reason).
    Off,
    /// Only once the origin verified.
    On,
    /// None: the verifier's answers are pending (a batch decides them
    /// later), so the origin's `true` is not yet a verdict.
    Defer,
}

/// [`check_with`] `bytes` with `keys` and `verifier`: the result, its
/// reasons, and whether the origin verified.
fn run<'b>(
    bytes: &'b [u8],
    keys: &dyn KeyResolver,
    opts: &CheckOptions<'_>,
    gate: Gate,
    verifier: &mut dyn SignatureVerifier,
) -> (Origin<'b>, bool) {
    let mut out = ReasonList::default();
    let mut gate = OriginFirst {
        inner: verifier,
        gate,
        origin: None,
        skipped: false,
    };
    let checked = check_with(bytes, keys, opts, &mut out, &mut gate);
    let skipped = gate.skipped;
    let deferred = skipped && gate.origin == Some(true);
    let reasons: Vec<ReportReason> = out
        .listed()
        .map(|r| ReportReason::of(&r, bytes))
        // The co-signatures the gate did not verify are not known bad, nor
        // a required one missing: the origin's reasons say why it fails.
        .filter(|r| {
            !skipped
                || !(matches!(r.code, ReasonCode::BadSignature) && r.index.is_some_and(|k| k > 0)
                    || r.code == ReasonCode::RequiredSignatureMissing)
        })
        .collect();
    let ok = origin_ok_of(reasons.iter().map(|r| (r.code, r.index)));
    let origin = Origin {
        checked,
        reasons,
        unlisted: out.unlisted().to_vec(),
        signer: None,
        key_source: None,
        deferred,
    };
    (origin, ok)
}

/// A verifier that verifies a co-signature (k ≥ 1) only once the origin
/// signature passed ([`crate::Receiver::with_origin_first`]; CONDUIT.md
/// revision 3: verify the origin first). An envelope whose origin fails is `invalid` whatever
/// its co-signatures say (P13), so verifying them would only spend the
/// receiver's time on an unauthenticated sender's behalf: signature k covers
/// the body and the k signatures before it, so n of them hash O(n²) bytes.
/// [`check_with`] asks in array order, so the origin, when it is asked at
/// all, is asked first, with its kind's origin tag (P6: every co-signature
/// tag is a `herald.sig.*` tag of [`Scope::tag`]).
struct OriginFirst<'v> {
    inner: &'v mut dyn SignatureVerifier,
    gate: Gate,
    /// The origin signature's answer, once asked.
    origin: Option<bool>,
    /// A co-signature was answered `false` without being verified.
    skipped: bool,
}

impl SignatureVerifier for OriginFirst<'_> {
    fn verify(&mut self, key: &PublicKey, sig: &[u8; 64], tag: &[u8], body: &Body<'_>) -> bool {
        let cosignature = Scope::ALL.iter().any(|s| s.tag() == Some(tag));
        if !cosignature {
            let ok = self.inner.verify(key, sig, tag, body);
            self.origin = Some(ok);
            return ok;
        }
        let verify = match self.gate {
            Gate::Off => true,
            Gate::On => self.origin == Some(true),
            Gate::Defer => false,
        };
        if verify {
            return self.inner.verify(key, sig, tag, body);
        }
        self.skipped = true;
        false
    }
}

/// Whether the records `a` and `b` of one identity give [`check_origin`]
/// the same keys to try: the birth key and each molt's new key, in order.
/// Nothing else of a record decides an origin check, so a precheck against
/// `a` stands when the record is `b` by the time the write lock is held
/// (the `t_last` of an accepted envelope changes the record at every post,
/// its keys only at a birth or a molt).
pub(crate) fn same_keys(a: Option<&IdentityRecord>, b: Option<&IdentityRecord>) -> bool {
    fn birth(r: Option<&IdentityRecord>) -> Option<[u8; 32]> {
        r.and_then(|r| r.birth.as_ref()).map(|b| b.key)
    }
    fn molts(r: Option<&IdentityRecord>) -> impl Iterator<Item = [u8; 32]> + '_ {
        r.into_iter()
            .flat_map(|r| r.molts.iter().map(|m| m.new_key))
    }
    birth(a) == birth(b) && molts(a).eq(molts(b))
}

/// Check `bytes` (P1–P7) with the sigil's own key — pinned, or the
/// witnessed birth key when `learn_birth_keys` — and, if that origin fails,
/// with each witnessed molt's new key through
/// [`KeyResolver::resolve_molted`] (P8), newest first. `verifier` decides
/// each signature ([`herald_core::Strict`], or [`crate::verdicts::Collect`]
/// deferring the equations to a batch).
pub(crate) fn check_origin<'b>(
    bytes: &'b [u8],
    keys: &Keyring,
    who: Option<Identity>,
    state: Option<&IdentityRecord>,
    opts: &CheckOptions<'_>,
    gate: Gate,
    verifier: &mut dyn SignatureVerifier,
) -> Origin<'b> {
    let birth = state
        .filter(|_| opts.learn_birth_keys)
        .and_then(|s| s.birth.as_ref())
        .and_then(|b| PublicKey::from_bytes(&b.key).ok());
    let own = match who {
        Some(who) => run(bytes, &Known { keys, who, birth }, opts, gate, verifier),
        None => run(bytes, keys, opts, gate, verifier),
    };
    let (own, ok) = own;
    let from = own.checked.envelope.as_ref().map(EnvelopeRef::from_sigil);
    if ok {
        let pinned = from.and_then(|f| keys.lookup(&f));
        let (key, source) = match own.checked.key_source {
            Some(KeySource::Keyring) => match pinned {
                Some((k, p)) => (Some(*k.as_bytes()), Some(p.into())),
                None => (birth.map(|k| *k.as_bytes()), Some(KeyOrigin::Birth)),
            },
            Some(KeySource::Birth) => (
                own.checked
                    .envelope
                    .as_ref()
                    .and_then(|v| v.attestation("birth"))
                    .and_then(|a| BirthAttestation::parse(a).ok())
                    .map(|b| *b.key),
                Some(KeyOrigin::Birth),
            ),
            other => (None, other.and_then(KeyOrigin::of_source)),
        };
        return Origin {
            signer: key.map(Signer::Own),
            key_source: source,
            ..own
        };
    }
    if let (Some(who), Some(state)) = (who, state) {
        for (i, m) in state.molts.iter().enumerate().rev() {
            let Ok(key) = PublicKey::from_bytes(&m.new_key) else {
                continue;
            };
            let (molted, ok) = run(bytes, &Molted { keys, who, key }, opts, gate, verifier);
            if ok && molted.checked.key_source == Some(KeySource::Molt) {
                return Origin {
                    signer: Some(Signer::Molt(i)),
                    key_source: Some(KeyOrigin::Molt),
                    ..molted
                };
            }
        }
    }
    Origin {
        key_source: keys.source_name(own.checked.key_source, from),
        ..own
    }
}
