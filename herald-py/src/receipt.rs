//! A sender's check of a conduit's answer (spec §5.2 *Neutrality*,
//! CONDUIT.md `POST /v1/envelopes`), for `herald.ConduitSink`: the same
//! check as `herald agent` and the MCP proxy, herald-verify's
//! receipt checks ([`herald_verify::check_forwarded`],
//! [`herald_verify::check_refusal`]), never a second copy.

use herald_core::PublicKey;
use herald_verify::check_forwarded;
use pyo3::prelude::*;
use pyo3::types::PyModule;

use crate::errors::HeraldError;

pyo3::create_exception!(
    herald,
    ReceiptError,
    HeraldError,
    "A conduit's answer that proves neither delivery (a receipt by its key) nor a refusal it signed."
);

/// Add `check_receipt`, `check_refusal` and `ReceiptError`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ReceiptError", m.py().get_type::<ReceiptError>())?;
    m.add_function(wrap_pyfunction!(check_receipt, m)?)?;
    m.add_function(wrap_pyfunction!(check_refusal, m)?)?;
    Ok(())
}

fn conduit(key: &[u8]) -> PyResult<PublicKey> {
    PublicKey::from_slice(key).map_err(|e| ReceiptError::new_err(format!("the conduit's key: {e}")))
}

/// Raise `ReceiptError` unless `forwarded` (a `201`'s `envelope`) is
/// `sent`, unaltered, with a `conduit_receipt` that verifies under
/// `conduit_key` (32 bytes).
#[pyfunction]
fn check_receipt(sent: &[u8], forwarded: &[u8], conduit_key: &[u8]) -> PyResult<()> {
    check_forwarded(sent, forwarded, &conduit(conduit_key)?)
        .map_err(|e| ReceiptError::new_err(e.to_string()))
}

/// The `(reason, retry_after)` of a refusal `body`, once it is checked: a
/// `refusal` envelope valid under `conduit_key` alone whose `parent` is
/// `sent_id`; else `ReceiptError`.
#[pyfunction]
fn check_refusal(
    sent_id: &[u8],
    body: &[u8],
    conduit_key: &[u8],
) -> PyResult<(String, Option<u64>)> {
    let id = <[u8; 32]>::try_from(sent_id)
        .map_err(|_| ReceiptError::new_err("sent_id must be 32 bytes"))?;
    herald_verify::check_refusal(&id, body, &conduit(conduit_key)?)
        .map(|r| (r.reason, r.retry_after))
        .map_err(|e| ReceiptError::new_err(e.to_string()))
}
