#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| herald_fuzz::bundle_verify(data));
