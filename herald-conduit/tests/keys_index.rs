//! The lifecycle index behind `GET /v1/keys/{sigil}` (CONDUIT.md,
//! docs/conduit.md *A sigil's keys*) on a store from before it existed:
//! the redb store indexes its stored births at open, the fleet's
//! migration 2 in its own transaction, so an upgraded conduit still
//! answers for the sigils born before the upgrade.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use herald_core::attestation::birth_attestation;
use herald_core::{EnvelopeBuilder, Kind, SigilForm, SigningKey};
use redb::ReadableDatabase;
use support::pg::Cluster;
use support::{now, start_at};

fn carol() -> SigningKey {
    SigningKey::from_seed(&[0x33; 32])
}

fn carol_birth() -> Vec<u8> {
    let k = carol();
    EnvelopeBuilder::genesis(now())
        .kind(Kind::Birth)
        .attest("birth", birth_attestation(&k.public_key(), "carol", &[]))
        .sign(&k)
        .unwrap()
        .into_bytes()
}

fn keys_path() -> String {
    format!("/v1/keys/{}", carol().sigil(SigilForm::Default))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redb_store_from_before_the_index_is_indexed_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let c = start_at(state.clone(), |_| {}).await;
    let birth = carol_birth();
    assert_eq!(c.post(&birth).await.status, 201);
    assert_eq!(c.get(&keys_path()).await.status, 200);
    c.stop().await;

    // The store as a conduit before the index left it.
    {
        let db = redb::Database::open(state.join("conduit.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        type T = redb::TableDefinition<'static, &'static [u8], &'static [u8]>;
        for name in ["conduit_lifecycle", "conduit_indexes"] {
            assert!(txn.delete_table(T::new(name)).unwrap(), "{name}");
        }
        txn.commit().unwrap();
        let read = db.begin_read().unwrap();
        assert!(read.open_table(T::new("conduit_lifecycle")).is_err());
    }

    let c = start_at(state.clone(), |_| {}).await;
    let r = c.get(&keys_path()).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let items = support::items(&r.body);
    assert_eq!(items.len(), 1);
    let stored = herald_core::EnvelopeRef::decode(&items[0]).unwrap();
    assert_eq!(stored.kind(), Kind::Birth);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_migration_2_indexes_the_envelopes_stored_before_it() {
    let Some(pg) = Cluster::start() else {
        return;
    };
    let url = pg.create_db("keys_index").await;
    let dir = tempfile::tempdir().unwrap();
    let fleet = |url: String| move |c: &mut herald_conduit::Config| c.store = Some(url);
    let c = start_at(dir.path().join("a"), fleet(url.clone())).await;
    assert_eq!(c.post(&carol_birth()).await.status, 201);
    assert_eq!(c.get(&keys_path()).await.status, 200);
    c.stop().await;

    // The database as schema version 1 left it.
    let client = pg.client(&url).await;
    client
        .batch_execute(
            "DROP TABLE lifecycle_envelopes; DROP TABLE read_signatures; DROP TABLE erased; \
             DELETE FROM schema_migrations WHERE version >= 2",
        )
        .await
        .unwrap();

    let c = start_at(dir.path().join("b"), fleet(url.clone())).await;
    let r = c.get(&keys_path()).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(support::items(&r.body).len(), 1);
    let rows: i64 = client
        .query_one("SELECT count(*) FROM lifecycle_envelopes", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, 1);
    c.stop().await;
}
