//! A log in C2SP form: its checkpoint, its verifier key, and its tiles
//! (hash tiles and entry bundles of its entries), for any log that is a
//! [`TiledLog`]. Every function is a pure function of the log as it is now,
//! so a server (the conduit's `/checkpoint` and `/tile/...`) and the static
//! export (`herald log tiles`) publish the same bytes. The HERALD audit log
//! (PROFILE P9) is one: herald-verify's `auditlog::c2sp` makes its file log
//! a [`TiledLog`] whose entries are its P9 leaves.

use core::fmt;
use std::path::Path;

use herald_core::{PublicKey, SigningKey};
use herald_fs::Io;
use herald_merkle::{Hash, Tree};

use crate::checkpoint::{Checkpoint, CheckpointError, SignedCheckpoint};
use crate::note::{NoteVerifier, VerifierKeyError};
use crate::tile::{BundleError, FULL_WIDTH, TileId, TileKind, encode_bundle};
use crate::tiles::hash_tile;

/// A log as C2SP publishes it (tlog-checkpoint, tlog-tiles): a key that
/// signs its checkpoints, the RFC 9162 tree of its entries, and the bytes
/// of each entry (leaf `i` of the tree is the leaf hash of entry `i`).
pub trait TiledLog {
    /// Why an entry could not be read.
    type Error: core::error::Error + Send + Sync + 'static;

    /// The key the log signs its checkpoints with.
    fn public_key(&self) -> PublicKey;

    /// The tree of every entry, as the log is now.
    fn tree(&self) -> &Tree;

    /// The bytes of entry `index` (below `tree().len()`).
    fn entry(&self, index: u64) -> Result<Vec<u8>, Self::Error>;
}

/// Publishing a log in C2SP form failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum PublishError {
    /// The key given is not the log's.
    WrongKey,
    /// The origin is not a valid key name and origin line.
    Origin(VerifierKeyError),
    /// The checkpoint could not be made.
    Checkpoint(CheckpointError),
    /// The log could not be read.
    Log(Box<dyn core::error::Error + Send + Sync>),
    /// A tile of the log's current size is not in its tree (a log whose
    /// tree and entries disagree).
    TileMissing(TileId),
    /// A leaf does not fit an entry bundle.
    Bundle(BundleError),
    /// Writing the export failed (the file and the operation named).
    Io(Io),
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PublishError::WrongKey => f.write_str("the signing key is not the log's key"),
            PublishError::Origin(e) => write!(f, "origin: {e}"),
            PublishError::Checkpoint(e) => e.fmt(f),
            PublishError::Log(e) => e.fmt(f),
            PublishError::TileMissing(id) => {
                write!(f, "tile {} is not in the log's tree", id.path())
            }
            PublishError::Bundle(e) => e.fmt(f),
            PublishError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PublishError {}

/// The log's verifier key for `origin`: key name = origin, type 0x01
/// (tlog-checkpoint, signed-note "Verifier keys").
pub fn verifier_key<L: TiledLog + ?Sized>(
    log: &L,
    origin: &str,
) -> Result<NoteVerifier, PublishError> {
    NoteVerifier::ed25519(origin, log.public_key()).map_err(PublishError::Origin)
}

/// The log's current checkpoint for `origin`, signed by `key` (which must
/// be the log's key) under the name `origin` (tlog-checkpoint v1.0.0).
pub fn checkpoint<L: TiledLog + ?Sized>(
    log: &L,
    origin: &str,
    key: &SigningKey,
) -> Result<SignedCheckpoint, PublishError> {
    if key.public_key() != log.public_key() {
        return Err(PublishError::WrongKey);
    }
    sign_checkpoint(origin, log.tree().len(), log.tree().root(), key)
}

/// The checkpoint of a tree of `size` leaves with root `root`, for
/// `origin`, signed by `key` under the name `origin`: for a log kept
/// elsewhere than a [`TiledLog`] (the conduit fleet's database).
pub fn sign_checkpoint(
    origin: &str,
    size: u64,
    root: Hash,
    key: &SigningKey,
) -> Result<SignedCheckpoint, PublishError> {
    NoteVerifier::ed25519(origin, key.public_key()).map_err(PublishError::Origin)?;
    let cp = Checkpoint::new(origin, size, root).map_err(PublishError::Checkpoint)?;
    SignedCheckpoint::sign(cp, origin, key).map_err(PublishError::Checkpoint)
}

/// The bytes of the tile at `path` for the log as it is now, or `None`
/// when there is no such tile (a malformed path, a full tile beyond the
/// tree, a partial tile wider than the tree gives it). Partial tiles
/// narrower than the current one are served too: their bytes never change.
pub fn tile<L: TiledLog + ?Sized>(log: &L, path: &str) -> Result<Option<Vec<u8>>, PublishError> {
    match tile_in_tree(path, log.tree().len()) {
        Some(id) => tile_bytes(log, id),
        None => Ok(None),
    }
}

/// The tile `path` names, when a tree of `size` leaves has it: `None` for
/// a malformed path, a full tile beyond the tree, or a partial tile wider
/// than the tree gives it (narrower partial tiles are in the tree: their
/// bytes never change).
#[must_use]
pub fn tile_in_tree(path: &str, size: u64) -> Option<TileId> {
    let id = TileId::parse(path).ok()?;
    let now = TileId::at_size(id.kind(), id.index(), size)?;
    (id.width() <= now.width()).then_some(id)
}

/// The bytes of tile `id`, known to be within the tree.
fn tile_bytes<L: TiledLog + ?Sized>(log: &L, id: TileId) -> Result<Option<Vec<u8>>, PublishError> {
    match id.kind() {
        TileKind::Hash(_) => Ok(hash_tile(log.tree(), id)),
        TileKind::Entries => {
            let first = id.index() * u64::from(FULL_WIDTH);
            let leaves = (first..first + u64::from(id.width()))
                .map(|i| log.entry(i))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| PublishError::Log(Box::new(e)))?;
            encode_bundle(leaves.iter().map(Vec::as_slice))
                .map(Some)
                .map_err(PublishError::Bundle)
        }
    }
}

/// Write every tile of the log's current size under `out` (tlog-tiles
/// layout: `out/tile/...`), and `out/checkpoint` when `checkpoint` is
/// given; each file is written to a temporary name and renamed, so a
/// reader never sees half a tile. Returns the number of tiles written.
pub fn export<L: TiledLog + ?Sized>(
    log: &L,
    out: &Path,
    checkpoint: Option<&SignedCheckpoint>,
) -> Result<usize, PublishError> {
    let ids = TileId::all_for_size(log.tree().len());
    for id in &ids {
        let bytes = tile_bytes(log, *id)?.ok_or(PublishError::TileMissing(*id))?;
        write_file(&out.join(id.path()), &bytes)?;
    }
    if let Some(cp) = checkpoint {
        write_file(&out.join("checkpoint"), cp.note().to_text().as_bytes())?;
    }
    Ok(ids.len())
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), PublishError> {
    let io = |path: &Path, action, e| PublishError::Io(Io::new(path, action, e));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, "create directory", e))?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = Path::new(&tmp);
    std::fs::write(tmp, bytes).map_err(|e| io(tmp, "write", e))?;
    std::fs::rename(tmp, path).map_err(|e| io(path, "replace", e))
}
