//! Nonces (spec §3.7, PROFILE.md P3, P10): 16 random bytes per envelope.

use core::fmt;

use rand_core::CryptoRng;

/// A 128-bit envelope nonce. Senders draw it from a CSPRNG, never from
/// `ts` or `id` (spec §3.7).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Nonce(pub [u8; 16]);

impl Nonce {
    /// A nonce from the caller's CSPRNG (for targets without an OS RNG).
    pub fn from_rng<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut bytes = [0u8; 16];
        rng.fill_bytes(&mut bytes);
        Self(bytes)
    }

    /// A nonce from the operating system's CSPRNG (getrandom).
    #[cfg(feature = "getrandom")]
    pub fn generate() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)?;
        Ok(Self(bytes))
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Debug for Nonce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Nonce(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}
