//! The fleet database as a conduit's [`Backend`] and (notary) its
//! [`AuditLog`].

use herald_core::SigningKey;
use herald_verify::{ConsistencyProof, SignedTreeHead};

use super::{Fleet, writer};
use crate::Conduit;
use crate::backend::{AuditLog, Backend, Between, Failure, Inclusion, Listing, PageRead, Pending};
use crate::blocking::off_runtime;
use crate::erase::{Erasure, Tombstone};
use crate::stored::{RECIPIENT_LEN, Stored};
use crate::writer::{Batch, Committed, Prepared, Received};

impl Backend for Fleet {
    fn healthy(&self) -> Pending<'_, bool> {
        Box::pin(self.reachable())
    }

    fn blocks(&self) -> bool {
        false
    }

    fn sole_writer(&self) -> bool {
        false
    }

    /// The precheck reads the senders' records from the database; the
    /// rules, signatures and receipts step off the runtime's workers.
    fn prepare<'a>(&'a self, batch: Batch<'a>) -> Pending<'a, Vec<Prepared<'a>>> {
        Box::pin(async move {
            let posts = crate::writer::posts(batch.jobs);
            let pre = self.precheck(&posts, batch.now).await;
            off_runtime(|| crate::writer::settle_all(batch, pre))
        })
    }

    fn receive<'a>(
        &'a self,
        batch: Batch<'a>,
        prepared: Vec<Prepared<'a>>,
    ) -> Pending<'a, Received> {
        Box::pin(async move {
            match writer::accept(self, batch, &prepared).await {
                Ok(steps) => (steps, None),
                Err(e) => (Vec::new(), Some(e)),
            }
        })
    }

    fn answer<'a>(&'a self, conduit: &'a Conduit, group: Vec<Committed>) -> Pending<'a, ()> {
        Box::pin(async move {
            for committed in group {
                writer::answer(conduit, self, committed).await;
            }
        })
    }

    /// A fleet answers a batch once a head covers it: the next batch
    /// gathers the posts meanwhile, one transaction (one WAL flush) for
    /// more of them.
    fn overlap(&self) -> bool {
        false
    }

    /// Sequencer duty (notary): sign a head as soon as any conduit of the
    /// fleet commits leaves (`notify::LEAVES`), re-sign it every `--batch-ms`,
    /// and try to take the sequencer's turn every `log::TAKEOVER_EVERY`
    /// while another holds it.
    fn duty<'a>(&'a self, conduit: &'a Conduit) -> Pending<'a, ()> {
        Box::pin(async move {
            if !self.notary {
                return;
            }
            let every = conduit.config.batch.min(super::log::TAKEOVER_EVERY);
            while !*conduit.closing.borrow() {
                let seen = self.signals.leaves.seen();
                let _ = self
                    .sequence(&conduit.key, conduit.now(), conduit.config.batch)
                    .await;
                self.signals
                    .leaves
                    .wait_past(seen, std::time::Instant::now() + every)
                    .await;
            }
        })
    }

    fn envelope(&self, id: [u8; 32]) -> Pending<'_, Result<Option<Stored>, Failure>> {
        Box::pin(async move { Fleet::envelope(self, &id).await.map_err(|e| e.to_string()) })
    }

    fn signing_keys(
        &self,
        sigil: herald_core::Sigil,
        at: u64,
    ) -> Pending<'_, Result<Vec<herald_core::PublicKey>, Failure>> {
        Box::pin(async move {
            let Some(who) = crate::stored::recipient(&sigil) else {
                return Ok(Vec::new());
            };
            let sql = "SELECT record FROM lifecycle WHERE identity = $1";
            let row = self.row(sql, &who, "read a lifecycle record").await?;
            let record = row
                .and_then(|r| herald_verify::IdentityRecord::from_stored(&r.get::<_, Vec<u8>>(0)));
            Ok(self.receiver.signing_keys_of(&sigil, record.as_ref(), at))
        })
    }

    /// The fleet's replay window of signed reads (migration 0002): one
    /// insert; expired rows are deleted by about one claim in 256 (those
    /// whose signature starts with a zero byte: uniform, and no state).
    fn claim_read(
        &self,
        signature: [u8; 16],
        until: u64,
        now: u64,
    ) -> Pending<'_, Result<bool, Failure>> {
        Box::pin(async move {
            let c = self.reader().await.map_err(|e| e.to_string())?;
            if signature[0] == 0 {
                c.execute(
                    "DELETE FROM read_signatures WHERE retain_until < $1",
                    &[&super::big(now)],
                )
                .await
                .map_err(|e| e.to_string())?;
            }
            let fresh = c
                .execute(
                    "INSERT INTO read_signatures (signature, retain_until) VALUES ($1, $2) \
                     ON CONFLICT DO NOTHING",
                    &[&signature.as_slice(), &super::big(until)],
                )
                .await
                .map_err(|e| e.to_string())?;
            Ok(fresh == 1)
        })
    }

    fn answered(&self, id: [u8; 32]) -> Pending<'_, Option<Vec<u8>>> {
        Box::pin(async move { self.first_body(&id).await.ok().flatten() })
    }

    fn page_of(&self, listing: Listing, after: u64, max_bytes: usize) -> Pending<'_, PageRead> {
        Box::pin(async move {
            let page = match &listing {
                Listing::Inbox(who) => Fleet::inbox_page(self, who, after, max_bytes).await,
                Listing::Trace(trace) => Fleet::trace_page(self, trace, after, max_bytes).await,
            };
            page.map_err(|e| e.to_string())
        })
    }

    fn concat(&self, ids: Vec<[u8; 32]>) -> Pending<'_, Result<Vec<u8>, Failure>> {
        Box::pin(async move { Fleet::concat(self, &ids).await.map_err(|e| e.to_string()) })
    }

    fn lifecycle(
        &self,
        identity: [u8; RECIPIENT_LEN],
    ) -> Pending<'_, Result<Vec<crate::keys::Indexed>, Failure>> {
        Box::pin(async move {
            Fleet::lifecycle(self, &identity)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn tombstone(&self, id: [u8; 32]) -> Pending<'_, Result<Option<Tombstone>, Failure>> {
        Box::pin(async move { Fleet::tombstone(self, &id).await.map_err(|e| e.to_string()) })
    }

    /// One PostgreSQL transaction (`fleet::erase`); the leaf is in the
    /// database already, committed with the envelope.
    fn erase(&self, erasures: Vec<Erasure>) -> Pending<'_, Result<Vec<[u8; 32]>, Failure>> {
        Box::pin(async move {
            Fleet::erase(self, &erasures)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn oldest(&self, from: u64, limit: usize) -> Pending<'_, Result<(Vec<Stored>, u64), Failure>> {
        Box::pin(async move {
            Fleet::oldest(self, from, limit)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn deliveries(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.signals.leaves.subscribe())
    }

    fn log(&self) -> Option<&dyn AuditLog> {
        self.notary.then_some(self as &dyn AuditLog)
    }
}

impl AuditLog for Fleet {
    fn sth(&self) -> Pending<'_, Result<Option<SignedTreeHead>, Failure>> {
        Box::pin(async move { self.head().await.map_err(|e| e.to_string()) })
    }

    fn inclusion(&self, id: [u8; 32]) -> Pending<'_, Result<Inclusion, Failure>> {
        Box::pin(async move {
            let Some(index) = self.leaf_index(&id).await.map_err(|e| e.to_string())? else {
                return Ok(Inclusion::Unknown);
            };
            match Fleet::inclusion(self, index)
                .await
                .map_err(|e| e.to_string())?
            {
                Some(p) => Ok(Inclusion::Proof(Box::new(p))),
                None => Ok(Inclusion::NotCovered),
            }
        })
    }

    fn consistency<'a>(
        &'a self,
        key: &'a SigningKey,
        b: Between,
    ) -> Pending<'a, Result<Result<ConsistencyProof, String>, Failure>> {
        Box::pin(async move {
            Fleet::consistency(self, key, b.size1, b.size2, b.now)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn checkpoint<'a>(
        &'a self,
        key: &'a SigningKey,
        origin: &'a str,
    ) -> Pending<'a, Result<String, Failure>> {
        Box::pin(async move {
            Fleet::checkpoint(self, key, origin)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn tile(&self, path: String) -> Pending<'_, Result<Option<Vec<u8>>, Failure>> {
        Box::pin(async move { Fleet::tile(self, &path).await.map_err(|e| e.to_string()) })
    }

    fn size(&self) -> Pending<'_, Option<u64>> {
        Box::pin(async move { self.head_size().await.ok() })
    }
}
