//! `duplicate_signer` (spec §3.4: the same signer never appears twice) in
//! bounded memory and near-linear time.
//!
//! Comparing signature k with every earlier one by re-parsing each earlier
//! signature map costs n²/2 parses: seconds for the ~7 000 signature maps a
//! 1 MiB envelope can hold (docs/fuzzing.md, finding F1). Here the signers
//! of a window of [`WINDOW`] consecutive signatures are parsed once into a
//! table on the stack; every signature before the window is then parsed
//! once and compared with the whole table. That is n²/(2·WINDOW) parses and
//! n²/2 comparisons of at most 24 hash bytes, with no allocator. Envelopes
//! of up to `WINDOW` signatures (all real ones) parse each signer once.

use crate::cbor::ArrayRef;
use crate::envelope::RawSignature;
use crate::sigil::Sigil;

/// Signatures per window: the stack table holds this many parsed sigils
/// (about 27 bytes each).
pub(super) const WINDOW: usize = 32;

/// Answers, for signatures visited in increasing index order, whether an
/// earlier signature map parses and names the same key (P2: whatever the
/// sigil form), a reserved sigil never counting as a key.
pub(super) struct DuplicateSigners<'a> {
    signatures: ArrayRef<'a>,
    /// Index of the window's first signature.
    start: usize,
    /// Signatures in the window (fewer than `WINDOW` only at the end).
    len: usize,
    /// `duplicate[i]`: signature `start + i` names a key named before it.
    duplicate: [bool; WINDOW],
}

impl<'a> DuplicateSigners<'a> {
    pub(super) fn new(signatures: ArrayRef<'a>) -> Self {
        Self {
            signatures,
            start: 0,
            len: 0,
            duplicate: [false; WINDOW],
        }
    }

    /// Whether signature `k` (whose map parsed) names a key that an earlier
    /// signature map named. Calls must come with non-decreasing `k`.
    pub(super) fn is_duplicate(&mut self, k: usize) -> bool {
        // Nothing comes before the first: an envelope of one signature
        // (most) has its map parsed once, by the check.
        if k == 0 {
            return false;
        }
        if k < self.start || k >= self.start + self.len {
            self.load(k);
        }
        k.checked_sub(self.start)
            .and_then(|i| self.duplicate.get(i))
            .copied()
            .unwrap_or(false)
    }

    /// Make the window start at `start` and work out its duplicates.
    fn load(&mut self, start: usize) {
        let mut window: [Option<Sigil>; WINDOW] = [None; WINDOW];
        let mut len = 0;
        for (slot, value) in window.iter_mut().zip(self.signatures.iter().skip(start)) {
            *slot = RawSignature::parse(value).ok().map(|s| s.signer);
            len += 1;
        }
        self.start = start;
        self.len = len;
        self.duplicate = [false; WINDOW];

        // Earlier signers inside the window.
        for i in 1..len {
            let Some(Some(signer)) = window.get(i) else {
                continue;
            };
            let seen = window
                .get(..i)
                .unwrap_or_default()
                .iter()
                .flatten()
                .any(|earlier| names_same_key(earlier, signer));
            if let Some(d) = self.duplicate.get_mut(i) {
                *d = seen;
            }
        }
        // Every signer before the window, parsed once for the whole window.
        for value in self.signatures.iter().take(start) {
            let Ok(earlier) = RawSignature::parse(value) else {
                continue;
            };
            for (d, signer) in self.duplicate.iter_mut().zip(&window) {
                if let Some(signer) = signer {
                    *d = *d || names_same_key(&earlier.signer, signer);
                }
            }
        }
    }
}

/// `earlier` and `later` name the same key; a reserved sigil names none.
fn names_same_key(earlier: &Sigil, later: &Sigil) -> bool {
    !earlier.is_reserved() && earlier.same_key_as(later)
}
