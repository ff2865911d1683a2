//! One signature under P5 revision 2: the byte checks, the challenge
//! `k = SHA-512(R ‖ A ‖ M) mod L`, and the cofactored equation.
//!
//! A signature `(R, S)` by a loaded [`PublicKey`] A over M is valid exactly
//! when S is canonical (below L), R is a canonical point encoding that is
//! not one of the 8 small-order encodings (both pure byte checks), and
//! `[8][S]B = [8]R + [8][k]A` (RFC 8032 §5.1.7). The cofactorless
//! `[S]B − [k]A = R` implies it and is tried first: it is a comparison of
//! bytes after one double-scalar multiplication, what an honest signature
//! costs everywhere; only when it fails is R decompressed and the
//! cofactored equation asked.

use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use data_encoding_macro::hexlower;
use sha2::{Digest, Sha512};

use super::{PublicKey, SignatureError};

/// A signature that passed every byte check of P5, with its challenge
/// computed: only the equation is left ([`Prepared::verify`], or the batch
/// equation, which gives the same verdict).
#[derive(Clone, Copy, Debug)]
pub struct Prepared {
    pub(super) key: PublicKey,
    pub(super) r: [u8; 32],
    pub(super) s: Scalar,
    pub(super) k: Scalar,
}

impl PublicKey {
    /// The byte checks of P5 on `signature` (S canonical; R canonical and
    /// not of small order), then the challenge over `R ‖ A ‖` the chunks
    /// `parts` feeds (streamed: nothing is copied). An error means the
    /// signature is invalid whatever the message, and `parts` was not
    /// called.
    pub fn prepare(
        &self,
        signature: &[u8; 64],
        parts: impl FnOnce(&mut dyn FnMut(&[u8])),
    ) -> Result<Prepared, SignatureError> {
        let (r, s) = split(signature);
        let s = Option::<Scalar>::from(Scalar::from_canonical_bytes(s)).ok_or(SignatureError)?;
        if !canonical_encoding(&r) || SMALL_ORDER.contains(&r) {
            return Err(SignatureError);
        }
        let mut h = Sha512::new();
        h.update(r);
        h.update(self.as_bytes());
        parts(&mut |chunk| h.update(chunk));
        let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
        Ok(Prepared {
            key: *self,
            r,
            s,
            k,
        })
    }
}

impl Prepared {
    /// The signer's key.
    pub fn key(&self) -> &PublicKey {
        &self.key
    }

    /// The equation of P5 for this one signature: cofactorless first
    /// (it implies the cofactored one), then cofactored.
    pub fn verify(&self) -> Result<(), SignatureError> {
        let computed = self.computed_r();
        if computed.compress().as_bytes() == &self.r {
            return Ok(());
        }
        let r = self.r_point().ok_or(SignatureError)?;
        if (computed - r).mul_by_cofactor().is_identity() {
            Ok(())
        } else {
            Err(SignatureError)
        }
    }

    /// `[S]B − [k]A`.
    fn computed_r(&self) -> EdwardsPoint {
        EdwardsPoint::vartime_double_scalar_mul_basepoint(&self.k, &-self.key.point(), &self.s)
    }

    /// R decoded; `None` when its bytes are no curve point (they are known
    /// to be canonical).
    pub(super) fn r_point(&self) -> Option<EdwardsPoint> {
        CompressedEdwardsY(self.r).decompress()
    }
}

fn split(signature: &[u8; 64]) -> ([u8; 32], [u8; 32]) {
    let mut r = [0u8; 32];
    let mut s = [0u8; 32];
    let (a, b) = signature.split_at(32);
    r.copy_from_slice(a);
    s.copy_from_slice(b);
    (r, s)
}

/// Whether `bytes` can be the canonical encoding of a point (P5): y (the
/// low 255 bits) below p = 2²⁵⁵ − 19, and no sign bit on x = 0. The points
/// with x = 0 are those with y = 1 or y = p − 1, so both are byte checks.
fn canonical_encoding(bytes: &[u8; 32]) -> bool {
    let mut y = *bytes;
    let sign = y[31] >> 7;
    y[31] &= 0x7f;
    // y ≥ p iff y is one of 2²⁵⁵ − 19 … 2²⁵⁵ − 1: 0xed..=0xff, 30 × 0xff, 0x7f.
    let high = y[1..31].iter().all(|&b| b == 0xff) && y[31] == 0x7f;
    if high && y[0] >= 0xed {
        return false;
    }
    let one = y[0] == 1 && y[1..].iter().all(|&b| b == 0);
    let minus_one = high && y[0] == 0xec;
    !(sign == 1 && (one || minus_one))
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

#[cfg(test)]
mod tests {
    use super::{SMALL_ORDER, canonical_encoding};
    use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};
    use curve25519_dalek::edwards::CompressedEdwardsY;
    use curve25519_dalek::scalar::Scalar;

    #[test]
    fn small_order_table_is_eight_torsion_compressed() {
        for (point, bytes) in EIGHT_TORSION.iter().zip(SMALL_ORDER) {
            assert_eq!(point.compress().to_bytes(), bytes);
            assert!(point.is_small_order());
        }
    }

    /// The byte test agrees with "decompresses and compresses back to the
    /// same bytes" on every encoding near the edges (y around 0, 1, p − 1,
    /// p and 2²⁵⁵ − 1, with either sign bit) that is a point, and on real
    /// points with and without torsion; and it refuses every y ≥ p.
    #[test]
    fn canonical_encoding_is_decode_then_encode_again() {
        let mut cases = [[0u8; 32]; 2 * 2 * 9 + 5 * 8];
        let mut n = 0;
        for low in [0u8, 1, 2, 0xeb, 0xec, 0xed, 0xee, 0xfe, 0xff] {
            for sign in [0u8, 0x80] {
                let mut small = [0u8; 32];
                small[0] = low;
                small[31] |= sign;
                let mut big = [0xffu8; 32];
                big[0] = low;
                big[31] = 0x7f | sign;
                if low >= 0xed {
                    // y = 2²⁵⁵ − 256 + low ≥ p.
                    assert!(!canonical_encoding(&big), "{big:02x?}");
                }
                cases[n] = small;
                cases[n + 1] = big;
                n += 2;
            }
        }
        for k in [1u64, 2, 3, 1000, u64::MAX] {
            let p = ED25519_BASEPOINT_POINT * Scalar::from(k);
            cases[n] = p.compress().to_bytes();
            n += 1;
            for t in EIGHT_TORSION.iter().skip(1) {
                cases[n] = (p + t).compress().to_bytes();
                n += 1;
            }
        }
        assert_eq!(n, cases.len());
        let mut points = 0;
        for bytes in &cases {
            // Not a point: the equation refuses it, whatever the byte test says.
            if let Some(p) = CompressedEdwardsY(*bytes).decompress() {
                points += 1;
                let same = p.compress().to_bytes() == *bytes;
                assert_eq!(canonical_encoding(bytes), same, "{bytes:02x?}");
            }
        }
        assert!(points > 45, "{points}");
    }
}
