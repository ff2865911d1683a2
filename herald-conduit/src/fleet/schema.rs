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
    (2, include_str!("../../migrations/0002_read_signatures.sql")),
];

/// The schema version this code writes and reads.
pub(crate) const SCHEMA_VERSION: i32 = 2;

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
