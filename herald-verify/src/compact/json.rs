//! The JSON document of a [`CompactReport`], written as each envelope's
//! and trace's report is formed: byte for byte
//! [`Report::write_document`](crate::Report::write_document)'s.

use serde::Serialize;

use super::CompactReport;
use super::trace::CompactTrace;
use crate::report::{Shape, TraceShape, hex};

impl Serialize for CompactReport<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        shape(self, None).serialize(s)
    }
}

/// A [`CompactReport`] with a protocol profile's report (`"profile"`).
pub(super) struct WithProfile<'r, 'a>(
    pub(super) &'r CompactReport<'a>,
    pub(super) &'r crate::ProfileReport,
);

impl Serialize for WithProfile<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        shape(self.0, Some(self.1)).serialize(s)
    }
}

fn shape<'r, 'a>(
    r: &'r CompactReport<'a>,
    profile: Option<&'r crate::ProfileReport>,
) -> Shape<'r, impl Serialize + 'r, impl Serialize + 'r> {
    Shape {
        envelopes: JsonArray(|| r.envelopes()),
        traces: JsonArray(|| r.traces.iter().map(|t| TraceJson(r, t))),
        summary: r.summary,
        proofs: &r.proofs,
        unlisted: r.unlisted,
        profile,
    }
}

/// A trace of an [`CompactReport`] as its JSON is written: its leaves' ids
/// formed one at a time, not gathered ([`TraceShape`]).
struct TraceJson<'s, 'a>(&'s CompactReport<'a>, &'s CompactTrace);

impl Serialize for TraceJson<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Self(audited, t) = *self;
        let genesis = t.genesis.map(|i| audited.id_hex(i));
        let counts = t.counts();
        TraceShape {
            trace: &hex(audited.trace_id(t)),
            genesis: genesis.as_deref(),
            leaves: JsonArray(|| audited.leaves_of(t).iter().map(|&i| audited.id_hex(i))),
            valid: counts.valid,
            partial: counts.partial,
            invalid: counts.invalid,
        }
        .serialize(s)
    }
}

/// A JSON array of what `F` iterates, each item serialized as it is made.
struct JsonArray<F>(F);

impl<F, I> Serialize for JsonArray<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}
