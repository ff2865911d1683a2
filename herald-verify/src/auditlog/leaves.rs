//! The leaf file `leaves.dat` of a log directory: its format, and the
//! reader that checks every record ([`scan_leaf_file`]).
//!
//! Header (block 0; nothing else ever lives in it): 16 bytes
//! `herald-leaves-v1`, the acknowledged end (u64 big-endian: the byte
//! offset just past the last acknowledged record), the acknowledged leaf
//! count (u64 BE), and `sha256` of those 32 bytes; zeros to 4096. A record
//! (from byte 4096 on): the leaf length (u32 BE, 1…[`MAX_LEAF_LEN`]), the
//! P9 leaf bytes, and `sha256(index u64 BE ‖ leaf)`, which binds each
//! record to its position.

use alloc::string::String;
use alloc::vec::Vec;
use std::collections::HashMap;
use std::io::{self, Read};
use std::path::Path;

use super::leaf::MAX_LEAF_LEN;
use super::{Leaf, LogError, sha256};
use herald_merkle::{self as merkle, Hash, Tree};

/// The leaf file in a log directory.
pub const DATA_FILE: &str = "leaves.dat";
/// Size of the header block of `leaves.dat`; records start here.
#[doc(hidden)]
pub const HEADER_LEN: u64 = 4096;
const MAGIC: &[u8; 16] = b"herald-leaves-v1";
/// Magic, end, count, checksum.
pub(super) const MARK_LEN: usize = 16 + 8 + 8 + 32;
/// Length prefix and checksum around each leaf.
pub(super) const RECORD_OVERHEAD: u64 = 4 + 32;
/// Read buffer for the scan on open.
pub(super) const SCAN_BUFFER: usize = 1 << 20;

/// The header mark: magic, acknowledged end, acknowledged count, checksum.
pub(super) fn mark(end: u64, count: u64) -> [u8; MARK_LEN] {
    let mut out = [0u8; MARK_LEN];
    let (body, check) = out.split_at_mut(32);
    let (magic, rest) = body.split_at_mut(16);
    magic.copy_from_slice(MAGIC);
    let (e, c) = rest.split_at_mut(8);
    e.copy_from_slice(&end.to_be_bytes());
    c.copy_from_slice(&count.to_be_bytes());
    let digest = sha256(body);
    check.copy_from_slice(&digest);
    out
}

/// `sha256(index u64 BE ‖ leaf)`: the checksum closing a record.
pub(super) fn record_check(index: u64, leaf: &[u8]) -> Hash {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(index.to_be_bytes());
    h.update(leaf);
    h.finalize().into()
}

/// Why a record could not be read.
pub(super) enum RecordError {
    /// The OS failed: not a judgement on the data.
    Io(io::Error),
    /// The bytes are not a valid record here.
    Invalid(String),
}

fn read_exact(reader: &mut impl Read, buf: &mut [u8]) -> Result<(), RecordError> {
    reader.read_exact(buf).map_err(RecordError::Io)
}

/// Read the record at `offset` (index `index`), which must end by `limit`;
/// its leaf bytes when its length and checksum hold.
pub(super) fn read_record(
    reader: &mut impl Read,
    offset: u64,
    limit: u64,
    index: u64,
) -> Result<Vec<u8>, RecordError> {
    let room = limit.saturating_sub(offset);
    if room < 4 {
        return Err(RecordError::Invalid(std::format!(
            "an incomplete record: {room} of its 4 length bytes"
        )));
    }
    let mut len = [0u8; 4];
    read_exact(reader, &mut len)?;
    let len = u32::from_be_bytes(len);
    if len == 0 || usize::try_from(len).ok().is_none_or(|l| l > MAX_LEAF_LEN) {
        return Err(RecordError::Invalid(std::format!(
            "record length {len} is not within 1..={MAX_LEAF_LEN}"
        )));
    }
    let whole = RECORD_OVERHEAD + u64::from(len);
    if room < whole {
        return Err(RecordError::Invalid(std::format!(
            "an incomplete record: {room} of its {whole} bytes"
        )));
    }
    let mut leaf = std::vec![0u8; usize::try_from(len).unwrap_or(0)];
    read_exact(reader, &mut leaf)?;
    let mut check = [0u8; 32];
    read_exact(reader, &mut check)?;
    if check != record_check(index, &leaf) {
        return Err(RecordError::Invalid(std::format!(
            "the checksum of record {index} does not match"
        )));
    }
    Ok(leaf)
}

/// What reading a leaf file found ([`scan_leaf_file`]): the records
/// [`Log::open`] keeps, the Merkle tree and id index rebuilt from them, and
/// what an interrupted append left to repair (docs/audit-log.md, "Files"
/// and "Crash safety"; PROFILE.md P9).
#[derive(Clone, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub struct LeafScan {
    pub(super) tree: Tree,
    pub(super) ids: HashMap<[u8; 32], u64>,
    pub(super) offsets: Vec<u64>,
    /// End of the last good record.
    pub(super) end: u64,
    /// The header's acknowledged count.
    pub(super) marked_count: u64,
    /// Where the tail to cut off starts, and why.
    pub(super) torn: Option<(u64, String)>,
}

impl LeafScan {
    /// Number of records kept (acknowledged, and complete ones past the
    /// acknowledged end).
    pub fn len(&self) -> u64 {
        self.tree.len()
    }

    /// Whether no record was kept.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// The Merkle tree of the kept records' leaves, in order.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The index of the kept leaf with this id.
    pub fn index_of(&self, id: &[u8; 32]) -> Option<u64> {
        self.ids.get(id).copied()
    }

    /// The byte offset of each kept record, in order.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The byte offset just past the last kept record: the acknowledged
    /// end once the log is repaired.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The acknowledged leaf count the header states.
    pub fn acknowledged(&self) -> u64 {
        self.marked_count
    }

    /// Where the tail that [`Log::open`] cuts off begins, and why its first
    /// record was not kept (`None`: every byte past the header is a kept
    /// record).
    pub fn torn(&self) -> Option<(u64, &str)> {
        self.torn.as_ref().map(|(at, why)| (*at, why.as_str()))
    }

    /// Whether [`Log::open`] repairs this file (a [`Recovery`]): a tail to
    /// cut, or complete records past the acknowledged end to adopt.
    pub fn needs_repair(&self) -> bool {
        self.torn.is_some() || self.len() > self.marked_count
    }
}

/// Read the contents of a leaf file (`leaves.dat`, the format of
/// docs/audit-log.md "Files"; PROFILE.md P9) from `reader`, which holds
/// `file_len` bytes: the header, then every record, each checked (length,
/// checksum, P9 leaf, no repeated id). This is the reader [`Log::open`]
/// runs on the file (`path` is only named in errors); it changes nothing:
/// what `open` would repair is reported by [`LeafScan::torn`] and
/// [`LeafScan::needs_repair`].
///
/// Errors (docs/audit-log.md "Crash safety"): [`LogError::NotALog`] when the
/// header has no `herald-leaves-v1` magic; [`LogError::Corrupted`] with the
/// byte offset of the damage for a file ending inside its header (offset
/// `len`), a header whose checksum fails or whose acknowledged end lies
/// inside it (offset 16), a file shorter than its acknowledged end (offset
/// `file_len`), and an acknowledged record that is incomplete, has a bad length
/// or checksum, is not a P9 leaf or repeats an id (the record's offset; at
/// the acknowledged end when the records there are not as many as the
/// header counts); [`LogError::Io`] when `reader` fails or holds fewer than
/// `file_len` bytes.
#[doc(hidden)]
pub fn scan_leaf_file(
    mut reader: impl Read,
    file_len: u64,
    path: &Path,
) -> Result<LeafScan, LogError> {
    let mut header = [0u8; MARK_LEN];
    if file_len < HEADER_LEN {
        return Err(LogError::corrupted(
            path,
            file_len,
            std::format!("the file ends inside its {HEADER_LEN}-byte header"),
        ));
    }
    reader
        .read_exact(&mut header)
        .map_err(|e| LogError::io(path, "read", e))?;
    if header.get(..16) != Some(MAGIC.as_slice()) {
        return Err(LogError::not_a_log(
            path,
            "not a leaf file (no herald-leaves-v1 header)",
        ));
    }
    if mark(
        u64_at(&header, 16).unwrap_or(0),
        u64_at(&header, 24).unwrap_or(0),
    ) != header
    {
        return Err(LogError::corrupted(
            path,
            16,
            "the header checksum does not match",
        ));
    }
    let marked_end = u64_at(&header, 16).unwrap_or(0);
    let marked_count = u64_at(&header, 24).unwrap_or(0);
    if marked_end < HEADER_LEN {
        return Err(LogError::corrupted(
            path,
            16,
            std::format!("the acknowledged end {marked_end} is inside the header"),
        ));
    }
    if file_len < marked_end {
        return Err(LogError::corrupted(
            path,
            file_len,
            std::format!(
                "the file ends at byte {file_len}, but {marked_count} leaves were acknowledged \
                 up to byte {marked_end}: acknowledged leaves are missing (truncated?)"
            ),
        ));
    }
    // The rest of the header block holds nothing.
    let padding = HEADER_LEN - MARK_LEN as u64;
    let skipped = io::copy(&mut reader.by_ref().take(padding), &mut io::sink())
        .map_err(|e| LogError::io(path, "read", e))?;
    if skipped != padding {
        return Err(LogError::io(
            path,
            "read",
            io::ErrorKind::UnexpectedEof.into(),
        ));
    }

    let mut tree = Tree::new();
    let mut ids = HashMap::new();
    let mut offsets = Vec::new();
    let mut offset = HEADER_LEN;
    let mut torn = None;
    loop {
        let index = tree.len();
        if offset == marked_end && index != marked_count {
            return Err(LogError::corrupted(
                path,
                offset,
                std::format!(
                    "{index} records end at the acknowledged end, the header says {marked_count}"
                ),
            ));
        }
        if offset == file_len {
            break;
        }
        let acknowledged = offset < marked_end;
        let limit = if acknowledged { marked_end } else { file_len };
        let record = read_record(&mut reader, offset, limit, index).and_then(|leaf| {
            let decoded = Leaf::decode(&leaf)
                .map_err(|e| RecordError::Invalid(std::format!("record {index}: {e}")))?;
            if let Some(first) = ids.get(decoded.id()) {
                return Err(RecordError::Invalid(std::format!(
                    "record {index} repeats the id of record {first}"
                )));
            }
            Ok((leaf, *decoded.id()))
        });
        match record {
            Ok((leaf, id)) => {
                tree.push(merkle::leaf_hash(&leaf));
                ids.insert(id, index);
                offsets.push(offset);
                offset += RECORD_OVERHEAD + leaf.len() as u64;
            }
            Err(RecordError::Io(e)) => return Err(LogError::io(path, "read", e)),
            Err(RecordError::Invalid(problem)) if acknowledged => {
                return Err(LogError::corrupted(
                    path,
                    offset,
                    std::format!("{problem} (acknowledged data, up to byte {marked_end})"),
                ));
            }
            Err(RecordError::Invalid(problem)) => {
                torn = Some((offset, problem));
                break;
            }
        }
    }
    Ok(LeafScan {
        tree,
        ids,
        offsets,
        end: offset,
        marked_count,
        torn,
    })
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}
