//! One inspector session: the inputs and keyrings the page gave, the audit
//! of them as one set (CLI.md: all inputs form one set), and its report as
//! the JSON the page draws. With a tlog-policy and a Herald list (PROFILE
//! P14, CLI.md *Resolution and Heralds*), the certifications among the
//! inputs are judged as `herald verify --heralds LIST --log-policy POLICY`
//! judges those given as inputs, and each entry lists what is certified
//! about its sender.

use std::borrow::Cow;
use std::sync::Arc;

use herald_core::cbor::{Limits, MAX_NESTING, ValueRef};
use herald_core::{EnvelopeRef, ReasonCode, Scope, Sigil};
use herald_tlog::Policy;
use herald_verify::{
    AuditOptions, Bundle, CertificationItem, Descriptions, EnvelopeReport, HeraldList, Heralds,
    InclusionProof, Input, Keyring, LogPolicy, Piece, Report, Source, audit, display_diagnostic,
    display_json, hex, is_bundle, self_described, sequence_pieces,
};
use serde::Serialize;

use super::annotate;

/// Inputs, keyrings and policy, then the report of their audit.
#[derive(Debug, Default)]
pub struct Session {
    inputs: Vec<Input>,
    keyring: Keyring,
    required: Vec<Scope>,
    /// The tlog-policy (`--log-policy`): what a bundled proof's tree head
    /// and a Herald's checkpoint must meet.
    policy: Option<Policy>,
    /// The Herald list, under `policy` (`--heralds`).
    heralds: Option<Heralds>,
    /// What the last audit's Heralds said about each certification.
    judged: Vec<Judged>,
    report: Option<Report>,
}

/// Most certification items read from the inputs (as the CLI reads them).
const MAX_ITEMS: usize = 65_536;

impl Session {
    /// An empty session.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add an input (an envelope, a CBOR sequence or a bundle). Its name is
    /// made unique in the session, so that a report entry leads back to it.
    pub fn add_input(&mut self, name: &str, bytes: Vec<u8>) {
        let mut unique = name.to_owned();
        let mut n = 1;
        while self.inputs.iter().any(|i| i.name == unique) {
            n += 1;
            unique = format!("{name} ({n})");
        }
        self.inputs.push(Input {
            name: unique,
            bytes,
        });
        self.report = None;
    }

    /// Add keyring text (CLI.md); `name` names it in errors. The number of
    /// keys, or the error, as `herald verify --keyring` reports it.
    pub fn add_keyring(&mut self, name: &str, text: &[u8]) -> Result<usize, String> {
        let text = core::str::from_utf8(text).map_err(|_| format!("{name}: not UTF-8 text"))?;
        self.report = None;
        self.keyring.parse(text, name).map_err(|e| e.to_string())
    }

    /// Require a valid signature in `scope` (`herald verify --require`).
    pub fn require(&mut self, scope: &str) -> Result<(), String> {
        let scope = Scope::from_name(scope).ok_or_else(|| format!("unknown scope {scope:?}"))?;
        self.required.push(scope);
        self.report = None;
        Ok(())
    }

    /// Set the tlog-policy (herald-tlog's policy file syntax), as `herald
    /// verify --log-policy` reads it; `name` names it in errors.
    pub fn set_log_policy(&mut self, name: &str, text: &[u8]) -> Result<(), String> {
        let policy = Policy::parse(text).map_err(|e| format!("{name}: {e}"))?;
        self.policy = Some(policy);
        self.heralds = None;
        self.report = None;
        Ok(())
    }

    /// Set the Herald list (PROFILE P14), checked against the tlog-policy
    /// set before, which must name each Herald's log (`herald verify
    /// --heralds` needs `--log-policy`). The Heralds and the threshold, as
    /// JSON (`{"threshold": N, "heralds": [{"sigil", "label"}]}`).
    pub fn set_heralds(&mut self, name: &str, text: &[u8]) -> Result<String, String> {
        let text = core::str::from_utf8(text).map_err(|_| format!("{name}: not UTF-8 text"))?;
        let list = HeraldList::parse(text, name).map_err(|e| e.to_string())?;
        let policy = self.policy.clone().ok_or_else(|| {
            format!(
                "{name}: a Herald list needs the tlog-policy that names each Herald's log \
                 (PROFILE P14): add it first"
            )
        })?;
        let listed = Listed {
            threshold: list.threshold(),
            heralds: list
                .heralds()
                .iter()
                .map(|h| ListedHerald {
                    sigil: h.sigil.to_string(),
                    label: h.label.clone(),
                })
                .collect(),
        };
        self.heralds = Some(Heralds::new(list, policy).map_err(|e| format!("{name}: {e}"))?);
        self.report = None;
        Ok(serde_json::to_string(&listed).unwrap_or_default())
    }

    /// Audit every input as one set at time `now` (Unix seconds; `None`
    /// skips the time checks), and return the report as `herald verify
    /// --json` prints it (without the final newline). With Heralds (and a
    /// time), the inputs that are certification items are judged instead
    /// of audited, with the certifications bundles carry, as `herald
    /// verify --heralds` judges those given to it (none is fetched here).
    pub fn verify(&mut self, now: Option<u64>) -> String {
        let mut options = AuditOptions {
            now,
            required_scopes: self.required.clone(),
            log_policy: self
                .policy
                .clone()
                .map(|p| Arc::new(p) as Arc<dyn LogPolicy>),
            ..AuditOptions::default()
        };
        let mut inputs = Cow::Borrowed(&self.inputs[..]);
        let mut keyring = Cow::Borrowed(&self.keyring);
        self.judged.clear();
        if let (Some(heralds), Some(now)) = (&self.heralds, now) {
            let (items, kept) = certification_items(&self.inputs);
            let certified = heralds.judge(&items, now);
            self.judged = certified
                .judgements()
                .iter()
                .map(|j| Judged {
                    id: j.id.map(|id| hex(&id)),
                    herald: j.herald.map(|h| h.to_string()),
                    subject: j.subject.map(|s| s.to_string()),
                    claim: j.claim.clone(),
                    counts: j.verdict.is_ok(),
                    why: j.verdict.as_ref().err().map(ToString::to_string),
                })
                .collect();
            certified.extend_keyring(keyring.to_mut());
            options.heralds = Some(Arc::new(certified));
            if let Some(kept) = kept {
                inputs = Cow::Owned(kept);
            }
        }
        let report = audit(&inputs, &keyring, &options);
        let mut out = Vec::new();
        // Writing to a Vec cannot fail; an error would leave it empty.
        let _ = report.write_document(&mut out);
        self.report = Some(report);
        String::from_utf8(out).unwrap_or_default()
    }

    /// The nodes of the last report, for the DAG and the list: one object
    /// per report entry, in report order (`[]` before [`Session::verify`]).
    pub fn nodes(&self) -> String {
        let Some(report) = &self.report else {
            return "[]".into();
        };
        let described: Descriptions<'_> = report
            .envelopes
            .iter()
            .filter_map(|entry| self_described(entry, self.bytes_of(entry)?))
            .collect();
        let nodes: Vec<Node<'_>> = report
            .envelopes
            .iter()
            .map(|entry| self.node(entry, &described))
            .collect();
        serde_json::to_string(&nodes).unwrap_or_default()
    }

    /// Everything about report entry `index`: its display form, annotated
    /// bytes, signature chain and explained reasons; `None` past the end.
    pub fn detail(&self, index: usize) -> Option<String> {
        let entry = self.report.as_ref()?.envelopes.get(index)?;
        let bytes = self.bytes_of(entry);
        let envelope = bytes.and_then(|b| EnvelopeRef::decode(b).ok());
        let detail = Detail {
            index,
            input: &entry.source.input,
            offset: entry.source.offset,
            size: bytes.map_or(0, <[u8]>::len),
            display: envelope
                .as_ref()
                .map(|e| display_json(ValueRef::Map(e.map()))),
            diagnostic: envelope
                .as_ref()
                .map(|e| display_diagnostic(ValueRef::Map(e.map()))),
            payload: envelope.as_ref().map(|e| display_diagnostic(e.payload())),
            annotated: bytes.map(annotate::annotate).unwrap_or_default(),
            signatures: envelope
                .as_ref()
                .map(|e| self.signatures(e, entry))
                .unwrap_or_default(),
            reasons: entry
                .reasons
                .iter()
                .map(|r| Reason {
                    code: r.code.name(),
                    index: r.index,
                    detail: &r.detail,
                    warning: r.code.is_warning(),
                    explanation: herald_verify::explain(r.code).map(|e| e.text),
                    section: herald_verify::explain(r.code).map(|e| e.section),
                })
                .collect(),
            unlisted_reasons: entry
                .unlisted_reasons
                .iter()
                .map(|u| (u.code.name(), u.count))
                .collect(),
            key_source: entry.key_source.map(|k| k.name()),
            signing_key: entry.signing_key.map(|by| by.to_string()),
        };
        serde_json::to_string(&detail).ok()
    }

    /// What the Heralds of the last audit said about each certification
    /// given: whether it counts, and the rule it broke when not (as
    /// `herald verify --heralds` notes them on standard error).
    pub fn certifications(&self) -> String {
        serde_json::to_string(&self.judged).unwrap_or_default()
    }

    /// The signed tree head of each bundled inclusion proof of the last
    /// report, in its order (`null` for one that did not decode): the
    /// report says whether each proof holds, this what it is a proof
    /// against.
    pub fn proofs(&self) -> String {
        let Some(report) = &self.report else {
            return "[]".into();
        };
        let heads: Vec<Option<TreeHead>> = report
            .proofs
            .iter()
            .map(|p| {
                let proof = InclusionProof::decode(self.bytes_at(&p.source)?).ok()?;
                let sth = proof.sth();
                Some(TreeHead {
                    log: sth.log().to_string(),
                    size: sth.size(),
                    root: hex(sth.root()),
                    ts: sth.ts(),
                })
            })
            .collect();
        serde_json::to_string(&heads).unwrap_or_default()
    }

    fn node<'s>(&'s self, entry: &'s EnvelopeReport, described: &Descriptions<'s>) -> Node<'s> {
        let envelope = self
            .bytes_of(entry)
            .and_then(|b| EnvelopeRef::decode(b).ok());
        let label = entry.from.as_deref().and_then(|f| self.label(f));
        Node {
            id: entry.id.as_deref(),
            parent: entry.parent.as_deref(),
            trace: entry.trace.as_deref(),
            from: entry.from.as_deref(),
            label,
            described: entry
                .from
                .as_deref()
                .filter(|_| label.is_none())
                .and_then(|f| Sigil::parse(f).ok())
                .and_then(|f| described.get(&f))
                .map(|d| d.description),
            to: envelope.as_ref().and_then(|e| e.to()).map(|(to, _)| to),
            kind: entry.kind.map(|k| k.name()),
            ts: envelope.as_ref().map(EnvelopeRef::ts),
            status: entry.status().name(),
            codes: entry.reasons.iter().map(|r| r.code.name()).collect(),
        }
    }

    /// The keyring label of the key `sigil` names, if any.
    fn label(&self, sigil: &str) -> Option<&str> {
        let sigil = Sigil::parse(sigil).ok()?;
        let (key, _) = self.keyring.lookup(&sigil)?;
        self.keyring.label(&key)
    }

    /// The bytes of the item a report entry was made from: the well-formed
    /// CBOR item at its source offset, or (for input that does not split)
    /// up to [`UNSPLIT_SHOWN`] bytes from there.
    fn bytes_of(&self, entry: &EnvelopeReport) -> Option<&[u8]> {
        self.bytes_at(&entry.source)
    }

    /// The item at `source` (as [`Session::bytes_of`]).
    fn bytes_at(&self, source: &Source) -> Option<&[u8]> {
        let input = self.inputs.iter().find(|i| i.name == source.input)?;
        let rest = input.bytes.get(source.offset..)?;
        match sequence_pieces(rest, Limits::DEFAULT.max_size, MAX_NESTING).next() {
            Some(Piece::Item { bytes, .. }) => Some(bytes),
            _ => rest.get(..UNSPLIT_SHOWN).or(Some(rest)),
        }
    }

    fn signatures<'e>(
        &'e self,
        envelope: &EnvelopeRef<'e>,
        entry: &'e EnvelopeReport,
    ) -> Vec<Signature<'e>> {
        envelope
            .signatures()
            .enumerate()
            .map(|(i, sig)| {
                let index = u32::try_from(i).ok();
                let codes: Vec<&'static str> = entry
                    .reasons
                    .iter()
                    .filter(|r| r.index.is_some() && r.index == index)
                    .map(|r| r.code.name())
                    .collect();
                let origin_broken = i == 0
                    && entry.reasons.iter().any(|r| {
                        r.index.is_none()
                            && matches!(
                                r.code,
                                ReasonCode::IdMismatch | ReasonCode::OriginSignerMismatch
                            )
                    });
                // Every reason that names a signature is listed (PROFILE
                // P11 revision 3), so no fault about it can be unlisted.
                let verdict = if !codes.is_empty() || origin_broken {
                    "failed"
                } else {
                    "verified"
                };
                match sig {
                    Ok(sig) => Signature {
                        index: i,
                        scope: Some(sig.scope),
                        by: Some(sig.by),
                        label: self.label(sig.by),
                        ts: sig.ts,
                        key_source: (i == 0)
                            .then_some(entry.key_source.map(|k| k.name()))
                            .flatten(),
                        verdict,
                        codes,
                    },
                    Err(_) => Signature {
                        index: i,
                        scope: None,
                        by: None,
                        label: None,
                        ts: None,
                        key_source: None,
                        verdict: "failed",
                        codes,
                    },
                }
            })
            .collect()
    }
}

/// The certification items among `inputs` (each input that reads as
/// `{certification, proof}` items throughout) and those the bundles carry;
/// with the inputs left to audit when some were items (`None`: all are).
fn certification_items(inputs: &[Input]) -> (Vec<CertificationItem>, Option<Vec<Input>>) {
    let mut items = Vec::new();
    let mut taken = false;
    let mut kept = Vec::new();
    for input in inputs {
        if is_bundle(&input.bytes)
            && let Ok(b) = Bundle::decode(&input.bytes)
        {
            items.extend(
                b.certifications()
                    .iter()
                    .filter_map(|&(_, c)| CertificationItem::decode(c).ok()),
            );
        }
        let room = MAX_ITEMS.saturating_sub(items.len());
        match CertificationItem::decode_sequence(&input.bytes, room) {
            Ok(read) if !input.bytes.is_empty() => {
                items.extend(read);
                taken = true;
            }
            _ => kept.push(input.clone()),
        }
    }
    (items, taken.then_some(kept))
}

/// Most bytes shown of input that does not split into CBOR items.
const UNSPLIT_SHOWN: usize = 4096;

#[derive(Serialize)]
struct Node<'a> {
    id: Option<&'a str>,
    parent: Option<&'a str>,
    trace: Option<&'a str>,
    from: Option<&'a str>,
    label: Option<&'a str>,
    /// Without a keyring label: the self-description of `from`'s key, from
    /// the birth in the set that introduced it (PROFILE P7; self-asserted,
    /// herald_verify::described).
    described: Option<&'a str>,
    to: Option<&'a str>,
    kind: Option<&'static str>,
    ts: Option<u64>,
    status: &'static str,
    codes: Vec<&'static str>,
}

/// One certification as the Heralds judged it.
#[derive(Debug, Serialize)]
struct Judged {
    /// Its id (hex), when it decoded.
    id: Option<String>,
    herald: Option<String>,
    subject: Option<String>,
    claim: Option<String>,
    counts: bool,
    /// Why it does not count.
    why: Option<String>,
}

#[derive(Serialize)]
struct Listed {
    threshold: usize,
    heralds: Vec<ListedHerald>,
}

#[derive(Serialize)]
struct ListedHerald {
    sigil: String,
    label: Option<String>,
}

#[derive(Serialize)]
struct TreeHead {
    log: String,
    size: u64,
    root: String,
    ts: u64,
}

#[derive(Serialize)]
struct Detail<'a> {
    index: usize,
    input: &'a str,
    offset: usize,
    size: usize,
    /// The P3 JSON display form, as text (its byte strings as hex).
    display: Option<String>,
    diagnostic: Option<String>,
    payload: Option<String>,
    annotated: Vec<annotate::Line>,
    signatures: Vec<Signature<'a>>,
    reasons: Vec<Reason<'a>>,
    /// Reasons given beyond those listed, by code: repeats of a code that
    /// names no signature, past the first 16 (CLI.md `verify --json`).
    unlisted_reasons: Vec<(&'static str, u32)>,
    key_source: Option<&'static str>,
    signing_key: Option<String>,
}

#[derive(Serialize)]
struct Signature<'a> {
    index: usize,
    scope: Option<&'a str>,
    by: Option<&'a str>,
    label: Option<&'a str>,
    ts: Option<u64>,
    key_source: Option<&'static str>,
    verdict: &'static str,
    codes: Vec<&'static str>,
}

#[derive(Serialize)]
struct Reason<'a> {
    code: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    detail: &'a str,
    warning: bool,
    explanation: Option<&'static str>,
    section: Option<&'static str>,
}

#[cfg(test)]
mod tests;
