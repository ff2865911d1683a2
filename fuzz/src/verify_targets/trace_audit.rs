//! The `trace_audit` target: a whole audit over arbitrary bytes.

use super::*;

/// `trace_audit`: [`audit`] over the input as one CBOR-sequence file. One
/// report per piece [`split`] cuts, listed or (undecodable past
/// `MAX_LISTED_UNPARSED`) counted as unlisted, so nothing is silently
/// dropped; never
/// an empty report, each status the P13 maximum of its reasons, a summary
/// and trace counts that add up, a JSON form that parses, and the same
/// report twice (no dependence on hash-map order).
pub fn trace_audit(data: &[u8]) {
    let inputs = [Input {
        name: "fuzz".into(),
        bytes: data.to_vec(),
    }];
    let opts = AuditOptions {
        now: Some(NOW),
        ..AuditOptions::default()
    };
    let report = audit(&inputs, fuzz_keyring(), &opts);
    assert!(!report.envelopes.is_empty(), "no input verifies as nothing");
    // A key file or plain text is one entry saying so (CLI.md: input that
    // cannot be split into envelopes), not one per piece.
    let pieces = match not_envelopes(data) {
        Some(_) => 1,
        None => split_sequence(data, opts.limits.max_size, 512).len(),
    };
    assert_eq!(
        report.envelopes.len() + report.unlisted,
        pieces,
        "one report per piece"
    );
    // Not decoded as an envelope: no `trace` (an `id` may still be named
    // from the raw map, so it cannot tell).
    let listed_unparsed = report
        .envelopes
        .iter()
        .filter(|e| e.trace.is_none())
        .count();
    assert!(report.unlisted == 0 || listed_unparsed == MAX_LISTED_UNPARSED);
    let mut summary = Summary::default();
    summary.invalid = report.unlisted;
    for e in &report.envelopes {
        summary.add(e.status());
        let worst = e
            .reasons
            .iter()
            .map(|r| r.status())
            .max()
            .unwrap_or(Status::Valid);
        assert_eq!(e.status(), worst);
        if e.id.is_none() {
            assert_eq!(
                e.status(),
                Status::Invalid,
                "an envelope without id is invalid"
            );
        }
    }
    assert_eq!(summary, report.summary);
    let in_traces: usize = report
        .traces
        .iter()
        .map(|t| t.valid + t.partial + t.invalid)
        .sum();
    assert!(in_traces <= report.envelopes.len());
    for t in &report.traces {
        assert!(
            t.valid + t.partial + t.invalid > 0,
            "a trace has an envelope"
        );
    }
    let json = serde_json::to_string(&report).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
    assert_eq!(
        audit(&inputs, fuzz_keyring(), &opts),
        report,
        "deterministic"
    );

    let unlearned = AuditOptions {
        learn_birth_keys: false,
        now: None,
        max_envelopes: 2,
        ..AuditOptions::default()
    };
    let capped = audit(&inputs, &Keyring::new(), &unlearned);
    assert!(!capped.envelopes.is_empty());
    assert!(capped.envelopes.len() <= report.envelopes.len());
}
