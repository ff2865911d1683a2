//! `verify` (spec §6, P10–P13; CLI.md `herald verify`): the same audit as
//! the command, over bytes, files or `Envelope`s, with the GIL released
//! while files are read and signatures checked. Its `Report` is typed, and
//! `Report.to_json()` is byte for byte the document `herald verify --json`
//! prints for the same input and options.

use std::path::PathBuf;
use std::sync::OnceLock;

use herald_core::Scope;
use herald_core::cbor::{Limits, MAX_NESTING};
use herald_verify::{
    AuditOptions, Input, ItemEnds, Keyring as CoreKeyring, Profile, ProfileEvidence,
    ProfileReport as CoreProfile, ReadLimits, Report as CoreReport, audit_compact_read,
    read_sequence_items,
};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView, PyModule, PyTuple};

use crate::envelope::Envelope;
use crate::errors::KeyringError;
use crate::keys::Keyring;

/// Largest file read as one input (the command's default cap, 1 GiB).
const MAX_INPUT: u64 = 1 << 30;

/// Add `verify` and the report classes.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Reason>()?;
    m.add_class::<EnvelopeVerdict>()?;
    m.add_class::<TraceVerdict>()?;
    m.add_class::<Summary>()?;
    m.add_class::<ProofVerdict>()?;
    m.add_class::<ProfileFinding>()?;
    m.add_class::<ProfileVerdict>()?;
    m.add_class::<Report>()?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    Ok(())
}

/// One reason (P11): its stable `code`, the signature `index` when it is
/// about one signature, and a human `detail`.
#[pyclass(module = "herald", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct Reason {
    code: &'static str,
    index: Option<u32>,
    detail: String,
}

#[pymethods]
impl Reason {
    fn __repr__(&self) -> String {
        match self.index {
            Some(i) => format!("Reason({}, index={i})", self.code),
            None => format!("Reason({})", self.code),
        }
    }
}

/// One envelope's verdict (P11, P13).
#[pyclass(module = "herald", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct EnvelopeVerdict {
    /// The id carried, hex; None when the input did not parse.
    id: Option<String>,
    /// The `from` sigil.
    #[pyo3(name = "from_")]
    from: Option<String>,
    status: &'static str,
    reasons: Vec<Reason>,
    /// Reasons given beyond those listed, by code: (code, count).
    unlisted_reasons: Vec<(&'static str, u32)>,
    key_source: Option<&'static str>,
    signing_key: Option<String>,
    lineage_consents: Vec<String>,
}

#[pymethods]
impl EnvelopeVerdict {
    /// The codes of its reasons, in order.
    #[getter]
    fn codes(&self) -> Vec<&'static str> {
        self.reasons.iter().map(|r| r.code).collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "EnvelopeVerdict({}, {}, {:?})",
            self.id.as_deref().unwrap_or("-"),
            self.status,
            self.codes()
        )
    }
}

/// One trace: its genesis, leaves and counts per status.
#[pyclass(module = "herald", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct TraceVerdict {
    trace: String,
    genesis: Option<String>,
    leaves: Vec<String>,
    valid: usize,
    partial: usize,
    invalid: usize,
}

#[pymethods]
impl TraceVerdict {
    fn __repr__(&self) -> String {
        format!(
            "TraceVerdict({}, valid={}, partial={}, invalid={})",
            self.trace, self.valid, self.partial, self.invalid
        )
    }
}

/// Counts per status.
#[pyclass(module = "herald", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct Summary {
    valid: usize,
    partial: usize,
    invalid: usize,
}

#[pymethods]
impl Summary {
    fn __repr__(&self) -> String {
        format!(
            "Summary(valid={}, partial={}, invalid={})",
            self.valid, self.partial, self.invalid
        )
    }
}

/// One bundled inclusion proof's verdict.
#[pyclass(module = "herald", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct ProofVerdict {
    id: Option<String>,
    log: Option<String>,
    index: Option<u64>,
    size: Option<u64>,
    status: &'static str,
    detail: String,
}

#[pymethods]
impl ProofVerdict {
    fn __repr__(&self) -> String {
        let index = self.index.map_or_else(|| "-".to_owned(), |i| i.to_string());
        format!(
            "ProofVerdict({}, index={index}, {})",
            self.id.as_deref().unwrap_or("-"),
            self.status
        )
    }
}

/// One finding of a protocol profile (docs/haven.md, docs/valp.md): its
/// stable `code`, the envelope's `id` (hex) and a `detail`.
#[pyclass(module = "herald", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct ProfileFinding {
    code: &'static str,
    id: String,
    detail: String,
}

#[pymethods]
impl ProfileFinding {
    fn __repr__(&self) -> String {
        format!("ProfileFinding({}, {})", self.code, self.id)
    }
}

/// A protocol profile's result (`herald verify --profile`): its findings
/// beside the reasons; no envelope's status changes.
#[pyclass(module = "herald", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct ProfileVerdict {
    name: &'static str,
    checked: usize,
    skipped: usize,
    findings: Vec<ProfileFinding>,
}

#[pymethods]
impl ProfileVerdict {
    /// The findings' codes, in order.
    #[getter]
    fn codes(&self) -> Vec<&'static str> {
        self.findings.iter().map(|f| f.code).collect()
    }

    fn __repr__(&self) -> String {
        format!("ProfileVerdict({}, {:?})", self.name, self.codes())
    }
}

impl ProfileVerdict {
    fn of(p: &CoreProfile) -> Self {
        Self {
            name: p.profile.name(),
            checked: p.checked,
            skipped: p.skipped,
            findings: p
                .findings
                .iter()
                .map(|f| ProfileFinding {
                    code: f.code.name(),
                    id: f.id.clone(),
                    detail: f.detail.clone(),
                })
                .collect(),
        }
    }
}

/// A verification: every envelope in input order, every trace, a summary
/// (CLI.md `herald verify --json`).
///
/// It keeps the audit's own report and converts on demand: `verify`
/// returns as soon as the audit is done, and only what is read is built
/// (each read of `envelopes`, `traces` or `proofs` gives a new list, as a
/// field of Python objects would not; the JSON document is written once,
/// on the first `to_json()` or `to_dict()`).
#[pyclass(module = "herald", frozen)]
pub(crate) struct Report {
    core: CoreReport,
    /// The protocol profile's result, when one was asked for.
    checked: Option<CoreProfile>,
    json: OnceLock<String>,
}

#[pymethods]
impl Report {
    /// Every envelope's verdict, in input order.
    #[getter]
    fn envelopes(&self) -> Vec<EnvelopeVerdict> {
        self.core
            .envelopes
            .iter()
            .map(EnvelopeVerdict::of)
            .collect()
    }

    /// Every trace.
    #[getter]
    fn traces(&self) -> Vec<TraceVerdict> {
        self.core.traces.iter().map(TraceVerdict::of).collect()
    }

    /// Counts per status.
    #[getter]
    fn summary(&self) -> Summary {
        let s = &self.core.summary;
        Summary {
            valid: s.valid,
            partial: s.partial,
            invalid: s.invalid,
        }
    }

    /// Every bundled inclusion proof's verdict.
    #[getter]
    fn proofs(&self) -> Vec<ProofVerdict> {
        self.core.proofs.iter().map(ProofVerdict::of).collect()
    }

    /// Unparseable items past the first 1000, counted but not listed.
    #[getter]
    fn unlisted(&self) -> usize {
        self.core.unlisted
    }

    /// The protocol profile's result, when one was asked for.
    #[getter]
    fn profile(&self) -> Option<ProfileVerdict> {
        self.checked.as_ref().map(ProfileVerdict::of)
    }

    /// True when every envelope is valid (and there was one), every
    /// bundled proof holds and the profile (if any) found nothing:
    /// `herald verify` exits 0.
    #[getter]
    fn ok(&self) -> bool {
        self.core.all_valid() && self.checked.as_ref().is_none_or(CoreProfile::is_clean)
    }

    /// The `herald verify --json` document for the same input, without
    /// the final newline.
    fn to_json(&self) -> PyResult<&str> {
        if let Some(json) = self.json.get() {
            return Ok(json);
        }
        let mut json = Vec::new();
        match &self.checked {
            Some(p) => self.core.write_document_with_profile(p, &mut json),
            None => self.core.write_document(&mut json),
        }
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let json = String::from_utf8(json).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(self.json.get_or_init(|| json))
    }

    /// `json.loads(self.to_json())`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = self.to_json()?;
        py.import("json")?.call_method1("loads", (json,))
    }

    fn __bool__(&self) -> bool {
        self.ok()
    }

    fn __len__(&self) -> usize {
        self.core.envelopes.len()
    }

    fn __repr__(&self) -> String {
        let s = &self.core.summary;
        format!(
            "Report(valid={}, partial={}, invalid={}, ok={})",
            s.valid,
            s.partial,
            s.invalid,
            if self.ok() { "True" } else { "False" }
        )
    }
}

impl EnvelopeVerdict {
    fn of(e: &herald_verify::EnvelopeReport) -> Self {
        Self {
            id: e.id.clone(),
            from: e.from.clone(),
            status: e.status().name(),
            reasons: e
                .reasons
                .iter()
                .map(|r| Reason {
                    code: r.code.name(),
                    index: r.index,
                    detail: r.detail.clone(),
                })
                .collect(),
            key_source: e.key_source.map(|k| k.name()),
            signing_key: e.signing_key.map(|s| s.to_string()),
            lineage_consents: e.lineage_consents.clone(),
            unlisted_reasons: e
                .unlisted_reasons
                .iter()
                .map(|u| (u.code.name(), u.count))
                .collect(),
        }
    }
}

impl TraceVerdict {
    fn of(t: &herald_verify::TraceReport) -> Self {
        Self {
            trace: t.trace.clone(),
            genesis: t.genesis.clone(),
            leaves: t.leaves.clone(),
            valid: t.valid,
            partial: t.partial,
            invalid: t.invalid,
        }
    }
}

impl ProofVerdict {
    fn of(p: &herald_verify::ProofReport) -> Self {
        Self {
            id: p.id.clone(),
            log: p.log.clone(),
            index: p.index,
            size: p.size,
            status: p.status.name(),
            detail: p.detail.clone(),
        }
    }
}

/// One input before reading: bytes in hand, or a file to read.
enum Source {
    Bytes(String, Vec<u8>),
    File(PathBuf),
}

fn source(item: &Bound<'_, PyAny>, n: usize) -> PyResult<Source> {
    if let Ok(e) = item.cast::<Envelope>() {
        return Ok(Source::Bytes(
            format!("<envelope {n}>"),
            e.get().inner.as_bytes().to_vec(),
        ));
    }
    if let Ok(b) = item.cast::<PyBytes>() {
        return Ok(Source::Bytes(format!("<bytes {n}>"), b.as_bytes().to_vec()));
    }
    if item.is_instance_of::<PyByteArray>() || item.is_instance_of::<PyMemoryView>() {
        return Ok(Source::Bytes(format!("<bytes {n}>"), item.extract()?));
    }
    item.extract::<PathBuf>().map(Source::File).map_err(|_| {
        PyTypeError::new_err(
            "verify: each input is bytes, an Envelope, or a path (str or os.PathLike)",
        )
    })
}

fn sources(inputs: &Bound<'_, PyAny>) -> PyResult<Vec<Source>> {
    if inputs.is_instance_of::<PyList>() || inputs.is_instance_of::<PyTuple>() {
        inputs
            .try_iter()?
            .enumerate()
            .map(|(n, item)| source(&item?, n))
            .collect()
    } else {
        Ok(vec![source(inputs, 0)?])
    }
}

fn keyring_of(keyring: Option<&Bound<'_, PyAny>>) -> PyResult<CoreKeyring> {
    let Some(k) = keyring else {
        return Ok(CoreKeyring::new());
    };
    let mut out = CoreKeyring::new();
    let mut add = |item: &Bound<'_, PyAny>| -> PyResult<()> {
        if let Ok(k) = item.cast::<Keyring>() {
            // Every key of a Keyring object is pinned (load, parse, add).
            for key in k.borrow().inner.keys() {
                out.insert(key, herald_verify::Provenance::Pinned);
            }
            return Ok(());
        }
        let path: PathBuf = item
            .extract()
            .map_err(|_| PyTypeError::new_err("keyring: a Keyring, a path, or a list of them"))?;
        out.load(&path)
            .map(|_| ())
            .map_err(|e| KeyringError::new_err(e.to_string()))
    };
    if k.is_instance_of::<PyList>() || k.is_instance_of::<PyTuple>() {
        for item in k.try_iter()? {
            add(&item?)?;
        }
    } else {
        add(k)?;
    }
    Ok(out)
}

/// Verify envelopes, traces and bundles as one set (CLI.md: all inputs
/// form one set for parents and replays), against `keyring`, at `now`
/// (default: the clock), requiring a valid signature in each scope of
/// `require`; with `profile` (`"haven"` or `"valp"`), that protocol's
/// rules are checked over the verified set, with `evidence` the bytes of
/// each `content_ref` (docs/valp.md). The GIL is released while files are
/// read and checked.
#[pyfunction]
#[pyo3(signature = (inputs, *, keyring = None, now = None, require = Vec::new(), skew = None, profile = None, evidence = None))]
#[allow(clippy::too_many_arguments)]
fn verify(
    py: Python<'_>,
    inputs: &Bound<'_, PyAny>,
    keyring: Option<&Bound<'_, PyAny>>,
    now: Option<u64>,
    require: Vec<String>,
    skew: Option<u64>,
    profile: Option<String>,
    evidence: Option<std::collections::BTreeMap<String, Vec<u8>>>,
) -> PyResult<Report> {
    let profile = profile
        .map(|p| Profile::from_name(&p))
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("profile: {e}")))?;
    let evidence = evidence.unwrap_or_default();
    let sources = sources(inputs)?;
    let keyring = keyring_of(keyring)?;
    let required_scopes = require
        .iter()
        .map(|s| {
            Scope::from_name(s)
                .filter(|s| *s != Scope::Origin)
                .ok_or_else(|| PyValueError::new_err(format!("require: {s:?} is not a P6 scope")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let mut options = AuditOptions {
        now: Some(match now {
            Some(n) => n,
            None => crate::envelope::now()?,
        }),
        required_scopes,
        ..AuditOptions::default()
    };
    if let Some(s) = skew {
        options.skew = s;
    }
    let report = py.detach(
        move || -> Result<(CoreReport, Option<CoreProfile>), String> {
            let limits = ReadLimits {
                max_item: Limits::DEFAULT.max_size,
                max_depth: MAX_NESTING,
                max_items: options.max_envelopes,
                max_bytes: MAX_INPUT,
            };
            // Where each file's items end, as read: the audit cuts them
            // there instead of walking them again.
            let mut ends = Vec::with_capacity(sources.len());
            let inputs = sources
                .into_iter()
                .map(|s| match s {
                    Source::Bytes(name, bytes) => {
                        ends.push(ItemEnds::default());
                        Ok(Input { name, bytes })
                    }
                    Source::File(path) => {
                        let (mut file, meta) =
                            herald_verify::open_regular(&path).map_err(|e| e.to_string())?;
                        let (bytes, items) = read_sequence_items(&mut file, &limits, meta.len())
                            .map_err(|e| format!("{}: {e}", path.display()))?;
                        ends.push(items);
                        Ok(Input {
                            name: path.display().to_string(),
                            bytes,
                        })
                    }
                })
                .collect::<Result<Vec<_>, String>>()?;
            let compact = audit_compact_read(&inputs, ends, &keyring, &options);
            let given: Vec<ProfileEvidence<'_>> = evidence
                .iter()
                .map(|(r, b)| ProfileEvidence::new(r, b))
                .collect();
            let checked = profile.map(|p| compact.check_profile(p, &given));
            Ok((compact.into_report(), checked))
        },
    );
    let (core, checked) = report.map_err(PyOSError::new_err)?;
    Ok(Report {
        core,
        checked,
        json: OnceLock::new(),
    })
}
