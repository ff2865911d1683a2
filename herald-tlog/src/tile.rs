//! C2SP tlog-tiles resources: hash tiles `tile/<L>/<N>[.p/<W>]`, entry
//! bundles `tile/entries/<N>[.p/<W>]`, and the entry-bundle encoding
//! (big-endian u16 length, then the entry).

use core::fmt;

/// Tile height: each tile spans 8 levels of the tree (tlog-tiles).
pub const TILE_HEIGHT: u32 = 8;

/// Width of a full tile, `2^TILE_HEIGHT` hashes or entries.
pub const FULL_WIDTH: u16 = 256;

/// Highest hash-tile level: level `L` covers tree level `8L`, and a tree of
/// at most `2^64 − 1` leaves has no node at level 64.
pub const MAX_LEVEL: u8 = 7;

/// Hash tile or entry bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TileKind {
    /// A hash tile at this level (tree level `8·L`).
    Hash(u8),
    /// An entry bundle.
    Entries,
}

/// A tile: kind, index `N` within its level, width `W` (1..=256; 256 is a
/// full tile).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TileId {
    kind: TileKind,
    index: u64,
    width: u16,
}

/// A tile path is not in the tlog-tiles form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilePathError {
    /// What is wrong.
    pub rule: &'static str,
}

impl fmt::Display for TilePathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tile path: {}", self.rule)
    }
}

impl std::error::Error for TilePathError {}

impl TileId {
    /// A tile; `None` when the width is not in `1..=256` or the level is
    /// above [`MAX_LEVEL`].
    #[must_use]
    pub fn new(kind: TileKind, index: u64, width: u16) -> Option<Self> {
        let level_ok = !matches!(kind, TileKind::Hash(l) if l > MAX_LEVEL);
        (level_ok && (1..=FULL_WIDTH).contains(&width)).then_some(TileId { kind, index, width })
    }

    /// Hash tile or entry bundle.
    #[must_use]
    pub fn kind(&self) -> TileKind {
        self.kind
    }

    /// The tile's index `N` within its level.
    #[must_use]
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Its width (256 for a full tile).
    #[must_use]
    pub fn width(&self) -> u16 {
        self.width
    }

    /// Whether it is a full tile.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.width == FULL_WIDTH
    }

    /// The tree level of the hashes in a hash tile (`8·L`; 0 for entries).
    #[must_use]
    pub fn tree_level(&self) -> u32 {
        match self.kind {
            TileKind::Hash(l) => u32::from(l) * TILE_HEIGHT,
            TileKind::Entries => 0,
        }
    }

    /// The path, e.g. `tile/0/x001/234.p/7` or `tile/entries/000`.
    #[must_use]
    pub fn path(&self) -> String {
        let level = match self.kind {
            TileKind::Hash(l) => l.to_string(),
            TileKind::Entries => "entries".to_owned(),
        };
        let mut p = format!("tile/{level}/{}", index_path(self.index));
        if !self.is_full() {
            p.push_str(&format!(".p/{}", self.width));
        }
        p
    }

    /// Parse a path as [`TileId::path`] writes it (tlog-tiles: every index
    /// element three digits, all but the last prefixed `x`; a partial width
    /// in 1..=255 without leading zeros).
    pub fn parse(path: &str) -> Result<Self, TilePathError> {
        let bad = |rule| TilePathError { rule };
        let rest = path
            .strip_prefix("tile/")
            .ok_or(bad("does not start with tile/"))?;
        let (level, rest) = rest.split_once('/').ok_or(bad("no level"))?;
        let kind = if level == "entries" {
            TileKind::Entries
        } else {
            let l = crate::checkpoint::parse_decimal(level)
                .and_then(|l| u8::try_from(l).ok())
                .filter(|l| *l <= MAX_LEVEL)
                .ok_or(bad("level is not entries or a decimal 0..=7"))?;
            TileKind::Hash(l)
        };
        let (index_part, width) = match rest.split_once(".p/") {
            Some((i, w)) => {
                let w = crate::checkpoint::parse_decimal(w)
                    .and_then(|w| u16::try_from(w).ok())
                    .filter(|w| (1..FULL_WIDTH).contains(w))
                    .ok_or(bad("partial width is not a decimal 1..=255"))?;
                (i, w)
            }
            None => (rest, FULL_WIDTH),
        };
        let elements: Vec<&str> = index_part.split('/').collect();
        let mut index: u64 = 0;
        let last = elements.len() - 1;
        for (i, e) in elements.iter().enumerate() {
            let digits = if i == last {
                *e
            } else {
                e.strip_prefix('x')
                    .ok_or(bad("inner index element lacks its x"))?
            };
            if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("index element is not three digits"));
            }
            let v: u64 = digits.parse().map_err(|_| bad("index element"))?;
            index = index
                .checked_mul(1000)
                .and_then(|x| x.checked_add(v))
                .ok_or(bad("index overflows u64"))?;
        }
        if elements.len() > 1 && elements.first().is_some_and(|e| *e == "x000") {
            return Err(bad("index has a leading x000 element"));
        }
        TileId::new(kind, index, width).ok_or(bad("bad width"))
    }

    /// The tiles of a tree of `size` leaves a server publishes (tlog-tiles):
    /// at each level the full tiles and the partial one, if any; and the
    /// entry bundles alongside the level-0 tiles.
    #[must_use]
    pub fn all_for_size(size: u64) -> Vec<TileId> {
        let mut out = Vec::new();
        for level in 0..=MAX_LEVEL {
            let count = size >> (u32::from(level) * TILE_HEIGHT);
            if count == 0 {
                break;
            }
            let full = count >> TILE_HEIGHT;
            let partial = (count & 0xff) as u16;
            let kinds: &[TileKind] = if level == 0 {
                &[TileKind::Hash(0), TileKind::Entries]
            } else {
                &[TileKind::Hash(level)]
            };
            for &kind in kinds {
                out.extend((0..full).map(|index| TileId {
                    kind,
                    index,
                    width: FULL_WIDTH,
                }));
                if partial > 0 {
                    out.push(TileId {
                        kind,
                        index: full,
                        width: partial,
                    });
                }
            }
        }
        out
    }

    /// The tile of `kind` at `index` as it is in a tree of `size` leaves:
    /// full if the tree covers it, else partial with the width the tree
    /// gives it; `None` if the tree has nothing there.
    #[must_use]
    pub fn at_size(kind: TileKind, index: u64, size: u64) -> Option<Self> {
        let level = match kind {
            TileKind::Hash(l) => u32::from(l),
            TileKind::Entries => 0,
        };
        let count = size.checked_shr(level * TILE_HEIGHT).unwrap_or(0);
        let start = index.checked_mul(u64::from(FULL_WIDTH))?;
        let width = count.checked_sub(start)?.min(u64::from(FULL_WIDTH));
        TileId::new(kind, index, u16::try_from(width).ok()?)
    }
}

/// `N` as tlog-tiles path elements: `x001/x234/067`.
fn index_path(mut n: u64) -> String {
    let mut parts = vec![format!("{:03}", n % 1000)];
    n /= 1000;
    while n > 0 {
        parts.push(format!("x{:03}", n % 1000));
        n /= 1000;
    }
    parts.reverse();
    parts.join("/")
}

/// An entry bundle could not be encoded or decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BundleError {
    /// An entry longer than 65535 bytes cannot be length-prefixed.
    EntryTooLong {
        /// Its index in the bundle.
        entry: usize,
        /// Its length.
        len: usize,
    },
    /// The bundle ends inside an entry or its length.
    Truncated {
        /// Where the incomplete entry starts.
        offset: usize,
    },
    /// The bundle holds a different number of entries than its width.
    Count {
        /// Entries found.
        got: usize,
        /// The tile's width.
        expected: usize,
    },
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BundleError::EntryTooLong { entry, len } => {
                write!(f, "entry bundle: entry {entry} is {len} bytes, above 65535")
            }
            BundleError::Truncated { offset } => {
                write!(f, "entry bundle: truncated entry at byte {offset}")
            }
            BundleError::Count { got, expected } => {
                write!(f, "entry bundle: {got} entries, expected {expected}")
            }
        }
    }
}

impl std::error::Error for BundleError {}

/// Encode entries as a bundle: each a big-endian u16 length, then its bytes
/// (tlog-tiles "Log entries").
pub fn encode_bundle<'a>(
    entries: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Vec<u8>, BundleError> {
    let mut out = Vec::new();
    for (entry, bytes) in entries.into_iter().enumerate() {
        let len = u16::try_from(bytes.len()).map_err(|_| BundleError::EntryTooLong {
            entry,
            len: bytes.len(),
        })?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(bytes);
    }
    Ok(out)
}

/// Decode a bundle into its entries, reading over the bytes received.
pub fn decode_bundle(bytes: &[u8]) -> Result<Vec<&[u8]>, BundleError> {
    let mut entries = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let offset = bytes.len() - rest.len();
        let (len, tail) = rest
            .split_first_chunk::<2>()
            .ok_or(BundleError::Truncated { offset })?;
        let len = usize::from(u16::from_be_bytes(*len));
        if tail.len() < len {
            return Err(BundleError::Truncated { offset });
        }
        let (entry, tail) = tail.split_at(len);
        entries.push(entry);
        rest = tail;
    }
    Ok(entries)
}
