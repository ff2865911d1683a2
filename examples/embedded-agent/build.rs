//! Puts memory.x where cortex-m-rt's link.x finds it, and links with link.x
//! (in build.rs rather than .cargo/config.toml, so the host tool in
//! trace-gen/ never inherits a firmware setting).

use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = fs::copy("memory.x", out.join("memory.x")) {
        println!("cargo::error=cannot copy memory.x: {e}");
    }
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rustc-link-arg-bins=-Tlink.x");
    println!("cargo::rerun-if-changed=memory.x");
    println!("cargo::rerun-if-changed=data");
}
