//! Erasure on the redb store (CONDUIT.md *Retention and erasure*; the rule
//! is [`crate::erase`]'s, the table `conduit_erased` is described in
//! [`super::tables`]): one write transaction per call.

use super::store::Live;
use super::tables::{ANSWERS, ENVELOPES, ERASED, INBOX, TRACES};
use crate::erase::{Erasure, Tombstone};
use crate::stored::RECIPIENT_LEN;
use redb::ReadableTable;

/// Erase each of `erasures` still stored, in one durable write
/// transaction of `live`'s store; the ids erased.
pub(super) fn erase(live: &Live, erasures: &[Erasure]) -> Result<Vec<[u8; 32]>, String> {
    let receiver = live.get().map_err(|e| e.to_string())?;
    let txn = receiver
        .store()
        .begin_write("erase envelopes")
        .map_err(|e| e.to_string())?;
    let done = erase_in(&txn, erasures).map_err(|e| e.to_string())?;
    txn.commit().map_err(|e| format!("store commit: {e}"))?;
    Ok(done)
}

/// A tombstone as `conduit_erased` holds it.
fn encode_tombstone(t: &Tombstone) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + RECIPIENT_LEN + t.bytes.len());
    v.push(u8::from(t.recipient.is_some()));
    v.extend_from_slice(&t.recipient.unwrap_or_default());
    v.extend_from_slice(&t.bytes);
    v
}

pub(super) fn decode_tombstone(v: &[u8]) -> Tombstone {
    let recipient = (v.first() == Some(&1))
        .then(|| v.get(1..=RECIPIENT_LEN)?.try_into().ok())
        .flatten();
    Tombstone {
        bytes: v.get(1 + RECIPIENT_LEN..).unwrap_or_default().to_vec(),
        recipient,
    }
}

/// Erase each of `erasures` still stored, in `txn` (`crate::erase`):
/// its bytes, inbox entry, trace entry and recorded answer go, its
/// tombstone is written. The ids erased.
fn erase_in(
    txn: &redb::WriteTransaction,
    erasures: &[Erasure],
) -> Result<Vec<[u8; 32]>, redb::Error> {
    let mut envelopes = txn.open_table(ENVELOPES)?;
    let mut traces = txn.open_table(TRACES)?;
    let mut inbox = txn.open_table(INBOX)?;
    let mut answers = txn.open_table(ANSWERS)?;
    let mut erased = txn.open_table(ERASED)?;
    let mut done = Vec::with_capacity(erasures.len());
    for e in erasures {
        if envelopes.remove(e.id.as_slice())?.is_none() {
            continue;
        }
        let mut key = Vec::with_capacity(40);
        key.extend_from_slice(&e.trace);
        key.extend_from_slice(&e.arrival.to_be_bytes());
        traces.remove(key.as_slice())?;
        if let Some(r) = e.tombstone.recipient
            && let Some(k) = inbox_key_of(&inbox, &r, &e.id)?
        {
            inbox.remove(k.as_slice())?;
        }
        answers.remove(e.id.as_slice())?;
        erased.insert(e.id.as_slice(), encode_tombstone(&e.tombstone).as_slice())?;
        done.push(e.id);
    }
    Ok(done)
}

/// The key of `id` in `recipient`'s inbox: looked for from both ends at
/// once (retention erases the oldest, a DELETE mostly the newest).
fn inbox_key_of(
    inbox: &redb::Table<'_, &'static [u8], &'static [u8]>,
    recipient: &[u8; RECIPIENT_LEN],
    id: &[u8; 32],
) -> Result<Option<Vec<u8>>, redb::Error> {
    let bound = |n: u64| {
        let mut k = recipient.to_vec();
        k.extend_from_slice(&n.to_be_bytes());
        k
    };
    let (lo, hi) = (bound(0), bound(u64::MAX));
    let mut range = inbox.range(lo.as_slice()..=hi.as_slice())?;
    loop {
        let front = range.next().transpose()?;
        let back = range.next_back().transpose()?;
        if front.is_none() && back.is_none() {
            return Ok(None);
        }
        for (k, v) in front.into_iter().chain(back) {
            if v.value() == id.as_slice() {
                return Ok(Some(k.value().to_vec()));
            }
        }
    }
}
