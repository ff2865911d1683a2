//! Envelopes (spec §3.1, P3–P7): build and sign (`genesis`, `reply`),
//! co-sign, decode, and read their fields as Python values. Payloads and
//! attestation values go through the P1 encoder (`crate::value`).

use herald_core::cbor::ValueRef;
use herald_core::{Envelope as CoreEnvelope, EnvelopeBuilder, EnvelopeRef, Kind, Scope, Sigil};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyModule};

use crate::errors::{encode_error, envelope_error};
use crate::keys::SigningKey;
use crate::value::{to_py, to_value};

/// Add `Envelope`, `genesis` and `reply`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Envelope>()?;
    m.add_function(wrap_pyfunction!(genesis, m)?)?;
    m.add_function(wrap_pyfunction!(reply, m)?)?;
    Ok(())
}

/// A signed envelope: its canonical bytes, decoded strictly (P1, P3).
/// Signatures are checked by `verify`, not here.
#[pyclass(module = "herald", frozen)]
pub(crate) struct Envelope {
    pub(crate) inner: CoreEnvelope,
}

impl Envelope {
    fn view(&self) -> EnvelopeRef<'_> {
        self.inner.view()
    }

    fn field<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.view().map().get(key) {
            Some(v) => to_py(py, v),
            None => Ok(py.None().into_bound(py)),
        }
    }
}

/// The current Unix time, seconds.
pub(crate) fn now() -> PyResult<u64> {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .map_err(|_| PyValueError::new_err("the system clock is before 1970"))
}

#[pymethods]
impl Envelope {
    /// Decode envelope bytes strictly; raises `EnvelopeError` (with the
    /// P11 `code`, and the P1 `rule` and `offset` for bad CBOR).
    #[new]
    fn new(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        CoreEnvelope::from_bytes(data)
            .map(|inner| Self { inner })
            .map_err(|e| envelope_error(py, &e))
    }

    /// Same as `Envelope(data)`.
    #[staticmethod]
    fn decode(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        Self::new(py, data)
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.as_bytes())
    }

    fn __len__(&self) -> usize {
        self.inner.as_bytes().len()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Envelope>()
            .is_ok_and(|o| o.get().inner.as_bytes() == self.inner.as_bytes())
    }

    fn __hash__(&self) -> u64 {
        let id = self.inner.id();
        let mut first = [0u8; 8];
        first.copy_from_slice(id.get(..8).unwrap_or(&[0; 8]));
        u64::from_le_bytes(first)
    }

    fn __repr__(&self) -> String {
        let v = self.view();
        format!(
            "Envelope(id={}, from={}, kind={}, signatures={})",
            herald_verify::hex(v.id()),
            v.from(),
            v.kind().name(),
            v.signature_count()
        )
    }

    /// The id carried on the wire (32 bytes).
    #[getter]
    fn id<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.id())
    }

    /// The id, lowercase hex.
    #[getter]
    fn id_hex(&self) -> String {
        herald_verify::hex(&self.inner.id())
    }

    /// `from`, a sigil.
    #[getter(from_)]
    fn sender(&self) -> String {
        self.view().from().to_owned()
    }

    /// `to`, a sigil, or None.
    #[getter]
    fn to(&self) -> Option<String> {
        self.view().to().map(|(s, _)| s.to_owned())
    }

    /// `parent` (32 bytes), None for a genesis.
    #[getter]
    fn parent<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.view().parent().map(|p| PyBytes::new(py, p))
    }

    /// `trace` (32 bytes).
    #[getter]
    fn trace<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.view().trace())
    }

    /// `ts`, Unix seconds.
    #[getter]
    fn ts(&self) -> u64 {
        self.view().ts()
    }

    /// `nonce` (16 bytes).
    #[getter]
    fn nonce<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.view().nonce())
    }

    /// `expires`, or None.
    #[getter]
    fn expires(&self) -> Option<u64> {
        self.view().expires()
    }

    /// `kind` (P7), `message` when absent.
    #[getter]
    fn kind(&self) -> &'static str {
        self.view().kind().name()
    }

    /// The payload as a Python value.
    #[getter]
    fn payload<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.view().payload())
    }

    /// The attestations: a list of `{"type": ..., "value": ...}`.
    #[getter]
    fn attestations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.view().attestations() {
            Some(a) => to_py(py, ValueRef::Array(a)),
            None => Ok(pyo3::types::PyList::empty(py).into_any()),
        }
    }

    /// The value of the first attestation of type `ty`, or None.
    fn attestation<'py>(&self, py: Python<'py>, ty: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.view().attestation(ty) {
            Some(v) => to_py(py, v),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The signature maps: `{"alg", "by", "scope", "sig", "ts"?}` each.
    #[getter]
    fn signatures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "signatures")
    }

    /// The JSON display form (P3: byte strings as lowercase hex); display
    /// only, never hashed or signed.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        let v = herald_core::cbor::decode(self.inner.as_bytes())
            .map_err(|e| crate::errors::decode_error(py, &e))?;
        Ok(herald_verify::display_json(v))
    }

    /// A copy with one more signature by `key` in `scope` (P5, P6), with
    /// an optional claimed `ts`.
    #[pyo3(signature = (key, scope, *, ts = None))]
    fn cosign(&self, key: &SigningKey, scope: &str, ts: Option<u64>) -> PyResult<Self> {
        let scope = Scope::from_name(scope)
            .filter(|s| *s != Scope::Origin)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{scope:?} is not a co-signing scope (P6: tool_sandbox, conduit_receipt, \
                     human_approval, herald_endorsement, lineage_consent, duress_witness)"
                ))
            })?;
        self.inner
            .cosign(&key.key, scope, ts)
            .map(|inner| Self { inner })
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// A reply to this envelope signed by `key` (see `herald.reply`).
    #[pyo3(signature = (key, payload = None, *, to = None, ts = None, expires = None, kind = None, attestations = None))]
    #[allow(clippy::too_many_arguments)]
    fn reply(
        slf: &Bound<'_, Self>,
        key: &SigningKey,
        payload: Option<&Bound<'_, PyAny>>,
        to: Option<&str>,
        ts: Option<u64>,
        expires: Option<u64>,
        kind: Option<&str>,
        attestations: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        reply(
            slf.py(),
            key,
            slf.get(),
            payload,
            to,
            ts,
            expires,
            kind,
            attestations,
        )
    }
}

/// A genesis envelope (`parent: null`, `trace` = its id, P4) signed by
/// `key`, its payload any P1-encodable Python value.
#[pyfunction]
#[pyo3(signature = (key, payload = None, *, to = None, ts = None, expires = None, kind = None, attestations = None))]
#[allow(clippy::too_many_arguments)]
fn genesis(
    py: Python<'_>,
    key: &SigningKey,
    payload: Option<&Bound<'_, PyAny>>,
    to: Option<&str>,
    ts: Option<u64>,
    expires: Option<u64>,
    kind: Option<&str>,
    attestations: Option<&Bound<'_, PyAny>>,
) -> PyResult<Envelope> {
    let builder = EnvelopeBuilder::genesis(match ts {
        Some(ts) => ts,
        None => now()?,
    });
    build(py, builder, key, payload, to, expires, kind, attestations)
}

/// A reply to `parent` (same trace, spec §3.3a) signed by `key`.
#[pyfunction]
#[pyo3(signature = (key, parent, payload = None, *, to = None, ts = None, expires = None, kind = None, attestations = None))]
#[allow(clippy::too_many_arguments)]
fn reply(
    py: Python<'_>,
    key: &SigningKey,
    parent: &Envelope,
    payload: Option<&Bound<'_, PyAny>>,
    to: Option<&str>,
    ts: Option<u64>,
    expires: Option<u64>,
    kind: Option<&str>,
    attestations: Option<&Bound<'_, PyAny>>,
) -> PyResult<Envelope> {
    let builder = EnvelopeBuilder::reply(
        &parent.view(),
        match ts {
            Some(ts) => ts,
            None => now()?,
        },
    );
    build(py, builder, key, payload, to, expires, kind, attestations)
}

#[allow(clippy::too_many_arguments)]
fn build(
    py: Python<'_>,
    mut builder: EnvelopeBuilder,
    key: &SigningKey,
    payload: Option<&Bound<'_, PyAny>>,
    to: Option<&str>,
    expires: Option<u64>,
    kind: Option<&str>,
    attestations: Option<&Bound<'_, PyAny>>,
) -> PyResult<Envelope> {
    if let Some(p) = payload {
        builder = builder.payload(to_value(p)?);
    }
    if let Some(to) = to {
        let sigil =
            Sigil::parse(to).map_err(|e| PyValueError::new_err(format!("to: {to:?}: {e}")))?;
        builder = builder.to(sigil);
    }
    if let Some(e) = expires {
        builder = builder.expires(e);
    }
    if let Some(k) = kind {
        let kind = Kind::from_name(k)
            .ok_or_else(|| PyValueError::new_err(format!("kind: {k:?} is not a P7 kind")))?;
        builder = builder.kind(kind);
    }
    if let Some(a) = attestations {
        for (ty, value) in attestation_pairs(a)? {
            builder = builder.attest(&ty, to_value(&value)?);
        }
    }
    builder
        .sign(&key.key)
        .map(|inner| Envelope { inner })
        .map_err(|e| encode_error(py, "build", e.to_string()))
}

/// Attestations given as a dict `{type: value}` or a list of
/// `(type, value)` pairs or `{"type", "value"}` dicts (several of one type).
fn attestation_pairs<'py>(a: &Bound<'py, PyAny>) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
    if let Ok(d) = a.cast::<PyDict>() {
        return d
            .iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v)))
            .collect();
    }
    let bad = || {
        PyTypeError::new_err(
            "attestations: a dict {type: value}, or a list of (type, value) pairs or \
             {\"type\": ..., \"value\": ...} dicts",
        )
    };
    let mut out = Vec::new();
    for item in a.try_iter().map_err(|_| bad())? {
        let item = item?;
        if let Ok(d) = item.cast::<PyDict>() {
            let ty = d.get_item("type")?.ok_or_else(bad)?.extract::<String>()?;
            let value = d.get_item("value")?.ok_or_else(bad)?;
            out.push((ty, value));
        } else {
            let (ty, value): (String, Bound<'py, PyAny>) = item.extract().map_err(|_| bad())?;
            out.push((ty, value));
        }
    }
    Ok(out)
}
