//! The random source of getrandom 0.2 on `wasm32-unknown-unknown`, which
//! has none of its own: the page's `crypto.getRandomValues`, imported as
//! `env.herald_random(ptr, len)`.
//!
//! Verification uses randomness only for the coefficients of the batch
//! equation (PROFILE.md P5, revision 2), and fails closed without it:
//! [`herald_core::verify_batch`] answers `false` when the source errs, and
//! every signature of the chunk is then verified on its own.

use core::num::NonZeroU32;

#[link(wasm_import_module = "env")]
unsafe extern "C" {
    /// Fill `len` bytes at `ptr` from a CSPRNG; 0 on success.
    fn herald_random(ptr: *mut u8, len: usize) -> u32;
}

/// getrandom's error for a host that gave no random bytes.
const HOST_FAILED: u32 = getrandom::Error::CUSTOM_START;

fn host_random(buf: &mut [u8]) -> Result<(), getrandom::Error> {
    // SAFETY: `buf` is a live, writable slice of `buf.len()` bytes in this
    // module's memory; the import writes at most that many bytes there.
    let rc = unsafe { herald_random(buf.as_mut_ptr(), buf.len()) };
    if rc == 0 {
        return Ok(());
    }
    Err(NonZeroU32::new(HOST_FAILED).map_or(getrandom::Error::UNSUPPORTED, getrandom::Error::from))
}

getrandom::register_custom_getrandom!(host_random);
