//! A deterministic stand-in for a CSPRNG, for tests whose bytes must not
//! change from run to run (fixed nonces, fixed seeds).

use herald_core::rand_core::{Infallible, TryCryptoRng, TryRng, utils};

/// Hands out `n, n + 1, n + 2, …` (wrapping), one byte at a time. Not a
/// CSPRNG: it carries the marker only because the signing API asks for it.
#[derive(Debug)]
pub struct CountingRng(pub u8);

impl TryRng for CountingRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        utils::next_word_via_fill(self)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        utils::next_word_via_fill(self)
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        for byte in dest {
            *byte = self.0;
            self.0 = self.0.wrapping_add(1);
        }
        Ok(())
    }
}

impl TryCryptoRng for CountingRng {}
