//! The `proof_object` target: P9 proof objects and signed tree heads.

use super::*;

/// The seed of the audit-log key `proof_object` pins: the conformance
/// vectors' `log` key (vectors/README.md: seeds are
/// `sha256("herald-vectors/v1/key/" + name)`), so the `proof` cases of
/// `vectors/conformance/` and the seed generator's own log verify under
/// the same keyring.
pub fn proof_log_seed() -> [u8; 32] {
    Sha256::digest(b"herald-vectors/v1/key/log").into()
}

/// The pinned log key of `proof_object` and a keyring holding it alone.
pub fn proof_keyring() -> &'static (SigningKey, Keyring) {
    static RING: OnceLock<(SigningKey, Keyring)> = OnceLock::new();
    RING.get_or_init(|| {
        let key = SigningKey::from_seed(&proof_log_seed());
        let mut ring = Keyring::new();
        ring.insert(key.public_key(), Provenance::Pinned);
        (key, ring)
    })
}

/// `proof_object`: the audit log's proof objects (P9, CLI.md `herald log`)
/// from untrusted bytes, as `herald log verify-proof` and bundles read them.
///
/// Layout: byte 0 selects the object (`byte & 3`: 0 inclusion proof, 1
/// consistency proof, 2 signed tree head, 3 whichever [`AuditObject`] tells
/// apart by its keys; the other bits are ignored), the rest is the object.
///
/// For every kind: decoding is deterministic, [`AuditObject::decode`]
/// agrees with the kind's own decoder (same object, or both refuse);
/// accepted ⇒ `encode()` gives back exactly the bytes (P1: a canonical item
/// has one encoding, a sigil one spelling per form) and re-decodes to an
/// equal object; verification under the pinned log key is deterministic,
/// returns that key and only for a `log` sigil naming it; under an empty
/// keyring nothing verifies, and it fails at the tree head (never at a
/// size or the path). See [`check_inclusion`], [`check_consistency`] and
/// [`check_sth`] for what a verified object must also satisfy.
pub fn proof_object(data: &[u8]) {
    let kind = data.first().copied().unwrap_or(0) & 3;
    let rest = data.get(1..).unwrap_or(&[]);
    let object = AuditObject::decode(rest);
    assert_eq!(object, AuditObject::decode(rest), "deterministic");
    match kind {
        0 => one_kind(
            rest,
            &object,
            InclusionProof::decode,
            AuditObject::Inclusion,
            |o| matches!(o, AuditObject::Inclusion(_)),
            check_inclusion,
        ),
        1 => one_kind(
            rest,
            &object,
            ConsistencyProof::decode,
            AuditObject::Consistency,
            |o| matches!(o, AuditObject::Consistency(_)),
            check_consistency,
        ),
        2 => one_kind(
            rest,
            &object,
            SignedTreeHead::decode,
            AuditObject::TreeHead,
            |o| matches!(o, AuditObject::TreeHead(_)),
            check_sth,
        ),
        _ => {
            if let Ok(o) = &object {
                assert_eq!(o.encode(), rest, "P1: one encoding");
                assert_eq!(AuditObject::decode(&o.encode()).as_ref(), Ok(o));
                let (key, ring) = proof_keyring();
                let verified = o.verify(ring);
                assert_eq!(verified, o.verify(ring), "deterministic");
                if let Ok(k) = &verified {
                    assert_eq!(*k, key.public_key(), "the pinned key");
                }
                assert!(o.verify(&Keyring::new()).is_err());
                assert!(o.verify(&()).is_err());
                // The object is the one its own kind decodes and verifies.
                let (same, own) = match o {
                    AuditObject::Inclusion(p) => (
                        InclusionProof::decode(rest).as_ref() == Ok(p),
                        p.verify(ring),
                    ),
                    AuditObject::Consistency(p) => (
                        ConsistencyProof::decode(rest).as_ref() == Ok(p),
                        p.verify(ring),
                    ),
                    AuditObject::TreeHead(s) => (
                        SignedTreeHead::decode(rest).as_ref() == Ok(s),
                        s.verify(ring).map_err(|error| CheckError::Sth {
                            which: "sth",
                            error,
                        }),
                    ),
                };
                assert!(same, "AuditObject decodes as its kind does");
                assert_eq!(own, verified, "AuditObject verifies as its kind does");
            }
        }
    }
}

/// `rest` decoded as one kind of object: deterministic; when it decodes,
/// [`AuditObject::decode`] gives the same object (`wrap`) and `check`
/// holds; when it does not, `AuditObject` did not decode it as that kind
/// (`is`) either.
fn one_kind<T, E>(
    rest: &[u8],
    object: &Result<AuditObject, herald_verify::FormatError>,
    decode: fn(&[u8]) -> Result<T, E>,
    wrap: fn(T) -> AuditObject,
    is: fn(&AuditObject) -> bool,
    check: fn(&[u8], &T),
) where
    T: Clone + PartialEq + core::fmt::Debug,
    E: PartialEq + core::fmt::Debug,
{
    let decoded = decode(rest);
    assert_eq!(decoded, decode(rest), "deterministic");
    match &decoded {
        Ok(p) => {
            assert_eq!(object.as_ref().ok(), Some(&wrap(p.clone())));
            check(rest, p);
        }
        Err(_) => assert!(
            !object.as_ref().is_ok_and(is),
            "AuditObject decoded what its kind refused"
        ),
    }
}

/// Under a resolver that knows no key (an empty keyring, `()`: the same
/// result), a proof fails at its first tree head: the `log` fields
/// disagree, or the head's signer is refused or unknown (never a size or
/// the path, which are checked after).
fn refused_without_keys(empty: Result<PublicKey, CheckError>, unit: Result<PublicKey, CheckError>) {
    assert_eq!(empty, unit);
    assert!(empty.is_err(), "no keys, no proof");
    let Err(e) = &empty else { return };
    assert!(
        matches!(
            e,
            CheckError::LogMismatch { .. }
                | CheckError::Sth {
                    error: SthError::UnknownLog { .. }
                        | SthError::ShortSigil { .. }
                        | SthError::ReservedSigil { .. },
                    ..
                }
        ),
        "with no keys: {e}"
    );
}

/// Verify `sth` as the pinned key: the same result as the ring gives, the
/// signature the holder of the key would have made (Ed25519 signing is
/// deterministic, RFC 8032, and strict verification admits no second
/// encoding of a signature), and a flipped bit of the root or the
/// signature breaks it.
fn check_signed_head(sth: &SignedTreeHead, key: &PublicKey) {
    let (signing, _) = proof_keyring();
    assert!(!sth.log().is_short() && !sth.log().is_reserved());
    assert!(
        sth.log().names_key(key.as_bytes()),
        "the log sigil names the key"
    );
    assert_eq!(sth.verify_with_key(key), Ok(()));
    assert_eq!(sth.head().clone().sign(signing).as_ref(), Ok(sth));
    let head = sth.head();
    let mut root = *head.root();
    root[0] ^= 1;
    let moved = TreeHead::new(*head.log(), head.size(), root, head.ts());
    assert!(
        SignedTreeHead::from_parts(moved, *sth.sig())
            .verify_with_key(key)
            .is_err()
    );
    let mut sig = *sth.sig();
    sig[63] ^= 0x80;
    assert!(
        SignedTreeHead::from_parts(head.clone(), sig)
            .verify_with_key(key)
            .is_err()
    );
}

/// A decoded signed tree head (`proof_object` kind 2): it re-encodes to its
/// bytes and to an equal head; `verify` with the pinned key agrees with
/// `verify_with_key` and is deterministic; verified ⇒ the pinned key, and
/// [`check_signed_head`]; with no keys it never verifies.
fn check_sth(bytes: &[u8], sth: &SignedTreeHead) {
    assert_eq!(sth.encode(), bytes, "P1: one encoding");
    assert_eq!(SignedTreeHead::decode(&sth.encode()).as_ref(), Ok(sth));
    let head = sth.head();
    let rebuilt = TreeHead::new(*head.log(), head.size(), *head.root(), head.ts());
    assert_eq!(&rebuilt, head);
    assert_eq!(&SignedTreeHead::from_parts(rebuilt, *sth.sig()), sth);
    let (key, ring) = proof_keyring();
    let public = key.public_key();
    let verified = sth.verify(ring);
    assert_eq!(verified, sth.verify(ring), "deterministic");
    assert_eq!(
        verified.is_ok(),
        sth.verify_with_key(&public).is_ok(),
        "the ring holds the one key"
    );
    if let Ok(k) = &verified {
        assert_eq!(*k, public, "the pinned key");
        check_signed_head(sth, k);
    }
    let none = sth.verify(&Keyring::new());
    assert!(
        matches!(
            none,
            Err(SthError::UnknownLog { .. }
                | SthError::ShortSigil { .. }
                | SthError::ReservedSigil { .. })
        ),
        "with no keys: {none:?}"
    );
    assert_eq!(none, sth.verify(&()));
}

/// A decoded inclusion proof (`proof_object` kind 0): it re-encodes to its
/// bytes and to an equal proof, its leaf re-encodes to its leaf bytes, its
/// path has at most 64 hashes. Verified under the pinned key (the same
/// result twice): the key is the pinned one, `log` and `size` are the
/// tree head's and the head verifies on its own ([`check_signed_head`]);
/// `index < size` and the path has `inclusion_proof_len(index, size)`
/// hashes; `merkle::verify_inclusion` of the leaf hash accepts it against
/// the head's root, and the root recomputed from the path is that root;
/// [`InclusionProof::new`] from its parts gives the same proof. With no
/// keys it never verifies and fails at the head.
fn check_inclusion(bytes: &[u8], p: &InclusionProof) {
    assert_eq!(p.encode(), bytes, "P1: one encoding");
    assert_eq!(InclusionProof::decode(&p.encode()).as_ref(), Ok(p));
    assert_eq!(
        p.leaf().encode(),
        p.leaf_bytes(),
        "P9: the leaf's one encoding"
    );
    assert_eq!(Leaf::decode(p.leaf_bytes()).as_ref(), Ok(p.leaf()));
    assert!(p.path().len() <= herald_verify::MAX_PROOF_PATH);
    assert_eq!(
        SignedTreeHead::decode(&p.sth().encode()).as_ref(),
        Ok(p.sth())
    );
    let (key, ring) = proof_keyring();
    let verified = p.verify(ring);
    assert_eq!(verified, p.verify(ring), "deterministic");
    if let Ok(k) = &verified {
        assert_eq!(*k, key.public_key(), "the pinned key");
        let sth = p.sth();
        assert_eq!((p.log(), p.size()), (sth.log(), sth.size()));
        assert_eq!(sth.verify(ring).as_ref(), Ok(k));
        check_signed_head(sth, k);
        assert!(p.index() < p.size());
        assert_eq!(
            inclusion_proof_len(p.index(), p.size()).ok(),
            Some(p.path().len())
        );
        let leaf = leaf_hash(p.leaf_bytes());
        assert_eq!(p.leaf().hash(), leaf);
        assert_eq!(
            verify_inclusion(&leaf, p.index(), sth.size(), p.path(), sth.root()),
            Ok(())
        );
        assert_eq!(
            merkle::root_from_inclusion_proof(&leaf, p.index(), p.size(), p.path()).as_ref(),
            Ok(sth.root())
        );
        let rebuilt =
            InclusionProof::new(p.index(), p.leaf().clone(), p.path().to_vec(), sth.clone());
        assert_eq!(&rebuilt, p);
    }
    refused_without_keys(p.verify(&Keyring::new()), p.verify(&()));
}

/// A decoded consistency proof (`proof_object` kind 1): it re-encodes to
/// its bytes and to an equal proof, its path has at most 64 hashes.
/// Verified under the pinned key (the same result twice): the key is the
/// pinned one, `log`, `size1`, `size2` are the heads' and both heads verify
/// on their own ([`check_signed_head`]); `0 < size1 ≤ size2`, the path has
/// `consistency_proof_len(size1, size2)` hashes, `merkle::verify_consistency`
/// accepts it between the two roots, equal sizes have equal roots;
/// [`ConsistencyProof::new`] from its parts gives the same proof. With no
/// keys it never verifies and fails at the first head.
fn check_consistency(bytes: &[u8], p: &ConsistencyProof) {
    assert_eq!(p.encode(), bytes, "P1: one encoding");
    assert_eq!(ConsistencyProof::decode(&p.encode()).as_ref(), Ok(p));
    assert!(p.path().len() <= herald_verify::MAX_PROOF_PATH);
    let (key, ring) = proof_keyring();
    let verified = p.verify(ring);
    assert_eq!(verified, p.verify(ring), "deterministic");
    if let Ok(k) = &verified {
        assert_eq!(*k, key.public_key(), "the pinned key");
        let (sth1, sth2) = (p.sth1(), p.sth2());
        assert_eq!((p.log(), p.size1()), (sth1.log(), sth1.size()));
        assert_eq!((p.log(), p.size2()), (sth2.log(), sth2.size()));
        assert_eq!(sth1.verify(ring).as_ref(), Ok(k));
        assert_eq!(sth2.verify(ring).as_ref(), Ok(k));
        check_signed_head(sth1, k);
        check_signed_head(sth2, k);
        assert!(0 < p.size1() && p.size1() <= p.size2());
        assert_eq!(
            consistency_proof_len(p.size1(), p.size2()).ok(),
            Some(p.path().len())
        );
        assert_eq!(
            verify_consistency(p.size1(), p.size2(), p.path(), sth1.root(), sth2.root()),
            Ok(())
        );
        if p.size1() == p.size2() {
            assert_eq!(sth1.root(), sth2.root(), "one size, one root");
        }
        let rebuilt = ConsistencyProof::new(p.path().to_vec(), sth1.clone(), sth2.clone());
        assert_eq!(&rebuilt, p);
    }
    refused_without_keys(p.verify(&Keyring::new()), p.verify(&()));
}
