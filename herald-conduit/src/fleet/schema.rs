//! Versioned schema migrations of the fleet database, in the repository
//! (`herald-conduit/migrations/NNNN_*.sql`), applied at start in one
//! transaction under an advisory lock (two conduits starting together
//! apply each migration once). A database whose schema is newer than this
//! conduit knows is refused: an older conduit must not write tables whose
//! rules it does not know.

use tokio_postgres::Client;

use super::FleetError;

/// The migrations, in order: (version, SQL).
pub(crate) const MIGRATIONS: &[(i32, &str)] = &[
    (1, include_str!("../../migrations/0001_fleet.sql")),
    (2, include_str!("../../migrations/0002_lifecycle.sql")),
    (3, include_str!("../../migrations/0003_read_signatures.sql")),
    (4, include_str!("../../migrations/0004_erased.sql")),
];

/// The schema version this code writes and reads.
pub(crate) const SCHEMA_VERSION: i32 = 4;

/// The version whose migration also indexes the envelopes stored before
/// it ([`index_lifecycle`]).
const LIFECYCLE_VERSION: i32 = 2;

/// Envelopes read per query while indexing.
const INDEX_BATCH: i64 = 1024;

/// Advisory lock key held (per transaction) while migrating.
const MIGRATE_LOCK: i64 = 0x4845_5241_4c44_0001; // "HERALD" · 1

/// Bring the database to [`SCHEMA_VERSION`]; refuse a newer one.
pub(crate) async fn migrate(client: &mut Client) -> Result<i32, FleetError> {
    let txn = client
        .transaction()
        .await
        .map_err(FleetError::db("migrate"))?;
    txn.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])
        .await
        .map_err(FleetError::db("migrate"))?;
    txn.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version    integer     PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now()
         )",
    )
    .await
    .map_err(FleetError::db("migrate"))?;
    let current: Option<i32> = txn
        .query_one("SELECT max(version) FROM schema_migrations", &[])
        .await
        .map_err(FleetError::db("migrate"))?
        .get(0);
    let current = current.unwrap_or(0);
    if current > SCHEMA_VERSION {
        return Err(FleetError::NewerSchema {
            found: current,
            known: SCHEMA_VERSION,
        });
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        txn.batch_execute(sql)
            .await
            .map_err(FleetError::db("migrate"))?;
        if *version == LIFECYCLE_VERSION {
            index_lifecycle(&txn).await?;
        }
        txn.execute(
            "INSERT INTO schema_migrations (version) VALUES ($1)",
            &[version],
        )
        .await
        .map_err(FleetError::db("migrate"))?;
    }
    txn.commit().await.map_err(FleetError::db("migrate"))?;
    Ok(SCHEMA_VERSION)
}

/// The lifecycle index rows of the envelopes stored before version 2, in
/// the migration's transaction (a crash before its commit leaves neither
/// the rows nor the version): each stored birth, molt and deprecation.
async fn index_lifecycle(txn: &tokio_postgres::Transaction<'_>) -> Result<(), FleetError> {
    let mut after: i64 = -1;
    loop {
        let rows = txn
            .query(
                "SELECT arrival, id, bytes FROM envelopes WHERE arrival > $1 \
                 ORDER BY arrival LIMIT $2",
                &[&after, &INDEX_BATCH],
            )
            .await
            .map_err(FleetError::db("index the lifecycle"))?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = last.get(0);
        for r in &rows {
            let bytes: &[u8] = r.get(2);
            let Ok(view) = herald_core::EnvelopeRef::decode_with(bytes, &LARGE) else {
                continue;
            };
            if let Some((who, kind)) = crate::keys::Lifecycle::of(&view) {
                let (arrival, id): (i64, &[u8]) = (r.get(0), r.get(1));
                txn.execute(
                    super::writer::INDEX,
                    &[&who.as_slice(), &arrival, &(kind as i16), &id],
                )
                .await
                .map_err(FleetError::db("index the lifecycle"))?;
            }
        }
    }
}

/// Limits to decode a stored envelope by (accepted under P1's; a relay's
/// receipt may have grown it a little).
const LARGE: herald_core::cbor::Limits = herald_core::cbor::Limits {
    max_size: usize::MAX,
    ..herald_core::cbor::Limits::DEFAULT
};
