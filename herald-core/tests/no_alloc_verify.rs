//! The borrowed decode and the single-envelope check allocate nothing
//! (README, verify.rs): `EnvelopeRef::decode`, `body(k)`, `computed_id` and
//! `check` with a fixed-capacity `Reasons<16>` sink and a `[PublicKey; 2]`
//! resolver, measured by a counting global allocator.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::cbor::Value;
use herald_core::{
    CheckOptions, EnvelopeBuilder, EnvelopeRef, Nonce, PublicKey, ReasonCode, Reasons, Scope,
    SigilForm, SigningKey, Status, check,
};
use herald_testkit::alloc::{Counting, measure};
use sha2::{Digest, Sha256};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Run `f` on this thread; return its result and the number of heap
/// allocations it made.
fn allocations<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let (r, usage) = measure(f);
    (r, usage.calls)
}

struct Fixture {
    alice: SigningKey,
    bob: SigningKey,
    genesis: Vec<u8>,
    cosigned: Vec<u8>,
    reply: Vec<u8>,
}

fn fixture() -> Fixture {
    let alice = SigningKey::from_seed(&[0x11; 32]);
    let bob = SigningKey::from_seed(&[0x22; 32]);
    let genesis = EnvelopeBuilder::genesis(1_746_432_000)
        .to(bob.sigil(SigilForm::Default))
        .expires(1_746_518_400)
        .nonce(Nonce([7; 16]))
        .attest("model", Value::text("claude-opus-4-7"))
        .attest(
            "tools",
            Value::Array(vec![Value::text("search"), Value::text("python")]),
        )
        .attest("temperature", Value::from_f64(0.7).unwrap())
        .payload(Value::text("hello, herald"))
        .sign(&alice)
        .unwrap();
    let cosigned = genesis
        .cosign(&bob, Scope::HumanApproval, Some(1_746_432_010))
        .unwrap();
    let reply = EnvelopeBuilder::reply(&cosigned.view(), 1_746_432_100)
        .to(alice.sigil(SigilForm::Default))
        .nonce(Nonce([8; 16]))
        .payload(Value::text("hello back"))
        .sign(&bob)
        .unwrap()
        .cosign(&alice, Scope::ToolSandbox, None)
        .unwrap();
    Fixture {
        alice,
        bob,
        genesis: genesis.into_bytes(),
        cosigned: cosigned.into_bytes(),
        reply: reply.into_bytes(),
    }
}

/// Everything the brief names, over `bytes`, inside the counted region by
/// the caller: decode, every body(k) hashed, computed_id, and check.
fn exercise(bytes: &[u8], keys: &[PublicKey; 2]) -> (Status, Option<[u8; 32]>, usize, bool) {
    let decoded = EnvelopeRef::decode(bytes);
    let mut decoded_ok = false;
    if let Ok(view) = &decoded {
        decoded_ok = true;
        for k in 0..=view.signature_count() + 1 {
            if let Some(body) = view.body(k) {
                let mut h = Sha256::new();
                body.feed(&mut |chunk| h.update(chunk));
                let _: [u8; 32] = h.finalize().into();
                let _ = body.len();
            }
        }
        let _ = view.computed_id();
        for s in view.signatures() {
            let _ = s.map(|s| s.registered_scope());
        }
    }
    let mut reasons = Reasons::<16>::new();
    let checked = check(bytes, keys, &CheckOptions::DEFAULT, &mut reasons);
    let n = reasons.as_slice().len() + reasons.dropped();
    (checked.status, checked.computed_id, n, decoded_ok)
}

#[test]
fn the_counter_counts() {
    let (v, n) = allocations(|| Vec::<u8>::with_capacity(64));
    assert!(n >= 1, "a Vec allocation was not counted");
    drop(v);
    let (b, n) = allocations(|| Box::new([0u8; 100]));
    assert_eq!(n, 1, "a Box allocation was not counted once");
    drop(b);
    // And the owned API, which does allocate, is seen to.
    let f = fixture();
    let keys = [f.alice.public_key(), f.bob.public_key()];
    let (checked, n) = allocations(|| {
        let env = herald_core::Envelope::from_bytes(f.cosigned.clone()).unwrap();
        env.check(&keys, &CheckOptions::DEFAULT).0.status
    });
    assert_eq!(checked, Status::Valid);
    assert!(
        n >= 1,
        "the owned Envelope allocates, and the counter must see it"
    );
}

#[test]
fn valid_envelopes_decode_and_check_without_allocating() {
    let f = fixture();
    let keys = [f.alice.public_key(), f.bob.public_key()];
    for (name, bytes, sigs) in [
        ("genesis", &f.genesis, 1),
        ("cosigned genesis", &f.cosigned, 2),
        ("cosigned reply", &f.reply, 2),
    ] {
        let ((status, computed, n_reasons, decoded), allocs) =
            allocations(|| exercise(bytes, &keys));
        assert_eq!(allocs, 0, "{name}: {allocs} heap allocations");
        assert!(decoded, "{name} does not decode");
        assert_eq!(status, Status::Valid, "{name}");
        assert_eq!(n_reasons, 0, "{name}");
        let view = EnvelopeRef::decode(bytes).unwrap();
        assert_eq!(view.signature_count(), sigs);
        assert_eq!(computed, Some(*view.id()), "{name}");
    }
}

#[test]
fn tampered_envelopes_check_without_allocating() {
    let f = fixture();
    let keys = [f.alice.public_key(), f.bob.public_key()];
    for original in [&f.cosigned, &f.reply] {
        // The buffer is allocated before counting starts and mutated in place.
        let mut buf = original.clone();
        let len = buf.len();
        // (Which flips are caught is tests/mutation.rs's business; a flip in
        // the last signature's claimed `ts` is not, by P5.)
        let (rejected, allocs) = allocations(|| {
            let mut rejected = 0;
            for i in 0..len {
                buf[i] ^= 0x01;
                let (status, _, n, _) = exercise(&buf, &keys);
                if status != Status::Valid {
                    assert!(n > 0, "flip at {i}: {status} without a reason");
                    rejected += 1;
                }
                buf[i] ^= 0x01;
            }
            rejected
        });
        assert!(
            rejected + 8 >= len,
            "only {rejected} of {len} flips rejected"
        );
        assert_eq!(
            allocs, 0,
            "{allocs} heap allocations over {len} tampered copies"
        );
        assert_eq!(&buf, original);
    }
    // One tamper in detail: the last byte of the co-signature's `sig`.
    let mut t = f.cosigned.clone();
    let cosig = {
        let view = EnvelopeRef::decode(&f.cosigned).unwrap();
        *view.signatures().nth(1).unwrap().unwrap().sig
    };
    let at = f
        .cosigned
        .windows(64)
        .position(|w| w == cosig.as_slice())
        .unwrap();
    t[at + 63] ^= 0x01;
    let (reasons, allocs) = allocations(|| {
        let mut reasons = Reasons::<16>::new();
        let checked = check(&t, &keys, &CheckOptions::DEFAULT, &mut reasons);
        assert_eq!(checked.status, reasons.status());
        reasons
    });
    assert_eq!(allocs, 0);
    assert_eq!(reasons.as_slice().len(), 1, "{:?}", reasons.as_slice());
    assert_eq!(reasons.as_slice()[0].code, ReasonCode::BadSignature);
    assert_eq!(reasons.as_slice()[0].index, Some(1));
    assert_eq!(reasons.status(), Status::Partial);
}

#[test]
fn garbage_checks_without_allocating() {
    let f = fixture();
    let keys = [f.alice.public_key(), f.bob.public_key()];
    let mut garbage: Vec<Vec<u8>> = vec![
        vec![],
        vec![0x00],
        vec![0xff; 64],
        vec![0xa0],                   // an empty map
        vec![0xbf, 0xff],             // indefinite map
        vec![0xa1, 0x61, 0x76, 0x00], // {"v": 0}
        vec![0x9f; 1000],             // deep indefinite arrays
        vec![0x81; 100],              // nesting deeper than the limit
        f.cosigned[..f.cosigned.len() / 2].to_vec(),
        [f.cosigned.as_slice(), &[0x00]].concat(), // trailing byte
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for len in [1, 7, 31, 200, 1500] {
        let mut g = Vec::with_capacity(len);
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            g.push(state as u8);
        }
        garbage.push(g);
    }
    for g in &garbage {
        let ((status, _, n, decoded), allocs) = allocations(|| exercise(g, &keys));
        assert_eq!(
            allocs,
            0,
            "{allocs} allocations on {:02x?}",
            &g[..g.len().min(16)]
        );
        assert_eq!(status, Status::Invalid);
        assert!(!decoded);
        assert!(n > 0, "garbage gave no reason");
    }
}
