//! Ed25519 keys (PROFILE.md P5): public keys refused when of small order,
//! signing keys zeroized on drop and never shown by `Debug`.

use core::fmt;

use data_encoding_macro::hexlower;
use ed25519_dalek::{Signature, hazmat::ExpandedSecretKey};
use rand_core::{CryptoRng, RngCore};
use sha2::Sha512;
use zeroize::Zeroizing;

use crate::sigil::{Sigil, SigilForm};

/// A public key could not be loaded (P5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyError {
    /// The 32 bytes are not the encoding of a curve point.
    NotAPoint,
    /// A point of small order: every signature would be forgeable.
    SmallOrder,
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

/// An Ed25519 public key accepted for verification: the canonical encoding
/// of a valid point, not of small order (P5).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(ed25519_dalek::VerifyingKey);

impl PublicKey {
    /// Load 32 bytes, refusing non-points, small-order points and
    /// non-canonical encodings (P5).
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<Self, KeyError> {
        let key =
            ed25519_dalek::VerifyingKey::from_bytes(bytes).map_err(|_| KeyError::NotAPoint)?;
        if key.is_weak() {
            return Err(KeyError::SmallOrder);
        }
        if key.to_edwards().compress().as_bytes() != bytes {
            return Err(KeyError::NonCanonical);
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

    /// Strict Ed25519 verification of `signature` over the concatenation of
    /// `parts`, streamed without copying (P5).
    ///
    /// Exactly the verdict of ed25519-dalek `verify_strict`: canonical S,
    /// R a valid point of not-small order, A not of small order, and the
    /// cofactorless equation compared on the encoding of R. R is not
    /// decompressed: the equation's comparison implies it is a canonical
    /// point, and its order is then read off its bytes (see the body).
    pub fn verify_parts(
        &self,
        signature: &[u8; 64],
        parts: impl FnOnce(&mut dyn FnMut(&[u8])),
    ) -> Result<(), SignatureError> {
        let sig = Signature::from_bytes(signature);
        // `verify_strict` decompresses R to refuse a non-point and a point of
        // small order. The equation's last step compares R's bytes with the
        // canonical encoding of a computed point, so whenever it holds, R
        // is canonical and decodes to that point, and is of small order
        // exactly when its bytes are one of the eight below. The verdict is
        // the same on every input; the square root of the decompression is
        // saved.
        if SMALL_ORDER.contains(sig.r_bytes()) || self.0.is_weak() {
            return Err(SignatureError);
        }
        let mut stream = self.0.verify_stream(&sig).map_err(|_| SignatureError)?;
        parts(&mut |chunk| stream.update(chunk));
        stream.finalize_and_verify().map_err(|_| SignatureError)
    }

    /// Strict verification of `signature` over `message` (P5).
    pub fn verify(&self, message: &[u8], signature: &[u8; 64]) -> Result<(), SignatureError> {
        self.verify_parts(signature, |feed| feed(message))
    }
}

/// The canonical encodings of the eight points of small order (the
/// 8-torsion subgroup, curve25519-dalek's `EIGHT_TORSION` compressed, in its
/// order: a test checks them against it).
const SMALL_ORDER: [[u8; 32]; 8] = [
    hexlower!("0100000000000000000000000000000000000000000000000000000000000000"),
    hexlower!("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
    hexlower!("0000000000000000000000000000000000000000000000000000000000000080"),
    hexlower!("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
    hexlower!("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    hexlower!("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"),
    hexlower!("0000000000000000000000000000000000000000000000000000000000000000"),
    hexlower!("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"),
];

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
    pub fn generate<R: CryptoRng + RngCore>(rng: &mut R) -> Self {
        let mut seed = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(seed.as_mut());
        Self::from_seed(&seed)
    }

    /// A fresh key from the operating system's CSPRNG.
    #[cfg(feature = "getrandom")]
    pub fn generate_os() -> Self {
        Self::generate(&mut rand_core::OsRng)
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
    use super::SMALL_ORDER;
    use curve25519_dalek::constants::EIGHT_TORSION;

    #[test]
    fn small_order_table_is_eight_torsion_compressed() {
        for (point, bytes) in EIGHT_TORSION.iter().zip(SMALL_ORDER) {
            assert_eq!(point.compress().to_bytes(), bytes);
            assert!(point.is_small_order());
        }
    }
}
