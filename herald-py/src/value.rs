//! Python values through the P1 encoder and the strict decoder: `encode`
//! and `decode`, and the conversions the envelope builder uses for
//! payloads and attestation values.
//!
//! Python → CBOR: `None`, `bool`, `int` (−2^64 … 2^64−1), `float` (P1
//! numeric reduction: `2.0` is the integer 2; NaN, ±inf and −0.0 raise),
//! `str`, `bytes`/`bytearray`/`memoryview`, `list`/`tuple`, and `dict`
//! with `str` keys. Anything else raises `EncodeError` naming the type.
//! CBOR → Python: the inverse, arrays as lists and byte strings as bytes.

use herald_core::cbor::{self, Limits, MAX_NESTING, Map, Value, ValueRef};
use herald_verify::Piece;
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyModule, PyString,
    PyTuple,
};

use crate::errors::{DecodeError, decode_error, encode_error, with_attrs};

/// Add `encode` and `decode`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(split_sequence, m)?)?;
    Ok(())
}

/// The P1 canonical CBOR encoding of `value`.
#[pyfunction]
fn encode<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let v = to_value(value)?;
    Ok(PyBytes::new(py, &v.to_vec()))
}

/// Decode exactly one canonical CBOR item (P1, strict: trailing bytes,
/// non-shortest forms, tags, ... raise `DecodeError`).
#[pyfunction]
fn decode<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let v = cbor::decode(data).map_err(|e| decode_error(py, &e))?;
    to_py(py, v)
}

/// The items of a CBOR sequence (RFC 8742; a trace file, CLI.md), each
/// well-formed and at most an envelope's size (P1); an empty input has
/// none. Raises `DecodeError` (`rule`, `offset`) where it cannot be split.
#[pyfunction]
fn split_sequence<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    if data.is_empty() {
        return Ok(Vec::new());
    }
    herald_verify::split_sequence(data, Limits::DEFAULT.max_size, MAX_NESTING)
        .into_iter()
        .map(|piece| match piece {
            Piece::Item { bytes, .. } => Ok(PyBytes::new(py, bytes)),
            Piece::Unsplittable { offset, error } => {
                let rule = error.name();
                Err(with_attrs::<DecodeError>(
                    py,
                    format!("byte {offset}: {error}"),
                    &[
                        ("rule", rule.into_py_any(py).ok()),
                        ("offset", offset.into_py_any(py).ok()),
                    ],
                ))
            }
        })
        .collect()
}

/// A Python value as a P1 value.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    convert(obj, 0)
}

fn convert(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    let py = obj.py();
    if obj.is_none() {
        return Ok(Value::Null);
    }
    // bool before int: Python's bool is an int.
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.extract::<bool>()?));
    }
    if obj.is_instance_of::<PyInt>() {
        let n: i128 = obj.extract().map_err(|_| out_of_range(py))?;
        if n > i128::from(u64::MAX) || n < -1 - i128::from(u64::MAX) {
            return Err(out_of_range(py));
        }
        return Ok(Value::from(n));
    }
    if obj.is_instance_of::<PyFloat>() {
        let f: f64 = obj.extract()?;
        return Value::from_f64(f).map_err(|e| encode_error(py, e.name(), e.to_string()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Text(s.to_str()?.to_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    if obj.is_instance_of::<PyByteArray>() || obj.is_instance_of::<PyMemoryView>() {
        return Ok(Value::Bytes(obj.extract::<Vec<u8>>()?));
    }
    let is_container = obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PyDict>();
    if is_container && depth >= Limits::DEFAULT.max_depth {
        return Err(encode_error(
            py,
            "depth_exceeded",
            format!(
                "nesting deeper than {} (P1 limit)",
                Limits::DEFAULT.max_depth
            ),
        ));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return obj
            .try_iter()?
            .map(|item| convert(&item?, depth + 1))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array);
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in dict.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(encode_error(
                    py,
                    "non_text_key",
                    format!(
                        "map keys must be str (P1), not {}",
                        k.get_type()
                            .name()
                            .map(|n| n.to_string())
                            .unwrap_or_default()
                    ),
                ));
            };
            map.insert(key.to_str()?, convert(&v, depth + 1)?);
        }
        return Ok(Value::Map(map));
    }
    Err(encode_error(
        py,
        "unsupported_type",
        format!(
            "{} has no P1 encoding (use None, bool, int, float, str, bytes, list, tuple or dict)",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ),
    ))
}

fn out_of_range(py: Python<'_>) -> PyErr {
    encode_error(
        py,
        "integer_range",
        "integer outside the CBOR range -2**64 .. 2**64-1 (P1)".into(),
    )
}

/// A decoded CBOR value as a Python value.
pub(crate) fn to_py<'py>(py: Python<'py>, v: ValueRef<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        ValueRef::Unsigned(n) => n.into_pyobject(py)?.into_any(),
        ValueRef::Negative(n) => (-1 - i128::from(n)).into_pyobject(py)?.into_any(),
        ValueRef::Bytes(b) => PyBytes::new(py, b).into_any(),
        ValueRef::Text(s) => PyString::new(py, s).into_any(),
        ValueRef::Array(a) => {
            let list = PyList::empty(py);
            for item in a.iter() {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        ValueRef::Map(m) => {
            let dict = PyDict::new(py);
            for (k, item) in m.iter() {
                dict.set_item(k, to_py(py, item)?)?;
            }
            dict.into_any()
        }
        ValueRef::Float(f) => PyFloat::new(py, f).into_any(),
        ValueRef::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        ValueRef::Null => py.None().into_bound(py),
    })
}
