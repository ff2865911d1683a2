//! C2SP tlog-tiles: a log as static files. Level-`L` hash tiles hold up to
//! 256 consecutive node hashes of that level, entry bundles up to 256
//! entries, each a big-endian `u16` length then its bytes; a tile that is
//! not yet full is a partial tile `<path>.p/<width>`. The index in a path
//! is written in groups of three digits, each but the last prefixed `x`
//! (`1234067` → `x001/x234/067`).

use core::fmt;

use herald_verify::merkle::{Hash, Tree, leaf_hash};

/// Hashes or entries in a full tile.
pub const WIDTH: u64 = 256;

/// A tile could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TileError {
    /// A hash tile's length is not a multiple of 32 from 32 to 8 192.
    HashTile {
        /// Its length.
        len: usize,
    },
    /// An entry bundle ends inside an entry, at this byte offset.
    Truncated {
        /// The offset of the entry that does not fit.
        offset: usize,
    },
    /// More than 256 entries in one bundle.
    TooManyEntries,
    /// An entry longer than 65 535 bytes cannot be in a bundle.
    EntryTooLong {
        /// Its length.
        len: usize,
    },
    /// A tile's width disagrees with the tree's size.
    Width {
        /// The width the size calls for.
        expected: u64,
        /// The width found.
        found: u64,
    },
}

impl fmt::Display for TileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HashTile { len } => write!(
                f,
                "a hash tile of {len} bytes (32 to 8 192, a multiple of 32)"
            ),
            Self::Truncated { offset } => {
                write!(f, "an entry bundle ends inside the entry at byte {offset}")
            }
            Self::TooManyEntries => f.write_str("an entry bundle holds more than 256 entries"),
            Self::EntryTooLong { len } => {
                write!(f, "an entry of {len} bytes (a bundle holds at most 65 535)")
            }
            Self::Width { expected, found } => {
                write!(
                    f,
                    "a tile of width {found} where the tree's size calls for {expected}"
                )
            }
        }
    }
}

impl std::error::Error for TileError {}

/// The path form of tile index `n`.
pub fn index_path(n: u64) -> String {
    let digits = std::format!("{n}");
    let padded = std::format!("{}{digits}", "0".repeat((3 - digits.len() % 3) % 3));
    let groups: Vec<&str> = padded
        .as_bytes()
        .chunks(3)
        .map(|g| core::str::from_utf8(g).unwrap_or("000"))
        .collect();
    let last = groups.len() - 1;
    groups
        .iter()
        .enumerate()
        .map(|(i, g)| {
            if i < last {
                std::format!("x{g}")
            } else {
                (*g).to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The path of the level-`level` hash tile `n` of width `width` (256: full).
pub fn tile_path(level: u8, n: u64, width: u64) -> String {
    partial(std::format!("tile/{level}/{}", index_path(n)), width)
}

/// The path of entry bundle `n` of width `width` (256: full).
pub fn entries_path(n: u64, width: u64) -> String {
    partial(std::format!("tile/entries/{}", index_path(n)), width)
}

fn partial(path: String, width: u64) -> String {
    if width < WIDTH {
        std::format!("{path}.p/{width}")
    } else {
        path
    }
}

/// The hashes of a hash tile.
pub fn hashes(tile: &[u8]) -> Result<Vec<Hash>, TileError> {
    if tile.is_empty() || !tile.len().is_multiple_of(32) || tile.len() as u64 > 32 * WIDTH {
        return Err(TileError::HashTile { len: tile.len() });
    }
    Ok(tile
        .chunks_exact(32)
        .filter_map(|c| Hash::try_from(c).ok())
        .collect())
}

/// The entries of an entry bundle.
pub fn entries(bundle: &[u8]) -> Result<Vec<&[u8]>, TileError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bundle.len() {
        let len = bundle
            .get(at..at + 2)
            .map(|l| usize::from(u16::from_be_bytes([l[0], l[1]])))
            .ok_or(TileError::Truncated { offset: at })?;
        let entry = bundle
            .get(at + 2..at + 2 + len)
            .ok_or(TileError::Truncated { offset: at })?;
        out.push(entry);
        if out.len() as u64 > WIDTH {
            return Err(TileError::TooManyEntries);
        }
        at += 2 + len;
    }
    Ok(out)
}

/// An entry bundle of `entries` (each at most 65 535 bytes).
pub fn bundle(entries: &[&[u8]]) -> Result<Vec<u8>, TileError> {
    let mut out = Vec::new();
    for e in entries {
        let len = u16::try_from(e.len()).map_err(|_| TileError::EntryTooLong { len: e.len() })?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(e);
    }
    Ok(out)
}

/// The widths of the level-0 tiles of a tree of `size` leaves: full tiles,
/// then a partial one for the rest.
pub fn level0_widths(size: u64) -> impl Iterator<Item = (u64, u64)> {
    (0..size.div_ceil(WIDTH)).map(move |n| (n, (size - n * WIDTH).min(WIDTH)))
}

/// The tree of `size` leaves read from its level-0 tiles: `fetch(path)`
/// returns a tile's bytes. Every tile's width must be what the size calls
/// for.
pub fn tree_from_tiles<E: From<TileError>>(
    size: u64,
    mut fetch: impl FnMut(&str) -> Result<Vec<u8>, E>,
) -> Result<Tree, E> {
    let mut leaves = Vec::new();
    for (n, width) in level0_widths(size) {
        let tile = hashes(&fetch(&tile_path(0, n, width))?)?;
        if tile.len() as u64 != width {
            return Err(TileError::Width {
                expected: width,
                found: tile.len() as u64,
            }
            .into());
        }
        leaves.extend(tile);
    }
    Ok(Tree::from_leaf_hashes(leaves))
}

/// The level-0 tiles of `entries` (each an RFC 6962 leaf): `(path, bytes)`
/// of every hash tile and entry bundle, for a static tree.
pub fn level0_tiles(entries: &[&[u8]]) -> Result<Vec<(String, Vec<u8>)>, TileError> {
    let size = entries.len() as u64;
    let mut out = Vec::new();
    for (n, width) in level0_widths(size) {
        let start = usize::try_from(n * WIDTH).unwrap_or(usize::MAX);
        let chunk = &entries[start..start + usize::try_from(width).unwrap_or(0)];
        let hashes: Vec<u8> = chunk.iter().flat_map(|e| leaf_hash(e)).collect();
        out.push((tile_path(0, n, width), hashes));
        out.push((entries_path(n, width), bundle(chunk)?));
    }
    Ok(out)
}
