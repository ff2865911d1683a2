// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

//! The builder writes envelopes straight into the sink, merging extra
//! fields among the P3 keys itself. Whatever extra keys it is given, the
//! result must be canonical (the strict decoder accepts it, which the
//! builder checks on every envelope) and equal to the encoding of the same
//! map through `cbor::Value`.

use herald_core::cbor::{Value, key_cmp};
use herald_core::{EnvelopeBuilder, Nonce, SigningKey};
use proptest::prelude::*;

const P3: [&str; 14] = [
    "v",
    "id",
    "from",
    "to",
    "parent",
    "trace",
    "ts",
    "nonce",
    "expires",
    "kind",
    "lineage_proof",
    "attestations",
    "payload",
    "signatures",
];

proptest! {
    #[test]
    fn any_extra_keys_give_canonical_bytes(
        keys in proptest::collection::btree_set("[a-z_]{1,15}", 0..6),
        genesis in any::<bool>(),
        with_to in any::<bool>(),
    ) {
        let alice = SigningKey::from_seed(&[1; 32]);
        let parent = EnvelopeBuilder::genesis(10).nonce(Nonce([9; 16])).sign(&alice).unwrap();
        let mut b = if genesis {
            EnvelopeBuilder::genesis(100)
        } else {
            EnvelopeBuilder::reply(&parent.view(), 100)
        }
        .nonce(Nonce([1; 16]))
        .expires(200)
        .attest("model", Value::text("m"))
        .payload(Value::text("p"));
        if with_to {
            b = b.to(alice.sigil(herald_core::SigilForm::Long));
        }
        let mut extra = 0;
        for k in keys.iter().filter(|k| !P3.contains(&k.as_str())) {
            b = b.extra_field(k, Value::Unsigned(k.len() as u64)).unwrap();
            extra += 1;
        }
        let env = b.sign(&alice).unwrap();
        let bytes = env.as_bytes();
        // Canonical: re-encoding the decoded value gives the same bytes.
        prop_assert_eq!(Value::decode(bytes).unwrap().to_vec(), bytes.to_vec());
        prop_assert_eq!(env.view().unknown_fields(), extra);
        let keys: Vec<&str> = env.view().map().iter().map(|(k, _)| k).collect();
        prop_assert!(keys.windows(2).all(|w| key_cmp(w[0], w[1]).is_lt()));
    }
}
