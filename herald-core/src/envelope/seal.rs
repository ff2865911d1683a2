//! Writing an envelope from its fields, with no allocation (spec §3.1,
//! PROFILE.md P1, P3–P5): `body(E, 0)` in canonical key order, its id and
//! origin signature, and the wire form spliced around it in place.
//!
//! Shared by the alloc [`EnvelopeBuilder`](super::EnvelopeBuilder) (a
//! `Vec`) and the no-alloc [`EnvelopeWriter`](super::EnvelopeWriter) (a
//! caller's `&mut [u8]`): both write through here, so the two produce the
//! same bytes for the same inputs.

use core::convert::Infallible;

use sha2::{Digest, Sha256};

use super::{ED25519, VERSION};
use crate::cbor::{BufferFull, Encoder, LenSink, Sink, SliceSink, major, write_head};
use crate::key::SigningKey;
use crate::kind::Kind;
use crate::nonce::Nonce;
use crate::scope::Scope;

/// The top-level keys P3 defines, in canonical order (P1: shorter first,
/// then bytewise); anything else is an extra (unknown) field.
pub(super) const P3_KEYS: [&str; 14] = [
    "v",
    "id",
    "to",
    "ts",
    "from",
    "kind",
    "nonce",
    "trace",
    "parent",
    "expires",
    "payload",
    "signatures",
    "attestations",
    "lineage_proof",
];

/// One signature map, written directly in canonical key order
/// (`by`, `ts`, `alg`, `sig`, `scope`).
pub(super) struct SignatureEntry<'a> {
    pub(super) by: &'a str,
    pub(super) scope: &'a str,
    pub(super) sig: &'a [u8; 64],
    pub(super) ts: Option<u64>,
}

impl SignatureEntry<'_> {
    pub(super) fn write<S: Sink>(&self, enc: &mut Encoder<S>) -> Result<(), S::Error> {
        enc.map(if self.ts.is_some() { 5 } else { 4 })?;
        enc.text("by")?;
        enc.text(self.by)?;
        if let Some(ts) = self.ts {
            enc.text("ts")?;
            enc.unsigned(ts)?;
        }
        enc.text("alg")?;
        enc.text(ED25519)?;
        enc.text("sig")?;
        enc.bytes(self.sig)?;
        enc.text("scope")?;
        enc.text(self.scope)
    }
}

/// The fixed-shape fields of an envelope, borrowed (P3).
pub(super) struct Fields<'a> {
    /// `(parent id, trace)` of a reply; `None` for a genesis.
    pub(super) parent: Option<(&'a [u8; 32], &'a [u8; 32])>,
    pub(super) to: Option<&'a str>,
    pub(super) ts: u64,
    pub(super) from: &'a str,
    pub(super) kind: Kind,
    pub(super) nonce: &'a Nonce,
    pub(super) expires: Option<u64>,
    pub(super) lineage_proof: Option<&'a [u8; 32]>,
}

/// The open-ended parts of an envelope: its payload, attestations and
/// extra (non-P3) fields, however the caller holds them.
pub(super) trait OpenParts {
    /// Whether there is an `attestations` entry.
    fn has_attestations(&self) -> bool;
    /// How many extra fields.
    fn extra_count(&self) -> usize;
    /// Write the extra fields from index `*next` on (keys in canonical
    /// order) whose keys sort before `below` (all of them for `None`),
    /// advancing `*next`.
    fn write_extras<S: Sink>(
        &self,
        enc: &mut Encoder<S>,
        next: &mut usize,
        below: Option<&str>,
    ) -> Result<(), S::Error>;
    /// Write the payload value.
    fn write_payload<S: Sink>(&self, enc: &mut Encoder<S>) -> Result<(), S::Error>;
    /// Write the `attestations` array.
    fn write_attestations<S: Sink>(&self, enc: &mut Encoder<S>) -> Result<(), S::Error>;
}

/// Offsets in `body(E, 0)` as [`write_body`] wrote it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Marks {
    /// Entries of its top-level map.
    count: usize,
    /// End of the map head.
    head: usize,
    /// Where an `id` entry sorts.
    id: usize,
    /// Where a `trace` entry sorts (a reply's own `trace` starts there).
    trace: usize,
    /// The `[]` value of `signatures` (one byte, 0x80).
    signatures: usize,
    /// The body's length.
    pub(super) len: usize,
    /// Whether it is a genesis (the wire form adds `trace` = `id`, P4).
    genesis: bool,
}

/// A sink that counts what passes through it.
struct Counted<S> {
    sink: S,
    len: usize,
}

impl<S: Sink> Sink for Counted<S> {
    type Error = S::Error;
    fn put(&mut self, bytes: &[u8]) -> Result<(), S::Error> {
        self.sink.put(bytes)?;
        self.len += bytes.len();
        Ok(())
    }
}

/// Write `body(E, 0)` into `sink` (P1, P3, P4: no `id`, no `trace` for a
/// genesis, `signatures: []`). Keys go out in canonical order, extra
/// fields merged in among them, without building a map. Returns where the
/// wire form differs from it.
pub(super) fn write_body<S: Sink, P: OpenParts>(
    f: &Fields<'_>,
    open: &P,
    sink: S,
) -> Result<Marks, S::Error> {
    let mut enc = Encoder::new(Counted { sink, len: 0 });
    let trace = f.parent.map(|(_, trace)| trace);
    let present = [
        true,                      // v
        false,                     // id: never in a body
        f.to.is_some(),            // to
        true,                      // ts
        true,                      // from
        f.kind != Kind::Message,   // kind
        true,                      // nonce
        trace.is_some(),           // trace: a reply's only
        true,                      // parent
        f.expires.is_some(),       // expires
        true,                      // payload
        true,                      // signatures
        open.has_attestations(),   // attestations
        f.lineage_proof.is_some(), // lineage_proof
    ];
    let count = present.iter().filter(|p| **p).count() + open.extra_count();
    let mut marks = Marks {
        count,
        head: 0,
        id: 0,
        trace: 0,
        signatures: 0,
        len: 0,
        genesis: f.parent.is_none(),
    };
    enc.map(count as u64)?;
    marks.head = enc.sink_mut().len;
    let mut next_extra = 0;
    for (key, here) in P3_KEYS.iter().zip(present) {
        open.write_extras(&mut enc, &mut next_extra, Some(key))?;
        match *key {
            "id" => marks.id = enc.sink_mut().len,
            "trace" => marks.trace = enc.sink_mut().len,
            _ => {}
        }
        if !here {
            continue;
        }
        enc.text(key)?;
        match *key {
            "v" => enc.text(VERSION)?,
            "to" => enc.text(f.to.unwrap_or_default())?,
            "ts" => enc.unsigned(f.ts)?,
            "from" => enc.text(f.from)?,
            "kind" => enc.text(f.kind.name())?,
            "nonce" => enc.bytes(&f.nonce.0)?,
            "trace" => enc.bytes(trace.map_or(&[][..], |t| &t[..]))?,
            "parent" => match f.parent {
                Some((p, _)) => enc.bytes(p)?,
                None => enc.null()?,
            },
            "expires" => enc.unsigned(f.expires.unwrap_or_default())?,
            "payload" => open.write_payload(&mut enc)?,
            "signatures" => {
                marks.signatures = enc.sink_mut().len;
                enc.array(0)?
            }
            "attestations" => open.write_attestations(&mut enc)?,
            _ => enc.bytes(f.lineage_proof.map_or(&[][..], |p| &p[..]))?,
        }
    }
    open.write_extras(&mut enc, &mut next_extra, None)?;
    marks.len = enc.sink_mut().len;
    Ok(marks)
}

/// Bytes of the `id` entry: `"id"` (3) and a 32-byte string (34).
const ID_ENTRY: usize = 3 + 34;
/// Bytes of a genesis's `trace` entry: `"trace"` (6) and 34.
const TRACE_ENTRY: usize = 6 + 34;
/// Bytes of `[origin]`: the array head (1) and the largest origin map:
/// head (1), `by` (3) with the longest sigil (2 + 52), `alg` (4) and
/// `ed25519` (8), `sig` (4) and 2 + 64, `scope` (6) and `origin` (7)
/// (a reserved sigil is shorter).
const ORIGIN_MAX: usize = 1 + 1 + 3 + 54 + 4 + 8 + 4 + 66 + 6 + 7;

/// The `[origin]` array that replaces `[]` in the wire form, written into
/// a fixed buffer; returns it with its length.
fn origin_array(from: &str, sig: &[u8; 64]) -> Result<([u8; ORIGIN_MAX], usize), BufferFull> {
    let mut buf = [0u8; ORIGIN_MAX];
    let mut enc = Encoder::new(SliceSink::new(&mut buf));
    enc.array(1)?;
    origin_entry(from, sig).write(&mut enc)?;
    let len = enc.into_inner().written().len();
    Ok((buf, len))
}

/// The wire form's length for a body written with `marks`, signed as
/// `from` (the signature's value does not change it).
pub(super) fn wire_len(marks: &Marks, from: &str) -> usize {
    let mut origin = Encoder::new(LenSink(0));
    never_fails(origin.array(1));
    never_fails(origin_entry(from, &[0; 64]).write(&mut origin));
    let mut head = [0u8; 9];
    let new_head = write_head(&mut head, major::MAP, new_count(marks)).len();
    marks.len - marks.head
        + new_head
        + ID_ENTRY
        + if marks.genesis { TRACE_ENTRY } else { 0 }
        + origin.into_inner().0
        - 1
}

/// Entries of the wire form's top-level map: `id`, and a genesis's `trace`.
fn new_count(marks: &Marks) -> u64 {
    (marks.count + 1 + usize::from(marks.genesis)) as u64
}

/// The origin signature map (P5: index 0, scope `origin`, no `ts`).
fn origin_entry<'a>(from: &'a str, sig: &'a [u8; 64]) -> SignatureEntry<'a> {
    SignatureEntry {
        by: from,
        scope: Scope::Origin.name(),
        sig,
        ts: None,
    }
}

/// Growable sinks and hashers cannot fail.
pub(super) fn never_fails(r: Result<(), Infallible>) {
    match r {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

/// Seal `buf`, which holds `body(E, 0)` (`marks.len` bytes) as
/// [`write_body`] wrote it: hash it for the id (P4), sign it with `key`
/// under the kind's origin tag (P5, P7) as `from`, and splice the wire
/// form around it in place — one more entry (two for a genesis) in the map
/// head, `id` where it sorts, a genesis's `trace` (= `id`) where it sorts,
/// and the origin signature in `signatures`; every other byte is moved,
/// never re-encoded. Returns the id and the wire form's length; fails
/// only when `buf` is shorter than [`wire_len`].
pub(super) fn seal(
    buf: &mut [u8],
    marks: &Marks,
    key: &SigningKey,
    kind: Kind,
    from: &str,
) -> Result<([u8; 32], usize), BufferFull> {
    let body0 = buf.get(..marks.len).ok_or(BufferFull)?;
    let id: [u8; 32] = Sha256::digest(body0).into();
    let tag = kind.origin_tag();
    let sig = key.sign_parts(|feed| {
        feed(tag);
        feed(body0);
    });
    let (origin, origin_len) = origin_array(from, &sig)?;
    let origin = origin.get(..origin_len).ok_or(BufferFull)?;

    let mut head = [0u8; 9];
    let head = write_head(&mut head, major::MAP, new_count(marks));
    let mut id_entry = [0u8; ID_ENTRY];
    let mut enc = Encoder::new(SliceSink::new(&mut id_entry));
    enc.text("id")?;
    enc.bytes(&id)?;
    let mut trace_entry = [0u8; TRACE_ENTRY];
    let mut enc = Encoder::new(SliceSink::new(&mut trace_entry));
    enc.text("trace")?;
    enc.bytes(&id)?;
    let trace_entry: &[u8] = if marks.genesis { &trace_entry } else { &[] };

    // Final layout, in order; every kept span lands at or after where it
    // is now, so moving them last-first never overwrites one not yet moved.
    let pieces = [
        Piece::New(head),
        Piece::Kept(marks.head, marks.id),
        Piece::New(&id_entry),
        Piece::Kept(marks.id, marks.trace),
        Piece::New(trace_entry),
        Piece::Kept(marks.trace, marks.signatures),
        Piece::New(origin),
        Piece::Kept(marks.signatures + 1, marks.len),
    ];
    let mut ends = [0usize; 8];
    let mut at = 0;
    for (piece, end) in pieces.iter().zip(ends.iter_mut()) {
        at += piece.len();
        *end = at;
    }
    if at > buf.len() {
        return Err(BufferFull);
    }
    for (piece, end) in pieces.iter().zip(ends).rev() {
        let start = end - piece.len();
        match *piece {
            Piece::Kept(from, to) => buf.copy_within(from..to, start),
            Piece::New(bytes) => buf
                .get_mut(start..end)
                .ok_or(BufferFull)?
                .copy_from_slice(bytes),
        }
    }
    Ok((id, at))
}

/// A span of the wire form: bytes kept from the body, or new ones.
enum Piece<'a> {
    Kept(usize, usize),
    New(&'a [u8]),
}

impl Piece<'_> {
    fn len(&self) -> usize {
        match self {
            Self::Kept(from, to) => to - from,
            Self::New(b) => b.len(),
        }
    }
}
