//! The nonce source handed to `EnvelopeWriter::sign_into`.
//!
//! HERALD needs a fresh 128-bit nonce per envelope from a CSPRNG (spec
//! §3.7, P10). A real board must pass its hardware TRNG here (e.g. the
//! STM32 RNG peripheral, nRF RNG, or an RP2040 ROSC-seeded CSPRNG) wrapped
//! in `rand_core::{TryRng, TryCryptoRng}`. The LM3S6965 has no TRNG and QEMU
//! emulates none, so this demo stands in with SHA-256 in counter mode over
//! the device seed and the SysTick count at signing time: under the
//! emulator that count is not secret and can repeat from boot to boot. It
//! is NOT a source of entropy; never ship it.

use herald_core::rand_core::{Infallible, TryCryptoRng, TryRng, utils};
use sha2::{Digest, Sha256};

/// SHA-256(seed ‖ boot ticks ‖ counter), 32 bytes per block.
pub struct DemoRng {
    key: [u8; 32],
    counter: u64,
}

impl DemoRng {
    /// Keyed by the device seed and the current tick count.
    pub fn new(seed: &[u8; 32], ticks: u64) -> Self {
        let mut h = Sha256::new();
        h.update(b"herald embedded-agent demo rng");
        h.update(seed);
        h.update(ticks.to_le_bytes());
        Self {
            key: h.finalize().into(),
            counter: 0,
        }
    }
}

impl TryRng for DemoRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        utils::next_word_via_fill(self)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        utils::next_word_via_fill(self)
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dest.chunks_mut(32) {
            let block: [u8; 32] = Sha256::new()
                .chain_update(self.key)
                .chain_update(self.counter.to_le_bytes())
                .finalize()
                .into();
            self.counter += 1;
            for (d, s) in chunk.iter_mut().zip(block) {
                *d = s;
            }
        }
        Ok(())
    }
}

/// A marker the API asks for; see the module docs for what a board must use.
impl TryCryptoRng for DemoRng {}
