//! Each signature is verified once per audit and key (docs/lifecycle.md):
//! step 2's birth checks are reused by step 3, and an envelope checked
//! again with a molt's new key (step 3c) verifies only its origin under
//! that key. The audit counts its signature equations
//! (`internal::audit_counted`), and the count must be exactly what this set
//! needs, worked out by hand below, on the parallel path and the sequential
//! one alike.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::{Envelope, Scope, SigningKey};
use herald_verify::internal::audit_counted;
use herald_verify::{AuditOptions, Input, Keyring, Provenance};

mod support;

use support::{DAY, T0, birth, birth_with, key, molt, say, say_as, sigil};

/// One group of envelopes from fresh keys `n..n+4` (and the pinned `b`),
/// with the equations each needs.
fn group(n: u8, b: &SigningKey) -> (Vec<Envelope>, usize) {
    let (a, a2, p, c, z) = (key(n), key(n + 1), key(n + 2), key(n + 3), key(n + 4));
    let nb = T0 + 20 + DAY;
    let cosigned = |e: Envelope| e.cosign(b, Scope::HumanApproval, None).unwrap();
    let consented = birth_with(&c, T0 + 1, &[sigil(&p)], |x| x)
        .cosign(&p, Scope::LineageConsent, None)
        .unwrap();
    let set = [
        // Step 2 verifies the birth's origin to learn its key; step 3
        // reuses the verdict.
        (birth(&a, T0), 1),
        (birth(&p, T0), 1),
        // Origin once (step 2), the parent's consent once (step 3, with
        // the key step 2 learned).
        (consented, 2),
        // Origin and a co-signature by a pinned key.
        (cosigned(say(&a, T0 + 10)), 2),
        // A stranger's signature for a's sigil: a's key fails (step 3),
        // then the molt's new key fails too (3c).
        (say_as(&a, &z, T0 + 12), 2),
        // The molt itself, by a's key.
        (molt(&a, &a2, T0 + 20, nb), 1),
        // Signed by the molted-in key: a's key fails and the pinned
        // co-signature verifies (step 3); 3c verifies the origin with the
        // new key and takes the co-signature's verdict from step 3.
        (cosigned(say_as(&a, &a2, nb + 10)), 3),
        // Nobody knows z: nothing to verify.
        (say(&z, T0 + 30), 0),
    ];
    let count = set.iter().map(|(_, n)| n).sum();
    (set.into_iter().map(|(e, _)| e).collect(), count)
}

#[test]
fn every_signature_is_verified_once_per_key() {
    let b = key(250);
    let mut ring = Keyring::new();
    ring.insert(b.public_key(), Provenance::Pinned);
    // Enough groups that the parallel path cuts blocks into parts.
    let mut bytes = Vec::new();
    let mut want = 0;
    for g in 0..40u8 {
        let (envs, n) = group(1 + 5 * g, &b);
        for e in envs {
            bytes.extend_from_slice(e.as_bytes());
        }
        want += n;
    }
    let inputs = [Input {
        name: "set".into(),
        bytes,
    }];
    let opts = AuditOptions {
        now: Some(T0 + 10 * DAY),
        ..AuditOptions::default()
    };
    let (parallel, counted) = audit_counted(&inputs, &ring, &opts, true);
    assert_eq!(counted, want, "parallel path");
    let (sequential, counted) = audit_counted(&inputs, &ring, &opts, false);
    assert_eq!(counted, want, "sequential path");
    assert_eq!(parallel, sequential);
    // The counts are of a real audit: the molted-in key's envelope is
    // recognised as such, and the stranger's is not.
    let by_a2 = &parallel.envelopes[6];
    assert_eq!(by_a2.key_source.map(|k| k.name()), Some("molt"));
    assert_eq!(parallel.envelopes[4].key_source, None);
    assert_eq!(
        parallel.envelopes[4].status(),
        herald_core::Status::Invalid,
        "{:?}",
        parallel.envelopes[4]
    );
}
