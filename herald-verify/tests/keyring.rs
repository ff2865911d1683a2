// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::{KeyResolver, SigilForm, SigningKey};
use herald_verify::{Keyring, KeyringError, key_line};

#[test]
fn lines_round_trip_and_resolve_every_form() {
    let k = SigningKey::from_seed(&[5; 32]);
    let text = format!("# a comment\n\n{}\n", key_line(&k.public_key()));
    let mut ring = Keyring::new();
    assert_eq!(ring.parse(&text, "ring").unwrap(), 1);
    for form in SigilForm::ALL {
        assert_eq!(ring.resolve(&k.sigil(form)), Some(k.public_key()));
    }
    assert_eq!(
        ring.resolve(&SigningKey::from_seed(&[6; 32]).sigil(SigilForm::Default)),
        None
    );
}

#[test]
fn bad_lines_name_file_and_line() {
    let k = SigningKey::from_seed(&[5; 32]);
    let other = SigningKey::from_seed(&[6; 32]);
    let good = key_line(&k.public_key());
    let hexkey = good.split(' ').nth(2).unwrap().to_string();
    let mismatch = format!("{} ed25519 {hexkey}", other.sigil(SigilForm::Default));
    type Case = (String, fn(&KeyringError) -> bool);
    let cases: Vec<Case> = vec![
        (format!("{good}\nnonsense"), |e| {
            matches!(e, KeyringError::Syntax { line: 2, .. })
        }),
        (mismatch, |e| {
            matches!(e, KeyringError::SigilMismatch { line: 1, .. })
        }),
        (good.replace("ed25519", "rsa"), |e| {
            matches!(e, KeyringError::Syntax { .. })
        }),
        (good.to_uppercase().replacen("SIGIL:", "sigil:", 1), |e| {
            matches!(e, KeyringError::Sigil { .. } | KeyringError::Syntax { .. })
        }),
        (
            format!("{} ed25519 {}", k.sigil(SigilForm::Default), &hexkey[..62]),
            |e| matches!(e, KeyringError::Syntax { .. }),
        ),
        // The identity point: small order, refused on load (P5).
        (
            {
                let mut id = [0u8; 32];
                id[0] = 1;
                let s = herald_core::Sigil::from_key(&id, SigilForm::Default);
                format!("{s} ed25519 {}", hex::encode(id))
            },
            |e| {
                matches!(
                    e,
                    KeyringError::Key {
                        error: herald_core::KeyError::SmallOrder,
                        ..
                    }
                )
            },
        ),
        (format!("sigil:none ed25519 {hexkey}"), |e| {
            matches!(e, KeyringError::SigilMismatch { .. })
        }),
    ];
    for (text, want) in cases {
        let err = Keyring::new().parse(&text, "ring.pub").unwrap_err();
        assert!(want(&err), "{text:?} gave {err:?}");
        assert!(err.to_string().starts_with("ring.pub:"), "{err}");
    }
}

#[test]
fn directories_load_their_pub_files() {
    let dir = std::env::temp_dir().join(format!("herald-keyring-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = SigningKey::from_seed(&[1; 32]);
    let b = SigningKey::from_seed(&[2; 32]);
    std::fs::write(dir.join("a.pub"), key_line(&a.public_key())).unwrap();
    std::fs::write(dir.join("b.pub"), key_line(&b.public_key())).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a key").unwrap();
    let mut ring = Keyring::new();
    assert_eq!(ring.load(&dir).unwrap().keys, 2);
    assert_eq!(ring.len(), 2);
    let missing = Keyring::new().load(&dir.join("nope")).unwrap_err();
    assert!(matches!(missing, KeyringError::Io(_)));
    std::fs::remove_dir_all(&dir).unwrap();
}
