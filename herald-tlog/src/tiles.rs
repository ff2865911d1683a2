//! The two sides of C2SP tlog-tiles over an RFC 9162 tree:
//!
//! - writing: [`hash_tile`] gives a hash tile's bytes from a
//!   [`Tree`] (entry bundles come from the log's leaves, see
//!   [`crate::log`]);
//! - reading: [`TileReader`] rebuilds roots and builds inclusion and
//!   consistency proofs from fetched tiles and a checkpoint alone, through
//!   [`herald_merkle::subtrees`], and checks each result against
//!   the checkpoint before handing it out (fail closed: a wrong tile gives
//!   an error, never a wrong answer).

use core::cell::RefCell;
use core::fmt;
use std::collections::BTreeMap;

use herald_merkle::{
    HASH_LEN, Hash, ProofError, Subtrees, Tree, leaf_hash, root_from_leaves, subtrees,
    verify_consistency, verify_inclusion,
};

use crate::checkpoint::Checkpoint;
use crate::tile::{
    BundleError, FULL_WIDTH, MAX_LEVEL, TILE_HEIGHT, TileId, TileKind, decode_bundle,
};

/// The bytes of hash tile `id` of `tree`: its hashes concatenated
/// (tlog-tiles "Merkle Tree tiles"); `None` when `tree` does not hold every
/// hash of it (a full tile of a tree too small, or an entry bundle).
#[must_use]
pub fn hash_tile(tree: &Tree, id: TileId) -> Option<Vec<u8>> {
    let TileKind::Hash(_) = id.kind() else {
        return None;
    };
    let first = id.index().checked_mul(u64::from(FULL_WIDTH))?;
    let mut out = Vec::with_capacity(usize::from(id.width()) * HASH_LEN);
    for i in 0..u64::from(id.width()) {
        out.extend_from_slice(&tree.node(id.tree_level(), first + i)?);
    }
    Some(out)
}

/// A tile could not be fetched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchError {
    /// The tile path (or `checkpoint`).
    pub path: String,
    /// Why: an I/O error, an HTTP status.
    pub reason: String,
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fetching {}: {}", self.path, self.reason)
    }
}

impl std::error::Error for FetchError {}

/// Where a [`TileReader`] gets tiles: a directory, an HTTP server.
pub trait Fetch {
    /// The bytes at `path` (relative to the log's prefix).
    fn fetch(&self, path: &str) -> Result<Vec<u8>, FetchError>;
}

impl<F: Fn(&str) -> Result<Vec<u8>, FetchError>> Fetch for F {
    fn fetch(&self, path: &str) -> Result<Vec<u8>, FetchError> {
        self(path)
    }
}

/// Reading a log from tiles failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// A tile could not be fetched.
    Fetch(FetchError),
    /// A hash tile is not `width · 32` bytes.
    TileLength {
        /// The tile path.
        path: String,
        /// Its length.
        got: usize,
        /// `width · 32`.
        expected: usize,
    },
    /// An entry bundle does not decode, or holds the wrong number of entries.
    Bundle {
        /// The bundle path.
        path: String,
        /// What is wrong.
        error: BundleError,
    },
    /// An entry's hash is not the level-0 tile's hash at its index.
    EntryMismatch {
        /// The entry index.
        index: u64,
    },
    /// The tiles do not hash to the checkpoint's root.
    RootMismatch {
        /// The tree size.
        size: u64,
    },
    /// A proof-shape error (index or size out of range).
    Proof(ProofError),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Fetch(e) => e.fmt(f),
            ReadError::TileLength {
                path,
                got,
                expected,
            } => write!(f, "tile {path} is {got} bytes, expected {expected}"),
            ReadError::Bundle { path, error } => write!(f, "{path}: {error}"),
            ReadError::EntryMismatch { index } => write!(
                f,
                "entry {index} does not hash to the level-0 tile's leaf hash"
            ),
            ReadError::RootMismatch { size } => write!(
                f,
                "the tiles do not hash to the checkpoint's root at size {size}"
            ),
            ReadError::Proof(e) => write!(f, "proof: {e}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<ProofError> for ReadError {
    fn from(e: ProofError) -> Self {
        ReadError::Proof(e)
    }
}

impl From<FetchError> for ReadError {
    fn from(e: FetchError) -> Self {
        ReadError::Fetch(e)
    }
}

/// A log read through its tiles, bound to one checkpoint whose root the
/// tiles were checked against (tlog-tiles "Client behavior").
pub struct TileReader<F> {
    fetch: F,
    size: u64,
    root: Hash,
    hashes: RefCell<BTreeMap<TileId, Vec<Hash>>>,
}

impl<F: Fetch> TileReader<F> {
    /// A reader for the tree of `checkpoint`; fetches the tiles of its
    /// right edge and checks that they hash to its root.
    pub fn new(fetch: F, checkpoint: &Checkpoint) -> Result<Self, ReadError> {
        let reader = TileReader {
            fetch,
            size: checkpoint.size(),
            root: *checkpoint.root(),
            hashes: RefCell::new(BTreeMap::new()),
        };
        if subtrees::root_at(&reader, reader.size)? != reader.root {
            return Err(ReadError::RootMismatch { size: reader.size });
        }
        Ok(reader)
    }

    /// The tree size.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The root, checked against the tiles.
    #[must_use]
    pub fn root(&self) -> &Hash {
        &self.root
    }

    /// The root the tree had at `size ≤ self.size()`, from tiles.
    pub fn root_at(&self, size: u64) -> Result<Hash, ReadError> {
        self.check_size(size)?;
        subtrees::root_at(self, size)
    }

    /// The leaf hash of entry `index`, with its inclusion proof verified
    /// against the checkpoint.
    pub fn leaf_hash(&self, index: u64) -> Result<Hash, ReadError> {
        self.inclusion_proof(index)?;
        self.subtree(0, index)
    }

    /// The inclusion proof of entry `index` in the checkpoint's tree (RFC
    /// 9162 §2.1.3.1), verified against its root.
    pub fn inclusion_proof(&self, index: u64) -> Result<Vec<Hash>, ReadError> {
        let path = subtrees::inclusion_proof(self, index, self.size)?;
        let leaf = self.subtree(0, index)?;
        verify_inclusion(&leaf, index, self.size, &path, &self.root)
            .map_err(|_| ReadError::RootMismatch { size: self.size })?;
        Ok(path)
    }

    /// The consistency proof from the tree of `older` to this one (RFC
    /// 9162 §2.1.4.1), verified against both roots.
    pub fn consistency_proof(&self, older: &Checkpoint) -> Result<Vec<Hash>, ReadError> {
        let (root, proof) = self.prefix_proof(older.size())?;
        if root != *older.root() {
            return Err(ProofError::RootMismatch.into());
        }
        Ok(proof)
    }

    /// This tree's root at `size` (`0 < size ≤ self.size()`) and the
    /// consistency proof from there to this tree, verified against this
    /// checkpoint's root: the root the tree must have had at `size`, for
    /// comparing with another checkpoint of that size (split-view evidence).
    pub fn prefix_proof(&self, size: u64) -> Result<(Hash, Vec<Hash>), ReadError> {
        self.check_size(size)?;
        let root = subtrees::root_at(self, size)?;
        let proof = subtrees::consistency_proof(self, size, self.size)?;
        verify_consistency(size, self.size, &proof, &root, &self.root)
            .map_err(|_| ReadError::RootMismatch { size: self.size })?;
        Ok((root, proof))
    }

    /// The entries of bundle `index` (up to 256), each checked against the
    /// leaf hash the level-0 tile holds for it.
    pub fn entries(&self, index: u64) -> Result<Vec<Vec<u8>>, ReadError> {
        let id = TileId::at_size(TileKind::Entries, index, self.size).ok_or(
            ProofError::IndexOutOfRange {
                index: index.saturating_mul(u64::from(FULL_WIDTH)),
                size: self.size,
            },
        )?;
        let path = id.path();
        let bytes = self.fetch.fetch(&path)?;
        let entries = decode_bundle(&bytes).map_err(|error| ReadError::Bundle {
            path: path.clone(),
            error,
        })?;
        if entries.len() != usize::from(id.width()) {
            return Err(ReadError::Bundle {
                path,
                error: BundleError::Count {
                    got: entries.len(),
                    expected: usize::from(id.width()),
                },
            });
        }
        let first = index * u64::from(FULL_WIDTH);
        let mut out = Vec::with_capacity(entries.len());
        for (i, entry) in (first..).zip(entries) {
            if leaf_hash(entry) != self.subtree(0, i)? {
                return Err(ReadError::EntryMismatch { index: i });
            }
            out.push(entry.to_vec());
        }
        Ok(out)
    }

    fn check_size(&self, size: u64) -> Result<(), ReadError> {
        if size > self.size {
            return Err(ProofError::SizeBeyondTree {
                size,
                len: self.size,
            }
            .into());
        }
        Ok(())
    }

    /// The hashes of hash tile `id`, fetched once.
    fn tile_hashes(&self, id: TileId) -> Result<Vec<Hash>, ReadError> {
        if let Some(h) = self.hashes.borrow().get(&id) {
            return Ok(h.clone());
        }
        let path = id.path();
        let bytes = self.fetch.fetch(&path)?;
        let expected = usize::from(id.width()) * HASH_LEN;
        if bytes.len() != expected {
            return Err(ReadError::TileLength {
                path,
                got: bytes.len(),
                expected,
            });
        }
        let hashes: Vec<Hash> = bytes
            .chunks_exact(HASH_LEN)
            .filter_map(|c| c.try_into().ok())
            .collect();
        self.hashes.borrow_mut().insert(id, hashes.clone());
        Ok(hashes)
    }
}

impl<F: Fetch> Subtrees for TileReader<F> {
    type Error = ReadError;

    /// Node `index` of tree level `level` from the hash tile of level
    /// `⌊level/8⌋` that holds its `2^(level mod 8)` descendants there.
    fn subtree(&self, level: u32, index: u64) -> Result<Hash, ReadError> {
        let beyond = ProofError::SizeBeyondTree {
            size: index
                .saturating_add(1)
                .checked_shl(level)
                .unwrap_or(u64::MAX),
            len: self.size,
        };
        let tile_level = u8::try_from(level / TILE_HEIGHT)
            .ok()
            .filter(|l| *l <= MAX_LEVEL)
            .ok_or(beyond)?;
        let rise = level % TILE_HEIGHT;
        let first = index.checked_shl(rise).ok_or(beyond)?;
        let count = 1u64 << rise;
        let tile = TileId::at_size(TileKind::Hash(tile_level), first >> TILE_HEIGHT, self.size)
            .ok_or(beyond)?;
        let offset = first & u64::from(FULL_WIDTH - 1);
        if offset + count > u64::from(tile.width()) {
            return Err(beyond.into());
        }
        let hashes = self.tile_hashes(tile)?;
        let lo = usize::try_from(offset).map_err(|_| beyond)?;
        let hi = usize::try_from(offset + count).map_err(|_| beyond)?;
        let span = hashes.get(lo..hi).ok_or(beyond)?;
        // 2^rise hashes of a complete subtree: its MTH is its root.
        Ok(root_from_leaves(span))
    }
}
