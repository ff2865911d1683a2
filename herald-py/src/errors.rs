//! The exceptions of `herald` (docs/python.md): every failure is a subclass of
//! `HeraldError` carrying, as attributes, what a program needs to act on
//! it: the P11 reason `code` (and signature `index`), or the P1 decode
//! `rule` and byte `offset`.

use herald_core::cbor::DecodeError as CborError;
use herald_core::{Detail, EnvelopeError as CoreEnvelopeError};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyModule;

pyo3::create_exception!(
    herald,
    HeraldError,
    PyException,
    "Base class of every herald error."
);
pyo3::create_exception!(
    herald,
    DecodeError,
    HeraldError,
    "Bytes that are not canonical CBOR (P1): `rule` and `offset` say which rule broke where."
);
pyo3::create_exception!(
    herald,
    EncodeError,
    HeraldError,
    "A Python value P1 cannot encode (NaN, infinities, -0.0, a non-str key, ...): `rule` names why."
);
pyo3::create_exception!(
    herald,
    EnvelopeError,
    HeraldError,
    "Bytes that are not a HERALD envelope (P3): `code` is the P11 reason code, `index` the signature."
);
pyo3::create_exception!(
    herald,
    KeyError_,
    HeraldError,
    "A key or key file that cannot be used."
);
pyo3::create_exception!(
    herald,
    KeyringError,
    HeraldError,
    "A keyring that cannot be loaded (CLI.md: a bad line stops it)."
);
pyo3::create_exception!(
    herald,
    LogError,
    HeraldError,
    "An audit log operation failed (P9)."
);
pyo3::create_exception!(
    herald,
    ProofError,
    HeraldError,
    "An audit log proof does not hold (P9): `code` names the part that failed."
);
pyo3::create_exception!(
    herald,
    BundleError,
    HeraldError,
    "Bytes that are not a herald-bundle-v1."
);

/// Add the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("HeraldError", py.get_type::<HeraldError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("EncodeError", py.get_type::<EncodeError>())?;
    m.add("EnvelopeError", py.get_type::<EnvelopeError>())?;
    m.add("KeyFileError", py.get_type::<KeyError_>())?;
    m.add("KeyringError", py.get_type::<KeyringError>())?;
    m.add("LogError", py.get_type::<LogError>())?;
    m.add("ProofError", py.get_type::<ProofError>())?;
    m.add("BundleError", py.get_type::<BundleError>())?;
    Ok(())
}

/// An exception of class `T` with `message` and these attributes.
pub(crate) fn with_attrs<T: pyo3::PyTypeInfo>(
    py: Python<'_>,
    message: String,
    attrs: &[(&str, Option<Py<PyAny>>)],
) -> PyErr {
    let err = PyErr::new::<T, _>(message);
    let value = err.value(py);
    for (name, v) in attrs {
        // Setting an attribute on a fresh exception instance cannot fail
        // short of memory exhaustion; the message still says it all.
        let _ = match v {
            Some(v) => value.setattr(*name, v),
            None => value.setattr(*name, py.None()),
        };
    }
    err
}

fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> Option<Py<PyAny>> {
    v.into_py_any(py).ok()
}

/// `DecodeError` for a strict-decoding failure.
pub(crate) fn decode_error(py: Python<'_>, e: &CborError) -> PyErr {
    with_attrs::<DecodeError>(
        py,
        e.to_string(),
        &[
            ("rule", obj(py, e.rule().name())),
            ("offset", obj(py, e.offset())),
        ],
    )
}

/// `EncodeError` naming the `rule` P1 puts in the way.
pub(crate) fn encode_error(py: Python<'_>, rule: &str, message: String) -> PyErr {
    with_attrs::<EncodeError>(py, message, &[("rule", obj(py, rule))])
}

/// `EnvelopeError` for bytes that do not decode as an envelope: the P11
/// code, the signature index, and the P1 rule and offset when the CBOR
/// itself is at fault.
pub(crate) fn envelope_error(py: Python<'_>, e: &CoreEnvelopeError) -> PyErr {
    let reason = e.0;
    let (rule, offset) = match reason.detail {
        Detail::Decode(d) => (obj(py, d.rule().name()), obj(py, d.offset())),
        _ => (None, None),
    };
    with_attrs::<EnvelopeError>(
        py,
        e.to_string(),
        &[
            ("code", obj(py, reason.code.name())),
            ("index", reason.index.and_then(|i| obj(py, i))),
            ("rule", rule),
            ("offset", offset),
        ],
    )
}
