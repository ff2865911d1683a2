//! The float rules of PROFILE.md P1: numeric reduction, shortest width,
//! no NaN, no infinities, no negative zero.

use core::fmt;

/// Why a floating-point value cannot be written in canonical form (P1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FloatError {
    /// NaN has no canonical encoding in this profile.
    NaN,
    /// ±Infinity has no canonical encoding in this profile.
    Infinite,
    /// −0.0 has no canonical encoding in this profile.
    NegativeZero,
    /// The value is integral and fits a CBOR integer, so it must be written as
    /// that integer (only raised where a float is demanded, see [`Float::new`]).
    ///
    /// [`Float::new`]: crate::cbor::Float::new
    Integral,
}

impl fmt::Display for FloatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NaN => "NaN cannot be encoded (P1)",
            Self::Infinite => "an infinite float cannot be encoded (P1)",
            Self::NegativeZero => "-0.0 cannot be encoded (P1)",
            Self::Integral => "an integral float in integer range is an integer (P1)",
        })
    }
}

impl FloatError {
    /// A short stable name of the rule it breaks, for the bindings' errors
    /// (`code` in JavaScript, `rule` in Python): `nan`, `infinite`,
    /// `negative_zero`, `integral_float`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::NaN => "nan",
            Self::Infinite => "infinite",
            Self::NegativeZero => "negative_zero",
            Self::Integral => "integral_float",
        }
    }
}

impl core::error::Error for FloatError {}

/// The canonical form of a finite float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum FloatForm {
    /// Integral and in −2^64 … 2^64−1: written as a CBOR integer.
    Int(i128),
    /// Exactly representable as an IEEE 754 binary16 value (these bits).
    F16(u16),
    /// Exactly representable as binary32, not binary16.
    F32(f32),
    /// Needs binary64.
    F64(f64),
}

const TWO_64: f64 = 18_446_744_073_709_551_616.0;

/// Classify `v` per P1: the form the encoder writes, or why it cannot.
pub(crate) fn classify(v: f64) -> Result<FloatForm, FloatError> {
    if v.is_nan() {
        return Err(FloatError::NaN);
    }
    if v.is_infinite() {
        return Err(FloatError::Infinite);
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            Err(FloatError::NegativeZero)
        } else {
            Ok(FloatForm::Int(0))
        };
    }
    if is_integral(v) && (-TWO_64..TWO_64).contains(&v) {
        // Exact: `v` is integral and inside i128's range.
        return Ok(FloatForm::Int(v as i128));
    }
    let narrow = v as f32;
    if f64::from(narrow) != v {
        return Ok(FloatForm::F64(v));
    }
    match f16_bits_exact(narrow) {
        Some(bits) => Ok(FloatForm::F16(bits)),
        None => Ok(FloatForm::F32(narrow)),
    }
}

/// Whether a finite, non-zero `v` has no fractional part (no libm in core).
fn is_integral(v: f64) -> bool {
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1023;
    if exp < 0 {
        return false;
    }
    if exp >= 52 {
        return true;
    }
    let frac_mask = (1u64 << (52 - exp)) - 1;
    bits & frac_mask == 0
}

/// The binary16 bits of `x` when `x` (finite, non-zero) is exactly representable.
fn f16_bits_exact(x: f32) -> Option<u16> {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32 - 127;
    let mant = bits & 0x7f_ffff;
    if (-14..=15).contains(&exp) {
        // Normal binary16: 10 mantissa bits, the low 13 of binary32 must be zero.
        if mant & 0x1fff != 0 {
            return None;
        }
        return Some(sign | (((exp + 15) as u16) << 10) | (mant >> 13) as u16);
    }
    if (-24..-14).contains(&exp) {
        // Subnormal binary16: value = m · 2^-24 with 1 ≤ m < 1024.
        let significand = (1u32 << 23) | mant;
        let shift = (-1 - exp) as u32;
        if significand & ((1u32 << shift) - 1) != 0 {
            return None;
        }
        return Some(sign | (significand >> shift) as u16);
    }
    None
}

/// Widen binary16 bits to f64 (exact).
pub(crate) fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    match exp {
        0 => sign * mant * pow2(-24),
        0x1f if mant == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        _ => sign * (1024.0 + mant) * pow2(exp - 25),
    }
}

/// 2^e for the small exponents binary16 needs, exactly.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_and_widths() {
        assert_eq!(classify(1.0), Ok(FloatForm::Int(1)));
        assert_eq!(classify(-TWO_64), Ok(FloatForm::Int(-(1i128 << 64))));
        assert_eq!(classify(TWO_64), Ok(FloatForm::F32(TWO_64 as f32)));
        assert_eq!(classify(1.5), Ok(FloatForm::F16(0x3e00)));
        assert_eq!(classify(65504.5), Ok(FloatForm::F32(65504.5)));
        assert_eq!(classify(0.1), Ok(FloatForm::F64(0.1)));
        assert_eq!(
            classify(5.960_464_477_539_063e-8),
            Ok(FloatForm::F16(0x0001))
        );
        assert_eq!(
            classify(6.097_555_160_522_461e-5),
            Ok(FloatForm::F16(0x03ff))
        );
        assert_eq!(classify(-0.0), Err(FloatError::NegativeZero));
        assert_eq!(classify(f64::NAN), Err(FloatError::NaN));
        assert_eq!(classify(f64::NEG_INFINITY), Err(FloatError::Infinite));
    }

    #[test]
    fn f16_widening_round_trips_every_finite_pattern() {
        for h in 0u16..=u16::MAX {
            let v = f16_to_f64(h);
            if !v.is_finite() || v == 0.0 {
                continue;
            }
            match classify(v) {
                Ok(FloatForm::F16(bits)) => assert_eq!(bits, h),
                Ok(FloatForm::Int(_)) => assert_eq!(v, (v as i128) as f64),
                other => panic!("{h:#06x} classified as {other:?}"),
            }
        }
    }
}
