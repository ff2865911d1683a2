//! Retention and erasure in the fleet database (migration 0004; the rule
//! is [`crate::erase`]'s): a set of erasures in one PostgreSQL transaction
//! that first takes the `arrivals` lock, so accepting transactions (which
//! take it first too) see each id either stored or erased, never half. It
//! runs on the writer's connection, one at a time with the batches: as
//! many DELETEs at once cost no more connections.

use super::{Fleet, FleetError, big, unbig};
use crate::erase::{Erasure, Tombstone};
use crate::stored::{RECIPIENT_LEN, Stored};

/// The envelope's rows go (its inbox entry, its first answer, its bytes);
/// the id when it was still stored.
const ERASE: &str = "WITH i AS (DELETE FROM inbox WHERE id = $1), \
     a AS (DELETE FROM answers WHERE id = $1) \
     DELETE FROM envelopes WHERE id = $1 RETURNING arrival";
/// Its tombstone.
const TOMBSTONE: &str = "INSERT INTO erased (id, recipient, erased_at, tombstone) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING";

impl Fleet {
    /// The tombstone of `id`, if it was erased.
    pub(crate) async fn tombstone(&self, id: &[u8; 32]) -> Result<Option<Tombstone>, FleetError> {
        let sql = "SELECT recipient, tombstone FROM erased WHERE id = $1";
        let row = self.row(sql, id, "read a tombstone").await?;
        Ok(row.map(|r| Tombstone {
            recipient: r
                .get::<_, Option<&[u8]>>(0)
                .and_then(|b| <[u8; RECIPIENT_LEN]>::try_from(b).ok()),
            bytes: r.get(1),
        }))
    }

    /// Erase each of `erasures` still stored, in one transaction; the ids
    /// erased.
    pub(crate) async fn erase(&self, erasures: &[Erasure]) -> Result<Vec<[u8; 32]>, FleetError> {
        let mut guard = self.writer_client().await?;
        let (txn, stmts, _) = Self::lock_arrivals(&mut guard).await?;
        let erase = stmts
            .get(&txn, ERASE)
            .await
            .map_err(FleetError::db("erase"))?;
        let tombstone = stmts
            .get(&txn, TOMBSTONE)
            .await
            .map_err(FleetError::db("erase"))?;
        let mut done = Vec::with_capacity(erasures.len());
        for e in erasures {
            let id = e.id.as_slice();
            let gone = txn
                .execute(&erase, &[&id])
                .await
                .map_err(FleetError::db("erase an envelope"))?;
            if gone == 0 {
                continue;
            }
            let recipient = e.tombstone.recipient.as_ref().map(|r| r.as_slice());
            txn.execute(
                &tombstone,
                &[&id, &recipient, &big(e.at), &e.tombstone.bytes.as_slice()],
            )
            .await
            .map_err(FleetError::db("write a tombstone"))?;
            done.push(e.id);
        }
        txn.commit().await.map_err(FleetError::db("commit"))?;
        Ok(done)
    }

    /// Up to `limit` stored envelopes of arrival `from` or later, oldest
    /// first; and the arrival after the last one.
    pub(crate) async fn oldest(
        &self,
        from: u64,
        limit: usize,
    ) -> Result<(Vec<Stored>, u64), FleetError> {
        let c = self.reader().await?;
        let rows = c
            .query(
                "SELECT arrival, bytes FROM envelopes WHERE arrival >= $1 \
                 ORDER BY arrival LIMIT $2",
                &[&big(from), &i64::try_from(limit).unwrap_or(i64::MAX)],
            )
            .await
            .map_err(FleetError::db("read the oldest envelopes"))?;
        let out: Vec<Stored> = rows
            .into_iter()
            .map(|r| Stored {
                arrival: unbig(r.get(0)),
                bytes: r.get(1),
            })
            .collect();
        let next = out.last().map_or(from, |s| s.arrival.saturating_add(1));
        Ok((out, next))
    }
}
