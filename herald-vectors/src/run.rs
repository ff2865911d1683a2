//! The conformance runner: every case of a vectors directory through this
//! implementation, one failure message per case that disagrees.

use std::fmt;
use std::path::{Path, PathBuf};

use herald_core::cbor;
use herald_core::{
    EnvelopeRef, KeyError, KeyResolver, PublicKey, Scope, Sigil, SigningKey, Status,
};
use herald_verify::{
    AuditOptions, CertificationItem, Certified, CheckError, ConsistencyProof, EnvelopeReport,
    HeraldList, Heralds, InclusionProof, Input, Io, Keyring, KeyringError, ProofReport, Receiver,
    Report, Store, audit, is_bundle,
};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::manifest::{
    BundleProofExpect, Case, CborExpect, EnvelopeExpect, ExpectReason, FORMAT, KeyringExpect,
    Manifest, ProofExpect, SigilExpect,
};

/// Most certification items a `heralds` case's file may hold.
const MAX_ITEMS: usize = 4096;

/// The vectors could not be read at all (not a failed case).
#[derive(Debug)]
#[non_exhaustive]
pub enum RunError {
    /// A file could not be read (its path and the operation named).
    Io(Io),
    /// The manifest is not valid JSON of the expected shape.
    Manifest(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => e.fmt(f),
            Self::Manifest(m) => write!(f, "manifest.json: {m}"),
        }
    }
}

impl std::error::Error for RunError {}

/// One case that disagreed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The case's name.
    pub case: String,
    /// What differed.
    pub message: String,
}

/// The outcome of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// This implementation and its version.
    pub implementation: String,
    /// SHA-256 of manifest.json, hex.
    pub vectors_digest: String,
    /// Cases that agreed.
    pub passed: usize,
    /// Cases that disagreed.
    pub failed: usize,
    /// Cases not run.
    pub skipped: usize,
    /// Every disagreement.
    pub failures: Vec<Failure>,
}

fn read(path: &Path) -> Result<Vec<u8>, RunError> {
    std::fs::read(path).map_err(|e| RunError::Io(Io::new(path, "read", e)))
}

/// Run every case of the vectors in `dir` (the folder holding manifest.json).
pub fn run(dir: &Path) -> Result<Outcome, RunError> {
    let manifest_bytes = read(&dir.join("manifest.json"))?;
    let manifest: Manifest =
        serde_json::from_slice(&manifest_bytes).map_err(|e| RunError::Manifest(e.to_string()))?;
    if manifest.format != FORMAT {
        return Err(RunError::Manifest(format!(
            "unknown format {:?}",
            manifest.format
        )));
    }
    let mut outcome = Outcome {
        implementation: format!("herald-rs {}", env!("CARGO_PKG_VERSION")),
        vectors_digest: herald_verify::hex(&Sha256::digest(&manifest_bytes)),
        passed: 0,
        failed: 0,
        skipped: 0,
        failures: Vec::new(),
    };
    let runner = Runner {
        dir,
        manifest: &manifest,
    };
    for case in &manifest.cases {
        match runner.case(case) {
            Ok(()) => outcome.passed += 1,
            Err(message) => {
                outcome.failed += 1;
                outcome.failures.push(Failure {
                    case: case.name().into(),
                    message,
                });
            }
        }
    }
    Ok(outcome)
}

struct Runner<'a> {
    dir: &'a Path,
    manifest: &'a Manifest,
}

impl Runner<'_> {
    fn file(&self, rel: &str) -> Result<Vec<u8>, String> {
        std::fs::read(self.dir.join(rel)).map_err(|e| format!("{rel}: {e}"))
    }

    fn keyring(&self, names: &[String]) -> Result<Keyring, String> {
        let mut ring = Keyring::new();
        for name in names {
            let entry = self
                .manifest
                .keys
                .iter()
                .find(|k| &k.name == name)
                .ok_or_else(|| format!("no key named {name:?}"))?;
            let text = self.file(&entry.keyring_file)?;
            let text = String::from_utf8(text).map_err(|e| e.to_string())?;
            ring.parse(&text, &entry.keyring_file)
                .map_err(|e| e.to_string())?;
        }
        Ok(ring)
    }

    fn case(&self, case: &Case) -> Result<(), String> {
        match case {
            Case::Cbor {
                input, hex, expect, ..
            } => {
                let bytes = self.file(input)?;
                if herald_verify::hex(&bytes) != *hex {
                    return Err(format!("{input} differs from its hex in the manifest"));
                }
                compare(expect, &cbor_verdict(&bytes))
            }
            Case::Sigil { input, expect, .. } => compare(expect, &self.sigil_verdict(input)),
            Case::Keyring { input, expect, .. } => {
                let text = String::from_utf8(self.file(input)?).map_err(|e| e.to_string())?;
                compare(expect, &keyring_verdict(&text, input))
            }
            Case::Verify {
                input,
                keyring,
                now,
                skew,
                required_scopes,
                expect,
                ..
            } => {
                let report = self.audit(input, keyring, *now, *skew, required_scopes)?;
                compare_envelopes(expect, &report.envelopes)
            }
            Case::Bundle {
                input,
                keyring,
                now,
                skew,
                required_scopes,
                expect,
                ..
            } => {
                if !is_bundle(&self.file(input)?) {
                    return Err(format!(
                        "{input} is not a bundle (a map with `format` and no `v`)"
                    ));
                }
                let report = self.audit(input, keyring, *now, *skew, required_scopes)?;
                compare_envelopes(&expect.envelopes, &report.envelopes)?;
                compare_proofs(&expect.proofs, &report.proofs)
            }
            Case::Heralds {
                input,
                keyring,
                heralds,
                log_policy,
                certifications,
                now,
                skew,
                required_scopes,
                expect,
                ..
            } => {
                let certified = self.certified(heralds, log_policy, certifications, *now)?;
                let mut ring = self.keyring(keyring)?;
                certified.extend_keyring(&mut ring);
                let opts = AuditOptions {
                    now: Some(*now),
                    skew: *skew,
                    required_scopes: scopes(required_scopes)?,
                    heralds: Some(std::sync::Arc::new(certified)),
                    ..AuditOptions::default()
                };
                let inputs = [Input {
                    name: input.clone(),
                    bytes: self.file(input)?,
                }];
                compare_envelopes(expect, &audit(&inputs, &ring, &opts).envelopes)
            }
            Case::Receive {
                inputs,
                keyring,
                now,
                expect,
                ..
            } => {
                let dir = scratch_dir()?;
                let result = (|| {
                    let store = Store::create(dir.join("replay.redb"), "herald-vectors")
                        .map_err(|e| e.to_string())?;
                    let now = *now;
                    let receiver =
                        Receiver::new(store, self.keyring(keyring)?).with_clock(move || now);
                    let mut got = Vec::new();
                    for input in inputs {
                        let bytes = self.file(input)?;
                        got.push(receiver.receive(&bytes).map_err(|e| e.to_string())?);
                    }
                    compare_envelopes(expect, &got)
                })();
                let _ = std::fs::remove_dir_all(&dir);
                result
            }
            Case::Proof {
                object,
                input,
                keyring,
                envelope,
                expect,
                ..
            } => {
                let bytes = self.file(input)?;
                let envelope = envelope.as_deref().map(|e| self.file(e)).transpose()?;
                let got =
                    proof_verdict(object, &bytes, &self.keyring(keyring)?, envelope.as_deref())?;
                compare(expect, &got)
            }
        }
    }

    /// A trace audit of the file `input` (a CBOR sequence, or a bundle)
    /// with the keys `keyring` pinned.
    fn audit(
        &self,
        input: &str,
        keyring: &[String],
        now: u64,
        skew: u64,
        required_scopes: &[String],
    ) -> Result<Report, String> {
        let opts = AuditOptions {
            now: Some(now),
            skew,
            required_scopes: scopes(required_scopes)?,
            ..AuditOptions::default()
        };
        let inputs = [Input {
            name: input.into(),
            bytes: self.file(input)?,
        }];
        Ok(audit(&inputs, &self.keyring(keyring)?, &opts))
    }

    /// What the Heralds of the list file `heralds`, their logs under the
    /// policy file `log_policy`, certify at `now` from the items of the
    /// file `certifications` (PROFILE P14).
    fn certified(
        &self,
        heralds: &str,
        log_policy: &str,
        certifications: &str,
        now: u64,
    ) -> Result<Certified, String> {
        let list = String::from_utf8(self.file(heralds)?).map_err(|e| format!("{heralds}: {e}"))?;
        let list = HeraldList::parse(&list, heralds).map_err(|e| e.to_string())?;
        let policy = herald_tlog::Policy::parse(&self.file(log_policy)?)
            .map_err(|e| format!("{log_policy}: {e}"))?;
        let heralds = Heralds::new(list, policy).map_err(|e| e.to_string())?;
        let items = CertificationItem::decode_sequence(&self.file(certifications)?, MAX_ITEMS)
            .map_err(|e| format!("{certifications}: {e}"))?;
        Ok(heralds.judge(&items, now))
    }

    fn sigil_verdict(&self, input: &str) -> SigilExpect {
        match Sigil::parse(input) {
            Err(e) => SigilExpect {
                valid: false,
                form: None,
                key: None,
                error: Some(e.name().into()),
            },
            Ok(s) => SigilExpect {
                valid: true,
                form: Some(s.form().map_or("reserved", |f| f.name()).into()),
                key: self
                    .manifest
                    .keys
                    .iter()
                    .find(|k| {
                        decode_hex32(&k.public)
                            .and_then(|b| PublicKey::from_bytes(&b).ok())
                            .is_some_and(|pk| s.names_key(pk.as_bytes()))
                    })
                    .map(|k| k.name.clone()),
                error: None,
            },
        }
    }
}

/// What loading the keyring `text` gives, in manifest terms.
pub fn keyring_verdict(text: &str, origin: &str) -> KeyringExpect {
    let refused = |line: usize, error: &str| KeyringExpect {
        valid: false,
        keys: None,
        line: Some(line),
        error: Some(error.into()),
    };
    match Keyring::new().parse(text, origin) {
        Ok(keys) => KeyringExpect {
            valid: true,
            keys: Some(keys),
            line: None,
            error: None,
        },
        Err(KeyringError::Syntax { line, .. }) => refused(line, "syntax"),
        Err(KeyringError::Sigil { line, .. }) => refused(line, "sigil"),
        Err(KeyringError::SigilMismatch { line, .. }) => refused(line, "sigil_mismatch"),
        Err(KeyringError::Key { line, error, .. }) => refused(
            line,
            match error {
                KeyError::NotAPoint => "not_a_point",
                KeyError::NonCanonical => "non_canonical",
                KeyError::SmallOrder => "small_order",
                KeyError::Torsion => "torsion",
                _ => "key",
            },
        ),
        Err(_) => refused(0, "io"),
    }
}

/// What the strict decoder says of `bytes`, in manifest terms.
pub fn cbor_verdict(bytes: &[u8]) -> CborExpect {
    match cbor::Value::decode(bytes) {
        Ok(v) if v.to_vec() == bytes => CborExpect {
            accept: true,
            rule: None,
            offset: None,
        },
        Ok(_) => CborExpect {
            accept: false,
            rule: Some("re-encoding differs".into()),
            offset: None,
        },
        Err(e) => CborExpect {
            accept: false,
            rule: Some(e.rule().name().into()),
            offset: Some(e.offset()),
        },
    }
}

/// The manifest form of a report's verdict.
pub fn envelope_verdict(report: &EnvelopeReport) -> EnvelopeExpect {
    let mut reasons: Vec<ExpectReason> = report
        .reasons
        .iter()
        .map(|r| ExpectReason {
            code: r.code.name().into(),
            index: r.index,
        })
        .collect();
    reasons.sort();
    EnvelopeExpect {
        status: report.status().name().into(),
        reasons,
    }
}

/// What this implementation says of a proof case (P9, CLI.md `herald log
/// verify-proof`), in manifest terms: `bytes` decoded strictly as `object`
/// (`inclusion` or `consistency`), verified against `keys`, and for an
/// inclusion proof with `envelope`, the leaf matched against it. The error
/// names are [`crate::manifest::PROOF_ERRORS`]. `Err` when the case itself is
/// unusable (an unknown object, an envelope that does not decode, an
/// envelope with a consistency proof).
pub fn proof_verdict(
    object: &str,
    bytes: &[u8],
    keys: &impl KeyResolver,
    envelope: Option<&[u8]>,
) -> Result<ProofExpect, String> {
    let envelope = envelope
        .map(|e| EnvelopeRef::decode(e).map_err(|e| format!("the case's envelope: {e}")))
        .transpose()?;
    let result = match object {
        "inclusion" => match InclusionProof::decode(bytes) {
            Err(_) => Err("format"),
            Ok(p) => p
                .verify(keys)
                .map_err(|e| e.name())
                .and_then(|_| envelope.map_or(Ok(()), |env| p.matches(&env).map_err(|e| e.name()))),
        },
        "consistency" => {
            if envelope.is_some() {
                return Err("an envelope is given only with an inclusion proof".into());
            }
            match ConsistencyProof::decode(bytes) {
                Err(_) => Err("format"),
                Ok(p) => p.verify(keys).map(|_| ()).map_err(|e| match e {
                    CheckError::Path(_) if p.shows_split_view() => "split_view",
                    e => e.name(),
                }),
            }
        }
        other => return Err(format!("unknown proof object {other:?}")),
    };
    Ok(match result {
        Ok(()) => ProofExpect {
            valid: true,
            error: None,
        },
        Err(name) => ProofExpect {
            valid: false,
            error: Some(name.into()),
        },
    })
}

fn compare<T: PartialEq + fmt::Debug>(want: &T, got: &T) -> Result<(), String> {
    if want == got {
        Ok(())
    } else {
        Err(format!("expected {want:?}, got {got:?}"))
    }
}

fn compare_envelopes(want: &[EnvelopeExpect], got: &[EnvelopeReport]) -> Result<(), String> {
    if want.len() != got.len() {
        return Err(format!(
            "expected {} envelopes, got {}",
            want.len(),
            got.len()
        ));
    }
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let g = envelope_verdict(g);
        if *w != g {
            return Err(format!("envelope {i}: expected {w:?}, got {g:?}"));
        }
    }
    Ok(())
}

/// A bundle's proofs, in order: each one's validity.
fn compare_proofs(want: &[BundleProofExpect], got: &[ProofReport]) -> Result<(), String> {
    if want.len() != got.len() {
        return Err(format!("expected {} proofs, got {}", want.len(), got.len()));
    }
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let valid = g.status == Status::Valid;
        if w.valid != valid {
            return Err(format!(
                "proof {i}: expected valid = {}, got valid = {valid} ({})",
                w.valid, g.detail
            ));
        }
    }
    Ok(())
}

fn scopes(names: &[String]) -> Result<Vec<Scope>, String> {
    names
        .iter()
        .map(|n| Scope::from_name(n).ok_or_else(|| format!("unknown scope {n:?}")))
        .collect()
}

fn scratch_dir() -> Result<PathBuf, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("herald-conformance-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn decode_hex32(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if s.len() != 64 {
        return None;
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// The signing key of a manifest key entry (used by the generator's self-check).
pub fn signing_key(seed_hex: &str) -> Option<SigningKey> {
    decode_hex32(seed_hex).map(|s| SigningKey::from_seed(&s))
}
