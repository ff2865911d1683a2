//! The trace audit the agent runs (PROFILE.md P10, P11; spec §3.3a), with
//! fixed-size state: per envelope, herald-core's `check` (signatures, id,
//! expiry against a given now); then the parent binding against the
//! envelopes before it; then the nonce rule over the whole trace (P10
//! revision 3).

use cortex_m_semihosting::hprintln;
use herald_core::{
    CheckOptions, Detail, EnvelopeRef, PublicKey, Reason, ReasonCode, ReasonSink, Reasons, Status,
    check, check_parent,
};

/// Most envelopes in one audited trace.
pub const MAX_TRACE: usize = 4;
/// Reasons kept per envelope (more are counted, not stored).
const MAX_REASONS: usize = 4;

/// What one envelope of a case must come out as.
#[derive(Clone, Copy)]
pub enum Expect {
    /// `valid`, no reasons.
    Valid,
    /// `invalid` with exactly these reason codes (any order).
    Invalid(&'static [ReasonCode]),
}

/// One envelope's verdict.
struct Verdict {
    status: Status,
    reasons: Reasons<MAX_REASONS>,
}

/// Audit `trace` with the keyring `keys` at `now`, print every verdict, and
/// compare with `expect`; prints `case <name> ok|FAILED`.
///
/// Two passes, to keep the stack small: the first keeps, per envelope,
/// only what the replay rule needs ([`Claim`], 19 bytes); the second checks
/// each envelope again, adds the replay rule's verdict and prints it. Every
/// signature is verified twice, which the instruction counts in
/// docs/embedded.md (one `check`) do not include.
pub fn audit_case(
    name: &str,
    trace: &[&[u8]],
    keys: &[PublicKey],
    now: u64,
    expect: &[Expect],
) -> bool {
    hprintln!("case {}", name);
    let n = trace.len().min(MAX_TRACE);
    let mut ok = trace.len() <= MAX_TRACE;
    let mut claims = [None::<Claim>; MAX_TRACE];
    for (i, claim) in claims.iter_mut().enumerate().take(n) {
        let (v, c) = check_one_of(i, trace, keys, now);
        *claim = c.map(|c| Claim {
            would_be_valid: v.status == Status::Valid,
            ..c
        });
    }
    for i in 0..n {
        let (mut v, claim) = check_one_of(i, trace, keys, now);
        if let Some(c) = claim
            && let Some(first) = owner(&claims, &c)
            && i != first
            && (i > first || c.origin_verified)
        {
            v.reasons.push(Reason::new(
                ReasonCode::ReplayedNonce,
                Detail::Note("an envelope of this trace claimed this key's nonce (P10)"),
            ));
            v.status = v.reasons.status();
        }
        hprintln!("  env{} {}", i, v.status.name());
        for r in v.reasons.as_slice() {
            hprintln!("    - {}", r);
        }
        ok &= matches_expect(&v, expect.get(i).copied());
    }
    hprintln!("case {} {}", name, if ok { "ok" } else { "FAILED" });
    ok
}

/// An envelope's `(from key, nonce)` pair, for an envelope whose sender is
/// in the keyring, and what the replay rule asks of it.
#[derive(Clone, Copy, PartialEq)]
struct Claim {
    /// The sender's key, as its index in the keyring.
    key: u8,
    nonce: [u8; 16],
    /// Its origin verified, so it may claim the pair (P10).
    origin_verified: bool,
    /// It is `valid` apart from the replay rule.
    would_be_valid: bool,
}

/// The owner of `c`'s pair (PROFILE P10, revision 3): the first envelope
/// in input order with the pair that would be `valid` apart from the
/// replay rule, and only when none would, the first whose origin verifies.
/// Every other envelope with the pair whose origin verifies, and every one
/// after the owner, is `replayed_nonce`: so a copy of a real envelope with
/// a junk co-signature, wherever it lies, never makes the real one a
/// replay, and a forgery never claims.
fn owner(claims: &[Option<Claim>; MAX_TRACE], c: &Claim) -> Option<usize> {
    let same = |o: &Option<Claim>| matches!(o, Some(o) if o.origin_verified && o.key == c.key && o.nonce == c.nonce);
    claims
        .iter()
        .position(|o| same(o) && o.is_some_and(|o| o.would_be_valid))
        .or_else(|| claims.iter().position(same))
}

fn matches_expect(v: &Verdict, e: Option<Expect>) -> bool {
    let got = v.reasons.as_slice();
    match e {
        Some(Expect::Valid) => v.status == Status::Valid && got.is_empty(),
        Some(Expect::Invalid(codes)) => {
            v.status == Status::Invalid
                && v.reasons.dropped() == 0
                && got.len() == codes.len()
                && codes.iter().all(|c| got.iter().any(|r| r.code == *c))
        }
        None => false,
    }
}

/// Envelope `i` of `trace` through every step but the replay rule:
/// herald-core's `check`, then its parent among the envelopes before it.
fn check_one_of(
    i: usize,
    trace: &[&[u8]],
    keys: &[PublicKey],
    now: u64,
) -> (Verdict, Option<Claim>) {
    let mut reasons = Reasons::<MAX_REASONS>::new();
    let bytes = trace.get(i).copied().unwrap_or_default();
    let checked = check(bytes, &keys, &options(now), &mut reasons);
    let mut claim = None;
    if let Some(env) = &checked.envelope {
        if let Some(parent_id) = env.parent() {
            let parent = trace
                .get(..i)
                .unwrap_or_default()
                .iter()
                .filter_map(|b| EnvelopeRef::decode(b).ok())
                .find(|p| p.id() == parent_id);
            match parent {
                Some(p) => {
                    if let Err(r) = check_parent(env, &p) {
                        reasons.push(r);
                    }
                }
                None => reasons.push(Reason::new(
                    ReasonCode::MissingParent,
                    Detail::Note("its parent is not in the trace"),
                )),
            }
        }
        // Only an envelope whose origin verifies claims its (key, nonce)
        // pair (P10), so a forgery cannot make a replay: its key was
        // resolved and signature 0 drew no reason (a bad co-signature
        // does not stop the origin from claiming).
        let origin_verified =
            checked.key_source.is_some() && !reasons.as_slice().iter().any(|r| r.index == Some(0));
        claim = keys
            .iter()
            .position(|k| env.from_sigil().names_key(k.as_bytes()))
            .and_then(|key| u8::try_from(key).ok())
            .map(|key| Claim {
                key,
                nonce: *env.nonce(),
                origin_verified,
                would_be_valid: false,
            });
    }
    let verdict = Verdict {
        status: reasons.status(),
        reasons,
    };
    (verdict, claim)
}

fn options(now: u64) -> CheckOptions<'static> {
    CheckOptions {
        now: Some(now),
        ..CheckOptions::DEFAULT
    }
}

/// One `check` (decode, id, origin signature, expiry): what "per verify"
/// costs in docs/embedded.md. True when valid.
pub fn check_one(bytes: &[u8], keys: &[PublicKey], now: u64) -> bool {
    let mut reasons = Reasons::<MAX_REASONS>::new();
    check(bytes, &keys, &options(now), &mut reasons).status == Status::Valid
}

/// Where the payload's bytes start in `bytes`.
pub fn payload_offset(bytes: &[u8]) -> Option<usize> {
    let env = EnvelopeRef::decode(bytes).ok()?;
    let payload = env.payload_bytes();
    (payload.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)
}
