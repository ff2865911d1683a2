//! Live reception cases (P10).

use super::*;

pub(super) fn receive_cases(g: &mut Gen) {
    let day = 86_400;
    let now = NOW + 40 * day;
    let n = g.fresh_nonce();
    let fresh = g.build(
        "alice",
        EnvelopeBuilder::genesis(now - 10)
            .nonce(n)
            .payload(Value::text("live")),
    );
    let n = g.fresh_nonce();
    let stale = g.build(
        "alice",
        EnvelopeBuilder::genesis(now - 31 * day)
            .nonce(n)
            .payload(Value::text("a month old, no expires")),
    );
    let n = g.fresh_nonce();
    let old_but_expiring = g.build(
        "alice",
        EnvelopeBuilder::genesis(now - 31 * day)
            .expires(now + day)
            .nonce(n)
            .payload(Value::text("old, but expires later")),
    );
    let mut inputs = Vec::new();
    let mut expects = Vec::new();
    for (i, (e, want)) in [
        (&fresh, valid()),
        (&fresh, invalid(&[(R::ReplayedNonce, None)])),
        (&stale, invalid(&[(R::Stale, None)])),
        (&old_but_expiring, valid()),
    ]
    .into_iter()
    .enumerate()
    {
        let rel = format!("cases/receive/live_reception-{i}.cbor");
        g.files.insert(rel.clone(), e.as_bytes().to_vec());
        inputs.push(rel);
        expects.push(want);
    }
    g.cases.push(Case::Receive {
        name: "live_reception".into(),
        description: "live mode with a fresh cache: a valid envelope, its replay, a stale one (no expires, 31 days old), an old one whose expires is ahead (P10)".into(),
        inputs,
        keyring: vec!["alice".into()],
        now,
        expect: expects,
    });
}
