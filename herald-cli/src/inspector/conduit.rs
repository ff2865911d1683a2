//! Sending a composed envelope to a conduit: `POST /v1/envelopes`
//! (CONDUIT.md) with herald-conduit's client, and its answer for the page.

use std::time::Duration;

use herald_conduit::client::{self, Response};
use herald_core::cbor::{ValueRef, decode};
use herald_verify::hex;

/// Longest a send may take, connection to last byte.
const TIMEOUT: Duration = Duration::from_secs(15);

/// `POST` `envelope` to `{base}/v1/envelopes`, `base` an `http://` URL.
pub(crate) async fn post(base: &str, envelope: &[u8]) -> Result<Response, String> {
    let (authority, prefix) = split_url(base)?;
    let addr = tokio::net::lookup_host(authority.as_str())
        .await
        .map_err(|e| format!("{authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority}: no address"))?;
    client::post(addr, &format!("{prefix}/v1/envelopes"), envelope, TIMEOUT)
        .await
        .map_err(|e| format!("{base}: {e}"))
}

/// `http://HOST:PORT/PREFIX` → (`HOST:PORT`, `/PREFIX`); port 80 by default.
fn split_url(base: &str) -> Result<(String, &str), String> {
    let rest = base
        .strip_prefix("http://")
        .ok_or("the conduit URL must start with http:// (https is not supported here)")?;
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains(['@', ' ', '?', '#']) {
        return Err(format!("{base}: not a conduit URL"));
    }
    let has_port = match authority.rfind(']') {
        Some(bracket) => authority[bracket..].contains(':'),
        None => authority.contains(':'),
    };
    let authority = if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    Ok((authority, prefix))
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
        assert_eq!(
            split_url("http://127.0.0.1:8470"),
            Ok(("127.0.0.1:8470".into(), ""))
        );
        assert_eq!(
            split_url("http://localhost/c/"),
            Ok(("localhost:80".into(), "/c"))
        );
        assert_eq!(split_url("http://[::1]"), Ok(("[::1]:80".into(), "")));
        assert_eq!(split_url("http://[::1]:9/"), Ok(("[::1]:9".into(), "")));
        assert!(split_url("https://example.org").is_err());
        assert!(split_url("http://user@host").is_err());
        assert!(split_url("http:///v1").is_err());
    }
}
