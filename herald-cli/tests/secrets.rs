//! Secret key files: created 0600, never replaced silently, and their
//! contents never printed by any command, error messages included.
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::{Run, cat, herald, keygen};

#[cfg(unix)]
#[test]
fn key_files_are_created_0600_and_not_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let sigil = keygen(d, "k");
    let mode = std::fs::metadata(d.join("k.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let pub_mode = std::fs::metadata(d.join("k.pub"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        pub_mode & 0o077 & !0o044,
        0,
        "the public key is not group/other-writable"
    );
    let before = std::fs::read(d.join("k.key")).unwrap();
    let run = herald(d, &["keygen", "-o", "k"]);
    run.expect(2);
    assert!(
        run.stderr.contains("k.key: already exists"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(d.join("k.key")).unwrap(), before);
    // A trailing .key names the same pair.
    herald(d, &["keygen", "-o", "k.key"]).expect(2);
    let run = herald(d, &["keygen", "-o", "k", "--force"]);
    run.expect(0);
    assert_ne!(run.out().trim(), sigil);
    assert_ne!(std::fs::read(d.join("k.key")).unwrap(), before);
    let mode = std::fs::metadata(d.join("k.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // No temporary files left behind.
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["k.key", "k.pub"]);
}

#[test]
fn key_contents_never_appear_in_any_output() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut runs: Vec<Run> = Vec::new();
    runs.push(herald(d, &["keygen", "-o", "a"]));
    keygen(d, "b");
    let secret = std::fs::read_to_string(d.join("a.key")).unwrap();
    let seed = secret.lines().nth(1).unwrap().to_owned();
    assert_eq!(seed.len(), 64);

    runs.push(herald(
        d,
        &[
            "new",
            "--key",
            "a.key",
            "--payload-json",
            "1",
            "-o",
            "1.cbor",
        ],
    ));
    runs.push(herald(
        d,
        &[
            "reply", "--key", "b.key", "--parent", "1.cbor", "-o", "2.cbor",
        ],
    ));
    runs.push(herald(
        d,
        &[
            "cosign",
            "--key",
            "a.key",
            "--scope",
            "human_approval",
            "2.cbor",
            "-o",
            "3.cbor",
        ],
    ));
    cat(d, &["1.cbor", "3.cbor"], "t.cbor");
    runs.push(herald(d, &["inspect", "t.cbor"]));
    runs.push(herald(d, &["inspect", "--json", "t.cbor"]));
    runs.push(herald(d, &["verify", "t.cbor", "--keyring", ".", "-v"]));
    runs.push(herald(d, &["verify", "t.cbor", "--keyring", ".", "--json"]));
    // Errors about the key file itself.
    runs.push(herald(d, &["keygen", "-o", "a"]));
    runs.push(herald(d, &["inspect", "a.key"]));
    runs.push(herald(d, &["verify", "a.key", "--json"]));
    runs.push(herald(d, &["verify", "t.cbor", "--keyring", "a.key"]));
    // A secret key file is never sent as a payload.
    for args in [
        &[
            "new",
            "--key",
            "a.key",
            "--payload-file",
            "a.key",
            "-o",
            "-",
        ][..],
        &[
            "new",
            "--key",
            "a.key",
            "--payload-json",
            "@a.key",
            "-o",
            "-",
        ],
        &["new", "--key", "a.key", "--attest", "x=@a.key", "-o", "-"],
    ] {
        let run = herald(d, args);
        run.expect(2);
        assert!(
            run.stderr.contains("refusing to send a secret key file"),
            "{}",
            run.stderr
        );
        assert!(run.stdout.is_empty());
        runs.push(run);
    }
    std::fs::write(
        d.join("c.key"),
        secret.replace("herald-secret-key-v1", "not-a-key"),
    )
    .unwrap();
    runs.push(herald(d, &["new", "--key", "c.key", "-o", "x.cbor"]));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join("a.key"), std::fs::Permissions::from_mode(0o644)).unwrap();
        let run = herald(d, &["new", "--key", "a.key", "-o", "x.cbor"]);
        run.expect(2);
        runs.push(run);
    }
    for (i, run) in runs.iter().enumerate() {
        for stream in [
            String::from_utf8_lossy(&run.stdout).into_owned(),
            run.stderr.clone(),
        ] {
            assert!(!stream.contains(&seed), "run {i} printed the seed");
            assert!(
                !stream.contains(secret.trim()),
                "run {i} printed the key file"
            );
        }
    }
    // Envelope files never carry the seed either.
    for file in ["1.cbor", "2.cbor", "3.cbor"] {
        let bytes = std::fs::read(d.join(file)).unwrap();
        assert!(
            !bytes.windows(seed.len()).any(|w| w == seed.as_bytes()),
            "{file}"
        );
    }
}
