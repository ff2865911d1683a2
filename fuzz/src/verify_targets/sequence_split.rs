//! The `sequence_split` target: cutting CBOR sequences into items.

use super::*;

/// `sequence_split`: [`split`] at two settings (the audit's 1 MiB / depth
/// 512, and a tight 64 bytes / depth 4). The pieces tile the input in
/// order, at most one `Unsplittable` and only last, items within the size
/// limit; and wherever the strict decoder (P1, same limits) reads an item,
/// the splitter cuts exactly that item (strict acceptance implies
/// well-formedness).
pub fn sequence_split(data: &[u8]) {
    for (max_item, max_depth) in [(1usize << 20, 512usize), (64, 4)] {
        let pieces = split_sequence(data, max_item, max_depth);
        assert!(!pieces.is_empty());
        let strict_limits = Limits {
            max_depth,
            max_items: Limits::DEFAULT.max_items,
            max_size: max_item,
        };
        let mut pos = 0;
        for (i, piece) in pieces.iter().enumerate() {
            let here = data.get(pos..).unwrap_or(&[]);
            let strict = cbor::decode_prefix(here, &strict_limits).ok();
            match *piece {
                Piece::Item { offset, bytes } => {
                    assert_eq!(offset, pos, "pieces tile the input");
                    assert!(!bytes.is_empty() && bytes.len() <= max_item);
                    assert_eq!(data.get(pos..pos + bytes.len()), Some(bytes));
                    if let Some((_, end)) = strict {
                        assert_eq!(bytes.len(), end, "split cuts the item strict reads");
                    }
                    pos += bytes.len();
                }
                Piece::Unsplittable { offset, error } => {
                    assert_eq!(offset, pos);
                    assert_eq!(i + 1, pieces.len(), "Unsplittable comes last");
                    assert_eq!(error == SplitError::Empty, data.is_empty());
                    assert!(strict.is_none(), "strict read an item split refused");
                    let _ = error.to_string();
                }
            }
        }
        if matches!(pieces.last(), Some(Piece::Item { .. })) {
            assert_eq!(pos, data.len(), "items cover the whole input");
        }
        // read_sequence stops where split stops being used: what it read
        // is a prefix of the input and splits into the same first pieces.
        for max_items in [usize::MAX, 2] {
            let limits = ReadLimits {
                max_item,
                max_depth,
                max_items,
                max_bytes: u64::MAX,
            };
            let step = 1 + usize::from(data.first().copied().unwrap_or(0) % 16) * 97;
            let mut reader = Trickle {
                data,
                step,
                given: 0,
            };
            let got = read_sequence(&mut reader, &limits);
            assert!(
                got.is_ok(),
                "reading a slice with no byte limit fails only on I/O"
            );
            let got = got.unwrap_or_default();
            assert!(data.starts_with(&got), "read returns a prefix");
            assert_eq!(got.len(), reader.given, "read keeps what it read");
            let n = max_items.saturating_add(1);
            let from_read: Vec<Piece<'_>> = split_sequence(&got, max_item, max_depth)
                .into_iter()
                .take(n)
                .collect();
            let from_all: Vec<Piece<'_>> = pieces.iter().copied().take(n).collect();
            assert_eq!(from_read, from_all, "the pieces an audit uses are all read");
        }
    }
}

/// A reader handing out `step` bytes per call, like a pipe.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
    given: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = self.data.get(self.given..).unwrap_or(&[]);
        let n = self.step.min(buf.len()).min(rest.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.given += n;
        Ok(n)
    }
}

// ---- log_file ---------------------------------------------------------------
