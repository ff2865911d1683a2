//! Sending a composed envelope to a conduit: `POST /v1/envelopes`
//! (CONDUIT.md) with herald-conduit's client, and its answer for the page.

use std::time::Duration;

use herald_conduit::client::{self, Response};
use herald_core::cbor::{ValueRef, decode};
use herald_http::client::Url;
use herald_verify::hex;

/// Longest a send may take, connection to last byte.
const TIMEOUT: Duration = Duration::from_secs(15);

/// `POST` `envelope` to `{base}/v1/envelopes`, `base` an `http://` URL.
pub(crate) async fn post(base: &str, envelope: &[u8]) -> Result<Response, String> {
    let url = envelopes_url(base)?;
    client::post_to(&url, envelope, TIMEOUT)
        .await
        .map_err(|e| format!("{base}: {e}"))
}

/// `http://HOST[:PORT][/PREFIX]` + `/v1/envelopes`.
fn envelopes_url(base: &str) -> Result<Url, String> {
    Url::parse(base)
        .and_then(|u| u.join("/v1/envelopes"))
        .map_err(|e| format!("the conduit URL {base}: {e}"))
}

/// What the conduit answered, for the page: the status, the reasons header,
/// and the envelope it returned (the forwarded one of a 201, CONDUIT.md
/// `{envelope, index?, proof?}`, or the signed refusal).
pub(crate) fn answer_json(answer: &Response) -> serde_json::Value {
    let content_type = answer.header("content-type").unwrap_or_default();
    let mut out = serde_json::json!({
        "status": answer.status,
        "content_type": content_type,
        "reasons": answer.header("herald-reasons"),
        "location": answer.header("location"),
    });
    if content_type.starts_with("application/cbor") {
        match decode(&answer.body) {
            Ok(ValueRef::Map(map)) if answer.status == 201 => {
                out["envelope"] = map
                    .get("envelope")
                    .and_then(|v| v.as_bytes())
                    .map(hex)
                    .into();
                out["index"] = map.get("index").and_then(|v| v.as_unsigned()).into();
                out["proof"] = map.get("proof").is_some().into();
            }
            _ => out["envelope"] = hex(&answer.body).into(),
        }
    } else {
        let shown = answer.body.get(..4096).unwrap_or(&answer.body);
        out["text"] = String::from_utf8_lossy(shown).into();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conduit_urls() {
        let target = |base| {
            envelopes_url(base).map(|u| (u.authority().to_owned(), u.port(), u.target().to_owned()))
        };
        assert_eq!(
            target("http://127.0.0.1:8470"),
            Ok(("127.0.0.1:8470".into(), 8470, "/v1/envelopes".into()))
        );
        assert_eq!(
            target("http://localhost/c/"),
            Ok(("localhost".into(), 80, "/c/v1/envelopes".into()))
        );
        assert_eq!(
            target("http://[::1]"),
            Ok(("[::1]".into(), 80, "/v1/envelopes".into()))
        );
        assert!(target("https://example.org").is_err_and(|e| e.contains("only http://")));
        assert!(target("http://user@host").is_err());
        assert!(target("http:///v1").is_err());
    }
}
