//! docs/performance.md *Memory under hostile input*, B4: a replay store
//! is refused, never reset. A truncated, empty, foreign or header-less
//! store is an error naming the file; only a path where nothing exists
//! gets a new store, built whole and owner-only.

// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use herald_verify::{Claim, FileError, STORE_FORMAT, Store, StoreError};

const OWNER: &str = "sigil:conduit-under-test";
const SIGNER: [u8; 32] = [7; 32];
use herald_testkit::T0 as NOW;

fn nonce(i: u64) -> [u8; 16] {
    let mut n = [0; 16];
    n[..8].copy_from_slice(&i.to_be_bytes());
    n
}

/// A store at `dir/replay.redb` holding 50 acknowledged claims.
fn populated(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("replay.redb");
    let store = Store::create(&path, OWNER).unwrap();
    for i in 0..50 {
        assert_eq!(
            store.claim(&SIGNER, &nonce(i), u64::MAX, NOW).unwrap(),
            Claim::Fresh
        );
    }
    path
}

fn names_the_file(e: &StoreError, path: &std::path::Path) {
    let text = e.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
}

#[test]
fn a_store_truncated_to_nothing_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    for attempt in [
        Store::open(&path, OWNER),
        Store::open_or_create(&path, OWNER),
    ] {
        let e = attempt.unwrap_err();
        assert!(matches!(e, StoreError::Empty { .. }), "{e:?}");
        names_the_file(&e, &path);
        assert!(e.to_string().contains("restore it from a backup"), "{e}");
    }
    // Still the empty file the operator must look at: nothing re-created.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    assert!(matches!(
        Store::create(&path, OWNER),
        Err(StoreError::Exists { .. })
    ));
}

#[test]
fn acknowledged_claims_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    let store = Store::open(&path, OWNER).unwrap();
    assert_eq!(store.owner().unwrap(), OWNER);
    for i in 0..50 {
        assert_eq!(
            store.claim(&SIGNER, &nonce(i), u64::MAX, NOW).unwrap(),
            Claim::Replayed
        );
    }
}

#[test]
fn a_store_of_another_owner_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    let e = Store::open(&path, "sigil:another-conduit").unwrap_err();
    match &e {
        StoreError::Foreign {
            expected, found, ..
        } => {
            assert_eq!(expected, "sigil:another-conduit");
            assert_eq!(found, OWNER);
        }
        e => panic!("expected Foreign, got {e:?}"),
    }
    names_the_file(&e, &path);
    let e = Store::open_or_create(&path, "sigil:another-conduit").unwrap_err();
    assert!(matches!(e, StoreError::Foreign { .. }), "{e:?}");
}

#[test]
fn a_redb_file_without_the_header_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.redb");
    {
        let db = redb::Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        let t: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("replay");
        txn.open_table(t).unwrap();
        txn.commit().unwrap();
    }
    let e = Store::open(&path, OWNER).unwrap_err();
    assert!(matches!(e, StoreError::Format { found: None, .. }), "{e:?}");
    assert!(
        e.to_string().contains(&format!("format {STORE_FORMAT}")),
        "{e}"
    );
}

#[test]
fn nothing_is_created_by_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replay.redb");
    let e = Store::open(&path, OWNER).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e:?}");
    names_the_file(&e, &path);
    assert!(!path.exists());
    // Creation leaves the store alone in the directory: no temporary file.
    drop(Store::open_or_create(&path, OWNER).unwrap());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["replay.redb"]);
    assert!(matches!(
        Store::open(&path, ""),
        Err(StoreError::BadOwner { .. })
    ));
}

#[cfg(unix)]
#[test]
fn stores_are_owner_only_and_shared_ones_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o662)).unwrap();
    let e = Store::open(&path, OWNER).unwrap_err();
    assert!(
        matches!(e, StoreError::File(FileError::Exposed { mode: 0o662, .. })),
        "{e:?}"
    );
    names_the_file(&e, &path);
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fifo.redb");
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    let e = Store::open(&path, OWNER).unwrap_err();
    assert!(e.to_string().contains("a FIFO"), "{e}");
    assert!(matches!(
        Store::open_or_create(&path, OWNER),
        Err(StoreError::File(_))
    ));
}
