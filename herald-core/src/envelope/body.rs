//! `body(E, k)` as slices of the received bytes (PROFILE.md P4): nothing is
//! re-encoded, since the strict decoder guarantees the bytes are canonical.

use core::ops::Range;

use sha2::{Digest, Sha256};

use crate::cbor::{major, write_head};

/// The canonical body `body(E, k)`: the P1 encoding of E without `id` (and
/// without `trace` for a genesis), its `signatures` replaced by the first k
/// signature maps. Held as borrowed slices of the wire form plus two
/// re-written heads, so hashing and verifying it copies nothing.
#[derive(Clone, Debug)]
pub struct Body<'a> {
    map_head: [u8; 9],
    map_head_len: usize,
    segments: [&'a [u8]; 3],
    sigs_head: [u8; 9],
    sigs_head_len: usize,
    sigs: &'a [u8],
    tail: &'a [u8],
}

impl<'a> Body<'a> {
    /// Build from the wire bytes.
    ///
    /// - `entries`: the top-level map's entries; `entry_count` of them;
    /// - `excluded`: entry spans left out (`id`, and `trace` for a genesis), in order;
    /// - `signatures_value`: the span of the `signatures` array (head included);
    /// - `sig_items`: the span of its first k items; `k` their number.
    pub(crate) fn new(
        bytes: &'a [u8],
        entries: Range<usize>,
        entry_count: usize,
        excluded: [Option<Range<usize>>; 2],
        signatures_value: Range<usize>,
        sig_items: Range<usize>,
        k: usize,
    ) -> Self {
        let mut segments: [&'a [u8]; 3] = [&[]; 3];
        let mut cursor = entries.start;
        let mut kept = entry_count;
        let mut n = 0;
        for span in excluded.into_iter().flatten() {
            if let Some(slot) = segments.get_mut(n) {
                *slot = bytes.get(cursor..span.start).unwrap_or_default();
            }
            cursor = span.end;
            kept -= 1;
            n += 1;
        }
        if let Some(slot) = segments.get_mut(n) {
            *slot = bytes
                .get(cursor..signatures_value.start)
                .unwrap_or_default();
        }
        let mut map_head = [0u8; 9];
        let map_head_len = write_head(&mut map_head, major::MAP, kept as u64).len();
        let mut sigs_head = [0u8; 9];
        let sigs_head_len = write_head(&mut sigs_head, major::ARRAY, k as u64).len();
        Self {
            map_head,
            map_head_len,
            segments,
            sigs_head,
            sigs_head_len,
            sigs: bytes.get(sig_items).unwrap_or_default(),
            tail: bytes
                .get(signatures_value.end..entries.end)
                .unwrap_or_default(),
        }
    }

    /// Feed the body's bytes, in order, to `f`.
    pub fn feed(&self, f: &mut dyn FnMut(&[u8])) {
        f(self.map_head.get(..self.map_head_len).unwrap_or_default());
        for segment in self.segments {
            if !segment.is_empty() {
                f(segment);
            }
        }
        f(self.sigs_head.get(..self.sigs_head_len).unwrap_or_default());
        if !self.sigs.is_empty() {
            f(self.sigs);
        }
        if !self.tail.is_empty() {
            f(self.tail);
        }
    }

    /// Length of the body in bytes.
    pub fn len(&self) -> usize {
        let mut n = 0;
        self.feed(&mut |b| n += b.len());
        n
    }

    /// Whether the body is empty (never, for a real envelope).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `sha256(body)`: for `k = 0`, the envelope id (P4).
    pub fn sha256(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        self.feed(&mut |b| h.update(b));
        h.finalize().into()
    }

    /// Copy the body out (for tests and debugging).
    #[cfg(feature = "alloc")]
    pub fn to_vec(&self) -> alloc::vec::Vec<u8> {
        let mut v = alloc::vec::Vec::with_capacity(self.len());
        self.feed(&mut |b| v.extend_from_slice(b));
        v
    }
}
