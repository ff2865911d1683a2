//! The inspector's static files, embedded in the binary
//! (docs/inspector.md): the page, its scripts and styles, the vendored
//! layout library, the WebAssembly verifier (the npm package
//! @herald-rs/core's module and its wasm-bindgen glue, herald-js/inspector.sh)
//! and the profile it links to.

use std::path::Path;

use crate::error::CliError;
use crate::output::{Existing, write_atomic};

/// One embedded file.
pub(crate) struct Asset {
    /// Its path below the site root (no leading `/`).
    pub(crate) path: &'static str,
    /// Its `Content-Type`.
    pub(crate) mime: &'static str,
    /// Its bytes.
    pub(crate) bytes: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $mime:literal) => {
        Asset {
            path: $path,
            mime: $mime,
            bytes: include_bytes!(concat!("../../assets/inspector/", $path)),
        }
    };
}

/// Every file of the site.
pub(crate) const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("graph.js", "text/javascript; charset=utf-8"),
    asset!("compose.js", "text/javascript; charset=utf-8"),
    asset!("people.js", "text/javascript; charset=utf-8"),
    asset!("heralds.js", "text/javascript; charset=utf-8"),
    asset!("verifier.js", "text/javascript; charset=utf-8"),
    asset!("vendor/dagre.min.js", "text/javascript; charset=utf-8"),
    asset!("vendor/LICENSES.md", "text/markdown; charset=utf-8"),
    asset!("herald_js.js", "text/javascript; charset=utf-8"),
    asset!("herald_js_bg.wasm", "application/wasm"),
    Asset {
        path: "spec/PROFILE.md",
        mime: "text/markdown; charset=utf-8",
        // A link to docs/spec/PROFILE.md inside the crate, which `cargo
        // package` follows: a published herald-cli carries the profile.
        bytes: include_bytes!("../../assets/inspector/PROFILE.md"),
    },
    asset!("spec.html", "text/html; charset=utf-8"),
    asset!("spec.js", "text/javascript; charset=utf-8"),
];

/// The asset at `path` (`""` is `index.html`).
pub(crate) fn find(path: &str) -> Option<&'static Asset> {
    let path = if path.is_empty() { "index.html" } else { path };
    ASSETS.iter().find(|a| a.path == path)
}

/// Write the site into `dir` (created if absent; existing files of the
/// same names are replaced): a static folder anyone can host. Without a
/// `herald inspect --serve` behind it, the page verifies what is dropped
/// on it and has no signing endpoint.
pub(crate) fn export(dir: &Path) -> Result<usize, CliError> {
    for asset in ASSETS {
        let path = dir.join(asset.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CliError::io(parent, &e))?;
        }
        write_atomic(&path, asset.bytes, 0o644, Existing::Replace)?;
    }
    Ok(ASSETS.len())
}
