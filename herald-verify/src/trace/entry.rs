//! An audit's items (step 1's output) and the small facts about their
//! bytes the steps use before or without decoding them.

use alloc::{string::String, vec::Vec};

use herald_core::ReasonCode;

use crate::report::{EnvelopeReport, ReportReason, Source, hex};

/// One item to check: its bytes, inside its input's (borrowed, not
/// copied per item; its input and offset follow from the slices when a
/// report is formed, [`crate::compact`]: docs/fuzzing.md F2,
/// docs/performance.md *Memory under hostile input* B7).
pub(super) struct Entry<'a> {
    pub(super) bytes: &'a [u8],
}

/// The report of an item that is not an envelope: `malformed`, with why.
pub(super) fn unparsed(source: Source, detail: String) -> EnvelopeReport {
    let mut r = EnvelopeReport {
        id: None,
        from: None,
        reasons: Vec::new(),
        key_source: None,
        source,
        trace: None,
        parent: None,
        ..EnvelopeReport::default()
    };
    r.push(ReportReason::new(ReasonCode::Malformed, detail));
    r
}

/// Move up, by the `dropped` entries not listed so far, every unsplittable
/// piece (`pieces[placed..]`, positions ascending) whose place comes after
/// exactly `entries` entries: a piece's entries before it are its position
/// less the pieces before it. `placed` advances past the pieces moved.
pub(super) fn place_pieces(
    pieces: &mut [(usize, EnvelopeReport)],
    placed: &mut usize,
    entries: usize,
    dropped: usize,
) {
    while let Some((position, _)) = pieces.get_mut(*placed) {
        if *position - *placed != entries {
            break;
        }
        *position -= dropped;
        *placed += 1;
    }
}

/// `reports` with each `(position, report)` of `extra` (positions
/// ascending, each the report's final index) put in its place, the others
/// keeping their order; without a second vector.
pub(super) fn merge_at_positions<T: Default>(
    mut reports: Vec<T>,
    extra: Vec<(usize, T)>,
) -> Vec<T> {
    if extra.is_empty() {
        return reports;
    }
    let mut src = reports.len();
    let mut dst = src + extra.len();
    reports.resize_with(dst, T::default);
    // From the back: reports that come after `position` move up past the
    // extras still to place (slots above `src` hold nothing of value).
    for (position, r) in extra.into_iter().rev() {
        let position = position.min(dst - 1);
        while dst > position + 1 && src > 0 {
            dst -= 1;
            src -= 1;
            reports.swap(src, dst);
        }
        dst -= 1;
        if let Some(slot) = reports.get_mut(dst) {
            *slot = r;
        }
    }
    reports
}

/// Whether `bytes` may decode as an envelope: it must start with the head
/// of a definite map of at least nine entries (P3's required fields; P1
/// forbids indefinite lengths). One byte, so the audit can size its
/// per-envelope vectors for what it will list before checking anything;
/// only a capacity hint (were it wrong, the vectors would grow).
pub(super) fn may_be_envelope(bytes: &[u8]) -> bool {
    bytes.first().is_some_and(|&b| (0xa9..=0xbb).contains(&b))
}

/// `"kind"` as P1 writes a map key (text head and key), then the values
/// `"birth"` and `"molt"` (text head and value).
const KIND: &[u8] = b"\x64kind";
const BIRTH: &[u8] = b"\x65birth";
const MOLT: &[u8] = b"\x64molt";

/// Which lifecycle kinds an item may be, from its bytes alone (step 2's
/// filter, before anything is decoded): only an envelope of kind birth
/// gets [`herald_core::KeySource::Birth`] from [`herald_core::check`], and
/// a strictly decoded one holds the canonical entry `kind: "birth"` (P1:
/// shortest heads), so without those bytes no key can be learned from it
/// and step 2 skips it; a molt (P7) likewise holds `kind: "molt"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct MayBe {
    pub(super) birth: bool,
    pub(super) molt: bool,
}

/// Finds [`MayBe`] for each item: one vectorised search for the key
/// `"kind"` over the item's bytes, each occurrence's value then compared.
/// Every byte of every item is searched on one thread before any is
/// checked, so a byte-at-a-time scan here was about 8 % of a whole
/// `herald verify`'s CPU time (docs/performance.md).
pub(super) struct KindScan {
    key: memchr::memmem::Finder<'static>,
}

impl KindScan {
    pub(super) fn new() -> Self {
        Self {
            key: memchr::memmem::Finder::new(KIND),
        }
    }

    /// Whether `bytes` holds `kind: "birth"` or `kind: "molt"` anywhere
    /// (overlapping occurrences of the key included).
    pub(super) fn scan(&self, bytes: &[u8]) -> MayBe {
        let mut found = MayBe::default();
        let mut from = 0;
        while let Some(at) = bytes.get(from..).and_then(|rest| self.key.find(rest)) {
            let value = bytes.get(from + at + KIND.len()..).unwrap_or_default();
            found.birth |= value.starts_with(BIRTH);
            found.molt |= value.starts_with(MOLT);
            from += at + 1;
        }
        found
    }
}

/// The `id` and `from` fields of an item that did not decode as an
/// envelope (an unsupported version, a malformed field), when it is a map
/// holding them: a 32-byte `id` as hex, a `from` that parses as a sigil.
pub(crate) fn named_fields(bytes: &[u8]) -> (Option<String>, Option<String>) {
    let Some(map) = herald_core::cbor::decode(bytes)
        .ok()
        .and_then(|v| v.as_map())
    else {
        return (None, None);
    };
    let id = map
        .get("id")
        .and_then(|v| v.as_bytes())
        .filter(|id| id.len() == 32)
        .map(hex);
    let from = map
        .get("from")
        .and_then(|v| v.as_text())
        .filter(|f| herald_core::Sigil::parse(f).is_ok())
        .map(String::from);
    (id, from)
}

/// The byte range of the `from` field of an item that did not decode as
/// an envelope, when it is a sigil string (as [`named_fields`] names it).
pub(super) fn named_from_span(bytes: &[u8]) -> Option<(u32, u32)> {
    let map = herald_core::cbor::decode(bytes).ok()?;
    let from = map
        .as_map()?
        .get("from")?
        .as_text()
        .filter(|f| herald_core::Sigil::parse(f).is_ok())?;
    let start = (from.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)?;
    let end = start.checked_add(from.len())?;
    Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(n: usize) -> EnvelopeReport {
        EnvelopeReport {
            source: Source {
                input: std::format!("{n}"),
                offset: n,
            },
            ..EnvelopeReport::default()
        }
    }

    /// The in-place merge puts every extra at its position and keeps the
    /// others in order, for every way of placing up to 4 extras among up
    /// to 9 slots.
    #[test]
    fn merge_at_positions_matches_a_plain_merge() {
        for total in 0..10usize {
            // Every subset of positions of size ≤ 4 (bit i: slot i is extra).
            for mask in 0u32..(1 << total) {
                if mask.count_ones() > 4 {
                    continue;
                }
                let want: Vec<String> = (0..total).map(|i| std::format!("{i}")).collect();
                let extra: Vec<(usize, EnvelopeReport)> = (0..total)
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| (i, named(i)))
                    .collect();
                let reports: Vec<EnvelopeReport> = (0..total)
                    .filter(|i| mask & (1 << i) == 0)
                    .map(named)
                    .collect();
                let got: Vec<String> = merge_at_positions(reports, extra)
                    .into_iter()
                    .map(|r| r.source.input)
                    .collect();
                assert_eq!(got, want, "mask {mask:b}");
            }
        }
    }

    /// Whether `bytes` holds `entry` anywhere: the byte-at-a-time search
    /// `KindScan` replaced, as the reference.
    fn holds(bytes: &[u8], entry: &[u8]) -> bool {
        bytes.windows(entry.len()).any(|w| w == entry)
    }

    fn reference(bytes: &[u8]) -> MayBe {
        MayBe {
            birth: holds(bytes, b"\x64kind\x65birth"),
            molt: holds(bytes, b"\x64kind\x64molt"),
        }
    }

    /// The scan finds what the plain search finds, overlapping keys
    /// (`dkind` ends in the `d` a following `dkind` starts with), cut-off
    /// values and the entry at either end included.
    #[test]
    fn kind_scan_matches_a_plain_search() {
        let scan = KindScan::new();
        let cases: [&[u8]; 10] = [
            b"",
            b"\x64kind",
            b"\x64kind\x65birt",
            b"\x64kind\x65birth",
            b"\x64kind\x64molt",
            b"\x64kin\x64kind\x64molt",
            b"\x64kin\x64kind\x64kind\x65birth",
            b"\xa9\x64kind\x64kind\x64molt\x64kind\x65birth\x00",
            b"dkindkind\x65birth",
            b"\x64kind\x65molt\x64kind\x64birth",
        ];
        for bytes in cases {
            assert_eq!(scan.scan(bytes), reference(bytes), "{bytes:?}");
        }
        // Every string over a small alphabet that can spell the entries.
        let alphabet: &[&[u8]] = &[b"\x64", b"kind", b"\x65", b"birth", b"molt", b"\x00"];
        let mut found = MayBe::default();
        for n in 0..=6u32 {
            for mut code in 0..alphabet.len().pow(n) {
                let mut bytes = Vec::new();
                for _ in 0..n {
                    bytes.extend_from_slice(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                let got = scan.scan(&bytes);
                assert_eq!(got, reference(&bytes), "{bytes:?}");
                found.birth |= got.birth;
                found.molt |= got.molt;
            }
        }
        assert!(
            found.birth && found.molt,
            "the alphabet spells both entries"
        );
    }
}
