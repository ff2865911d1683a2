//! The audit log (P9; CLI.md `herald log`) and proof bundles
//! (docs/audit-log.md): a `Log` in a directory that appends envelopes and
//! signs tree heads, inclusion and consistency proofs; `verify_proof`;
//! `bundle` and `unbundle`.

use std::path::PathBuf;

use herald_core::EnvelopeRef;
use herald_verify::{AuditObject, Bundle, CheckError, Log as CoreLog, encode_bundle, key_line};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyModule};

use crate::envelope::{Envelope, now};
use crate::errors::{BundleError, LogError, ProofError, envelope_error, with_attrs};
use crate::keys::{Keyring, SigningKey, public_key_of};

/// Add `Log`, `verify_proof`, `bundle` and `unbundle`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Log>()?;
    m.add_function(wrap_pyfunction!(verify_proof, m)?)?;
    m.add_function(wrap_pyfunction!(bundle, m)?)?;
    m.add_function(wrap_pyfunction!(unbundle, m)?)?;
    Ok(())
}

fn log_error(e: herald_verify::LogError) -> PyErr {
    LogError::new_err(e.to_string())
}

/// An append-only audit log in a directory (P9), the same files as
/// `herald log`. Signing takes the log's `SigningKey` each time; the key
/// is never stored in the directory.
#[pyclass(module = "herald")]
pub(crate) struct Log {
    inner: CoreLog,
}

/// The 32-byte id of an `Envelope`, of 32 bytes, or of 64 hex digits.
fn id_of(id: &Bound<'_, PyAny>) -> PyResult<[u8; 32]> {
    if let Ok(e) = id.cast::<Envelope>() {
        return Ok(e.get().inner.id());
    }
    let bytes: Vec<u8> = match id.extract::<String>() {
        Ok(text) => data_encoding::HEXLOWER
            .decode(text.as_bytes())
            .map_err(|_| PyValueError::new_err("an id in hex is 64 lowercase hex digits"))?,
        Err(_) => id.extract()?,
    };
    bytes
        .try_into()
        .map_err(|_| PyValueError::new_err("an id is 32 bytes"))
}

#[pymethods]
impl Log {
    /// A new, empty log in `dir` (created 0700 if missing) for `key`.
    #[staticmethod]
    fn create(dir: PathBuf, key: &SigningKey) -> PyResult<Self> {
        CoreLog::create(&dir, &key.key.public_key(), None)
            .map(|inner| Self { inner })
            .map_err(log_error)
    }

    /// Open the log in `dir`.
    #[staticmethod]
    fn open(dir: PathBuf) -> PyResult<Self> {
        CoreLog::open(&dir)
            .map(|inner| Self { inner })
            .map_err(log_error)
    }

    /// The log's sigil (its key's).
    #[getter]
    fn sigil(&self) -> String {
        self.inner.sigil().to_string()
    }

    /// The log key's keyring line, for verifiers to pin.
    fn keyring_line(&self) -> String {
        key_line(self.inner.public_key())
    }

    /// The current root (32 bytes).
    #[getter]
    fn root<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.tree().root())
    }

    fn __len__(&self) -> usize {
        usize::try_from(self.inner.len()).unwrap_or(usize::MAX)
    }

    fn __repr__(&self) -> String {
        format!("Log({}, {} leaves)", self.inner.sigil(), self.inner.len())
    }

    /// Append envelopes (synced before returning); their leaf indices, the
    /// same index again for an id already logged.
    fn append(
        &mut self,
        py: Python<'_>,
        envelopes: Vec<Bound<'_, Envelope>>,
    ) -> PyResult<Vec<u64>> {
        let views: Vec<EnvelopeRef<'_>> = envelopes.iter().map(|e| e.get().inner.view()).collect();
        for v in &views {
            if v.computed_id() != *v.id() {
                return Err(with_attrs::<LogError>(
                    py,
                    format!(
                        "envelope {}: the id is not the hash of its body (id_mismatch, P4); \
                         nothing was logged",
                        herald_verify::hex(v.id())
                    ),
                    &[],
                ));
            }
        }
        self.inner
            .append_envelopes(&views)
            .map(|a| a.iter().map(|a| a.index).collect())
            .map_err(log_error)
    }

    /// The signed tree head of `size` leaves (default: all) at `ts`
    /// (default: now), P1 bytes.
    #[pyo3(signature = (key, *, size = None, ts = None))]
    fn sth<'py>(
        &self,
        py: Python<'py>,
        key: &SigningKey,
        size: Option<u64>,
        ts: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ts = ts.map_or_else(now, Ok)?;
        let sth = self
            .inner
            .signed_tree_head(&key.key, size, ts)
            .map_err(log_error)?;
        Ok(PyBytes::new(py, &sth.encode()))
    }

    /// The inclusion proof of envelope `id` (an Envelope, 32 bytes or hex),
    /// P1 bytes (CLI.md `herald log prove`).
    #[pyo3(signature = (key, id, *, size = None, ts = None))]
    fn prove<'py>(
        &self,
        py: Python<'py>,
        key: &SigningKey,
        id: &Bound<'py, PyAny>,
        size: Option<u64>,
        ts: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let id = id_of(id)?;
        let ts = ts.map_or_else(now, Ok)?;
        let proof = self
            .inner
            .inclusion_proof(&key.key, &id, size, ts)
            .map_err(log_error)?;
        Ok(PyBytes::new(py, &proof.encode()))
    }

    /// The consistency proof from `size1` to `size2` (default: all), P1
    /// bytes (CLI.md `herald log consistency`).
    #[pyo3(signature = (key, size1, size2 = None, *, ts = None))]
    fn consistency<'py>(
        &self,
        py: Python<'py>,
        key: &SigningKey,
        size1: u64,
        size2: Option<u64>,
        ts: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ts = ts.map_or_else(now, Ok)?;
        let proof = self
            .inner
            .consistency_proof(&key.key, size1, size2, ts)
            .map_err(log_error)?;
        Ok(PyBytes::new(py, &proof.encode()))
    }
}

fn proof_error(py: Python<'_>, code: &str, message: String) -> PyErr {
    let code = code.into_py_any(py).ok();
    with_attrs::<ProofError>(py, message, &[("code", code)])
}

/// Check an audit-log object (an inclusion or consistency proof, or a
/// signed tree head; P1 bytes) against the pinned keys of `keyring`, and
/// with `envelope` that the inclusion proof's leaf is that envelope's.
/// Returns a dict describing what holds; raises `ProofError` (with `code`)
/// otherwise. The same verdicts as `herald log verify-proof`.
#[pyfunction]
#[pyo3(signature = (proof, *, keyring, envelope = None))]
fn verify_proof<'py>(
    py: Python<'py>,
    proof: &[u8],
    keyring: &Keyring,
    envelope: Option<&Envelope>,
) -> PyResult<Bound<'py, PyDict>> {
    let object =
        AuditObject::decode(proof).map_err(|e| proof_error(py, "format", e.to_string()))?;
    if envelope.is_some() && !matches!(object, AuditObject::Inclusion(_)) {
        return Err(PyValueError::new_err(
            "envelope: only an inclusion proof names an envelope",
        ));
    }
    object.verify(&keyring.inner).map_err(|e| {
        let code = match (&e, &object) {
            (CheckError::Path(_), AuditObject::Consistency(p)) if p.shows_split_view() => {
                "split_view"
            }
            _ => e.name(),
        };
        proof_error(py, code, e.to_string())
    })?;
    let out = PyDict::new(py);
    match &object {
        AuditObject::TreeHead(sth) => {
            out.set_item("kind", "sth")?;
            out.set_item("log", sth.log().to_string())?;
            out.set_item("size", sth.size())?;
            out.set_item("root", PyBytes::new(py, sth.root()))?;
            out.set_item("ts", sth.ts())?;
        }
        AuditObject::Consistency(p) => {
            out.set_item("kind", "consistency")?;
            out.set_item("log", p.log().to_string())?;
            out.set_item("size1", p.size1())?;
            out.set_item("size2", p.size2())?;
        }
        AuditObject::Inclusion(p) => {
            if let Some(env) = envelope {
                let view = env.inner.view();
                if view.id() != p.leaf().id() {
                    return Err(proof_error(
                        py,
                        "envelope_mismatch",
                        format!(
                            "the envelope {} is not the leaf's {}",
                            herald_verify::hex(view.id()),
                            herald_verify::hex(p.leaf().id())
                        ),
                    ));
                }
                p.matches(&view)
                    .map_err(|e| proof_error(py, e.name(), e.to_string()))?;
            }
            out.set_item("kind", "inclusion")?;
            out.set_item("log", p.log().to_string())?;
            out.set_item("index", p.index())?;
            out.set_item("size", p.size())?;
            out.set_item("id", PyBytes::new(py, p.leaf().id()))?;
        }
    }
    Ok(out)
}

/// A proof bundle (`herald-bundle-v1`): envelopes (Envelope or bytes),
/// inclusion proofs (bytes), and optionally public keys (SigningKey or 32
/// bytes), as P1 bytes; `verify` checks it as a unit.
#[pyfunction]
#[pyo3(signature = (envelopes, proofs = Vec::new(), keys = Vec::new()))]
fn bundle<'py>(
    py: Python<'py>,
    envelopes: Vec<Bound<'py, PyAny>>,
    proofs: Vec<Vec<u8>>,
    keys: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut owned = Vec::with_capacity(envelopes.len());
    for e in &envelopes {
        let bytes = match e.cast::<Envelope>() {
            Ok(env) => env.get().inner.as_bytes().to_vec(),
            Err(_) => e.extract::<Vec<u8>>()?,
        };
        herald_core::Envelope::from_bytes(bytes.clone()).map_err(|err| envelope_error(py, &err))?;
        owned.push(bytes);
    }
    if owned.is_empty() {
        return Err(BundleError::new_err(
            "a bundle holds at least one envelope: verifying nothing must not look like success",
        ));
    }
    let keys = keys
        .iter()
        .map(public_key_of)
        .collect::<PyResult<Vec<_>>>()?;
    let envs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
    let proofs: Vec<&[u8]> = proofs.iter().map(Vec::as_slice).collect();
    Ok(PyBytes::new(py, &encode_bundle(&envs, &proofs, &keys)))
}

/// The parts of a bundle: `{"envelopes": [bytes], "proofs": [bytes],
/// "keys": [keyring line]}`; raises `BundleError` for anything but a
/// `herald-bundle-v1`.
#[pyfunction]
fn unbundle<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let b = Bundle::decode(data).map_err(|e| BundleError::new_err(e.to_string()))?;
    let out = PyDict::new(py);
    let envelopes: Vec<Bound<'py, PyBytes>> = b
        .envelopes()
        .iter()
        .map(|(_, e)| PyBytes::new(py, e))
        .collect();
    let proofs: Vec<Bound<'py, PyBytes>> = b
        .proofs()
        .iter()
        .map(|(_, p)| PyBytes::new(py, p))
        .collect();
    let keys: Vec<String> = b.keys().iter().map(key_line).collect();
    out.set_item("envelopes", envelopes)?;
    out.set_item("proofs", proofs)?;
    out.set_item("keys", keys)?;
    Ok(out)
}
