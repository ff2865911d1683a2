//! The trace audit the agent runs (PROFILE.md P10, P11; spec §3.3a), with
//! fixed-size state: per envelope, herald-core's `check` (signatures, id,
//! expiry against a given now); then the parent binding against the
//! envelopes before it, and the nonce not repeated within the trace.

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
pub fn audit_case(
    name: &str,
    trace: &[&[u8]],
    keys: &[PublicKey],
    now: u64,
    expect: &[Expect],
) -> bool {
    hprintln!("case {}", name);
    let mut ok = trace.len() <= MAX_TRACE;
    let mut seen: [Option<([u8; 32], [u8; 16])>; MAX_TRACE] = [None; MAX_TRACE];
    for i in 0..trace.len().min(MAX_TRACE) {
        let v = audit_one(i, trace, keys, now, &mut seen);
        hprintln!("  env{} {}", i, v.status.name());
        for r in v.reasons.as_slice() {
            hprintln!("    - {}", r);
        }
        ok &= matches_expect(&v, expect.get(i).copied());
    }
    hprintln!("case {} {}", name, if ok { "ok" } else { "FAILED" });
    ok
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

/// Envelope `i` of `trace`; `seen` holds the `(key, nonce)` pairs claimed so far.
fn audit_one(
    i: usize,
    trace: &[&[u8]],
    keys: &[PublicKey],
    now: u64,
    seen: &mut [Option<([u8; 32], [u8; 16])>; MAX_TRACE],
) -> Verdict {
    let mut reasons = Reasons::<MAX_REASONS>::new();
    let bytes = trace.get(i).copied().unwrap_or_default();
    let checked = check(bytes, &keys, &options(now), &mut reasons);
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
        // Only an envelope whose origin signature verifies claims its
        // (key, nonce) pair (P10), so a forgery cannot make a replay.
        let origin_ok = checked.key_source.is_some()
            && !reasons.contains(ReasonCode::BadSignature)
            && !reasons.contains(ReasonCode::Malformed);
        let key = keys
            .iter()
            .find(|k| env.from_sigil().names_key(k.as_bytes()))
            .map(|k| *k.as_bytes());
        if let (true, Some(key)) = (origin_ok, key) {
            let pair = (key, *env.nonce());
            if seen.iter().flatten().any(|p| *p == pair) {
                reasons.push(Reason::new(
                    ReasonCode::ReplayedNonce,
                    Detail::Note("this key used this nonce earlier in the trace (P10)"),
                ));
            } else if let Some(slot) = seen.iter_mut().find(|s| s.is_none()) {
                *slot = Some(pair);
            }
        }
    }
    Verdict {
        status: reasons.status(),
        reasons,
    }
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
