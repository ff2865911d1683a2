//! The recorder's parts, herald-agent's (one implementation with the MCP
//! wrapper `herald mcp proxy`), for `herald.FileSink`, `herald.ConduitSink`
//! and the middlewares' tool results:
//! - `TraceFile`: the append-only, crash-safe trace file (created 0600, a
//!   torn tail cut when opened, a failed append rolled back);
//! - `ConduitSender`: CONDUIT.md `POST /v1/envelopes`, delivered only with
//!   a receipt under the conduit's key, refused only when it signed the
//!   refusal (spec §5.2);
//! - `sandbox_cosign`: the `tool_sandbox` co-signature, with no `ts`
//!   (PROFILE P5: a claim nothing would sign).
//!
//! The network and the disk are used with the GIL released.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use herald_agent::sender::SendError;
use herald_agent::{Conduit, TraceFile as CoreTraceFile, sandbox};
use herald_core::{PublicKey, SigilForm};
use herald_http::client::{Client, Limits, Request, Url, blocking};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyModule;

use crate::envelope::Envelope;
use crate::keys::SigningKey;

/// Add `TraceFile`, `ConduitSender` and `sandbox_cosign`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TraceFile>()?;
    m.add_class::<ConduitSender>()?;
    m.add_function(wrap_pyfunction!(sandbox_cosign, m)?)?;
    Ok(())
}

/// `envelope` co-signed `tool_sandbox` by `key`, without a `ts` (the rule
/// of every HERALD recorder, PROFILE P5).
#[pyfunction]
fn sandbox_cosign(envelope: &Envelope, key: &SigningKey) -> PyResult<Envelope> {
    sandbox::cosign(&envelope.inner, &key.key)
        .map(|inner| Envelope { inner })
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// An open trace file (a CBOR sequence of envelopes, CLI.md *Files*):
/// each `append` is written and `fdatasync`ed before it returns.
#[pyclass(module = "herald", frozen)]
pub(crate) struct TraceFile {
    path: PathBuf,
    inner: Mutex<CoreTraceFile>,
    recovered: u64,
}

#[pymethods]
impl TraceFile {
    /// Open or create (mode 0600) the trace file at `path`, cutting a torn
    /// last item left by a crash; `OSError` when it cannot be opened or
    /// is not a trace file.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let opened = py.detach(|| CoreTraceFile::open(&path));
        let file = opened.map_err(|e| PyOSError::new_err(e.to_string()))?;
        Ok(Self {
            recovered: file.recovered(),
            path,
            inner: Mutex::new(file),
        })
    }

    /// Append `data` (one envelope) and make it durable; on failure the
    /// file is cut back to what it held and `OSError` is raised.
    fn append(&self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let data = data.to_vec();
        py.detach(|| {
            let mut file = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            file.append(&data)
        })
        .map_err(|e| PyOSError::new_err(e.to_string()))
    }

    /// Bytes of a torn last item cut when the file was opened.
    #[getter]
    fn recovered(&self) -> u64 {
        self.recovered
    }

    /// The file's path.
    #[getter]
    fn path(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }

    /// The file's length: the end of its last whole envelope.
    fn __len__(&self) -> usize {
        let file = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        usize::try_from(file.len()).unwrap_or(usize::MAX)
    }
}

/// What `ConduitSender.deliver` found: `forwarded` (the envelope with its
/// receipt) and `index` when delivered; else `status` (0 without an
/// answer), the signed refusal's `reason` (empty when not signed),
/// `signed`, and `message`.
type Outcome = (u16, Option<Vec<u8>>, Option<u64>, String, bool, String);

/// A read's answer: `(status, headers, body)`, header names lowercased.
type Page = (u16, Vec<(String, String)>, Vec<u8>);

/// A conduit that must acknowledge each envelope with a receipt (spec
/// §5.2, herald-agent's sender).
#[pyclass(module = "herald", frozen)]
pub(crate) struct ConduitSender {
    conduit: Conduit,
    /// Bounds of a read (`get`): the sender's timeout, a page of at most
    /// 64 MiB (CONDUIT.md *Bounded answers*).
    reads: Limits,
}

#[pymethods]
impl ConduitSender {
    /// The conduit at `url` (`http://HOST[:PORT][/PREFIX]`), each request
    /// within `timeout` seconds; its key `conduit_key` (32 bytes) when
    /// given, else fetched from its well-known document on first use and
    /// pinned. `ValueError` for a URL or key that cannot be used.
    #[new]
    #[pyo3(signature = (url, *, timeout = 10.0, conduit_key = None))]
    fn new(url: &str, timeout: f64, conduit_key: Option<&[u8]>) -> PyResult<Self> {
        let parsed = Url::parse(url).map_err(|e| PyValueError::new_err(format!("{url}: {e}")))?;
        let timeout = Duration::try_from_secs_f64(timeout)
            .ok()
            .filter(|t| !t.is_zero())
            .ok_or_else(|| PyValueError::new_err("timeout must be a positive number of seconds"))?;
        let key = conduit_key
            .map(PublicKey::from_slice)
            .transpose()
            .map_err(|e| PyValueError::new_err(format!("conduit_key: {e}")))?;
        Ok(Self {
            conduit: Conduit::with_timeout(parsed, key, timeout),
            reads: Limits {
                connect_timeout: timeout,
                timeout,
                max_body: 64 << 20,
            },
        })
    }

    /// The conduit's key (given, or fetched and pinned); `OSError` when it
    /// cannot be had.
    fn key(&self, py: Python<'_>) -> PyResult<Vec<u8>> {
        let conduit = &self.conduit;
        py.detach(|| blocking::run(conduit.key()))
            .map_err(|e| PyOSError::new_err(e.to_string()))?
            .map(|k| k.as_bytes().to_vec())
            .map_err(|e| PyOSError::new_err(e.to_string()))
    }

    /// Post `envelope` and check the answer (see `Outcome` in the source:
    /// `(status, forwarded, index, reason, signed, message)`).
    fn deliver(&self, py: Python<'_>, envelope: &[u8]) -> Outcome {
        let conduit = &self.conduit;
        let sent = envelope.to_vec();
        let answer = py.detach(|| blocking::run(conduit.send(&sent)));
        match answer {
            Err(e) => (0, None, None, String::new(), false, e.to_string()),
            Ok(Ok(d)) => (
                201,
                Some(d.envelope),
                d.index,
                String::new(),
                false,
                String::new(),
            ),
            Ok(Err(SendError::Refused { status, refusal })) => {
                let message = format!("refused: {status} {}", refusal.reason);
                (status, None, None, refusal.reason, true, message)
            }
            Ok(Err(e @ SendError::Unproven { status, .. })) => {
                (status, None, None, String::new(), false, e.to_string())
            }
            Ok(Err(e)) => (0, None, None, String::new(), false, e.to_string()),
        }
    }

    /// `GET path` (a path and query under the conduit's URL): `(status,
    /// headers, body)`, header names lowercased; `ValueError` for a path
    /// that is not one, `OSError` without a whole answer. With `key`, the
    /// request is signed by it for its sigil (CONDUIT.md *Who may read
    /// what*: RFC 9421 as herald-http signs it).
    #[pyo3(signature = (path, key = None))]
    fn get(&self, py: Python<'_>, path: &str, key: Option<&SigningKey>) -> PyResult<Page> {
        let url = self
            .conduit
            .url()
            .join(path)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let client = Client::new(self.reads);
        let mut request = Request::get(url.clone());
        if let Some(k) = key {
            let sigil = k.key.sigil(SigilForm::Default).to_string();
            request = request.signed_now(&k.key, &sigil);
        }
        py.detach(|| blocking::send(&client, &request))
            .map(|r| (r.status, r.headers, r.body))
            .map_err(|e| PyOSError::new_err(format!("{url}: {e}")))
    }

    /// The conduit's base URL.
    #[getter]
    fn url(&self) -> String {
        self.conduit.url().to_string()
    }
}
