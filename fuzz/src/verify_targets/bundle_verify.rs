//! The `bundle_verify` target: proof bundles.

use super::*;

/// `bundle_verify`: [`audit`] over the input as one file that may be a
/// proof bundle (`herald_verify::Bundle`), with the two keys pinned (Bob's
/// doubles as the seed logs' key). [`Bundle::decode`] succeeds only on
/// input [`is_bundle`] recognises. A recognised bundle that decodes
/// gives one report per envelope, at its offset, which is where its bytes
/// stand in the input, and one per proof, in order; a valid proof names an
/// envelope of the set and has no detail, an invalid one says why; what the
/// bundle holds re-encodes to a bundle that decodes to the same items; exit
/// status 0 exactly when every envelope and proof is valid. A recognised
/// bundle that does not decode is one `malformed` entry and no proofs;
/// anything else has no proofs. Each status is the P13 maximum of its
/// reasons, and the report is the same twice.
pub fn bundle_verify(data: &[u8]) {
    let recognised = is_bundle(data);
    let decoded = Bundle::decode(data);
    if decoded.is_ok() {
        assert!(recognised, "a bundle that decodes is recognised");
    }
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
    for e in &report.envelopes {
        let worst = e
            .reasons
            .iter()
            .map(|r| r.status())
            .max()
            .unwrap_or(Status::Valid);
        assert_eq!(e.status(), worst);
    }
    match (recognised, &decoded) {
        (true, Ok(b)) => {
            assert_eq!(report.envelopes.len(), b.envelopes().len());
            assert_eq!(report.proofs.len(), b.proofs().len());
            for (&(offset, env), r) in b.envelopes().iter().zip(&report.envelopes) {
                assert_eq!(data.get(offset..offset + env.len()), Some(env));
                assert_eq!(r.source.offset, offset);
            }
            for (&(offset, _), p) in b.proofs().iter().zip(&report.proofs) {
                assert_eq!(p.source.offset, offset);
                if p.status == Status::Valid {
                    assert!(p.detail.is_empty());
                    assert!(
                        report
                            .envelopes
                            .iter()
                            .any(|e| e.id.is_some() && e.id == p.id),
                        "a valid proof names an envelope of the set"
                    );
                } else {
                    assert_eq!(p.status, Status::Invalid);
                    assert!(!p.detail.is_empty(), "an invalid proof says why");
                }
            }
            let envs: Vec<&[u8]> = b.envelopes().iter().map(|e| e.1).collect();
            let proofs: Vec<&[u8]> = b.proofs().iter().map(|p| p.1).collect();
            let again = encode_bundle(&envs, &proofs, b.keys());
            assert!(is_bundle(&again));
            let b2 = Bundle::decode(&again);
            assert!(b2.is_ok(), "the re-encoded bundle decodes: {b2:?}");
            if let Ok(b2) = b2 {
                let envs2: Vec<&[u8]> = b2.envelopes().iter().map(|e| e.1).collect();
                let proofs2: Vec<&[u8]> = b2.proofs().iter().map(|p| p.1).collect();
                assert_eq!(envs2, envs);
                assert_eq!(proofs2, proofs);
                assert_eq!(b2.keys(), b.keys());
            }
            let all = report.envelopes.iter().all(|e| e.status() == Status::Valid)
                && report.proofs.iter().all(|p| p.status == Status::Valid);
            assert_eq!(report.all_valid(), all);
        }
        (true, Err(e)) => {
            assert_eq!(report.envelopes.len(), 1, "a bad bundle is one entry");
            assert_eq!(report.envelopes[0].status(), Status::Invalid);
            let detail = &report.envelopes[0].reasons[0].detail;
            assert!(detail.contains(&std::format!("{e}")), "{detail}");
            assert!(report.proofs.is_empty());
        }
        (false, _) => assert!(report.proofs.is_empty()),
    }
    let json = serde_json::to_string(&report).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
    assert_eq!(
        audit(&inputs, fuzz_keyring(), &opts),
        report,
        "deterministic"
    );
}

// ---- proof_object -----------------------------------------------------------
