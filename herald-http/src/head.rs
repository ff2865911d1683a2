//! The head of a submitted envelope: its `id`, `from` and `trace`, read
//! from a prefix of the bytes (CONDUIT.md: a refusal is addressed to the
//! refused envelope's `from`, in its `trace`, `parent` = its id, even when
//! the body is larger than `--max-body` and only its first bytes were
//! read). The conduit's `POST /v1/envelopes` and a Herald's `POST
//! /v1/certify` read their requests' heads by this one scanner, through
//! `front::read_envelope` (feature `server`).
//!
//! This is not a validator: the envelope itself is judged by
//! herald-verify's `Receiver`. It only finds the three fields a refusal
//! needs, walking P1 CBOR items without allocating, and says where the one
//! top-level item ends (so a sequence of several items is told apart).

use herald_core::Sigil;

/// Deepest nesting walked; deeper input has no addressable head.
const MAX_DEPTH: usize = 32;

/// What a refusal needs of the refused envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// The `id` the envelope carries.
    pub id: [u8; 32],
    /// The `from` sigil.
    pub from: Sigil,
    /// The `trace`.
    pub trace: [u8; 32],
    /// The `to` sigil, when it was read and parses (CONDUIT.md *Who may
    /// read what*: a participant is `from` or `to`).
    pub to: Option<Sigil>,
    /// Where the top-level item ends, when it is complete in the bytes.
    pub end: Option<usize>,
    /// How many signatures the `signatures` array holds, when its head was
    /// read (CONDUIT.md revision 3: `--max-signatures`, counted before any
    /// is verified).
    pub signatures: Option<u64>,
    /// Whether `kind` is `birth` (P7), when it was read.
    pub birth: bool,
}

/// The head of `bytes` (possibly a prefix of the envelope), when its
/// top-level item is a map whose `id`, `from` and `trace` are in `bytes`
/// with their P3 types.
pub fn scan(bytes: &[u8]) -> Option<Head> {
    let mut r = Reader { bytes, pos: 0 };
    let (major, entries) = r.head()?;
    if major != 5 {
        return None;
    }
    let (mut id, mut from, mut trace, mut to) = (None, None, None, None);
    let (mut signatures, mut birth) = (None, false);
    let mut complete = true;
    for _ in 0..entries {
        let key = match r.text() {
            Some(k) => k,
            None => {
                complete = false;
                break;
            }
        };
        let found = match key {
            "id" => r.bytes32().map(|v| id = Some(v)),
            "trace" => r.bytes32().map(|v| trace = Some(v)),
            "from" => r.text().map(|t| from = Sigil::parse(t).ok()),
            "to" => r.text().map(|t| to = Sigil::parse(t).ok()),
            "kind" => r.text().map(|t| birth = t == "birth"),
            "signatures" => r.array(&mut signatures),
            _ => r.skip(0),
        };
        if found.is_none() {
            complete = false;
            break;
        }
    }
    Some(Head {
        id: id?,
        from: from?,
        trace: trace?,
        to,
        end: complete.then_some(r.pos),
        signatures,
        birth,
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// An item head: major type and argument (definite lengths only, P1).
    fn head(&mut self) -> Option<(u8, u64)> {
        let first = *self.take(1)?.first()?;
        let (major, info) = (first >> 5, first & 0x1f);
        let arg = match info {
            0..=23 => u64::from(info),
            24 => u64::from(*self.take(1)?.first()?),
            25 => u64::from(u16::from_be_bytes(self.take(2)?.try_into().ok()?)),
            26 => u64::from(u32::from_be_bytes(self.take(4)?.try_into().ok()?)),
            27 => u64::from_be_bytes(self.take(8)?.try_into().ok()?),
            _ => return None,
        };
        Some((major, arg))
    }

    fn text(&mut self) -> Option<&'a str> {
        match self.head()? {
            (3, len) => core::str::from_utf8(self.take(usize::try_from(len).ok()?)?).ok(),
            _ => None,
        }
    }

    fn bytes32(&mut self) -> Option<[u8; 32]> {
        match self.head()? {
            (2, 32) => self.take(32)?.try_into().ok(),
            _ => None,
        }
    }

    /// Skip one array, its length in `len` as soon as its head is read
    /// (so a prefix still counts it); any other item is skipped alone.
    fn array(&mut self, len: &mut Option<u64>) -> Option<()> {
        let start = self.pos;
        if let (4, n) = self.head()? {
            *len = Some(n);
        }
        self.pos = start;
        self.skip(0)
    }

    /// Skip one item.
    fn skip(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (major, arg) = self.head()?;
        let items = match major {
            0 | 1 | 7 => 0,
            2 | 3 => {
                self.take(usize::try_from(arg).ok()?)?;
                0
            }
            4 => arg,
            5 => arg.checked_mul(2)?,
            _ => 1, // 6: a tag, then its item
        };
        for _ in 0..items {
            self.skip(depth + 1)?;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use herald_core::cbor::Value;
    use herald_core::{EnvelopeBuilder, SigningKey};

    #[test]
    fn a_prefix_still_names_the_envelope() {
        let key = SigningKey::from_seed(&[7; 32]);
        let env = EnvelopeBuilder::genesis(1_750_000_000)
            .payload(Value::text("x".repeat(300)))
            .sign(&key)
            .unwrap();
        let bytes = env.as_bytes();
        let full = scan(bytes).unwrap();
        assert_eq!(full.id, env.id());
        assert_eq!(full.trace, *env.view().trace());
        assert_eq!(full.end, Some(bytes.len()));
        // The payload is cut: the head is there, the item is not complete.
        let cut = bytes.len() - 200;
        let head = scan(&bytes[..cut]).unwrap();
        assert_eq!((head.id, head.end), (env.id(), None));
        assert_eq!((full.signatures, full.birth), (Some(1), false));
        assert!(scan(&[0x01]).is_none());
        assert!(scan(b"").is_none());
        assert!(scan(&[0xa1, 0x62, b'i', b'd', 0x41, 0x00]).is_none());
    }
}
