//! A crate's public surface read from its sources, for the tests that fence
//! it (herald-verify's and herald-mcp's `tests/api_surface.rs`) and for the
//! architecture test's reading of modules.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(dir, &mut out);
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `pub mod` declarations under `src`, as `FILE: NAME` (the file
/// relative to `src`), sorted.
pub fn public_modules(src: &Path) -> Vec<String> {
    let mut public = Vec::new();
    for file in rust_files(src) {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            if let Some(name) = line.trim_start().strip_prefix("pub mod ") {
                public.push(format!(
                    "{}: {}",
                    file.strip_prefix(src).unwrap().display(),
                    name.trim_end_matches(';').trim_end_matches(" {")
                ));
            }
        }
    }
    public.sort();
    public
}

/// The names the `pub use` statements of `lib` (a crate root's text)
/// export, in order (`a as b` counts as `b`).
pub fn root_exports(lib: &str) -> Vec<String> {
    let mut names = Vec::new();
    for statement in lib.split(';') {
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let tree = &statement[at + "pub use ".len()..];
        let list = match (tree.find('{'), tree.rfind('}')) {
            (Some(open), Some(close)) => &tree[open + 1..close],
            _ => tree.rsplit("::").next().unwrap(),
        };
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            names.push(item.rsplit(" as ").next().unwrap().to_string());
        }
    }
    names
}
