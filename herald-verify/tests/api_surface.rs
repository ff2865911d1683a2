//! The shape of herald-verify's public surface, read from its sources: one
//! path to each item (private modules, the curated re-exports of lib.rs;
//! the hidden `internal` the only public module; the Merkle tree is herald-merkle's), and a
//! [`Receiver`](herald_verify::Receiver) whose receiving entry points are
//! `receive`, `precheck_all` and `finish`, none of them naming a redb type
//! (a live state is any `LiveState`, the redb store one of them).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};

use herald_testkit::surface::{public_modules, root_exports, rust_files};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn only_internal_is_a_public_module() {
    let files = rust_files(&src());
    assert!(files.len() > 40, "{} files", files.len());
    assert_eq!(public_modules(&src()), ["lib.rs: internal"]);
}

#[test]
fn every_root_name_is_exported_once() {
    let names = root_exports(&std::fs::read_to_string(src().join("lib.rs")).unwrap());
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
