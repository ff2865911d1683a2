//! HERALD verifier (see herald-core for the envelope layer).
#![no_std]
extern crate alloc;
extern crate std;
pub mod merkle;
