//! One pass over an envelope's top-level map (PROFILE.md P3): every field
//! typed, every problem reported, nothing allocated.

use core::ops::Range;

use crate::attestation::RawAttestation;
use crate::cbor::{self, ArrayRef, Limits, MapRef, RawRef, ValueRef};
use crate::kind::Kind;
use crate::reason::{Detail, Reason, ReasonCode};
use crate::sigil::Sigil;

/// The protocol version this implementation speaks (P3).
pub const VERSION: &str = "herald/0.2";

/// The fields P3 requires, in the order their absence is reported.
const REQUIRED: [&str; 9] = [
    "v",
    "id",
    "from",
    "parent",
    "trace",
    "ts",
    "nonce",
    "payload",
    "signatures",
];

/// A typed field with the sigil parsed from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SigilField<'a> {
    pub(crate) text: &'a str,
    pub(crate) sigil: Sigil,
}

/// What one scan found; `None` where a field is absent or ill-typed.
#[derive(Clone, Debug)]
pub(crate) struct Fields<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) map: MapRef<'a>,
    /// `v`'s bytes (text).
    pub(crate) v: Option<&'a [u8]>,
    pub(crate) id: Option<&'a [u8; 32]>,
    pub(crate) from: Option<SigilField<'a>>,
    pub(crate) to: Option<SigilField<'a>>,
    /// `Some(None)` is `parent: null`.
    pub(crate) parent: Option<Option<&'a [u8; 32]>>,
    pub(crate) trace: Option<&'a [u8; 32]>,
    pub(crate) ts: Option<u64>,
    pub(crate) nonce: Option<&'a [u8; 16]>,
    pub(crate) expires: Option<u64>,
    pub(crate) kind: Option<Kind>,
    pub(crate) lineage_proof: Option<&'a [u8; 32]>,
    pub(crate) attestations: Option<ArrayRef<'a>>,
    /// Whether an attestation is a `birth` or breaks its P12 shape, so
    /// that the check must read them again (always, unless the scan ran
    /// with [`Shapes::Check`]).
    pub(crate) attestations_to_read: bool,
    /// `payload`, a text left as its bytes (read it with [`RawRef::value`]).
    pub(crate) payload: Option<(RawRef<'a>, Range<usize>)>,
    pub(crate) signatures: Option<ArrayRef<'a>>,
    pub(crate) spans: Spans,
    pub(crate) unknown_fields: usize,
    /// Whether anything other than a warning was reported.
    pub(crate) faulty: bool,
}

/// Offsets of the parts of the wire form that `body(E, k)` leaves out or
/// replaces (P4).
#[derive(Clone, Debug, Default)]
pub(crate) struct Spans {
    pub(crate) entries: Range<usize>,
    pub(crate) id: Option<Range<usize>>,
    pub(crate) trace: Option<Range<usize>>,
    pub(crate) signatures_value: Option<Range<usize>>,
}

fn field(name: &'static str, problem: &'static str) -> Reason {
    Reason::new(
        ReasonCode::Malformed,
        Detail::Field {
            field: name,
            problem,
        },
    )
}

fn fixed<'a, const N: usize>(v: RawRef<'a>) -> Option<&'a [u8; N]> {
    v.as_bytes().and_then(|b| b.try_into().ok())
}

/// What the scan does with the attestations it parses for their P3 shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shapes {
    /// Nothing more (a decode).
    Skip,
    /// Also check their P12 shapes and look for a `birth`, setting
    /// [`Fields::attestations_to_read`], so that the check parses each
    /// attestation once when none needs a second look (P12).
    Check,
}

/// Scan `bytes` as an envelope, reporting every P1/P3 problem to `out`.
/// Returns `None` when the bytes are not a canonical CBOR map at all.
pub(crate) fn scan<'a>(
    bytes: &'a [u8],
    limits: &Limits,
    shapes: Shapes,
    out: &mut dyn FnMut(Reason),
) -> Option<Fields<'a>> {
    let map = match cbor::decode_with(bytes, limits) {
        Ok(ValueRef::Map(map)) => map,
        Ok(_) => {
            out(field("envelope", "not a map"));
            return None;
        }
        Err(e) => {
            out(Reason::new(ReasonCode::Malformed, Detail::Decode(e)));
            return None;
        }
    };
    let mut f = Fields {
        bytes,
        map,
        v: None,
        id: None,
        from: None,
        to: None,
        parent: None,
        trace: None,
        ts: None,
        nonce: None,
        expires: None,
        kind: None,
        lineage_proof: None,
        attestations: None,
        attestations_to_read: false,
        payload: None,
        signatures: None,
        spans: Spans {
            entries: map.entries_span(),
            ..Spans::default()
        },
        unknown_fields: 0,
        faulty: false,
    };
    let mut o = Out { out, faulty: false };
    // Which REQUIRED keys the map holds (whatever their values): one pass.
    let mut present = [false; REQUIRED.len()];
    for e in map.raw_entries() {
        let v = e.value;
        if let Some(slot) = REQUIRED
            .iter()
            .position(|name| name.as_bytes() == e.key)
            .and_then(|i| present.get_mut(i))
        {
            *slot = true;
        }
        match e.key {
            b"v" => match v.text() {
                Some(s) => f.v = Some(s),
                None => o.bad("v", "must be text"),
            },
            b"id" => {
                // body(E, k) leaves `id` out whatever it holds (P4).
                f.spans.id = Some(e.span.clone());
                match fixed::<32>(v) {
                    Some(id) => f.id = Some(id),
                    None => o.bad("id", "must be a 32-byte byte string"),
                }
            }
            b"from" | b"to" => {
                let name = if e.key == b"from" { "from" } else { "to" };
                // The only texts of the map turned into `&str`: EnvelopeRef::from gives it.
                match v.text() {
                    None => o.bad(name, "must be a sigil string"),
                    Some(bytes) => match Sigil::parse_bytes(bytes) {
                        Ok(sigil) => {
                            let Ok(text) = core::str::from_utf8(bytes) else {
                                o.bad(name, "must be a sigil string");
                                continue;
                            };
                            let sf = Some(SigilField { text, sigil });
                            if name == "from" {
                                f.from = sf
                            } else {
                                f.to = sf
                            }
                        }
                        Err(error) => o.push(Reason::new(
                            ReasonCode::Malformed,
                            Detail::Sigil { field: name, error },
                        )),
                    },
                }
            }
            b"parent" => match v {
                RawRef::Value(ValueRef::Null) => f.parent = Some(None),
                _ => match fixed::<32>(v) {
                    Some(p) => f.parent = Some(Some(p)),
                    None => o.bad("parent", "must be a 32-byte byte string or null"),
                },
            },
            b"trace" => {
                // A genesis body leaves `trace` out whatever it holds (P4).
                f.spans.trace = Some(e.span.clone());
                match fixed::<32>(v) {
                    Some(t) => f.trace = Some(t),
                    None => o.bad("trace", "must be a 32-byte byte string"),
                }
            }
            b"ts" => match v.as_unsigned() {
                Some(ts) => f.ts = Some(ts),
                None => o.bad("ts", "must be an unsigned integer"),
            },
            b"nonce" => match fixed::<16>(v) {
                Some(n) => f.nonce = Some(n),
                None => o.bad("nonce", "must be a 16-byte byte string"),
            },
            b"expires" => match v.as_unsigned() {
                Some(x) => f.expires = Some(x),
                None => o.bad("expires", "must be an unsigned integer"),
            },
            b"kind" => match v.text().map(Kind::from_name_bytes) {
                Some(Some(k)) => f.kind = Some(k),
                Some(None) => o.bad("kind", "unknown kind (P7)"),
                None => o.bad("kind", "must be text"),
            },
            b"lineage_proof" => match fixed::<32>(v) {
                Some(p) => f.lineage_proof = Some(p),
                None => o.bad("lineage_proof", "must be a 32-byte byte string"),
            },
            b"attestations" => match v.as_array() {
                Some(a) => {
                    f.attestations = Some(a);
                    for item in a.iter() {
                        match RawAttestation::parse(item) {
                            Err(d) => o.push(Reason::new(ReasonCode::Malformed, d)),
                            Ok(att) => {
                                if !f.attestations_to_read
                                    && (shapes == Shapes::Skip
                                        || att.ty == b"birth"
                                        || att.check_shape().is_err())
                                {
                                    f.attestations_to_read = true;
                                }
                            }
                        }
                    }
                }
                None => o.bad("attestations", "must be an array"),
            },
            b"payload" => f.payload = Some((v, e.value_span.clone())),
            b"signatures" => match v.as_array() {
                Some(a) => {
                    f.signatures = Some(a);
                    f.spans.signatures_value = Some(e.value_span.clone());
                }
                None => o.bad("signatures", "must be an array"),
            },
            _ => {
                f.unknown_fields += 1;
                o.push(Reason::new(
                    ReasonCode::UnknownField,
                    Detail::UnknownKey {
                        offset: e.span.start,
                    },
                ));
            }
        }
    }
    for (name, here) in REQUIRED.iter().zip(present) {
        if !here {
            o.bad(name, "required field missing (P3)");
        }
    }
    if let Some(v) = f.v
        && v != VERSION.as_bytes()
    {
        o.push(Reason::new(
            ReasonCode::UnsupportedVersion,
            Detail::Note("only herald/0.2 is supported"),
        ));
    }
    if let (Some(ts), Some(expires)) = (f.ts, f.expires)
        && expires < ts
    {
        o.bad("expires", "earlier than ts (P3)");
    }
    f.faulty = o.faulty;
    Some(f)
}

struct Out<'o> {
    out: &'o mut dyn FnMut(Reason),
    faulty: bool,
}

impl Out<'_> {
    fn push(&mut self, r: Reason) {
        self.faulty |= !r.code.is_warning();
        (self.out)(r);
    }

    fn bad(&mut self, name: &'static str, problem: &'static str) {
        self.push(field(name, problem));
    }
}
