//! Junk co-signatures (PROFILE revision 3): who claims a `(from key,
//! nonce)` pair when a copy of a real envelope carries one (P10), in an
//! audit and in live reception, and every bad signature listed with its
//! index, however many (P11).

use super::*;

/// `e` with `n` co-signatures of 64 junk bytes under `by`'s name appended
/// (scope `human_approval`), without re-signing: what anyone can make of a
/// real envelope. Its id is the real one's (P4: the id covers no
/// signature).
fn junk_cosigned(g: &Gen, e: &Envelope, by: &str, n: u8) -> Vec<u8> {
    let by = g.sigil(by, SigilForm::Default);
    forge::edit(e.as_bytes(), |m| {
        let mut sigs = match m.get("signatures") {
            Some(Value::Array(sigs)) => sigs.clone(),
            _ => Vec::new(),
        };
        for i in 0..n {
            let mut junk = Map::new();
            junk.insert("alg", Value::text("ed25519"));
            junk.insert("by", Value::text(by.as_str()));
            junk.insert("scope", Value::text("human_approval"));
            junk.insert("sig", Value::Bytes(vec![0x4a ^ i; 64]));
            sigs.push(Value::Map(junk));
        }
        m.insert("signatures", Value::Array(sigs));
    })
}

/// Every case of this module. Called last, after every other case, so
/// that they all keep their nonces and bytes.
pub(super) fn junk_cosignature_cases(g: &mut Gen) {
    let all = ALL;
    let b = bytes_of;
    let real = g.msg("alice", "bob", None, "the real one");
    let copy = junk_cosigned(g, &real, "bob", 1);
    let copy_reasons = [(R::BadSignature, Some(1)), (R::ReplayedNonce, None)];
    g.verify(
        "junk_cosigned_copy_first",
        "a copy of alice's envelope with a junk co-signature appended, placed before the \
         real one: the pair goes to the first envelope that would be valid apart from the \
         replay rule (P10 revision 3), so the copy is the replay",
        &[copy.clone(), b(&real)],
        &all,
        vec![invalid(&copy_reasons), valid()],
    );
    g.verify(
        "junk_cosigned_copy_after",
        "the real envelope, then the copy with a junk co-signature: the copy is the replay",
        &[b(&real), copy.clone()],
        &all,
        vec![valid(), invalid(&copy_reasons)],
    );
    let other_copy = junk_cosigned(g, &real, "carol", 1);
    g.verify(
        "junk_cosigned_copies_only",
        "two copies with junk co-signatures and no real envelope: none would be valid, so \
         the pair goes to the first whose origin verifies (P10 revision 3)",
        &[copy.clone(), other_copy],
        &all,
        vec![
            partial(&[(R::BadSignature, Some(1))]),
            invalid(&copy_reasons),
        ],
    );

    const BAD: u8 = 20;
    let many = junk_cosigned(g, &real, "bob", BAD);
    let mut reasons: Vec<(ReasonCode, Option<u32>)> = (1..=u32::from(BAD))
        .map(|k| (R::BadSignature, Some(k)))
        .collect();
    reasons.extend((2..=u32::from(BAD)).map(|k| (R::DuplicateSigner, Some(k))));
    g.verify(
        "many_bad_signatures_all_listed",
        "20 junk co-signatures under bob's name: every one is bad_signature at its index, \
         and each after the first duplicate_signer, all listed (P11 revision 3: past 16 too)",
        &[many],
        &all,
        vec![partial(&reasons)],
    );

    // Live reception (P10 revision 3): the refused copy claims nothing.
    let now = NOW + 40 * 86_400;
    let n = g.fresh_nonce();
    let live = g.build(
        "alice",
        EnvelopeBuilder::genesis(now - 10)
            .nonce(n)
            .payload(Value::text("live, the real one")),
    );
    let live_copy = junk_cosigned(g, &live, "bob", 1);
    g.receive(
        "live_junk_cosigned_copy_first",
        "live mode: a copy with a junk co-signature (partial, refused) claims nothing, so the \
         real envelope after it is accepted; then the real one again and the copy again are \
         replays (P10 revision 3)",
        &[
            (live_copy.clone(), partial(&[(R::BadSignature, Some(1))])),
            (b(&live), valid()),
            (b(&live), invalid(&[(R::ReplayedNonce, None)])),
            (live_copy, invalid(&copy_reasons)),
        ],
        &["alice", "bob"],
        now,
    );
}
