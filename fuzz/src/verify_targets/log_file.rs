//! The `log_file` target: the audit log's leaf file, scanned and repaired.

use super::*;

/// Size of the `leaves.dat` header block (docs/audit-log.md, "Files").
const LOG_HEADER: usize = HEADER_LEN as usize;
/// The header's mark: magic, acknowledged end, acknowledged count, checksum.
const LOG_MARK: usize = 64;
/// Length prefix and checksum around each leaf.
const LOG_RECORD_OVERHEAD: usize = 4 + 32;

fn sha(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn be64(bytes: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}

fn be32(bytes: &[u8], at: usize) -> Option<usize> {
    let b: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    usize::try_from(u32::from_be_bytes(b)).ok()
}

/// The header mark acknowledging `count` records up to byte `end`, built
/// from the documented layout (docs/audit-log.md, "Files"), independently
/// of the reader.
fn log_mark(end: u64, count: u64) -> [u8; LOG_MARK] {
    let mut out = [0u8; LOG_MARK];
    out[..16].copy_from_slice(b"herald-leaves-v1");
    out[16..24].copy_from_slice(&end.to_be_bytes());
    out[24..32].copy_from_slice(&count.to_be_bytes());
    let check = sha(&[&out[..32]]);
    out[32..].copy_from_slice(&check);
    out
}

/// The `leaves.dat` bytes a `log_file` input stands for. Byte 0 is a mode,
/// the rest the file:
///
/// - bit 0, compact: the rest is the header's 64-byte mark, then the
///   records; the mark is padded with zeros to the 4096-byte header block
///   (so short inputs reach the records);
/// - bit 1, seal the header: its checksum (bytes 32..64) is recomputed, so
///   mutated acknowledged ends and counts get past it;
/// - bit 2, seal the records: walking the records from byte 4096 while
///   their lengths are within 1..=1024 and they fit, each checksum is
///   recomputed for its position, so mutated leaves reach the leaf decoder
///   and the duplicate-id check.
pub fn log_file_bytes(data: &[u8]) -> Vec<u8> {
    let mode = data.first().copied().unwrap_or(0);
    let rest = data.get(1..).unwrap_or(&[]);
    let mut file = if mode & 1 != 0 {
        let split = rest.len().min(LOG_MARK);
        let (mark, records) = rest.split_at(split);
        let mut file = mark.to_vec();
        file.resize(LOG_HEADER, 0);
        file.extend_from_slice(records);
        file
    } else {
        rest.to_vec()
    };
    if mode & 2 != 0 && file.len() >= LOG_MARK {
        let check = sha(&[&file[..32]]);
        file[32..LOG_MARK].copy_from_slice(&check);
    }
    if mode & 4 != 0 {
        let mut at = LOG_HEADER;
        let mut index = 0u64;
        while let Some(n) = be32(&file, at) {
            let whole = n + LOG_RECORD_OVERHEAD;
            if n == 0 || n > MAX_LEAF_LEN || at + whole > file.len() {
                break;
            }
            let check = sha(&[&index.to_be_bytes(), &file[at + 4..at + 4 + n]]);
            file[at + 4 + n..at + whole].copy_from_slice(&check);
            at += whole;
            index += 1;
        }
    }
    file
}

/// What [`herald_verify::Log::open`] leaves on disk after repairing a leaf
/// file it scanned (docs/audit-log.md, "Crash safety"): the kept records
/// only, and a header acknowledging all of them. Built here from the
/// documented layout; `herald-verify/tests/fuzz_replay.rs` checks it
/// against what `open` really writes.
pub fn log_file_repaired(file: &[u8], scan: &LeafScan) -> Vec<u8> {
    let end = usize::try_from(scan.end()).unwrap_or(usize::MAX);
    let mut out = file.get(..end).unwrap_or(file).to_vec();
    if let Some(head) = out.get_mut(..LOG_MARK) {
        head.copy_from_slice(&log_mark(scan.end(), scan.len()));
    }
    out
}

/// The path the `log_file` target names in errors.
const LOG_FILE_PATH: &str = "fuzz/leaves.dat";

/// `log_file`: the audit log's leaf-file reader, [`scan_leaf_file`] (the
/// reader [`herald_verify::Log::open`] runs), over [`log_file_bytes`] of
/// the input (docs/audit-log.md, "Files" and "Crash safety").
///
/// Accepted: the kept records tile the file from byte 4096 to
/// [`LeafScan::end`], each with a length in 1..=1024 and the checksum of
/// its position; every leaf decodes (P9) and re-encodes to the record's
/// bytes, its hash is the tree's leaf, its id indexes it and no id repeats;
/// the tree is the one rebuilt from those leaves; every acknowledged record
/// is kept (the header's end is a record boundary at its count); a torn
/// tail starts at the end of the kept records, else they reach the end of
/// the file; without a repair the tree's size is the acknowledged count and
/// the header's end the file's end. A repaired file (the tail cut, the
/// header moved, as `open` writes it) is accepted again, needing no repair,
/// with the same leaves and tree (idempotent).
///
/// Refused: `NotALog` exactly when a file of at least 4096 bytes lacks the
/// magic; otherwise `Corrupted` naming the path, at the offset the format
/// says (the file's length, 16 for the header, or an acknowledged record's
/// offset), never `Io` (the bytes are in memory). The same bytes scan the
/// same way twice.
pub fn log_file(data: &[u8]) {
    let file = log_file_bytes(data);
    let path = Path::new(LOG_FILE_PATH);
    let result = scan_leaf_file(file.as_slice(), file.len() as u64, path);
    match &result {
        Ok(scan) => {
            check_log_scan(&file, scan);
            let repaired = log_file_repaired(&file, scan);
            if !scan.needs_repair() {
                assert_eq!(repaired, file, "an intact file needs no change");
            }
            let again = scan_leaf_file(repaired.as_slice(), repaired.len() as u64, path);
            assert!(again.is_ok(), "a repaired file is accepted again");
            if let Ok(again) = again {
                check_log_scan(&repaired, &again);
                assert!(!again.needs_repair(), "a repaired file needs no repair");
                assert_eq!(again.acknowledged(), scan.len());
                assert_eq!(again.tree(), scan.tree());
                assert_eq!(again.offsets(), scan.offsets());
                assert_eq!(again.end(), scan.end());
            }
        }
        Err(e) => check_log_error(&file, e),
    }
    let twice = scan_leaf_file(file.as_slice(), file.len() as u64, path);
    assert_eq!(result.is_ok(), twice.is_ok(), "deterministic");
    match (&result, &twice) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "deterministic"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "deterministic"),
        _ => {}
    }
}

/// The properties of an accepted leaf file (see [`log_file`]).
fn check_log_scan(file: &[u8], scan: &LeafScan) {
    let header = (be64(file, 16), be64(file, 24));
    assert!(file.len() >= LOG_HEADER, "an accepted file has a header");
    let (Some(marked_end), Some(marked_count)) = header else {
        return;
    };
    assert_eq!(scan.acknowledged(), marked_count);
    assert_eq!(scan.offsets().len() as u64, scan.len());
    assert_eq!(scan.tree().len(), scan.len());
    assert!(
        scan.len() >= marked_count,
        "every acknowledged record is kept"
    );
    let mut at = LOG_HEADER;
    let mut hashes = Vec::new();
    for (i, &offset) in scan.offsets().iter().enumerate() {
        let index = i as u64;
        assert_eq!(offset, at as u64, "records tile the file");
        if index == marked_count {
            assert_eq!(offset, marked_end, "the acknowledged end is a boundary");
        }
        let n = be32(file, at);
        assert!(n.is_some_and(|n| (1..=MAX_LEAF_LEN).contains(&n)));
        let n = n.unwrap_or(0);
        let leaf = file.get(at + 4..at + 4 + n).unwrap_or(&[]);
        let check = file.get(at + 4 + n..at + n + LOG_RECORD_OVERHEAD);
        assert_eq!(leaf.len(), n, "a kept record is complete");
        assert_eq!(check, Some(&sha(&[&index.to_be_bytes(), leaf])[..]));
        let decoded = Leaf::decode(leaf);
        assert!(decoded.is_ok(), "a kept record is a P9 leaf");
        if let Ok(decoded) = decoded {
            assert_eq!(decoded.encode(), leaf, "a leaf re-encodes to its bytes");
            assert_eq!(scan.index_of(decoded.id()), Some(index), "ids are unique");
            assert_eq!(decoded.hash(), leaf_hash(leaf));
        }
        assert_eq!(scan.tree().leaf(index), Some(leaf_hash(leaf)));
        hashes.push(leaf_hash(leaf));
        at += n + LOG_RECORD_OVERHEAD;
    }
    let end = at as u64;
    assert_eq!(scan.end(), end);
    if scan.len() == marked_count {
        assert_eq!(marked_end, end, "the acknowledged end is a boundary");
    }
    assert_eq!(scan.tree(), &Tree::from_leaf_hashes(hashes.iter().copied()));
    assert_eq!(scan.tree().root(), root_from_leaves(&hashes));
    match scan.torn() {
        Some((torn_at, why)) => {
            assert_eq!(torn_at, end, "the tail is cut after the kept records");
            assert!(torn_at < file.len() as u64 && !why.is_empty());
            assert!(scan.needs_repair());
        }
        None => assert_eq!(end, file.len() as u64, "the kept records reach the end"),
    }
    if !scan.needs_repair() {
        assert_eq!(
            scan.len(),
            marked_count,
            "the tree is the acknowledged leaves"
        );
        assert_eq!(marked_end, end);
    }
}

/// The properties of a refused leaf file (see [`log_file`]).
fn check_log_error(file: &[u8], e: &LogError) {
    let len = file.len() as u64;
    let magic = file.get(..16) == Some(b"herald-leaves-v1".as_slice());
    let text = e.to_string();
    assert!(
        text.contains(LOG_FILE_PATH),
        "the error names the file: {text}"
    );
    assert!(
        matches!(e, LogError::NotALog { .. } | LogError::Corrupted { .. }),
        "not a format error: {text}"
    );
    if let LogError::NotALog { path, .. } = e {
        assert_eq!(path, Path::new(LOG_FILE_PATH));
        assert!(len >= HEADER_LEN && !magic, "NotALog only without magic");
    }
    if let LogError::Corrupted { path, offset, .. } = e {
        assert_eq!(path, Path::new(LOG_FILE_PATH));
        assert!(
            text.contains(&format!("corrupted at byte {offset}:")),
            "{text}"
        );
        assert!(len < HEADER_LEN || magic, "no magic is NotALog");
        if len < HEADER_LEN {
            assert_eq!(*offset, len, "a file ending in its header");
        }
        // Past the header, only acknowledged data is an error: the records
        // between byte 4096 and a header end that its checksum vouches for.
        let sealed = file.len() >= LOG_MARK && file[32..LOG_MARK] == sha(&[&file[..32]]);
        let marked_end = be64(file, 16).unwrap_or(0);
        assert!(
            *offset == len
                || *offset == 16
                || (sealed && (HEADER_LEN..=marked_end).contains(offset)),
            "offset {offset} is the file's end, the header, or acknowledged data"
        );
    }
}
