//! Ed25519 keys and the signature rule of PROFILE.md P5 (revision 2):
//! public keys refused unless canonical and of prime order, signing keys
//! zeroized on drop and never shown by `Debug`.
//!
//! The rule for one signature is split in two so that the expensive half
//! can be scheduled freely: [`PublicKey::prepare`] does every byte check
//! and hashes the message into the challenge (`challenge.rs`), and the
//! cofactored equation then decides, alone ([`Prepared::verify`]) or with
//! many others at once (`verify_batch`, feature `batch`). Both evaluate the
//! same equation, so they give the same verdict on every input.

use core::fmt;

use curve25519_dalek::edwards::EdwardsPoint;
use ed25519_dalek::hazmat::ExpandedSecretKey;
use rand_core::CryptoRng;
use sha2::Sha512;
use zeroize::Zeroizing;

use crate::sigil::{Sigil, SigilForm};

#[cfg(feature = "batch")]
mod batch;
mod challenge;

#[cfg(feature = "batch")]
pub use batch::verify_batch;
pub use challenge::Prepared;

/// A public key could not be loaded (P5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyError {
    /// The 32 bytes are not the encoding of a curve point.
    NotAPoint,
    /// A point of small order: every signature would be forgeable.
    SmallOrder,
    /// A point with a torsion component (of mixed order). P5 revision 2
    /// takes only keys of prime order, so that no key carries torsion into
    /// the equation and one key has one sigil.
    Torsion,
    /// A non-canonical encoding (y ≥ p) of a point: refused so that one
    /// key has exactly one encoding, hence one sigil per form (P2).
    NonCanonical,
    /// Not 32 bytes.
    Length,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotAPoint => "not an Ed25519 public key (no such curve point)",
            Self::SmallOrder => "Ed25519 public key of small order refused (P5)",
            Self::Torsion => {
                "Ed25519 public key not of prime order refused: it has a torsion component (P5)"
            }
            Self::NonCanonical => {
                "non-canonical encoding of an Ed25519 public key refused (P2, P5)"
            }
            Self::Length => "an Ed25519 public key is 32 bytes",
        })
    }
}

impl core::error::Error for KeyError {}

/// A signature did not verify. Deliberately opaque: which check failed is
/// not reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignatureError;

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("signature does not verify")
    }
}

impl core::error::Error for SignatureError {}

/// An Ed25519 public key accepted for verification (P5 revision 2): the
/// canonical encoding of a point of prime order.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(ed25519_dalek::VerifyingKey);

impl PublicKey {
    /// Load 32 bytes, refusing (checked in this order) non-points,
    /// non-canonical encodings, points of small order and points with a
    /// torsion component (P5 revision 2).
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<Self, KeyError> {
        let key =
            ed25519_dalek::VerifyingKey::from_bytes(bytes).map_err(|_| KeyError::NotAPoint)?;
        let point = key.to_edwards();
        if point.compress().as_bytes() != bytes {
            return Err(KeyError::NonCanonical);
        }
        if point.is_small_order() {
            return Err(KeyError::SmallOrder);
        }
        if !torsion_free(&point) {
            return Err(KeyError::Torsion);
        }
        Ok(Self(key))
    }

    /// Load from a slice of any length.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, KeyError> {
        let bytes: &[u8; 32] = bytes.try_into().map_err(|_| KeyError::Length)?;
        Self::from_bytes(bytes)
    }

    /// The 32-byte encoding.
    pub fn as_bytes(&self) -> &[u8; 32] {
        self.0.as_bytes()
    }

    /// The sigil of this key in `form` (P2).
    pub fn sigil(&self, form: SigilForm) -> Sigil {
        Sigil::from_key(self.as_bytes(), form)
    }

    /// The underlying ed25519-dalek key.
    pub fn as_dalek(&self) -> &ed25519_dalek::VerifyingKey {
        &self.0
    }

    /// The point A.
    fn point(&self) -> EdwardsPoint {
        self.0.to_edwards()
    }

    /// Verify `signature` over the concatenation of the chunks `parts`
    /// feeds, streamed without copying (P5 revision 2): the byte checks and
    /// challenge of [`PublicKey::prepare`], then the equation of
    /// [`Prepared::verify`]. `parts` is not called when a byte check fails.
    pub fn verify_parts(
        &self,
        signature: &[u8; 64],
        parts: impl FnOnce(&mut dyn FnMut(&[u8])),
    ) -> Result<(), SignatureError> {
        self.prepare(signature, parts)?.verify()
    }

    /// Verify `signature` over `message` (P5 revision 2).
    pub fn verify(&self, message: &[u8], signature: &[u8; 64]) -> Result<(), SignatureError> {
        self.verify_parts(signature, |feed| feed(message))
    }
}

/// `[L]P = 0`: P has no torsion component. Computed as `[L − 1]P + P` in
/// variable time (a public key is public): `vartime_double_scalar_mul_basepoint(a, P, 0)`
/// multiplies P by the integer `a`, here the canonical scalar `L − 1`, so
/// the torsion part survives. The same answer as
/// `EdwardsPoint::is_torsion_free` (tested), which is constant-time and
/// about twice the cost.
fn torsion_free(p: &EdwardsPoint) -> bool {
    use curve25519_dalek::scalar::Scalar;
    use curve25519_dalek::traits::IsIdentity;
    let l_minus_1 = -Scalar::ONE;
    (EdwardsPoint::vartime_double_scalar_mul_basepoint(&l_minus_1, p, &Scalar::ZERO) + p)
        .is_identity()
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.sigil(SigilForm::Default))
    }
}

/// An Ed25519 signing key. Its secret is zeroized on drop and never appears
/// in `Debug` output.
pub struct SigningKey {
    secret: ed25519_dalek::SigningKey,
    public: PublicKey,
}

impl SigningKey {
    /// A fresh key from `rng` (an embedded caller supplies its own CSPRNG).
    pub fn generate<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut seed = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(seed.as_mut());
        Self::from_seed(&seed)
    }

    /// A fresh key from the operating system's CSPRNG.
    ///
    /// # Panics
    ///
    /// If the operating system cannot give randomness (no key is better
    /// than a guessable one).
    #[cfg(feature = "getrandom")]
    pub fn generate_os() -> Self {
        Self::generate(&mut rand_core::UnwrapErr(getrandom::SysRng))
    }

    /// The key whose RFC 8032 secret seed is `seed`.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let secret = ed25519_dalek::SigningKey::from_bytes(seed);
        let public = PublicKey(secret.verifying_key());
        Self { secret, public }
    }

    /// The secret seed, for writing a key file; zeroized when dropped.
    pub fn to_seed(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(self.secret.to_bytes())
    }

    /// The public key.
    pub fn public_key(&self) -> PublicKey {
        self.public
    }

    /// The sigil of the public key in `form` (P2).
    pub fn sigil(&self, form: SigilForm) -> Sigil {
        self.public.sigil(form)
    }

    /// Ed25519 signature over the concatenation of the chunks `parts` feeds,
    /// streamed without copying. `parts` is called twice (RFC 8032 hashes
    /// the message twice) and must feed the same bytes both times.
    pub fn sign_parts(&self, parts: impl Fn(&mut dyn FnMut(&[u8]))) -> [u8; 64] {
        let expanded = ExpandedSecretKey::from(self.secret.as_bytes());
        let signature = ed25519_dalek::hazmat::raw_sign_byupdate::<Sha512, _>(
            &expanded,
            |digest| {
                parts(&mut |chunk| sha2::Digest::update(digest, chunk));
                Ok(())
            },
            self.public.as_dalek(),
        );
        match signature {
            Ok(sig) => sig.to_bytes(),
            // raw_sign_byupdate fails only when the closure does; ours never does.
            Err(_) => [0u8; 64],
        }
    }

    /// Ed25519 signature over `message`.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.sign_parts(|feed| feed(message))
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::torsion_free;
    use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};
    use curve25519_dalek::scalar::Scalar;

    #[test]
    fn torsion_free_is_dalek_is_torsion_free() {
        for k in [1u64, 2, 123_456_789, u64::MAX] {
            let p = ED25519_BASEPOINT_POINT * Scalar::from(k);
            assert!(torsion_free(&p));
            for (i, t) in EIGHT_TORSION.iter().enumerate() {
                let q = p + t;
                assert_eq!(torsion_free(&q), i == 0, "torsion point {i}");
                assert_eq!(torsion_free(&q), q.is_torsion_free());
                // Small-order points alone: only the identity is torsion-free.
                assert_eq!(torsion_free(t), i == 0);
            }
        }
    }
}
