//! The fleet backend (docs/conduit.md *Fleet*): several conduits on one
//! PostgreSQL database, sharing the replay cache, lifecycle, envelopes,
//! inboxes and one audit log (`--store postgres://...`; docs/conduit.md,
//! "Fleet").
//!
//! The live-reception rules are herald-verify's [`Receiver`]'s, run over
//! this database through its `LiveState`: a snapshot of what they read,
//! fetched ahead (the precheck's without a lock, the accepting
//! transaction's under its lock), their writes written back in that
//! transaction ([`state`]); nothing of P8 or P10 is written here. The
//! database is reached asynchronously throughout, from start-up to the
//! writer's stages, which are tasks (`crate::writer`); the rules and the
//! signature checks between its queries run off the runtime's workers
//! (`crate::blocking`). What is here is the storage: claims by the
//! `replay` primary key (`INSERT ... ON CONFLICT`), dense arrival numbers
//! and inbox positions taken in the accepting transaction, the log's
//! leaves appended in it, and (module [`log`]) one sequencer at a time
//! signing tree heads under a PostgreSQL advisory lock.
//!
//! The rules' snapshot of this database: [`state`]; the
//! accepting transaction: [`writer`]; notifications between the
//! conduits: [`notify`]; the conduit's view of it: [`backend`].
//!
//! Connections: the writer, the sequencer and the listener each own one (a transaction
//! and a session advisory lock need a connection of their own); reads
//! share [`READ_CONNECTIONS`] more, round robin, each pipelining the
//! queries of many requests (tokio-postgres clients are shared by
//! reference). A closed connection is replaced on next use.
//!
//! [`Receiver`]: herald_verify::Receiver

mod backend;
mod erase;
pub(crate) mod log;
mod notify;
mod precheck;
pub(crate) mod schema;
mod state;
mod writer;

use state::{Statements, Writer};

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::collections::HashMap;

use tokio_postgres::{Client, NoTls};

use crate::page::{Entry, MAX_ENVELOPES, Page, Planner};
use crate::stored::{RECIPIENT_LEN, Stored};

/// Rows a page is planned from at most (CONDUIT.md *Bounded answers*).
const PAGE_ROWS: u64 = MAX_ENVELOPES as u64;

/// Connections shared by reads.
pub(crate) const READ_CONNECTIONS: usize = 4;

/// How long a connection attempt may take when the URL sets no
/// `connect_timeout`: an unreachable database fails work, never holds it.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long `/healthz` waits for the database to answer.
const HEALTH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Why the fleet database could not be used.
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum FleetError {
    /// The background runtime could not start.
    Runtime(std::io::Error),
    /// A database operation failed.
    Db {
        /// What was being done.
        operation: &'static str,
        /// What PostgreSQL (or the connection) reported.
        error: tokio_postgres::Error,
    },
    /// The database's schema is newer than this conduit knows.
    NewerSchema {
        /// The version found.
        found: i32,
        /// The newest this conduit knows.
        known: i32,
    },
    /// The database belongs to a fleet signing with another key.
    ForeignKey,
    /// A stored value is not what this conduit wrote.
    Corrupted(String),
}

impl FleetError {
    /// A mapper of database errors of `operation`.
    pub(crate) fn db(operation: &'static str) -> impl Fn(tokio_postgres::Error) -> Self {
        move |error| Self::Db { operation, error }
    }
}

impl fmt::Display for FleetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Runtime(e) => write!(f, "fleet database: cannot start its runtime: {e}"),
            Self::Db { operation, error } => {
                write!(f, "fleet database: {operation}: {error}")?;
                if let Some(db) = error.as_db_error() {
                    write!(f, " ({})", db.message())?;
                }
                Ok(())
            }
            Self::NewerSchema { found, known } => write!(
                f,
                "fleet database: its schema is version {found}, newer than this conduit's \
                 {known}: refusing to start (upgrade the conduit)"
            ),
            Self::ForeignKey => f.write_str(
                "fleet database: it belongs to a fleet signing with another key \
                 (every conduit of a fleet runs with the same --key)",
            ),
            Self::Corrupted(d) => write!(f, "fleet database: {d}"),
        }
    }
}

impl std::error::Error for FleetError {}

/// A failure of the fleet database as the writer records it (logged,
/// never sent).
impl From<FleetError> for crate::backend::Failure {
    fn from(e: FleetError) -> Self {
        e.to_string()
    }
}

/// `u64` as a PostgreSQL `bigint` (values here are far below 2^63).
pub(crate) fn big(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A `bigint` column read back as `u64` (never negative here: CHECKs).
pub(crate) fn unbig(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// The fleet database, as one conduit uses it.
pub(crate) struct Fleet {
    /// Drives the connections; shut down in the background on drop (a
    /// runtime may not be dropped inside another's async context).
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
    url: String,
    /// `url` parsed, with [`CONNECT_TIMEOUT`] unless it sets its own.
    config: tokio_postgres::Config,
    reads: Vec<Mutex<Option<std::sync::Arc<Client>>>>,
    next: AtomicUsize,
    writer: tokio::sync::Mutex<Option<Writer>>,
    pub(crate) log: log::FleetLog,
    /// Live reception's rules (herald-verify), run over this database.
    receiver: herald_verify::Receiver,
    /// Whether this conduit is a notary: serves the log and takes its turn
    /// as the sequencer.
    notary: bool,
    /// What the fleet's conduits notify (`LISTEN`).
    signals: std::sync::Arc<notify::Signals>,
}

impl fmt::Debug for Fleet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fleet").finish_non_exhaustive()
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Fleet {
    /// Connect to `url`, apply the migrations (refusing a newer schema),
    /// and bind the database to `log_key` (refusing one bound to another);
    /// `receiver` judges the posts, over this database; `notary`: this
    /// conduit serves the log and may sequence it.
    pub(crate) async fn open(
        url: &str,
        log_key: &herald_core::PublicKey,
        receiver: herald_verify::Receiver,
        notary: bool,
    ) -> Result<Self, FleetError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("herald-fleet")
            .enable_all()
            .build()
            .map_err(FleetError::Runtime)?;
        let handle = runtime.handle().clone();
        let mut config: tokio_postgres::Config =
            url.parse().map_err(FleetError::db("read the URL"))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let fleet = Self {
            runtime: Some(runtime),
            handle,
            url: url.to_owned(),
            config,
            reads: (0..READ_CONNECTIONS).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            writer: tokio::sync::Mutex::new(None),
            log: log::FleetLog::new(),
            receiver,
            notary,
            signals: std::sync::Arc::new(notify::Signals::new()),
        };
        {
            let mut client = fleet.connect().await?;
            schema::migrate(&mut client).await?;
            client
                .execute(
                    "INSERT INTO meta (key, value) VALUES ('log_key', $1) ON CONFLICT DO NOTHING",
                    &[&log_key.as_bytes().as_slice()],
                )
                .await
                .map_err(FleetError::db("bind the log key"))?;
            let row = client
                .query_one("SELECT value FROM meta WHERE key = 'log_key'", &[])
                .await
                .map_err(FleetError::db("bind the log key"))?;
            let bound: Vec<u8> = row.get(0);
            if bound != log_key.as_bytes() {
                return Err(FleetError::ForeignKey);
            }
        }
        fleet.handle.spawn(notify::listen(
            fleet.config.clone(),
            std::sync::Arc::clone(&fleet.signals),
        ));
        Ok(fleet)
    }

    /// A new connection, driven on this fleet's runtime.
    pub(crate) async fn connect(&self) -> Result<Client, FleetError> {
        let (client, connection) = self
            .config
            .connect(NoTls)
            .await
            .map_err(FleetError::db("connect"))?;
        self.handle.spawn(async move {
            let _ = connection.await;
        });
        Ok(client)
    }

    /// A read connection (round robin; reconnected if closed).
    pub(crate) async fn reader(&self) -> Result<std::sync::Arc<Client>, FleetError> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.reads.len().max(1);
        let slot = self
            .reads
            .get(i)
            .ok_or(FleetError::Corrupted("no read connection".into()))?;
        if let Ok(s) = slot.lock()
            && let Some(c) = s.as_ref()
            && !c.is_closed()
        {
            return Ok(std::sync::Arc::clone(c));
        }
        let fresh = std::sync::Arc::new(self.connect().await?);
        if let Ok(mut s) = slot.lock() {
            *s = Some(std::sync::Arc::clone(&fresh));
        }
        Ok(fresh)
    }

    /// Whether the database answers now (`/healthz`; docs/conduit.md
    /// *Storage failures*): a trivial query on a read connection, which a
    /// connection lost is replaced for, within [`HEALTH_TIMEOUT`]. A
    /// failure is logged, never shown.
    pub(crate) async fn reachable(&self) -> bool {
        let probe = async {
            let c = self.reader().await?;
            c.simple_query("SELECT 1")
                .await
                .map_err(FleetError::db("probe"))?;
            Ok::<_, FleetError>(())
        };
        match tokio::time::timeout(HEALTH_TIMEOUT, probe).await {
            Ok(Ok(())) => true,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the fleet database does not answer");
                false
            }
            Err(_) => {
                tracing::warn!("the fleet database does not answer in time");
                false
            }
        }
    }

    /// The row `sql` selects for `key` (its one parameter), if any, on a
    /// read connection; `operation` names it in an error.
    pub(crate) async fn row(
        &self,
        sql: &str,
        key: &[u8],
        operation: &'static str,
    ) -> Result<Option<tokio_postgres::Row>, FleetError> {
        let c = self.reader().await?;
        c.query_opt(sql, &[&key])
            .await
            .map_err(FleetError::db(operation))
    }

    /// The stored envelope with `id`.
    pub(crate) async fn envelope(&self, id: &[u8; 32]) -> Result<Option<Stored>, FleetError> {
        let sql = "SELECT arrival, bytes FROM envelopes WHERE id = $1";
        let row = self.row(sql, id, "read an envelope").await?;
        Ok(row.map(|r| Stored {
            arrival: unbig(r.get(0)),
            bytes: r.get(1),
        }))
    }

    /// The 201 body first sent for `id`, if recorded.
    pub(crate) async fn first_body(&self, id: &[u8; 32]) -> Result<Option<Vec<u8>>, FleetError> {
        let sql = "SELECT body FROM answers WHERE id = $1";
        let row = self.row(sql, id, "read an answer").await?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The page after position `after`, of at most `max_bytes` bytes
    /// (CONDUIT.md *Bounded answers*), planned from the rows of (position,
    /// id, length) `sql` selects in order for `key`, after `after`, at
    /// most [`PAGE_ROWS`] (the lengths only are read).
    async fn page(
        &self,
        sql: &str,
        key: &[u8],
        after: u64,
        max_bytes: usize,
        operation: &'static str,
    ) -> Result<Page, FleetError> {
        let c = self.reader().await?;
        let rows = c
            .query(sql, &[&key, &big(after), &big(PAGE_ROWS)])
            .await
            .map_err(FleetError::db(operation))?;
        let mut planner = Planner::new(after, max_bytes);
        for r in &rows {
            let Ok(id) = <[u8; 32]>::try_from(r.get::<_, &[u8]>(1)) else {
                continue;
            };
            let entry = Entry {
                position: unbig(r.get(0)),
                id,
                len: usize::try_from(r.get::<_, i32>(2)).unwrap_or(usize::MAX),
            };
            if !planner.offer(entry) {
                break;
            }
        }
        Ok(planner.finish())
    }

    /// The page of `recipient`'s inbox after position `after`, of at most
    /// `max_bytes` bytes.
    pub(crate) async fn inbox_page(
        &self,
        recipient: &[u8; RECIPIENT_LEN],
        after: u64,
        max_bytes: usize,
    ) -> Result<Page, FleetError> {
        const SQL: &str = "SELECT i.position, e.id, octet_length(e.bytes) FROM inbox i \
             JOIN envelopes e ON e.id = i.id \
             WHERE i.recipient = $1 AND i.position > $2 ORDER BY i.position LIMIT $3";
        self.page(SQL, recipient, after, max_bytes, "read an inbox")
            .await
    }

    /// The page of `trace` after position `after` (arrival number plus
    /// one, [`crate::page`]), of at most `max_bytes` bytes.
    pub(crate) async fn trace_page(
        &self,
        trace: &[u8; 32],
        after: u64,
        max_bytes: usize,
    ) -> Result<Page, FleetError> {
        const SQL: &str = "SELECT arrival + 1, id, octet_length(bytes) FROM envelopes \
             WHERE trace = $1 AND arrival >= $2 ORDER BY arrival LIMIT $3";
        self.page(SQL, trace, after, max_bytes, "read a trace")
            .await
    }

    /// The envelopes `ids` as forwarded, concatenated in that order (one
    /// chunk of an answer); an id not stored is left out.
    pub(crate) async fn concat(&self, ids: &[[u8; 32]]) -> Result<Vec<u8>, FleetError> {
        let c = self.reader().await?;
        let keys: Vec<&[u8]> = ids.iter().map(<[u8; 32]>::as_slice).collect();
        let rows = c
            .query(
                "SELECT id, bytes FROM envelopes WHERE id = ANY($1)",
                &[&keys],
            )
            .await
            .map_err(FleetError::db("read envelopes"))?;
        let mut found: HashMap<&[u8], &[u8]> = rows
            .iter()
            .map(|r| (r.get::<_, &[u8]>(0), r.get::<_, &[u8]>(1)))
            .collect();
        let mut out = Vec::new();
        for id in ids {
            if let Some(b) = found.remove(id.as_slice()) {
                out.extend_from_slice(b);
            }
        }
        Ok(out)
    }

    /// The lifecycle index of `who` with the stored lengths, in arrival
    /// order (its first [`crate::keys::MAX_ROWS`] rows).
    pub(crate) async fn lifecycle(
        &self,
        who: &[u8; RECIPIENT_LEN],
    ) -> Result<Vec<crate::keys::Indexed>, FleetError> {
        let c = self.reader().await?;
        let rows = c
            .query(
                "SELECT l.kind, l.id, octet_length(e.bytes) FROM lifecycle_envelopes l \
                 JOIN envelopes e ON e.id = l.id \
                 WHERE l.identity = $1 ORDER BY l.arrival LIMIT $2",
                &[&who.as_slice(), &big(crate::keys::MAX_ROWS as u64)],
            )
            .await
            .map_err(FleetError::db("read the lifecycle index"))?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(crate::keys::Indexed {
                    kind: crate::keys::Lifecycle::from_code(i64::from(r.get::<_, i16>(0)))?,
                    id: <[u8; 32]>::try_from(r.get::<_, &[u8]>(1)).ok()?,
                    len: usize::try_from(r.get::<_, i32>(2)).unwrap_or(usize::MAX),
                })
            })
            .collect())
    }

    /// Record the first 201 bodies sent (best effort, as on redb), in one
    /// statement.
    pub(crate) async fn put_answers(
        &self,
        answers: &[([u8; 32], &[u8])],
    ) -> Result<(), FleetError> {
        let c = self.reader().await?;
        let ids: Vec<&[u8]> = answers.iter().map(|(id, _)| id.as_slice()).collect();
        let bodies: Vec<&[u8]> = answers.iter().map(|(_, b)| *b).collect();
        c.execute(
            "INSERT INTO answers (id, body) SELECT * FROM unnest($1::bytea[], $2::bytea[]) \
             ON CONFLICT DO NOTHING",
            &[&ids, &bodies],
        )
        .await
        .map_err(FleetError::db("record answers"))?;
        c.batch_execute(&format!("NOTIFY {}", notify::ANSWERS))
            .await
            .map_err(FleetError::db("notify"))?;
        Ok(())
    }

    /// The database name for errors (the URL without its password).
    fn name(&self) -> String {
        match self.url.split_once('@') {
            Some((_, host)) => format!("postgres://…@{host}"),
            None => "postgres".to_owned(),
        }
    }
}

impl Fleet {
    /// The writer connection (reconnecting a closed one).
    pub(crate) async fn writer_client(
        &self,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<Writer>>, FleetError> {
        let mut w = self.writer.lock().await;
        if w.as_ref().is_none_or(|w| w.client.is_closed()) {
            *w = Some(Writer {
                client: self.connect().await?,
                stmts: Statements::default(),
            });
        }
        Ok(w)
    }

    /// Begin a transaction on the writer connection `w` (from
    /// [`Fleet::writer_client`]) that holds the `arrivals` row lock, which
    /// serialises the fleet's accepting and erasing transactions: the
    /// transaction, the writer's prepared statements, and the arrival number
    /// the next accepted envelope takes.
    pub(crate) async fn lock_arrivals(
        w: &mut Option<Writer>,
    ) -> Result<(tokio_postgres::Transaction<'_>, &mut Statements, u64), FleetError> {
        let Writer { client, stmts } = w
            .as_mut()
            .ok_or_else(|| FleetError::Corrupted("no writer connection".into()))?;
        let txn = client
            .transaction()
            .await
            .map_err(FleetError::db("begin"))?;
        let next: i64 = txn
            .query_one("SELECT next FROM arrivals FOR UPDATE", &[])
            .await
            .map_err(FleetError::db("lock the arrival counter"))?
            .get(0);
        Ok((txn, stmts, unbig(next)))
    }
}
