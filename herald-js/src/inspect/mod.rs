//! The inspector's verifier (docs/inspector.md): the page `herald inspect
//! --serve` serves loads this module's build (the same `.wasm` as the npm
//! package) and drives one [`Inspection`]: inputs and keyrings in, the
//! `herald verify --json` document out ([`herald_verify::Report::write_document`],
//! so the two cannot drift), then what the page draws: the nodes of the
//! DAG and the list, one entry's detail (display form, annotated bytes,
//! signature chain, explained reasons) and the tree heads of bundled
//! proofs, each as JSON text.
//!
//! The logic lives in [`session`] and [`annotate`], which also build and
//! are tested on the host; this file is the JavaScript face.

pub mod annotate;
pub mod session;

use wasm_bindgen::prelude::*;

use crate::error::{argument, coded};
pub use session::Session;

/// One inspector session (the page's inputs, keyrings and required
/// scopes, then the report of their audit as one set, CLI.md).
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct Inspection {
    session: Session,
}

#[wasm_bindgen]
impl Inspection {
    /// An empty session.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Add an input (an envelope, a CBOR sequence or a bundle) named
    /// `name` (made unique in the session).
    #[wasm_bindgen(js_name = addInput)]
    pub fn add_input(&mut self, name: &str, bytes: &[u8]) {
        self.session.add_input(name, bytes.to_vec());
    }

    /// Add keyring text (CLI.md *Keyring files*): the number of keys; a bad
    /// line throws with the message `herald verify --keyring` gives.
    #[wasm_bindgen(js_name = addKeyring)]
    pub fn add_keyring(&mut self, name: &str, text: &str) -> Result<u32, JsValue> {
        self.session
            .add_keyring(name, text.as_bytes())
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
            .map_err(|e| coded("keyring", e))
    }

    /// Require a valid signature in `scope` (`herald verify --require`).
    #[wasm_bindgen(js_name = requireScope)]
    pub fn require_scope(&mut self, scope: &str) -> Result<(), JsValue> {
        self.session.require(scope).map_err(argument)
    }

    /// Set the tlog-policy (`herald verify --log-policy`); a bad line
    /// throws.
    #[wasm_bindgen(js_name = setLogPolicy)]
    pub fn set_log_policy(&mut self, name: &str, text: &str) -> Result<(), JsValue> {
        self.session
            .set_log_policy(name, text.as_bytes())
            .map_err(|e| coded("log_policy", e))
    }

    /// Set the Herald list (`herald verify --heralds`, PROFILE P14), after
    /// the tlog-policy naming each Herald's log: the Heralds and the
    /// threshold (JSON `{threshold, heralds: [{sigil, label}]}`); a bad
    /// list throws.
    #[wasm_bindgen(js_name = setHeralds)]
    pub fn set_heralds(&mut self, name: &str, text: &str) -> Result<String, JsValue> {
        self.session
            .set_heralds(name, text.as_bytes())
            .map_err(|e| coded("heralds", e))
    }

    /// What the Heralds of the last audit said about each certification
    /// given (JSON array of `{id, herald, subject, claim, counts, why}`).
    pub fn certifications(&self) -> String {
        self.session.certifications()
    }

    /// Audit every input as one set at `now` (Unix seconds; undefined,
    /// negative or not finite: no time checks): the `herald verify --json`
    /// document, without its final newline.
    pub fn verify(&mut self, now: Option<f64>) -> String {
        let now = now.filter(|t| t.is_finite() && *t >= 0.0).map(|t| t as u64);
        self.session.verify(now)
    }

    /// The nodes of the last report (JSON array, report order).
    pub fn nodes(&self) -> String {
        self.session.nodes()
    }

    /// The detail of report entry `index` (JSON object), or undefined past
    /// the end.
    pub fn detail(&self, index: u32) -> Option<String> {
        self.session.detail(index as usize)
    }

    /// The signed tree head of each bundled proof of the last report (JSON
    /// array, report order; `null` for one that did not decode).
    pub fn proofs(&self) -> String {
        self.session.proofs()
    }
}
