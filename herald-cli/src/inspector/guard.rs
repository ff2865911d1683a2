//! Who may talk to `herald inspect --serve`: pages of this server only.
//!
//! - Every request: the `Host` header must name the address the server is
//!   bound to (`127.0.0.1:PORT`, `localhost:PORT` or `[::1]:PORT` when it
//!   is bound to loopback), so a hostile DNS name rebound to 127.0.0.1
//!   gets nothing.
//! - `/api/`: a fetch from another site is refused when the browser says
//!   so (`Sec-Fetch-Site`), and so is a request without the per-run token
//!   (`Herald-Token`, 32 random bytes, compared in constant time).
//! - `POST`: the `Origin` must be this server's own, and the body must be
//!   `application/json` (which a cross-site form cannot send, and which
//!   forces a CORS preflight this server never answers with a grant).

use axum::http::{HeaderMap, Method, StatusCode, header};

/// The header carrying the per-run token.
pub(crate) const TOKEN_HEADER: &str = "herald-token";

/// The addresses a request may be made to.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    /// The `Host` values accepted; `None` on a non-loopback address, whose
    /// name this server cannot know (and which no rebinding is needed to
    /// reach). A server that holds a key is always on loopback.
    hosts: Option<Vec<String>>,
    token: String,
}

/// A refusal: the status and a short reason (never anything secret).
pub(crate) type Refusal = (StatusCode, &'static str);

impl Guard {
    /// The guard of a server bound to `addr`, with `token`.
    pub(crate) fn new(addr: std::net::SocketAddr, token: String) -> Self {
        let port = addr.port();
        let hosts = addr.ip().is_loopback().then(|| {
            let mut hosts = vec![
                addr.to_string(),
                format!("127.0.0.1:{port}"),
                format!("localhost:{port}"),
                format!("[::1]:{port}"),
            ];
            hosts.dedup();
            hosts
        });
        Self { hosts, token }
    }

    /// Check one request.
    pub(crate) fn check(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
    ) -> Result<(), Refusal> {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let host =
            text(header::HOST.as_str()).ok_or((StatusCode::BAD_REQUEST, "no Host header"))?;
        if let Some(hosts) = &self.hosts
            && !hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
        {
            return Err((
                StatusCode::MISDIRECTED_REQUEST,
                "this server answers only for its own address",
            ));
        }
        if !path.starts_with("/api/") {
            return Ok(());
        }
        if let Some(site) = text("sec-fetch-site")
            && !matches!(site, "same-origin" | "none")
        {
            return Err((StatusCode::FORBIDDEN, "cross-site requests are refused"));
        }
        let token = text(TOKEN_HEADER).unwrap_or_default();
        if !same(token.as_bytes(), self.token.as_bytes()) {
            return Err((StatusCode::FORBIDDEN, "missing or wrong Herald-Token"));
        }
        if method == Method::POST {
            let origin =
                text(header::ORIGIN.as_str()).ok_or((StatusCode::FORBIDDEN, "no Origin header"))?;
            // The page's own origin is the host it was loaded from.
            let own = origin
                .strip_prefix("http://")
                .is_some_and(|o| o.eq_ignore_ascii_case(host));
            if !own {
                return Err((StatusCode::FORBIDDEN, "cross-origin requests are refused"));
            }
            let json = text(header::CONTENT_TYPE.as_str()).is_some_and(|t| {
                t.split(';')
                    .next()
                    .is_some_and(|m| m.trim() == "application/json")
            });
            if !json {
                return Err((
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "the body must be application/json",
                ));
            }
        }
        Ok(())
    }
}

/// `a == b` in time that depends only on the lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn guard() -> Guard {
        Guard::new("127.0.0.1:8471".parse().unwrap(), "t0ken".into())
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    const OK_POST: [(&str, &str); 4] = [
        ("host", "127.0.0.1:8471"),
        ("origin", "http://127.0.0.1:8471"),
        ("herald-token", "t0ken"),
        ("content-type", "application/json"),
    ];

    #[test]
    fn a_same_origin_post_with_the_token_passes() {
        assert_eq!(
            guard().check(&Method::POST, "/api/sign", &headers(&OK_POST)),
            Ok(())
        );
    }

    #[test]
    fn each_missing_or_foreign_part_is_refused() {
        for (drop, replace) in [
            ("host", Some("evil.example:8471")),
            ("origin", Some("http://evil.example")),
            ("origin", None),
            ("herald-token", Some("t0kem")),
            ("herald-token", None),
            ("content-type", Some("text/plain")),
        ] {
            let mut h = headers(&OK_POST);
            h.remove(drop);
            if let Some(v) = replace {
                h.insert(drop, HeaderValue::from_static(v));
            }
            assert!(
                guard().check(&Method::POST, "/api/sign", &h).is_err(),
                "{drop} {replace:?}"
            );
        }
        let mut h = headers(&OK_POST);
        h.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(guard().check(&Method::POST, "/api/sign", &h).is_err());
    }

    #[test]
    fn an_origin_is_the_host_the_page_came_from() {
        let mut h = headers(&OK_POST);
        h.insert("host", HeaderValue::from_static("localhost:8471"));
        assert!(guard().check(&Method::POST, "/api/sign", &h).is_err());
        h.insert("origin", HeaderValue::from_static("http://localhost:8471"));
        assert_eq!(guard().check(&Method::POST, "/api/sign", &h), Ok(()));
    }

    #[test]
    fn off_loopback_any_host_but_still_the_token() {
        let g = Guard::new("0.0.0.0:8471".parse().unwrap(), "t0ken".into());
        let h = headers(&[("host", "inspector.example:8471")]);
        assert_eq!(g.check(&Method::GET, "/", &h), Ok(()));
        assert!(g.check(&Method::GET, "/api/session", &h).is_err());
    }

    #[test]
    fn pages_need_only_the_right_host() {
        let g = guard();
        assert_eq!(
            g.check(&Method::GET, "/", &headers(&[("host", "localhost:8471")])),
            Ok(())
        );
        assert!(
            g.check(
                &Method::GET,
                "/",
                &headers(&[("host", "rebound.example:8471")])
            )
            .is_err()
        );
        assert!(
            g.check(
                &Method::GET,
                "/api/session",
                &headers(&[("host", "localhost:8471")])
            )
            .is_err()
        );
    }
}
