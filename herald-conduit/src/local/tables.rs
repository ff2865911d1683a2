//! The conduit's own tables, in the replay cache's redb database so that an
//! accepted envelope's claim, its stored bytes, its inbox entry and its
//! place in its trace commit in one transaction (CONDUIT.md: a 201 means
//! all of them are on disk).
//!
//! - `conduit_envelopes`: id → arrival number (8 bytes, big-endian) ‖ the
//!   envelope as forwarded. Arrival numbers start at 0, are dense, and are
//!   the envelope's leaf index in the audit log (notary).
//! - `conduit_arrivals`: arrival number → id.
//! - `conduit_inbox`: recipient ‖ position → id; `conduit_inbox_len`:
//!   recipient → its last position. The recipient is the first 10 bytes of
//!   the `to` sigil's key hash, common to its three forms (P2); positions
//!   start at 1 and are dense per recipient.
//! - `conduit_traces`: trace ‖ arrival number → id.
//! - `conduit_heads` (notary): tree size → the signed tree head (its wire
//!   form) that the 201 bodies of the envelopes logged up to that size
//!   were answered with: the first head covering an arrival rebuilds its
//!   first answer byte for byte, so a repeat gets the same body (spec
//!   §11.3) for one record per batch, not one per envelope.
//! - `conduit_answers`: id → the 201 body first sent, as conduits before
//!   `conduit_heads` recorded them; read, never written.
//! - `conduit_probe`: empty but while a repair proves that a post fits
//!   (`store`).
//! - `conduit_lifecycle`: identity ‖ arrival number → kind (1 byte,
//!   [`Lifecycle`]) ‖ id, for every accepted birth, molt and deprecation
//!   (`GET /v1/keys/{sigil}`, [`crate::keys`]); the identity is the
//!   sender's 10 key-hash bytes, as for inboxes.
//! - `conduit_erased`: id → the tombstone of an erased envelope
//!   (CONDUIT.md *Retention and erasure*, [`crate::erase`]): 1 byte (1:
//!   a recipient follows, 0: none) ‖ the recipient's 10 key-hash bytes (or
//!   zeros) ‖ the refusal envelope the conduit signed. Erasing removes the
//!   id's `conduit_envelopes`, `conduit_inbox`, `conduit_traces` and
//!   `conduit_answers` rows and writes this one, in one transaction;
//!   `conduit_arrivals` keeps the id (arrival numbers stay dense, the log's
//!   leaf stays).
//! - `conduit_indexes`: the name of each index built over the envelopes
//!   stored before it existed (`lifecycle`): a store from before the index
//!   is indexed once, at open, in the transaction that records the name.

use crate::erase::Tombstone;

use super::erase::decode_tombstone;
use crate::keys::{Indexed, Lifecycle};
use crate::page::{Entry, Page, Planner};
use crate::stored::{RECIPIENT_LEN, Stored};
use herald_verify::{Store, StoreError};
use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

pub(super) type Table = TableDefinition<'static, &'static [u8], &'static [u8]>;

pub(super) const ENVELOPES: Table = TableDefinition::new("conduit_envelopes");
pub(super) const ARRIVALS: Table = TableDefinition::new("conduit_arrivals");
pub(super) const INBOX: Table = TableDefinition::new("conduit_inbox");
pub(super) const INBOX_LEN: Table = TableDefinition::new("conduit_inbox_len");
pub(super) const TRACES: Table = TableDefinition::new("conduit_traces");
pub(super) const ANSWERS: Table = TableDefinition::new("conduit_answers");
const LIFECYCLE: Table = TableDefinition::new("conduit_lifecycle");
const INDEXES: Table = TableDefinition::new("conduit_indexes");
pub(super) const ERASED: Table = TableDefinition::new("conduit_erased");
const HEADS: TableDefinition<'static, u64, &'static [u8]> = TableDefinition::new("conduit_heads");

fn storage<'a>(store: &'a Store, op: &'static str) -> impl Fn(redb::Error) -> StoreError + 'a {
    move |e| StoreError::storage(store.path(), op, e)
}

fn u64_at(bytes: &[u8]) -> u64 {
    bytes
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_be_bytes)
}

fn decode_stored(v: &[u8]) -> Stored {
    Stored {
        arrival: u64_at(v),
        bytes: v.get(8..).unwrap_or_default().to_vec(),
    }
}

/// Make the tables (at open), so reads never meet a missing one.
pub(crate) fn create_tables(store: &Store) -> Result<(), StoreError> {
    let err = storage(store, "create the conduit tables");
    let txn = store.begin_write("create the conduit tables")?;
    for t in [
        ENVELOPES, ARRIVALS, INBOX, INBOX_LEN, TRACES, ANSWERS, ERASED,
    ] {
        txn.open_table(t).map_err(|e| err(e.into()))?;
    }
    txn.open_table(HEADS).map_err(|e| err(e.into()))?;
    index_lifecycle(&txn).map_err(&err)?;
    txn.commit().map_err(|e| err(e.into()))
}

/// The lifecycle index of a store from before it existed: every stored
/// envelope that is a birth, molt or deprecation, indexed in `txn` with
/// the name `lifecycle` in `conduit_indexes` (once: a crash before the
/// commit leaves neither).
fn index_lifecycle(txn: &redb::WriteTransaction) -> Result<(), redb::Error> {
    const NAME: &[u8] = b"lifecycle";
    let mut indexes = txn.open_table(INDEXES)?;
    let mut lifecycle = txn.open_table(LIFECYCLE)?;
    if indexes.get(NAME)?.is_some() {
        return Ok(());
    }
    let envelopes = txn.open_table(ENVELOPES)?;
    for item in envelopes.iter()? {
        let (_, v) = item?;
        let stored = decode_stored(v.value());
        let Ok(view) = herald_core::EnvelopeRef::decode_with(&stored.bytes, &LARGE) else {
            continue;
        };
        if let Some(entry) = Lifecycle::of(&view) {
            put_lifecycle(&mut lifecycle, entry, stored.arrival, view.id())?;
        }
    }
    indexes.insert(NAME, b"".as_slice())?;
    Ok(())
}

/// Limits to decode a stored envelope by (it was accepted under P1's; a
/// relay's receipt may have grown it a little).
const LARGE: herald_core::cbor::Limits = herald_core::cbor::Limits {
    max_size: usize::MAX,
    ..herald_core::cbor::Limits::DEFAULT
};

fn put_lifecycle(
    table: &mut redb::Table<'_, &'static [u8], &'static [u8]>,
    (who, kind): ([u8; RECIPIENT_LEN], Lifecycle),
    arrival: u64,
    id: &[u8; 32],
) -> Result<(), redb::Error> {
    let mut key = Vec::with_capacity(RECIPIENT_LEN + 8);
    key.extend_from_slice(&who);
    key.extend_from_slice(&arrival.to_be_bytes());
    let mut value = Vec::with_capacity(33);
    value.push(kind as u8);
    value.extend_from_slice(id);
    table.insert(key.as_slice(), value.as_slice())?;
    Ok(())
}

/// The conduit's tables open in one write transaction, for a batch of
/// posts (opened once, not once per post).
pub(crate) struct Tables<'t> {
    envelopes: redb::Table<'t, &'static [u8], &'static [u8]>,
    arrivals: redb::Table<'t, &'static [u8], &'static [u8]>,
    traces: redb::Table<'t, &'static [u8], &'static [u8]>,
    inbox: redb::Table<'t, &'static [u8], &'static [u8]>,
    inbox_len: redb::Table<'t, &'static [u8], &'static [u8]>,
    lifecycle: redb::Table<'t, &'static [u8], &'static [u8]>,
    erased: redb::Table<'t, &'static [u8], &'static [u8]>,
}

impl<'t> Tables<'t> {
    /// Open them in `txn` (close them, by dropping, before it commits).
    pub(crate) fn open(txn: &'t redb::WriteTransaction) -> Result<Self, redb::Error> {
        Ok(Self {
            envelopes: txn.open_table(ENVELOPES)?,
            arrivals: txn.open_table(ARRIVALS)?,
            traces: txn.open_table(TRACES)?,
            inbox: txn.open_table(INBOX)?,
            inbox_len: txn.open_table(INBOX_LEN)?,
            lifecycle: txn.open_table(LIFECYCLE)?,
            erased: txn.open_table(ERASED)?,
        })
    }

    /// The tombstone envelope of `id`, if it was erased.
    pub(crate) fn erased(&self, id: &[u8; 32]) -> Result<Option<Vec<u8>>, redb::Error> {
        Ok(self
            .erased
            .get(id.as_slice())?
            .map(|v| decode_tombstone(v.value()).bytes))
    }

    /// The stored envelope with `id`.
    pub(crate) fn get(&self, id: &[u8; 32]) -> Result<Option<Stored>, redb::Error> {
        Ok(self
            .envelopes
            .get(id.as_slice())?
            .map(|v| decode_stored(v.value())))
    }

    /// Store an accepted envelope (`id`, `trace`, `to`, its lifecycle
    /// index entry) as `forwarded`; returns its arrival number.
    pub(crate) fn put(
        &mut self,
        id: &[u8; 32],
        trace: &[u8; 32],
        to: Option<[u8; RECIPIENT_LEN]>,
        lifecycle: Option<([u8; RECIPIENT_LEN], Lifecycle)>,
        forwarded: &[u8],
    ) -> Result<u64, redb::Error> {
        let arrival = self.arrivals.len()?;
        self.arrivals
            .insert(arrival.to_be_bytes().as_slice(), id.as_slice())?;
        let mut value = Vec::with_capacity(8 + forwarded.len());
        value.extend_from_slice(&arrival.to_be_bytes());
        value.extend_from_slice(forwarded);
        self.envelopes.insert(id.as_slice(), value.as_slice())?;
        let mut key = Vec::with_capacity(40);
        key.extend_from_slice(trace);
        key.extend_from_slice(&arrival.to_be_bytes());
        self.traces.insert(key.as_slice(), id.as_slice())?;
        if let Some(r) = to {
            let pos = self
                .inbox_len
                .get(r.as_slice())?
                .map_or(0, |v| u64_at(v.value()))
                + 1;
            self.inbox_len
                .insert(r.as_slice(), pos.to_be_bytes().as_slice())?;
            let mut key = Vec::with_capacity(RECIPIENT_LEN + 8);
            key.extend_from_slice(&r);
            key.extend_from_slice(&pos.to_be_bytes());
            self.inbox.insert(key.as_slice(), id.as_slice())?;
        }
        if let Some(entry) = lifecycle {
            put_lifecycle(&mut self.lifecycle, entry, arrival, id)?;
        }
        Ok(arrival)
    }
}

/// Record the tree heads (`size`, wire form) that 201 bodies were answered
/// with, in `txn`; a size recorded before keeps its first head.
pub(crate) fn put_heads_in(
    txn: &redb::WriteTransaction,
    heads: &[(u64, &[u8])],
) -> Result<(), redb::Error> {
    let mut t = txn.open_table(HEADS)?;
    for (size, head) in heads {
        if t.get(size)?.is_none() {
            t.insert(size, *head)?;
        }
    }
    Ok(())
}

/// [`put_heads_in`] in a transaction of its own, without an fsync: they
/// become durable with the next batch; if a crash loses one, a repeat's
/// answer is rebuilt against the latest head instead.
pub(crate) fn put_heads(store: &Store, heads: &[(u64, &[u8])]) -> Result<(), StoreError> {
    let err = storage(store, "record tree heads");
    let mut txn = store.begin_write("record tree heads")?;
    txn.set_durability(redb::Durability::None)
        .map_err(|e| err(e.into()))?;
    put_heads_in(&txn, heads).map_err(&err)?;
    txn.commit().map_err(|e| err(e.into()))
}

/// A read view of the tables.
pub(crate) struct Reader<'s> {
    store: &'s Store,
    txn: redb::ReadTransaction,
}

impl<'s> Reader<'s> {
    /// A consistent snapshot of the latest commit.
    pub(crate) fn new(store: &'s Store) -> Result<Self, StoreError> {
        let txn = store
            .database()
            .begin_read()
            .map_err(|e| storage(store, "read")(e.into()))?;
        Ok(Self { store, txn })
    }

    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let err = storage(self.store, "read");
        let t = self.txn.open_table(table).map_err(|e| err(e.into()))?;
        Ok(t.get(key)
            .map_err(|e| err(e.into()))?
            .map(|v| v.value().to_vec()))
    }

    /// The tombstone of `id`, if it was erased.
    pub(crate) fn tombstone(&self, id: &[u8; 32]) -> Result<Option<Tombstone>, StoreError> {
        Ok(self
            .get(ERASED, id.as_slice())?
            .map(|v| decode_tombstone(&v)))
    }

    /// Up to `limit` stored envelopes of arrival `from` or later, oldest
    /// first, looking at no more than `8 × limit` arrivals (the erased are
    /// skipped); and the arrival after the last one looked at.
    pub(crate) fn oldest(&self, from: u64, limit: usize) -> Result<(Vec<Stored>, u64), StoreError> {
        let err = storage(self.store, "read");
        let arrivals = self.txn.open_table(ARRIVALS).map_err(|e| err(e.into()))?;
        let envelopes = self.txn.open_table(ENVELOPES).map_err(|e| err(e.into()))?;
        let start = from.to_be_bytes();
        let mut out = Vec::new();
        let mut next = from;
        let range = arrivals
            .range(start.as_slice()..)
            .map_err(|e| err(e.into()))?;
        for item in range.take(limit.saturating_mul(8)) {
            if out.len() >= limit {
                break;
            }
            let (k, id) = item.map_err(|e| err(e.into()))?;
            next = u64_at(k.value()).saturating_add(1);
            if let Some(v) = envelopes.get(id.value()).map_err(|e| err(e.into()))? {
                out.push(decode_stored(v.value()));
            }
        }
        Ok((out, next))
    }

    /// The envelope with `id`.
    pub(crate) fn envelope(&self, id: &[u8; 32]) -> Result<Option<Stored>, StoreError> {
        Ok(self
            .get(ENVELOPES, id.as_slice())?
            .map(|v| decode_stored(&v)))
    }

    /// The 201 body first sent for `id`, if a conduit before
    /// `conduit_heads` recorded it.
    pub(crate) fn answer(&self, id: &[u8; 32]) -> Result<Option<Vec<u8>>, StoreError> {
        self.get(ANSWERS, id.as_slice())
    }

    /// The first recorded tree head covering `arrival` (size > `arrival`):
    /// its size and wire form.
    pub(crate) fn head_covering(&self, arrival: u64) -> Result<Option<(u64, Vec<u8>)>, StoreError> {
        let err = storage(self.store, "read");
        let t = self.txn.open_table(HEADS).map_err(|e| err(e.into()))?;
        let mut range = t
            .range(arrival.saturating_add(1)..)
            .map_err(|e| err(e.into()))?;
        match range.next() {
            Some(item) => {
                let (k, v) = item.map_err(|e| err(e.into()))?;
                Ok(Some((k.value(), v.value().to_vec())))
            }
            None => Ok(None),
        }
    }

    /// How many envelopes arrived.
    pub(crate) fn arrivals(&self) -> Result<u64, StoreError> {
        let err = storage(self.store, "read");
        let t = self.txn.open_table(ARRIVALS).map_err(|e| err(e.into()))?;
        t.len().map_err(|e| err(e.into()))
    }

    /// The envelope that arrived `arrival`-th.
    pub(crate) fn arrival(&self, arrival: u64) -> Result<Option<Stored>, StoreError> {
        match self.get(ARRIVALS, arrival.to_be_bytes().as_slice())? {
            Some(id) => match <[u8; 32]>::try_from(id.as_slice()) {
                Ok(id) => self.envelope(&id),
                Err(_) => Ok(None),
            },
            None => Ok(None),
        }
    }

    /// Plan an answer from the index `table` (key `prefix` ‖ big-endian
    /// number → id), from the key numbered `start`: each entry's position
    /// is `position(number)` and its length the stored envelope's, read
    /// without copying it (CONDUIT.md *Bounded answers*).
    fn plan(
        &self,
        table: Table,
        prefix: &[u8],
        start: u64,
        position: impl Fn(u64) -> u64,
        mut planner: Planner,
    ) -> Result<Page, StoreError> {
        let err = storage(self.store, "read");
        let t = self.txn.open_table(table).map_err(|e| err(e.into()))?;
        let envelopes = self.txn.open_table(ENVELOPES).map_err(|e| err(e.into()))?;
        let mut from = prefix.to_vec();
        from.extend_from_slice(&start.to_be_bytes());
        for item in t.range(from.as_slice()..).map_err(|e| err(e.into()))? {
            if planner.full() {
                break;
            }
            let (k, v) = item.map_err(|e| err(e.into()))?;
            let key = k.value();
            if !key.starts_with(prefix) {
                break;
            }
            let Ok(id) = <[u8; 32]>::try_from(v.value()) else {
                continue;
            };
            let Some(stored) = envelopes.get(id.as_slice()).map_err(|e| err(e.into()))? else {
                continue;
            };
            let entry = Entry {
                position: position(u64_at(key.get(prefix.len()..).unwrap_or_default())),
                id,
                len: stored.value().len().saturating_sub(8),
            };
            if !planner.offer(entry) {
                break;
            }
        }
        Ok(planner.finish())
    }

    /// The page of `recipient`'s inbox after position `after` (positions
    /// from 1, dense per recipient), of at most `max_bytes` bytes.
    pub(crate) fn inbox_page(
        &self,
        recipient: &[u8; RECIPIENT_LEN],
        after: u64,
        max_bytes: usize,
    ) -> Result<Page, StoreError> {
        let planner = Planner::new(after, max_bytes);
        self.plan(INBOX, recipient, after.saturating_add(1), |p| p, planner)
    }

    /// The page of `trace` after position `after`, in arrival order: a
    /// trace's positions are arrival numbers plus one ([`crate::page`]).
    pub(crate) fn trace_page(
        &self,
        trace: &[u8; 32],
        after: u64,
        max_bytes: usize,
    ) -> Result<Page, StoreError> {
        let planner = Planner::new(after, max_bytes);
        self.plan(TRACES, trace, after, |a| a.saturating_add(1), planner)
    }

    /// The lifecycle index of `who`: its first [`crate::keys::MAX_ROWS`]
    /// rows whose envelope is stored, in arrival order.
    pub(crate) fn lifecycle(&self, who: &[u8; RECIPIENT_LEN]) -> Result<Vec<Indexed>, StoreError> {
        let err = storage(self.store, "read");
        let t = self.txn.open_table(LIFECYCLE).map_err(|e| err(e.into()))?;
        let envelopes = self.txn.open_table(ENVELOPES).map_err(|e| err(e.into()))?;
        let mut out = Vec::new();
        for item in t.range(who.as_slice()..).map_err(|e| err(e.into()))? {
            let (k, v) = item.map_err(|e| err(e.into()))?;
            if !k.value().starts_with(who) || out.len() >= crate::keys::MAX_ROWS {
                break;
            }
            let v = v.value();
            let (Some(kind), Ok(id)) = (
                v.first().and_then(|&c| Lifecycle::from_code(i64::from(c))),
                <[u8; 32]>::try_from(v.get(1..).unwrap_or_default()),
            ) else {
                continue;
            };
            if let Some(stored) = envelopes.get(id.as_slice()).map_err(|e| err(e.into()))? {
                out.push(Indexed {
                    id,
                    kind,
                    len: stored.value().len().saturating_sub(8),
                });
            }
        }
        Ok(out)
    }

    /// The envelopes `ids` as forwarded, concatenated in that order (one
    /// chunk of an answer); an id not stored is left out.
    pub(crate) fn concat(&self, ids: &[[u8; 32]]) -> Result<Vec<u8>, StoreError> {
        let err = storage(self.store, "read");
        let t = self.txn.open_table(ENVELOPES).map_err(|e| err(e.into()))?;
        let mut out = Vec::new();
        for id in ids {
            if let Some(v) = t.get(id.as_slice()).map_err(|e| err(e.into()))? {
                out.extend_from_slice(v.value().get(8..).unwrap_or_default());
            }
        }
        Ok(out)
    }
}
