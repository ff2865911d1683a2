//! Example traces of the agent protocols HERALD signs for (docs/haven.md,
//! docs/valp.md), built from each protocol's own operation sequence, with
//! fixed keys, nonces and times: the honest runs and one bad input per
//! rule. herald-verify's profile tests check them, herald-cli writes them
//! as its snapshot fixtures.
//!
//! Each function returns the envelopes in log order; a case's expected
//! findings are the tests' business (derived there from the rules).

pub mod haven;
pub mod valp;

use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, SigningKey};

use crate::{T0, nonce};

/// How long each step stays good (`expires = ts + LIFETIME`).
pub const LIFETIME: u64 = 3_600;

/// A map value from its pairs.
pub fn map(pairs: &[(&str, Value)]) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(*k, v.clone());
    }
    Value::Map(m)
}

/// A text value.
pub(crate) fn t(s: &str) -> Value {
    Value::text(s)
}

/// A trace under construction: each step a reply to the one named.
pub struct Trace {
    /// The envelopes, in log order.
    pub steps: Vec<Envelope>,
    n: u64,
    /// Nonce base: keeps two traces' nonces apart.
    base: u64,
}

impl Trace {
    /// An empty trace whose nonces start at `base`.
    pub fn new(base: u64) -> Self {
        Self {
            steps: Vec::new(),
            n: 0,
            base,
        }
    }

    /// Step `parent` (an index into the steps, or a genesis) by `by` at
    /// `T0 + at`, good for [`LIFETIME`] unless `expires` is false.
    pub fn step(
        &mut self,
        parent: Option<usize>,
        by: &SigningKey,
        at: u64,
        payload: Value,
        expires: bool,
    ) -> usize {
        self.step_with(parent, by, at, payload, |b| {
            if expires {
                b.expires(T0 + at + LIFETIME)
            } else {
                b
            }
        })
    }

    /// As [`Trace::step`], the builder adjusted by `f`.
    pub fn step_with(
        &mut self,
        parent: Option<usize>,
        by: &SigningKey,
        at: u64,
        payload: Value,
        f: impl FnOnce(EnvelopeBuilder) -> EnvelopeBuilder,
    ) -> usize {
        self.n += 1;
        let b = match parent.and_then(|p| self.steps.get(p)) {
            Some(p) => EnvelopeBuilder::reply(&p.view(), T0 + at),
            None => EnvelopeBuilder::genesis(T0 + at),
        };
        let env = f(b.nonce(nonce(self.base + self.n)).payload(payload))
            .sign(by)
            .expect("a test step signs");
        self.steps.push(env);
        self.steps.len() - 1
    }

    /// The trace as one CBOR sequence.
    pub fn bytes(&self) -> Vec<u8> {
        self.steps
            .iter()
            .flat_map(|e| e.as_bytes().to_vec())
            .collect()
    }
}
