//! The shape of herald-verify's public surface, read from its sources: one
//! path to each item (private modules, the curated re-exports of lib.rs;
//! the hidden `internal` the only public module; the Merkle tree is herald-merkle's), and a
//! [`Receiver`](herald_verify::Receiver) whose receiving entry points are
//! `receive`, `precheck_all` and `finish`, none of them naming a redb type
//! (a live state is any `LiveState`, the redb store one of them).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_internal_is_a_public_module() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    assert!(files.len() > 40, "{} files", files.len());
    let mut public = Vec::new();
    for file in &files {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            if let Some(name) = line.trim_start().strip_prefix("pub mod ") {
                public.push(format!(
                    "{}: {}",
                    file.strip_prefix(src()).unwrap().display(),
                    name.trim_end_matches(';')
                ));
            }
        }
    }
    public.sort();
    assert_eq!(public, ["lib.rs: internal"]);
}

#[test]
fn every_root_name_is_exported_once() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
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
    assert!(names.len() > 100, "{} names", names.len());
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        names.len(),
        "a name exported twice: {names:?}"
    );
}

#[test]
fn the_receiver_receives_through_three_entry_points_without_redb() {
    let text = std::fs::read_to_string(src().join("live/mod.rs")).unwrap();
    let body = text.split("\nimpl Receiver {\n").nth(1).unwrap();
    let body = &body[..body.find("\n}\n").unwrap()];
    let mut entry_points = Vec::new();
    for signature in body.split("    pub fn ").skip(1) {
        let signature = &signature[..signature.find('{').unwrap()];
        assert!(
            !signature.contains("redb"),
            "a redb type in Receiver::{signature}"
        );
        let name: String = signature
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.contains("receive") || name.contains("precheck") || name.contains("finish") {
            entry_points.push(name);
        }
    }
    assert_eq!(entry_points, ["receive", "precheck_all", "finish"]);
}
