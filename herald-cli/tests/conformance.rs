// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;

fn vectors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/conformance")
}

#[test]
fn conformance_passes_on_the_committed_vectors() {
    let out = Command::new(env!("CARGO_BIN_EXE_herald"))
        .arg("conformance")
        .arg(vectors())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let last = stdout.lines().last().unwrap();
    assert!(last.ends_with(" passed, 0 failed, 0 skipped"), "{last}");

    let out = Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(["conformance", "--json"])
        .arg(vectors())
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        json["implementation"]
            .as_str()
            .unwrap()
            .starts_with("herald-rs ")
    );
    assert_eq!(json["vectors_digest"].as_str().unwrap().len(), 64);
    assert_eq!(json["failed"], 0);
    // Every case ran, the proof bundles among them.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(vectors().join("manifest.json")).unwrap()).unwrap();
    let cases = manifest["cases"].as_array().unwrap();
    assert!(cases.iter().any(|c| c["type"] == "bundle"));
    assert_eq!(json["passed"].as_u64().unwrap(), cases.len() as u64);
    assert_eq!(json["skipped"], 0);
}

#[test]
fn conformance_fails_loudly_on_a_changed_vector() {
    let dir = std::env::temp_dir().join(format!("herald-cli-conformance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let status = Command::new("cp")
        .arg("-r")
        .arg(vectors())
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    // An envelope of a verify case, an audit-log proof and a proof bundle:
    // one at a time.
    for (rel, case) in [
        ("cases/verify/genesis.cbor", "genesis"),
        (
            "cases/proof/inclusion_last_leaf.cbor",
            "inclusion_last_leaf",
        ),
        ("cases/bundle/bundle_molt_proven.cbor", "bundle_molt_proven"),
    ] {
        let file = dir.join(rel);
        let original = std::fs::read(&file).unwrap();
        let mut bytes = original.clone();
        let n = bytes.len() - 3;
        bytes[n] ^= 0x40;
        std::fs::write(&file, bytes).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_herald"))
            .arg("conformance")
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("FAIL {case}:"))),
            "{stdout}"
        );
        assert!(stdout.lines().last().unwrap().contains(" passed, 1 failed"));
        std::fs::write(&file, original).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
