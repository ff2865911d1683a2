//! Bounded answers (CONDUIT.md revision 3, *Bounded answers*): a trace or
//! inbox answer holds at most `--max-page` bytes and at most
//! [`MAX_ENVELOPES`] envelopes; `Herald-Cursor` and `?after=` page through
//! the rest.
//!
//! An answer is planned first, from the store's indexes and the stored
//! lengths only ([`Planner`]): which envelopes, and so the cursor, which
//! goes in a header before any of the body. The body is then streamed
//! ([`body`]): a task reads the planned envelopes a chunk of about
//! [`CHUNK`] bytes at a time and hands each to the connection through a
//! channel of `CHUNKS_AHEAD` chunks, so an answer never sits whole in
//! memory and a slow reader holds at most a few chunks.
//!
//! Positions: an inbox's are its own (dense per recipient, from 1). A
//! trace's are the conduit's arrival numbers plus one (on a notary, the
//! tree size that first covers the envelope's leaf): increasing in arrival
//! order but not dense within one trace; `?after=N` answers the envelopes
//! of the trace whose position is greater than `N`.

use axum::body::{Body, Bytes};
use std::future::Future;
use tokio::sync::mpsc;

/// At most this many envelopes in one answer (CONDUIT.md).
pub const MAX_ENVELOPES: usize = 1000;
/// The default `--max-page`: 8 MiB (CONDUIT.md).
pub const DEFAULT_MAX_PAGE: usize = 8 << 20;
/// About this many bytes are read from the store at a time.
pub const CHUNK: usize = 256 << 10;
/// Chunks read ahead of the connection at most.
const CHUNKS_AHEAD: usize = 2;

/// One envelope of a planned answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its position (the cursor after it).
    pub position: u64,
    /// Its id.
    pub id: [u8; 32],
    /// Its length as forwarded, bytes.
    pub len: usize,
}

/// The envelopes of one answer, in order, and its cursor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// What the answer holds.
    pub entries: Vec<Entry>,
    /// `Herald-Cursor`: the position of the last entry, or the `after` of
    /// the request when there is none.
    pub cursor: u64,
}

/// Builds a [`Page`] from the candidates in order, within the limits.
#[derive(Debug)]
pub struct Planner {
    max_bytes: usize,
    bytes: usize,
    page: Page,
}

impl Planner {
    /// A page after position `after`, of at most `max_bytes` bytes.
    pub fn new(after: u64, max_bytes: usize) -> Self {
        Self {
            max_bytes,
            bytes: 0,
            page: Page {
                entries: Vec::new(),
                cursor: after,
            },
        }
    }

    /// Whether the page can take no more entries of any size.
    pub fn full(&self) -> bool {
        self.page.entries.len() >= MAX_ENVELOPES || self.bytes >= self.max_bytes
    }

    /// Take `entry` if it fits; `false` when it does not, and the page is
    /// done. The first entry is taken whatever its size, so that a reader
    /// always gets on (an envelope is at most `--max-body` and a receipt).
    pub fn offer(&mut self, entry: Entry) -> bool {
        let bytes = self.bytes.saturating_add(entry.len);
        let first = self.page.entries.is_empty();
        if self.page.entries.len() >= MAX_ENVELOPES || (!first && bytes > self.max_bytes) {
            return false;
        }
        self.bytes = bytes;
        self.page.cursor = entry.position;
        self.page.entries.push(entry);
        true
    }

    /// The page.
    pub fn finish(self) -> Page {
        self.page
    }
}

/// The ids of `entries` in chunks of about [`CHUNK`] bytes (at least one
/// entry each).
fn chunks(entries: &[Entry]) -> Vec<Vec<[u8; 32]>> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    let mut bytes = 0usize;
    for e in entries {
        if !current.is_empty() && bytes.saturating_add(e.len) > CHUNK {
            out.push(std::mem::take(&mut current));
            bytes = 0;
        }
        bytes = bytes.saturating_add(e.len);
        current.push(e.id);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The body of an answer holding `entries`: `fetch` reads a chunk's
/// envelopes (their forwarded bytes, concatenated in order; an envelope
/// gone meanwhile is left out). A failed read ends the body early, so the
/// client sees a broken answer rather than a short one passed off as
/// whole; it is logged.
pub fn body<F, Fut, E>(entries: &[Entry], mut fetch: F) -> Body
where
    F: FnMut(Vec<[u8; 32]>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Vec<u8>, E>> + Send,
    E: std::fmt::Display,
{
    let chunks = chunks(entries);
    if chunks.is_empty() {
        return Body::empty();
    }
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(CHUNKS_AHEAD);
    tokio::spawn(async move {
        for ids in chunks {
            let next = match fetch(ids).await {
                Ok(bytes) => Ok(Bytes::from(bytes)),
                Err(e) => {
                    tracing::error!(error = %e, "reading an answer from the store");
                    Err(std::io::Error::other("the store could not be read"))
                }
            };
            let failed = next.is_err();
            // The client left: stop reading.
            if tx.send(next).await.is_err() || failed {
                return;
            }
        }
    });
    Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(position: u64, len: usize) -> Entry {
        Entry {
            position,
            id: [u8::try_from(position % 256).unwrap_or(0); 32],
            len,
        }
    }

    #[test]
    fn a_page_stops_at_its_byte_limit_but_takes_one_envelope_at_least() {
        let mut p = Planner::new(7, 100);
        assert!(p.offer(entry(8, 150)));
        assert!(!p.offer(entry(9, 1)));
        assert_eq!(p.finish().cursor, 8);
        let mut p = Planner::new(0, 100);
        assert!(p.offer(entry(1, 60)));
        assert!(p.offer(entry(2, 40)));
        assert!(p.full());
        assert!(!p.offer(entry(3, 1)));
        let page = p.finish();
        assert_eq!((page.entries.len(), page.cursor), (2, 2));
        assert_eq!(Planner::new(5, 10).finish().cursor, 5);
    }

    #[test]
    fn a_page_holds_at_most_max_envelopes() {
        let mut p = Planner::new(0, usize::MAX);
        let taken = (1..=u64::try_from(MAX_ENVELOPES).unwrap_or(0) + 5)
            .take_while(|i| p.offer(entry(*i, 1)))
            .count();
        assert_eq!(taken, MAX_ENVELOPES);
    }

    #[test]
    fn chunks_cover_every_entry_once_in_order() {
        let entries: Vec<Entry> = (1..=20).map(|i| entry(i, 100 << 10)).collect();
        let c = chunks(&entries);
        assert!(c.iter().all(|c| !c.is_empty() && c.len() <= 2));
        let flat: Vec<[u8; 32]> = c.into_iter().flatten().collect();
        let want: Vec<[u8; 32]> = entries.iter().map(|e| e.id).collect();
        assert_eq!(flat, want);
        assert_eq!(chunks(&[entry(1, CHUNK * 3)]).len(), 1);
    }
}
