//! The fleet database as herald-verify's `LiveState` (the P8 and P10
//! rules' reads and writes): a [`Snapshot`] in memory. The rules are
//! synchronous and the database is not, so what they read is fetched
//! first ([`Fetched`], a few queries for a whole batch); a read of
//! something not fetched is a miss, which fails that try and is fetched
//! for the next (the rules are run again, on a clone of the prechecked
//! post); what they write is kept in order and written back in the
//! accepting transaction, where the database confirms every claim
//! ([`write_back`]).
//!
//! The precheck's snapshot reads the lifecycle records as last committed,
//! without a lock (the accepting transaction checks again if a record
//! changed meanwhile); the accepting transaction's reads them under its
//! `arrivals` row lock (and `FOR UPDATE`), so it sees every earlier
//! acceptance of the fleet and no other acceptance interleaves.

use std::collections::{BTreeSet, HashMap};

use herald_verify::{Claim, IdentityKey, LiveState, StoreError};
use tokio_postgres::{GenericClient, Statement, Transaction};

use super::{FleetError, big, unbig};

/// A replay-cache key: `(signer, nonce)` (P10).
type Pair = ([u8; 32], [u8; 16]);

/// What the rules read of the database, as fetched: a record or claim
/// fetched and found absent is `None`.
#[derive(Default)]
pub(crate) struct Fetched {
    records: HashMap<IdentityKey, Option<Vec<u8>>>,
    /// A claim's retain-until.
    claims: HashMap<Pair, Option<u64>>,
}

/// What a try of the rules read and [`Fetched`] did not hold.
#[derive(Default)]
pub(crate) struct Missing {
    pub(crate) records: BTreeSet<IdentityKey>,
    claims: BTreeSet<Pair>,
}

impl Missing {
    pub(crate) fn is_empty(&self) -> bool {
        self.records.is_empty() && self.claims.is_empty()
    }
}

/// The lifecycle records of `who`: outside a transaction (the precheck),
/// or inside the accepting one, locked.
const RECORDS: &str = "SELECT identity, record FROM lifecycle WHERE identity = ANY($1)";
const RECORDS_FOR_UPDATE: &str =
    "SELECT identity, record FROM lifecycle WHERE identity = ANY($1) FOR UPDATE";
const CLAIMS: &str = "SELECT r.signer, r.nonce, r.retain_until FROM replay r \
     JOIN unnest($1::bytea[], $2::bytea[]) AS k(signer, nonce) \
     ON r.signer = k.signer AND r.nonce = k.nonce";

impl Fetched {
    /// Fetch the records `who` (`locked`: inside the accepting
    /// transaction, [`RECORDS_FOR_UPDATE`]).
    pub(crate) async fn records(
        &mut self,
        c: &impl GenericClient,
        who: impl IntoIterator<Item = IdentityKey>,
        locked: Option<&Statement>,
    ) -> Result<(), FleetError> {
        let who: Vec<IdentityKey> = who
            .into_iter()
            .filter(|w| !self.records.contains_key(w))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if who.is_empty() {
            return Ok(());
        }
        let keys: Vec<&[u8]> = who.iter().map(<[u8; 10]>::as_slice).collect();
        let rows = match locked {
            Some(st) => c.query(st, &[&keys]).await,
            None => c.query(RECORDS, &[&keys]).await,
        }
        .map_err(FleetError::db("lifecycle read"))?;
        for w in who {
            self.records.insert(w, None);
        }
        for r in rows {
            if let Ok(w) = IdentityKey::try_from(r.get::<_, &[u8]>(0)) {
                self.records.insert(w, Some(r.get(1)));
            }
        }
        Ok(())
    }

    /// Fetch what `missing` names, in the accepting transaction.
    pub(crate) async fn missing(
        &mut self,
        txn: &Transaction<'_>,
        stmts: &mut Statements,
        missing: Missing,
    ) -> Result<(), FleetError> {
        if !missing.records.is_empty() {
            let st = stmts
                .get(txn, RECORDS_FOR_UPDATE)
                .await
                .map_err(FleetError::db("lifecycle read"))?;
            self.records(txn, missing.records, Some(&st)).await?;
        }
        let pairs: Vec<Pair> = missing
            .claims
            .into_iter()
            .filter(|p| !self.claims.contains_key(p))
            .collect();
        if pairs.is_empty() {
            return Ok(());
        }
        let st = stmts
            .get(txn, CLAIMS)
            .await
            .map_err(FleetError::db("claim lookup"))?;
        let signers: Vec<&[u8]> = pairs.iter().map(|(s, _)| s.as_slice()).collect();
        let nonces: Vec<&[u8]> = pairs.iter().map(|(_, n)| n.as_slice()).collect();
        let rows = txn
            .query(&st, &[&signers, &nonces])
            .await
            .map_err(FleetError::db("claim lookup"))?;
        for p in pairs {
            self.claims.insert(p, None);
        }
        for r in rows {
            if let (Ok(s), Ok(n)) = (
                <[u8; 32]>::try_from(r.get::<_, &[u8]>(0)),
                <[u8; 16]>::try_from(r.get::<_, &[u8]>(1)),
            ) {
                self.claims.insert((s, n), Some(unbig(r.get(2))));
            }
        }
        Ok(())
    }
}

/// A write of the rules, written back in order ([`write_back`]).
enum Write {
    Record {
        who: IdentityKey,
        record: Vec<u8>,
        molts: Vec<[u8; 32]>,
    },
    Claim {
        pair: Pair,
        retain_until: u64,
        now: u64,
    },
}

/// The live state the rules run over: [`Fetched`], and what they wrote
/// since (read back by later posts of the batch).
pub(crate) struct Snapshot<'a> {
    fetched: &'a Fetched,
    /// Whether the rules may write (the accepting transaction; not the
    /// precheck).
    writable: bool,
    /// The database name for errors.
    name: &'a str,
    writes: Vec<Write>,
    records: HashMap<IdentityKey, usize>,
    claims: HashMap<Pair, u64>,
    missing: Missing,
}

/// Where a [`Snapshot`] was: [`Snapshot::undo`] goes back there.
#[derive(Clone, Copy)]
pub(crate) struct Mark {
    writes: usize,
    missed: usize,
}

impl<'a> Snapshot<'a> {
    /// The precheck's view: reads only.
    pub(crate) fn reading(fetched: &'a Fetched, name: &'a str) -> Self {
        Self::new(fetched, false, name)
    }

    /// The accepting transaction's view.
    pub(crate) fn writing(fetched: &'a Fetched, name: &'a str) -> Self {
        Self::new(fetched, true, name)
    }

    fn new(fetched: &'a Fetched, writable: bool, name: &'a str) -> Self {
        Self {
            fetched,
            writable,
            name,
            writes: Vec::new(),
            records: HashMap::new(),
            claims: HashMap::new(),
            missing: Missing::default(),
        }
    }

    /// What was read and not fetched, so far.
    pub(crate) fn take_missing(&mut self) -> Missing {
        std::mem::take(&mut self.missing)
    }

    /// Whether a read missed since `mark`.
    pub(crate) fn missed_since(&self, mark: Mark) -> bool {
        self.missed() > mark.missed
    }

    fn missed(&self) -> usize {
        self.missing.records.len() + self.missing.claims.len()
    }

    pub(crate) fn mark(&self) -> Mark {
        Mark {
            writes: self.writes.len(),
            missed: self.missed(),
        }
    }

    /// Forget the writes made since `mark` (a try that missed).
    pub(crate) fn undo(&mut self, mark: Mark) {
        if self.writes.len() <= mark.writes {
            return;
        }
        self.writes.truncate(mark.writes);
        self.records.clear();
        self.claims.clear();
        for (i, w) in self.writes.iter().enumerate() {
            match w {
                Write::Record { who, .. } => {
                    self.records.insert(*who, i);
                }
                Write::Claim {
                    pair, retain_until, ..
                } => {
                    self.claims.insert(*pair, *retain_until);
                }
            }
        }
    }

    fn error(&self, operation: &'static str, detail: &str) -> StoreError {
        StoreError::Backend {
            name: self.name.to_owned(),
            operation,
            detail: detail.to_owned(),
        }
    }

    /// The retain-until of `pair` as the batch sees it; `Err` on a miss.
    fn retained(&mut self, pair: Pair) -> Result<Option<u64>, StoreError> {
        if let Some(r) = self.claims.get(&pair) {
            return Ok(Some(*r));
        }
        match self.fetched.claims.get(&pair) {
            Some(r) => Ok(*r),
            None => {
                self.missing.claims.insert(pair);
                Err(self.error("claim lookup", "not read yet"))
            }
        }
    }
}

impl LiveState for Snapshot<'_> {
    fn record(&mut self, who: &IdentityKey) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(Write::Record { record, .. }) =
            self.records.get(who).and_then(|i| self.writes.get(*i))
        {
            return Ok(Some(record.clone()));
        }
        match self.fetched.records.get(who) {
            Some(r) => Ok(r.clone()),
            None => {
                self.missing.records.insert(*who);
                Err(self.error("lifecycle read", "not read yet"))
            }
        }
    }

    fn save_record(
        &mut self,
        who: &IdentityKey,
        record: &[u8],
        molts: &[[u8; 32]],
    ) -> Result<(), StoreError> {
        if !self.writable {
            return Err(self.error("precheck", "the precheck only reads"));
        }
        self.records.insert(*who, self.writes.len());
        self.writes.push(Write::Record {
            who: *who,
            record: record.to_vec(),
            molts: molts.to_vec(),
        });
        Ok(())
    }

    /// Fresh when the pair is not held at `now` (absent, or kept until
    /// before `now`), as the database's `INSERT ... ON CONFLICT` decides
    /// at the write back.
    fn claim(
        &mut self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        retain_until: u64,
        now: u64,
    ) -> Result<Claim, StoreError> {
        if !self.writable {
            return Err(self.error("precheck", "the precheck only reads"));
        }
        let pair = (*signer, *nonce);
        if Claim::held(self.retained(pair)?, now) {
            return Ok(Claim::Replayed);
        }
        self.claims.insert(pair, retain_until);
        self.writes.push(Write::Claim {
            pair,
            retain_until,
            now,
        });
        Ok(Claim::Fresh)
    }

    fn contains(
        &mut self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        now: u64,
    ) -> Result<bool, StoreError> {
        Ok(Claim::held(self.retained((*signer, *nonce))?, now))
    }

    fn corrupted(&self, detail: String) -> StoreError {
        self.error("lifecycle read", &detail)
    }
}

/// The writer connection's prepared statements: a statement given as text
/// costs a round trip to prepare on every use; these are prepared once.
#[derive(Default)]
pub(crate) struct Statements(HashMap<&'static str, Statement>);

impl Statements {
    /// `sql`, prepared on `txn`'s connection the first time.
    pub(crate) async fn get(
        &mut self,
        txn: &Transaction<'_>,
        sql: &'static str,
    ) -> Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.0.get(sql) {
            return Ok(s.clone());
        }
        let s = txn.prepare(sql).await?;
        self.0.insert(sql, s.clone());
        Ok(s)
    }
}

/// The writer's connection and its prepared statements.
pub(crate) struct Writer {
    pub(crate) client: tokio_postgres::Client,
    pub(crate) stmts: Statements,
}

/// The records written, last one per identity.
const SAVE_RECORDS: &str = "INSERT INTO lifecycle (identity, record) \
     SELECT * FROM unnest($1::bytea[], $2::bytea[]) \
     ON CONFLICT (identity) DO UPDATE SET record = EXCLUDED.record";
const SAVE_MOLTS: &str = "INSERT INTO molts (id, identity) \
     SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT DO NOTHING";
/// The claims made at one `now` ($4): a row comes back for each pair
/// inserted, or whose entry past its retention was replaced; none for a
/// pair held (nothing written).
const CLAIM: &str = "INSERT INTO replay (signer, nonce, retain_until) \
     SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bigint[]) \
     ON CONFLICT (signer, nonce) DO UPDATE SET retain_until = EXCLUDED.retain_until \
     WHERE replay.retain_until < $4 RETURNING 1";

/// Run `sql` (a lifecycle write) over `rows` as two `bytea` arrays, unless
/// there are none.
async fn put_pairs(
    txn: &Transaction<'_>,
    stmts: &mut Statements,
    sql: &'static str,
    rows: &[(&[u8], &[u8])],
) -> Result<(), FleetError> {
    if rows.is_empty() {
        return Ok(());
    }
    let err = FleetError::db("lifecycle write");
    let st = stmts.get(txn, sql).await.map_err(&err)?;
    let a: Vec<&[u8]> = rows.iter().map(|r| r.0).collect();
    let b: Vec<&[u8]> = rows.iter().map(|r| r.1).collect();
    txn.execute(&st, &[&a, &b]).await.map_err(err)?;
    Ok(())
}

/// Write what the rules wrote in `snapshot` back in `txn`. Every claim
/// the snapshot found fresh must be fresh in the database too: one held
/// there fails the batch (rolled back, nothing acknowledged), never a
/// second acceptance of a pair (P10).
pub(crate) async fn write_back(
    snapshot: Snapshot<'_>,
    txn: &Transaction<'_>,
    stmts: &mut Statements,
) -> Result<(), FleetError> {
    let mut records: Vec<(IdentityKey, Vec<u8>)> = Vec::new();
    let mut molts: Vec<([u8; 32], IdentityKey)> = Vec::new();
    let mut claims: Vec<(Pair, u64, u64)> = Vec::new();
    for w in snapshot.writes {
        match w {
            Write::Record {
                who,
                record,
                molts: m,
            } => {
                match records.iter_mut().find(|(w, _)| *w == who) {
                    Some(r) => r.1 = record,
                    None => records.push((who, record)),
                }
                molts.extend(m.into_iter().map(|id| (id, who)));
            }
            Write::Claim {
                pair,
                retain_until,
                now,
            } => claims.push((pair, retain_until, now)),
        }
    }
    let records: Vec<(&[u8], &[u8])> = records
        .iter()
        .map(|(w, r)| (w.as_slice(), r.as_slice()))
        .collect();
    put_pairs(txn, stmts, SAVE_RECORDS, &records).await?;
    molts.sort_unstable();
    molts.dedup_by_key(|(id, _)| *id);
    let molts: Vec<(&[u8], &[u8])> = molts
        .iter()
        .map(|(id, w)| (id.as_slice(), w.as_slice()))
        .collect();
    put_pairs(txn, stmts, SAVE_MOLTS, &molts).await?;
    let mut nows: Vec<u64> = claims.iter().map(|c| c.2).collect();
    nows.sort_unstable();
    nows.dedup();
    for now in nows {
        let at: Vec<&(Pair, u64, u64)> = claims.iter().filter(|c| c.2 == now).collect();
        let claim = stmts
            .get(txn, CLAIM)
            .await
            .map_err(FleetError::db("claim"))?;
        let signers: Vec<&[u8]> = at.iter().map(|c| c.0.0.as_slice()).collect();
        let nonces: Vec<&[u8]> = at.iter().map(|c| c.0.1.as_slice()).collect();
        let until: Vec<i64> = at.iter().map(|c| big(c.1)).collect();
        let fresh = txn
            .query(&claim, &[&signers, &nonces, &until, &big(now)])
            .await
            .map_err(FleetError::db("claim"))?;
        if fresh.len() != at.len() {
            return Err(FleetError::Corrupted(
                "a claim the batch found fresh is held in the database".into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    // Tests unwrap: a failure is the assertion.
    #![allow(clippy::unwrap_used)]

    use super::*;

    const S: [u8; 32] = [1; 32];
    const N: [u8; 16] = [2; 16];
    const WHO: IdentityKey = [3; 10];

    fn fetched(retain_until: Option<u64>) -> Fetched {
        let mut f = Fetched::default();
        f.claims.insert((S, N), retain_until);
        f.records.insert(WHO, Some(b"record".to_vec()));
        f
    }

    #[test]
    fn a_claim_is_decided_as_the_database_decides_it() {
        // Held until 100: replayed at 100, fresh at 101 (the entry past
        // its retention is replaced), then held by this batch's claim.
        let f = fetched(Some(100));
        let mut s = Snapshot::writing(&f, "db");
        assert_eq!(s.claim(&S, &N, 500, 100).unwrap(), Claim::Replayed);
        assert!(s.contains(&S, &N, 100).unwrap());
        assert!(!s.contains(&S, &N, 101).unwrap());
        assert_eq!(s.claim(&S, &N, 500, 101).unwrap(), Claim::Fresh);
        assert_eq!(s.claim(&S, &N, 600, 102).unwrap(), Claim::Replayed);
        assert_eq!(s.writes.len(), 1);
        // Absent: fresh.
        let f = fetched(None);
        let mut s = Snapshot::writing(&f, "db");
        assert!(!s.contains(&S, &N, 1).unwrap());
        assert_eq!(s.claim(&S, &N, 500, 1).unwrap(), Claim::Fresh);
    }

    #[test]
    fn a_read_not_fetched_is_a_miss_and_undo_forgets_the_try() {
        let f = fetched(None);
        let mut s = Snapshot::writing(&f, "db");
        let mark = s.mark();
        s.save_record(&WHO, b"new", &[[9; 32]]).unwrap();
        assert_eq!(s.record(&WHO).unwrap(), Some(b"new".to_vec()));
        assert!(s.record(&[4; 10]).is_err());
        assert!(s.claim(&[5; 32], &N, 500, 1).is_err());
        assert!(s.missed_since(mark));
        s.undo(mark);
        assert_eq!(s.record(&WHO).unwrap(), Some(b"record".to_vec()));
        let missing = s.take_missing();
        assert_eq!(missing.records.into_iter().collect::<Vec<_>>(), [[4; 10]]);
        assert_eq!(
            missing.claims.into_iter().collect::<Vec<_>>(),
            [([5; 32], N)]
        );
        assert!(s.writes.is_empty());
    }

    #[test]
    fn the_precheck_only_reads() {
        let f = fetched(None);
        let mut s = Snapshot::reading(&f, "db");
        assert_eq!(s.record(&WHO).unwrap(), Some(b"record".to_vec()));
        assert!(s.save_record(&WHO, b"x", &[]).is_err());
        assert!(s.claim(&S, &N, 500, 1).is_err());
        assert!(s.writes.is_empty());
    }
}
