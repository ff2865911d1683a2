//! Many signatures in one equation (P5 revision 2, feature `batch`).
//!
//! For prepared signatures `(Rᵢ, Sᵢ, kᵢ)` by keys `Aᵢ` and independent
//! random 128-bit coefficients `zᵢ`, the batch equation is
//! `[8](Σ zᵢRᵢ + Σ (zᵢkᵢ)Aᵢ − (Σ zᵢSᵢ)B) = 0`. Each term `Rᵢ + [kᵢ]Aᵢ −
//! [Sᵢ]B` is zero up to torsion exactly when signature i satisfies the
//! cofactored equation, and `[8]` removes the torsion; so the batch holds
//! when every signature is valid, and fails, except with probability about
//! 2⁻¹²⁸ over the coefficients, when one is not. That is the verdict of
//! [`Prepared::verify`] for each: batch and single verification agree on
//! every input ("Taming the many EdDSAs", Chalkias, Garillot, Nikolaenko,
//! 2020; ZIP 215). The coefficients come from the caller's CSPRNG, never
//! from the inputs, so a signer cannot grind for a batch that hides a bad
//! signature.
//!
//! Signatures by one key share one point in the multiplication: its
//! coefficient is `Σ zᵢkᵢ` over them, so a batch of n signatures by d keys
//! multiplies n + d + 1 points, not 2n + 1.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::EdwardsPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use rand_core::TryCryptoRng;

use super::Prepared;

/// Whether every signature of `items` is valid (P5 revision 2), with one
/// batch equation whose coefficients are drawn from `rng`. `true` for no
/// items. A `false` does not say which (ask [`Prepared::verify`] of each,
/// or split the batch); it is also the answer, failing closed, when `rng`
/// cannot give randomness.
pub fn verify_batch<R: TryCryptoRng + ?Sized>(items: &[Prepared], rng: &mut R) -> bool {
    if items.is_empty() {
        return true;
    }
    let mut random = alloc::vec![0u8; 16 * items.len()];
    if rng.try_fill_bytes(&mut random).is_err() {
        return false;
    }

    let mut scalars: Vec<Scalar> = Vec::with_capacity(items.len() + 8);
    let mut points: Vec<EdwardsPoint> = Vec::with_capacity(items.len() + 8);
    let mut key_slot: BTreeMap<[u8; 32], usize> = BTreeMap::new();
    let mut key_scalars: Vec<Scalar> = Vec::new();
    let mut key_points: Vec<EdwardsPoint> = Vec::new();
    let mut b = Scalar::ZERO;
    for (item, z) in items.iter().zip(random.chunks_exact(16)) {
        let Some(r) = item.r_point() else {
            return false;
        };
        let mut wide = [0u8; 32];
        wide[..16].copy_from_slice(z);
        let z = Scalar::from_bytes_mod_order(wide);
        b -= z * item.s;
        scalars.push(z);
        points.push(r);
        let slot = *key_slot.entry(*item.key.as_bytes()).or_insert_with(|| {
            key_scalars.push(Scalar::ZERO);
            key_points.push(item.key.point());
            key_points.len() - 1
        });
        if let Some(coefficient) = key_scalars.get_mut(slot) {
            *coefficient += z * item.k;
        }
    }
    scalars.extend(key_scalars);
    points.extend(key_points);
    scalars.push(b);
    points.push(ED25519_BASEPOINT_POINT);
    EdwardsPoint::vartime_multiscalar_mul(&scalars, &points)
        .mul_by_cofactor()
        .is_identity()
}
