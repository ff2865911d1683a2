//! Embeds the conformance vectors in the library (`conformance/`, a link to
//! the repository's `vectors/conformance` that `cargo package` follows), so
//! an installed `herald conformance` runs anywhere: writes
//! `$OUT_DIR/vectors.rs`, one `(relative path, include_bytes!)` per file.

use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let dir = manifest.join("conformance");
    // A directory: cargo reruns this when anything under it changes.
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    walk(&dir, &dir, &mut files)?;
    files.sort();
    let mut out = String::from(
        "/// The conformance vectors, `(path relative to vectors/conformance, bytes)`.\n\
         pub(crate) const FILES: &[(&str, &[u8])] = &[\n",
    );
    for (rel, abs) in &files {
        writeln!(out, "    ({rel:?}, include_bytes!({abs:?})),")?;
    }
    out.push_str("];\n");
    let target = PathBuf::from(std::env::var("OUT_DIR")?).join("vectors.rs");
    std::fs::write(target, out)?;
    Ok(())
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) -> Result<(), Box<dyn Error>> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(root, &path, files)?;
        } else {
            let rel = path
                .strip_prefix(root)?
                .to_string_lossy()
                .replace('\\', "/");
            let abs = path.canonicalize()?.to_string_lossy().into_owned();
            files.push((rel, abs));
        }
    }
    Ok(())
}
