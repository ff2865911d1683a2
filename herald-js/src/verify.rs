//! `verify` (spec §6, P10–P13; CLI.md `herald verify --json`): every input
//! audited as one set, as the command does (all inputs form one set for
//! parents and replays), and the report written by the same code
//! ([`herald_verify::CompactReport::write_document`]), so the JSON is byte
//! for byte the command's for the same bytes, keyring, time and scopes.

use herald_core::Scope;
use herald_verify::{
    AuditOptions, Input, Keyring as CoreKeyring, Profile, ProfileEvidence, audit_compact,
};
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use crate::error::{argument, coded};

/// The `herald verify --json` document (without the final newline) for
/// `inputs` (each a `Uint8Array`: an envelope, a CBOR sequence or a
/// bundle), named by `names` in the reasons that name their input (the
/// command's file paths), against the keys of each keyring text of `keyring_texts`, at `now` (Unix seconds; the clock when undefined),
/// requiring a valid signature in each scope of `require`, with `skew`
/// seconds of clock skew (P10: 300); with `profile` (`"haven"` or
/// `"valp"`), that protocol's rules checked over the verified set with
/// `evidence_bytes[n]` the bytes of the `content_ref` `evidence_refs[n]`
/// (`herald verify --profile --evidence`, docs/valp.md).
#[wasm_bindgen(js_name = verifyJson)]
#[allow(clippy::too_many_arguments)]
pub fn verify_json(
    inputs: Array,
    names: Array,
    keyring_texts: Array,
    now: Option<f64>,
    require: Array,
    skew: Option<f64>,
    profile: Option<String>,
    evidence_refs: Array,
    evidence_bytes: Array,
) -> Result<String, JsValue> {
    let profile = profile
        .map(|p| Profile::from_name(&p))
        .transpose()
        .map_err(|e| argument(format!("profile: {e}")))?;
    let evidence = evidence_refs
        .iter()
        .zip(evidence_bytes.iter())
        .map(|(r, b)| {
            let r = r
                .as_string()
                .ok_or_else(|| argument("evidence: each key is a content_ref"))?;
            let b = b
                .dyn_ref::<Uint8Array>()
                .map(Uint8Array::to_vec)
                .ok_or_else(|| argument("evidence: each value is a Uint8Array"))?;
            Ok((r, b))
        })
        .collect::<Result<Vec<_>, JsValue>>()?;
    let inputs = inputs
        .iter()
        .enumerate()
        .map(|(n, item)| {
            item.dyn_ref::<Uint8Array>()
                .map(|bytes| Input {
                    name: names
                        .get(n as u32)
                        .as_string()
                        .unwrap_or_else(|| format!("<input {n}>")),
                    bytes: bytes.to_vec(),
                })
                .ok_or_else(|| argument("verify: each input is a Uint8Array"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut keys = CoreKeyring::new();
    for (n, text) in keyring_texts.iter().enumerate() {
        let text = text
            .as_string()
            .ok_or_else(|| argument("keyring: keyring file text, or an array of them"))?;
        keys.parse(&text, &format!("<keyring {n}>"))
            .map_err(|e| coded("keyring", e.to_string()))?;
    }
    let required_scopes = require
        .iter()
        .map(|s| {
            let s = s.as_string().unwrap_or_default();
            Scope::from_name(&s)
                .filter(|s| *s != Scope::Origin)
                .ok_or_else(|| argument(format!("require: {s:?} is not a P6 scope")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let whole = |what: &str, t: f64| {
        (t.is_finite() && t >= 0.0 && t.fract() == 0.0)
            .then_some(t as u64)
            .ok_or_else(|| argument(format!("{what}: a whole number of seconds, not {t}")))
    };
    let mut options = AuditOptions {
        now: Some(match now {
            Some(t) => whole("now", t)?,
            None => crate::envelope::now(),
        }),
        required_scopes,
        ..AuditOptions::default()
    };
    if let Some(s) = skew {
        options.skew = whole("skew", s)?;
    }
    let report = audit_compact(&inputs, &keys, &options);
    let given: Vec<ProfileEvidence<'_>> = evidence
        .iter()
        .map(|(r, b)| ProfileEvidence::new(r, b))
        .collect();
    let mut out = Vec::new();
    match profile.map(|p| report.check_profile(p, &given)) {
        Some(checked) => report.write_document_with_profile(&checked, &mut out),
        None => report.write_document(&mut out),
    }
    .map_err(|e| coded("internal", e.to_string()))?;
    String::from_utf8(out).map_err(|e| coded("internal", e.to_string()))
}
