//! Errors thrown to JavaScript: an `Error` whose `message` names what is
//! wrong and whose `code` says which rule (a P11 reason code, a P1 rule, or
//! one of this package's own words), so callers branch on `code`, never on
//! the text. No message carries a secret.

use js_sys::{Error, Reflect};
use wasm_bindgen::JsValue;

/// An `Error` with `message` and a `code` property.
pub(crate) fn coded(code: &str, message: impl AsRef<str>) -> JsValue {
    let error = Error::new(message.as_ref());
    error.set_name("HeraldError");
    // Setting a property on a fresh Error cannot fail.
    let _ = Reflect::set(&error, &"code".into(), &code.into());
    error.into()
}

/// A wrong argument (`TypeError`-like): `code` is `invalid_argument`.
pub(crate) fn argument(message: impl AsRef<str>) -> JsValue {
    coded("invalid_argument", message)
}
