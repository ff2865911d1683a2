//! Envelopes (spec §3.1, P3–P7): build and sign a genesis or a reply with
//! herald-core's builder (the rules of herald-py and the CLI: `parent` and
//! `trace` from the parent, a fresh nonce, P1 payloads), co-sign, decode
//! strictly, read the fields as JavaScript values, and the display form.

use herald_core::cbor::{Value, ValueRef};
use herald_core::{
    Envelope as CoreEnvelope, EnvelopeBuilder, EnvelopeError, EnvelopeRef, Kind, Scope, Sigil,
};
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use crate::error::{argument, coded};
use crate::keys::SigningKey;
use crate::value::{to_js, to_value};

/// A signed envelope: its canonical bytes, decoded strictly (P1, P3).
/// Signatures are checked by `verify`, not here.
#[wasm_bindgen]
pub struct Envelope {
    pub(crate) inner: CoreEnvelope,
}

/// The error of a strict decode: `code` is the P11 reason code.
pub(crate) fn envelope_error(e: &EnvelopeError) -> JsValue {
    coded(e.0.code.name(), e.to_string())
}

/// The current Unix time, seconds (the JavaScript clock).
pub(crate) fn now() -> u64 {
    let ms = js_sys::Date::now();
    if ms.is_finite() && ms > 0.0 {
        (ms / 1000.0) as u64
    } else {
        0
    }
}

impl Envelope {
    fn view(&self) -> EnvelopeRef<'_> {
        self.inner.view()
    }
}

#[wasm_bindgen]
impl Envelope {
    /// Decode envelope bytes strictly; throws with `code` the P11 reason.
    pub fn decode(bytes: &[u8]) -> Result<Envelope, JsValue> {
        CoreEnvelope::from_bytes(bytes.to_vec())
            .map(|inner| Self { inner })
            .map_err(|e| envelope_error(&e))
    }

    /// The canonical bytes (what is stored, sent and verified).
    #[wasm_bindgen(getter)]
    pub fn bytes(&self) -> Vec<u8> {
        self.inner.as_bytes().to_vec()
    }

    /// The id carried on the wire (32 bytes).
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> Vec<u8> {
        self.inner.id().to_vec()
    }

    /// The id, lowercase hex.
    #[wasm_bindgen(getter, js_name = idHex)]
    pub fn id_hex(&self) -> String {
        herald_verify::hex(&self.inner.id())
    }

    /// `from`, a sigil.
    #[wasm_bindgen(getter)]
    pub fn from(&self) -> String {
        self.view().from().to_owned()
    }

    /// `to`, a sigil, or undefined.
    #[wasm_bindgen(getter)]
    pub fn to(&self) -> Option<String> {
        self.view().to().map(|(s, _)| s.to_owned())
    }

    /// `parent` (32 bytes), undefined for a genesis.
    #[wasm_bindgen(getter)]
    pub fn parent(&self) -> Option<Vec<u8>> {
        self.view().parent().map(|p| p.to_vec())
    }

    /// `trace` (32 bytes).
    #[wasm_bindgen(getter)]
    pub fn trace(&self) -> Vec<u8> {
        self.view().trace().to_vec()
    }

    /// `trace`, lowercase hex.
    #[wasm_bindgen(getter, js_name = traceHex)]
    pub fn trace_hex(&self) -> String {
        herald_verify::hex(self.view().trace())
    }

    /// `ts`, Unix seconds.
    #[wasm_bindgen(getter)]
    pub fn ts(&self) -> f64 {
        self.view().ts() as f64
    }

    /// `nonce` (16 bytes).
    #[wasm_bindgen(getter)]
    pub fn nonce(&self) -> Vec<u8> {
        self.view().nonce().to_vec()
    }

    /// `expires`, or undefined.
    #[wasm_bindgen(getter)]
    pub fn expires(&self) -> Option<f64> {
        self.view().expires().map(|e| e as f64)
    }

    /// `kind` (P7), `message` when absent.
    #[wasm_bindgen(getter)]
    pub fn kind(&self) -> String {
        self.view().kind().name().to_owned()
    }

    /// The payload as a JavaScript value.
    #[wasm_bindgen(getter)]
    pub fn payload(&self) -> JsValue {
        to_js(self.view().payload())
    }

    /// The attestations: `[{type, value}]`.
    #[wasm_bindgen(getter)]
    pub fn attestations(&self) -> JsValue {
        match self.view().attestations() {
            Some(a) => to_js(ValueRef::Array(a)),
            None => <Array>::new().into(),
        }
    }

    /// The value of the first attestation of type `ty`, or undefined.
    pub fn attestation(&self, ty: &str) -> JsValue {
        self.view()
            .attestation(ty)
            .map_or(JsValue::UNDEFINED, to_js)
    }

    /// The signature maps: `{alg, by, scope, sig, ts?}` each.
    #[wasm_bindgen(getter)]
    pub fn signatures(&self) -> JsValue {
        self.view()
            .map()
            .get("signatures")
            .map_or_else(|| <Array>::new().into(), to_js)
    }

    /// The display form (P3: JSON, byte strings as lowercase hex); for
    /// reading only, never hashed or signed.
    #[wasm_bindgen(js_name = toDisplayJson)]
    pub fn to_display_json(&self) -> Result<String, JsValue> {
        let v = herald_core::cbor::decode(self.inner.as_bytes())
            .map_err(|e| coded(e.rule().name(), e.to_string()))?;
        Ok(herald_verify::display_json(v))
    }

    /// A copy with one more signature by `key` in `scope` (P5, P6), with an
    /// optional claimed `ts`.
    pub fn cosign(
        &self,
        key: &SigningKey,
        scope: &str,
        ts: Option<f64>,
    ) -> Result<Envelope, JsValue> {
        let scope = Scope::from_name(scope)
            .filter(|s| *s != Scope::Origin)
            .ok_or_else(|| {
                argument(format!(
                    "{scope:?} is not a co-signing scope (P6: tool_sandbox, conduit_receipt, \
                     human_approval, herald_endorsement, lineage_consent, duress_witness)"
                ))
            })?;
        let ts = ts.map(|t| seconds("ts", t)).transpose()?;
        self.inner
            .cosign(&key.key, scope, ts)
            .map(|inner| Self { inner })
            .map_err(|e| coded("build", e.to_string()))
    }

    /// A reply to this envelope signed by `key` (see `reply`).
    pub fn reply(
        &self,
        key: &SigningKey,
        payload: JsValue,
        options: JsValue,
    ) -> Result<Envelope, JsValue> {
        reply(key, self, payload, options)
    }

    /// `Envelope(<id hex>, from <sigil>, <kind>)`.
    #[wasm_bindgen(js_name = toString)]
    pub fn to_string_js(&self) -> String {
        let v = self.view();
        format!(
            "Envelope({}, from {}, {}, {} signature(s))",
            herald_verify::hex(v.id()),
            v.from(),
            v.kind().name(),
            v.signature_count()
        )
    }
}

/// A genesis envelope (`parent: null`, `trace` = its id, P4) signed by
/// `key`; `options`: `{to, ts, expires, kind, attestations}`.
#[wasm_bindgen]
pub fn genesis(key: &SigningKey, payload: JsValue, options: JsValue) -> Result<Envelope, JsValue> {
    let ts = ts_option(&options)?;
    build(EnvelopeBuilder::genesis(ts), key, &payload, &options)
}

/// A reply to `parent` (same trace, spec §3.3a) signed by `key`.
#[wasm_bindgen]
pub fn reply(
    key: &SigningKey,
    parent: &Envelope,
    payload: JsValue,
    options: JsValue,
) -> Result<Envelope, JsValue> {
    let ts = ts_option(&options)?;
    build(
        EnvelopeBuilder::reply(&parent.view(), ts),
        key,
        &payload,
        &options,
    )
}

/// A whole number of seconds.
fn seconds(what: &str, t: f64) -> Result<u64, JsValue> {
    if t.is_finite() && t >= 0.0 && t.fract() == 0.0 && t <= 9_007_199_254_740_991.0 {
        Ok(t as u64)
    } else {
        Err(argument(format!(
            "{what}: a whole number of Unix seconds, not {t}"
        )))
    }
}

fn option(options: &JsValue, name: &str) -> Result<JsValue, JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(JsValue::UNDEFINED);
    }
    if !options.is_object() {
        return Err(argument("options: an object"));
    }
    Reflect::get(options, &name.into())
}

fn number_option(options: &JsValue, name: &str) -> Result<Option<u64>, JsValue> {
    let v = option(options, name)?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    let t = v
        .as_f64()
        .ok_or_else(|| argument(format!("{name}: a number of Unix seconds")))?;
    seconds(name, t).map(Some)
}

fn ts_option(options: &JsValue) -> Result<u64, JsValue> {
    Ok(number_option(options, "ts")?.unwrap_or_else(now))
}

fn build(
    mut builder: EnvelopeBuilder,
    key: &SigningKey,
    payload: &JsValue,
    options: &JsValue,
) -> Result<Envelope, JsValue> {
    if !payload.is_undefined() {
        builder = builder.payload(to_value(payload)?);
    }
    let to = option(options, "to")?;
    if let Some(to) = to.as_string() {
        let sigil = Sigil::parse(&to).map_err(|e| argument(format!("to: {to:?}: {e}")))?;
        builder = builder.to(sigil);
    } else if !(to.is_undefined() || to.is_null()) {
        return Err(argument("to: a sigil string"));
    }
    if let Some(e) = number_option(options, "expires")? {
        builder = builder.expires(e);
    }
    let kind = option(options, "kind")?;
    if let Some(k) = kind.as_string() {
        let kind =
            Kind::from_name(&k).ok_or_else(|| argument(format!("kind: {k:?} is not a P7 kind")))?;
        builder = builder.kind(kind);
    } else if !(kind.is_undefined() || kind.is_null()) {
        return Err(argument("kind: a P7 kind name"));
    }
    for (ty, value) in attestation_pairs(&option(options, "attestations")?)? {
        builder = builder.attest(&ty, value);
    }
    builder
        .sign(&key.key)
        .map(|inner| Envelope { inner })
        .map_err(|e| coded("build", e.to_string()))
}

/// Attestations given as an object `{type: value}`, or an array of
/// `[type, value]` pairs or `{type, value}` objects (several of one type).
fn attestation_pairs(a: &JsValue) -> Result<Vec<(String, Value)>, JsValue> {
    if a.is_undefined() || a.is_null() {
        return Ok(Vec::new());
    }
    let bad = || {
        argument(
            "attestations: an object {type: value}, or an array of [type, value] pairs or \
             {type, value} objects",
        )
    };
    if !<Array>::is_array(a) {
        if !a.is_object() {
            return Err(bad());
        }
        return <Object>::entries(a.unchecked_ref())
            .iter()
            .map(|entry| {
                let pair = <Array>::unchecked_from_js_ref(&entry);
                Ok((
                    pair.get(0).as_string().unwrap_or_default(),
                    to_value(&pair.get(1))?,
                ))
            })
            .collect();
    }
    <Array>::unchecked_from_js_ref(a)
        .iter()
        .map(|item| {
            let (ty, value) = if <Array>::is_array(&item) {
                let pair = <Array>::unchecked_from_js_ref(&item);
                (pair.get(0), pair.get(1))
            } else if item.is_object() {
                (
                    Reflect::get(&item, &"type".into())?,
                    Reflect::get(&item, &"value".into())?,
                )
            } else {
                return Err(bad());
            };
            let ty = ty.as_string().ok_or_else(bad)?;
            Ok((ty, to_value(&value)?))
        })
        .collect()
}
