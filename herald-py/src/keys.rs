//! Keys (CLI.md key files; P2 sigils) and keyrings.
//!
//! A `SigningKey` holds its secret inside Rust: Python sees its sigil and
//! public key, never the seed (no attribute, `repr`, pickle or copy gives
//! it out; `save` writes it to a new 0600 file in the `herald keygen`
//! format, `herald_verify::save_key_file`).

use std::path::PathBuf;

use herald_core::{PublicKey, SigilForm, SigningKey as CoreKey};
use herald_verify::{Keyring as CoreKeyring, Provenance, key_line, labelled_key_line};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyModule};

use crate::errors::{KeyError_, KeyringError};

/// Add `SigningKey` and `Keyring`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SigningKey>()?;
    m.add_class::<Keyring>()?;
    Ok(())
}

/// An Ed25519 signing key (P5). The seed never leaves Rust except into a
/// key file written by `save`.
#[pyclass(module = "herald", frozen)]
pub(crate) struct SigningKey {
    pub(crate) key: CoreKey,
}

#[pymethods]
impl SigningKey {
    /// A new key from the operating system's CSPRNG.
    #[staticmethod]
    fn generate() -> Self {
        Self {
            key: CoreKey::generate_os(),
        }
    }

    /// The key of a 32-byte RFC 8032 seed (for test vectors and HSM-held
    /// seeds; prefer `generate` and `load`).
    #[staticmethod]
    fn from_seed(seed: &[u8]) -> PyResult<Self> {
        let seed: &[u8; 32] = seed
            .try_into()
            .map_err(|_| PyValueError::new_err("a seed is exactly 32 bytes"))?;
        Ok(Self {
            key: CoreKey::from_seed(seed),
        })
    }

    /// Load a secret key file (`herald keygen`'s format); refused when
    /// group or others may read it.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        herald_verify::load_key_file(&path)
            .map(|key| Self { key })
            .map_err(|e| KeyError_::new_err(e.to_string()))
    }

    /// Write the key to the new file `path` (it must not exist) with mode
    /// 0600; with `public=True` also `path` with `.pub` for `.key`, one
    /// keyring line labelled with the file's stem (CLI.md), as
    /// `herald keygen -o NAME` writes.
    #[pyo3(signature = (path, *, public = true))]
    fn save(&self, path: PathBuf, public: bool) -> PyResult<()> {
        herald_verify::save_key_file(&path, &self.key)
            .map_err(|e| KeyError_::new_err(e.to_string()))?;
        if public {
            let pub_path = path.with_extension("pub");
            if pub_path != path {
                // Labelled with the file's stem, as `herald keygen -o NAME` does.
                let label = path
                    .file_stem()
                    .map(|s| s.to_string_lossy())
                    .unwrap_or_default();
                let line = labelled_key_line(&self.key.public_key(), &label);
                std::fs::write(&pub_path, line + "\n")
                    .map_err(|e| KeyError_::new_err(format!("{}: {e}", pub_path.display())))?;
            }
        }
        Ok(())
    }

    /// The default sigil (P2).
    #[getter]
    fn sigil(&self) -> String {
        self.key.sigil(SigilForm::Default).to_string()
    }

    /// The long sigil (P2).
    #[getter]
    fn sigil_long(&self) -> String {
        self.key.sigil(SigilForm::Long).to_string()
    }

    /// The 32-byte public key.
    #[getter]
    fn public_key<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.key.public_key().as_bytes())
    }

    /// The key's keyring line (CLI.md): `<sigil> ed25519 <hex>`.
    fn keyring_line(&self) -> String {
        key_line(&self.key.public_key())
    }

    fn __repr__(&self) -> String {
        format!("SigningKey({})", self.sigil())
    }

    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a SigningKey is not pickled: save it to a 0600 key file",
        ))
    }

    fn __copy__(&self) -> PyResult<()> {
        self.__reduce__()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyResult<()> {
        self.__reduce__()
    }
}

/// Public keys pinned by the verifier (CLI.md keyring; P13: a key
/// resolves every sigil form of itself).
#[pyclass(module = "herald")]
#[derive(Clone, Default)]
pub(crate) struct Keyring {
    pub(crate) inner: CoreKeyring,
}

#[pymethods]
impl Keyring {
    /// An empty keyring, or one loaded from these files or directories.
    #[new]
    #[pyo3(signature = (*paths))]
    fn new(paths: Vec<PathBuf>) -> PyResult<Self> {
        let mut k = Self::default();
        for p in paths {
            k.load(p)?;
        }
        Ok(k)
    }

    /// Load a keyring file, or every `*.pub` of a directory; returns the
    /// number of keys read.
    fn load(&mut self, path: PathBuf) -> PyResult<usize> {
        self.inner
            .load(&path)
            .map(|l| l.keys)
            .map_err(|e| KeyringError::new_err(e.to_string()))
    }

    /// Parse keyring text; returns the number of keys read.
    #[pyo3(signature = (text, origin = "<text>"))]
    fn parse(&mut self, text: &str, origin: &str) -> PyResult<usize> {
        self.inner
            .parse(text, origin)
            .map_err(|e| KeyringError::new_err(e.to_string()))
    }

    /// Pin a key: a `SigningKey` (its public half) or 32 public key bytes.
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let public = public_key_of(key)?;
        self.inner.insert(public, Provenance::Pinned);
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!("Keyring({} keys)", self.inner.len())
    }
}

/// The public key of a `SigningKey` or of 32 bytes.
pub(crate) fn public_key_of(key: &Bound<'_, PyAny>) -> PyResult<PublicKey> {
    if let Ok(k) = key.cast::<SigningKey>() {
        return Ok(k.get().key.public_key());
    }
    let bytes: Vec<u8> = key
        .extract()
        .map_err(|_| PyTypeError::new_err("a key is a SigningKey or 32 public key bytes"))?;
    PublicKey::from_slice(&bytes).map_err(|e| KeyError_::new_err(e.to_string()))
}
