//! The no_std link-and-run proof: a `#![no_main]` binary with no global
//! allocator that decodes and verifies a signed envelope with herald-core
//! (default features off) and exits 0 only if every check passes.
//!
//! Build and run (what `.ci/run` does):
//!
//! ```sh
//! cargo build -p herald-nostd-check --profile nostd --features bin
//! ./target/nostd/herald-nostd-check
//! ```
//!
//! `std` is never linked. libc is, for its C runtime only: crt1.o's `_start`
//! calls the `main` below through `__libc_start_main`, and the panic handler
//! calls libc's `abort`.
#![no_std]
#![no_main]

// A no_std binary has no unwinder and no `eh_personality`: say so plainly
// instead of failing at link time.
#[cfg(not(panic = "abort"))]
compile_error!(
    "herald-nostd-check's binary needs panic = \"abort\": \
     build it with `cargo build -p herald-nostd-check --profile nostd --features bin`"
);

// unsafe_code: `no_mangle` is an unsafe attribute (the symbol could clash).
// Exporting the C symbol `main` is the whole point: the C runtime calls it,
// and nothing else in this binary defines it.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    herald_nostd_check::run()
}

// unsafe_code: declaring a foreign function is unsafe (the signature is not
// checked). `void abort(void)` is ISO C and never returns, so `safe fn() -> !`
// is exact. `link(name = "c")` also links libc, which rustc leaves out of a
// no_std binary's link line (it passes `-nodefaultlibs`).
#[allow(unsafe_code)]
#[link(name = "c")]
unsafe extern "C" {
    safe fn abort() -> !;
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    abort()
}
