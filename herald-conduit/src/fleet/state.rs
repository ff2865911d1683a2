//! The fleet database as herald-verify's `LiveState` (the P8 and P10
//! rules' reads and writes): [`ReadState`] for the lock-free precheck,
//! [`TxnState`] inside the accepting transaction, with the writer
//! connection's prepared statements.

use std::collections::HashMap;

use herald_verify::{Claim, IdentityKey, LiveState, StoreError};
use tokio_postgres::{Client, Statement, Transaction};

use super::{Fleet, big};

/// The lifecycle record of `who`, read outside any transaction.
async fn read_record(
    c: &Client,
    who: &IdentityKey,
) -> Result<Option<Vec<u8>>, tokio_postgres::Error> {
    Ok(c.query_opt(
        "SELECT record FROM lifecycle WHERE identity = $1",
        &[&who.as_slice()],
    )
    .await?
    .map(|r| r.get(0)))
}

/// The precheck's view of the fleet: lifecycle records as last committed,
/// read without a lock ([`herald_verify::Receiver::precheck_with`]); the
/// accepting transaction checks again if a record changed meanwhile.
pub(crate) struct ReadState<'f> {
    pub(crate) fleet: &'f Fleet,
}

impl LiveState for ReadState<'_> {
    fn record(&mut self, who: &IdentityKey) -> Result<Option<Vec<u8>>, StoreError> {
        let f = self.fleet;
        f.block_on(async {
            let c = f.reader().await.map_err(|e| StoreError::Backend {
                name: f.name(),
                operation: "lifecycle read",
                detail: e.to_string(),
            })?;
            read_record(&c, who)
                .await
                .map_err(f.store_error("lifecycle read"))
        })
    }

    fn save_record(&mut self, _: &IdentityKey, _: &[u8], _: &[[u8; 32]]) -> Result<(), StoreError> {
        Err(self.read_only())
    }

    fn claim(&mut self, _: &[u8; 32], _: &[u8; 16], _: u64, _: u64) -> Result<Claim, StoreError> {
        Err(self.read_only())
    }

    fn contains(&mut self, _: &[u8; 32], _: &[u8; 16], _: u64) -> Result<bool, StoreError> {
        Err(self.read_only())
    }

    fn corrupted(&self, detail: String) -> StoreError {
        StoreError::Backend {
            name: self.fleet.name(),
            operation: "lifecycle read",
            detail,
        }
    }
}

impl ReadState<'_> {
    fn read_only(&self) -> StoreError {
        StoreError::Backend {
            name: self.fleet.name(),
            operation: "precheck",
            detail: "the precheck only reads".into(),
        }
    }
}

/// The accepting transaction as live reception sees it. It holds the
/// `arrivals` row lock (taken first), so every read here sees every
/// earlier acceptance of the fleet and no other acceptance interleaves.
pub(crate) struct TxnState<'f, 't, 'c> {
    pub(crate) fleet: &'f Fleet,
    pub(crate) txn: &'t Transaction<'c>,
    pub(crate) stmts: &'t mut Statements,
}

impl TxnState<'_, '_, '_> {
    /// `sql`, prepared once per connection.
    pub(crate) fn stmt(&mut self, sql: &'static str) -> Result<Statement, tokio_postgres::Error> {
        self.stmts.get(self.fleet, self.txn, sql)
    }
}

/// The writer connection's prepared statements: a statement given as text
/// costs a round trip to prepare on every use; these are prepared once.
#[derive(Default)]
pub(crate) struct Statements(HashMap<&'static str, Statement>);

impl Statements {
    /// `sql`, prepared on `txn`'s connection the first time.
    pub(crate) fn get(
        &mut self,
        fleet: &Fleet,
        txn: &Transaction<'_>,
        sql: &'static str,
    ) -> Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.0.get(sql) {
            return Ok(s.clone());
        }
        let s = fleet.block_on(txn.prepare(sql))?;
        self.0.insert(sql, s.clone());
        Ok(s)
    }
}

/// The writer's connection and its prepared statements.
pub(crate) struct Writer {
    pub(crate) client: Client,
    pub(crate) stmts: Statements,
}

const RECORD_FOR_UPDATE: &str = "SELECT record FROM lifecycle WHERE identity = $1 FOR UPDATE";
const SAVE_RECORD: &str = "INSERT INTO lifecycle (identity, record) VALUES ($1, $2) \
     ON CONFLICT (identity) DO UPDATE SET record = EXCLUDED.record";
const SAVE_MOLT: &str = "INSERT INTO molts (id, identity) VALUES ($1, $2) ON CONFLICT DO NOTHING";
/// Fresh: inserted, or an entry past its retention replaced. Replayed: the
/// pair is held (no row comes back, nothing written).
const CLAIM: &str = "INSERT INTO replay (signer, nonce, retain_until) VALUES ($1, $2, $3) \
     ON CONFLICT (signer, nonce) DO UPDATE SET retain_until = EXCLUDED.retain_until \
     WHERE replay.retain_until < $4 RETURNING 1";
const CONTAINS: &str =
    "SELECT 1 FROM replay WHERE signer = $1 AND nonce = $2 AND retain_until >= $3";

impl LiveState for TxnState<'_, '_, '_> {
    fn record(&mut self, who: &IdentityKey) -> Result<Option<Vec<u8>>, StoreError> {
        let f = self.fleet;
        let st = self
            .stmt(RECORD_FOR_UPDATE)
            .map_err(f.store_error("lifecycle read"))?;
        let row = f
            .block_on(self.txn.query_opt(&st, &[&who.as_slice()]))
            .map_err(f.store_error("lifecycle read"))?;
        Ok(row.map(|r| r.get(0)))
    }

    fn save_record(
        &mut self,
        who: &IdentityKey,
        record: &[u8],
        molts: &[[u8; 32]],
    ) -> Result<(), StoreError> {
        let f = self.fleet;
        let err = f.store_error("lifecycle write");
        let save = self.stmt(SAVE_RECORD).map_err(&err)?;
        let molt = self.stmt(SAVE_MOLT).map_err(&err)?;
        let txn = self.txn;
        f.block_on(async {
            txn.execute(&save, &[&who.as_slice(), &record]).await?;
            for id in molts {
                txn.execute(&molt, &[&id.as_slice(), &who.as_slice()])
                    .await?;
            }
            Ok(())
        })
        .map_err(err)
    }

    fn claim(
        &mut self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        retain_until: u64,
        now: u64,
    ) -> Result<Claim, StoreError> {
        let f = self.fleet;
        let st = self.stmt(CLAIM).map_err(f.store_error("claim"))?;
        let row = f
            .block_on(self.txn.query_opt(
                &st,
                &[
                    &signer.as_slice(),
                    &nonce.as_slice(),
                    &big(retain_until),
                    &big(now),
                ],
            ))
            .map_err(f.store_error("claim"))?;
        Ok(if row.is_some() {
            Claim::Fresh
        } else {
            Claim::Replayed
        })
    }

    fn contains(
        &mut self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        now: u64,
    ) -> Result<bool, StoreError> {
        let f = self.fleet;
        let st = self.stmt(CONTAINS).map_err(f.store_error("claim lookup"))?;
        let row = f
            .block_on(
                self.txn
                    .query_opt(&st, &[&signer.as_slice(), &nonce.as_slice(), &big(now)]),
            )
            .map_err(f.store_error("claim lookup"))?;
        Ok(row.is_some())
    }

    fn corrupted(&self, detail: String) -> StoreError {
        StoreError::Backend {
            name: self.fleet.name(),
            operation: "lifecycle read",
            detail,
        }
    }
}
