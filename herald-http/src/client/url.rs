//! The one URL type of HERALD's HTTP client: `http://HOST[:PORT][/PATH[?QUERY]]`.
//!
//! Parsed once, where a URL enters (a flag, a configuration, a witness
//! list), so that a bad one is refused with a reason before anything is
//! sent, and every request built from it has a well-formed `Host` and
//! request target.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

use hyper::Uri;

/// An absolute `http://` URL, split for the requests made to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// `host[:port]` as given: the `Host` header (RFC 9110 §7.2).
    authority: String,
    /// The host to connect to, without IPv6 brackets.
    host: String,
    /// The port to connect to (80 when none is given).
    port: u16,
    /// The request target: path and query, at least `/`.
    target: String,
}

/// Why a text is not a [`Url`] this client can use.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlError {
    /// No `scheme://` in front.
    NoScheme,
    /// A scheme other than `http` (this build has no TLS).
    Scheme(String),
    /// Not parseable as a URI (the parser's reason).
    Syntax(String),
    /// No host after `http://`.
    NoHost,
    /// `user:password@` in the authority: credentials do not go in URLs here.
    UserInfo,
    /// A fragment (`#…`): never sent, so never meant.
    Fragment,
    /// A path to join that does not start with `/`, or is not a request target.
    Path(String),
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoScheme => write!(f, "no scheme: give http://HOST:PORT/PATH"),
            Self::Scheme(s) => write!(
                f,
                "{s}:// is not supported: only http:// is supported (no TLS in this build)"
            ),
            Self::Syntax(why) => write!(f, "not a URL ({why})"),
            Self::NoHost => write!(f, "no host: give http://HOST:PORT/PATH"),
            Self::UserInfo => write!(f, "credentials in a URL (user@host) are not supported"),
            Self::Fragment => write!(f, "a fragment (#...) is never sent: remove it"),
            Self::Path(p) => write!(f, "{p:?} is not a path starting with /"),
        }
    }
}

impl std::error::Error for UrlError {}

impl Url {
    /// `text` as an `http://` URL, or why not.
    pub fn parse(text: &str) -> Result<Self, UrlError> {
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(UrlError::NoScheme);
        };
        if !scheme.eq_ignore_ascii_case("http") {
            return Err(UrlError::Scheme(scheme.to_owned()));
        }
        if rest.contains('#') {
            return Err(UrlError::Fragment);
        }
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        if rest.get(..authority_end).is_some_and(|a| a.contains('@')) {
            return Err(UrlError::UserInfo);
        }
        let uri: Uri = text
            .parse()
            .map_err(|e: hyper::http::uri::InvalidUri| UrlError::Syntax(e.to_string()))?;
        let authority = uri.authority().ok_or(UrlError::NoHost)?;
        let host = authority.host();
        if host.is_empty() {
            return Err(UrlError::NoHost);
        }
        let target = match uri.path_and_query().map(|p| p.as_str()) {
            None | Some("") => "/".to_owned(),
            Some(p) if p.starts_with('?') => format!("/{p}"),
            Some(p) => p.to_owned(),
        };
        Ok(Self {
            authority: authority.as_str().to_owned(),
            host: unbracket(host).to_owned(),
            port: authority.port_u16().unwrap_or(80),
            target,
        })
    }

    /// `http://ADDR/`: the root of a server known by its socket address.
    #[must_use]
    pub fn root(addr: SocketAddr) -> Self {
        Self {
            authority: addr.to_string(),
            host: addr.ip().to_string(),
            port: addr.port(),
            target: "/".to_owned(),
        }
    }

    /// `http://ADDR` + `target` (a path and query starting with `/`): a
    /// server known by its socket address (loopback conduits, tests).
    pub fn for_addr(addr: SocketAddr, target: &str) -> Result<Self, UrlError> {
        Self::root(addr).with_target(target)
    }

    /// This URL's path with `path` (starting with `/`) appended: a
    /// service under a prefix (`http://host/log` + `/add-checkpoint`). A
    /// trailing `/` of the prefix is not doubled; its query is dropped.
    pub fn join(&self, path: &str) -> Result<Self, UrlError> {
        check_target(path)?;
        let prefix = self.path().trim_end_matches('/');
        Ok(Self {
            target: format!("{prefix}{path}"),
            ..self.clone()
        })
    }

    /// The same server with `target` (a path and query starting with `/`)
    /// as the request target.
    pub fn with_target(&self, target: &str) -> Result<Self, UrlError> {
        check_target(target)?;
        Ok(Self {
            target: target.to_owned(),
            ..self.clone()
        })
    }

    /// `host[:port]` as given (the `Host` header).
    #[must_use]
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The host, without IPv6 brackets.
    #[must_use]
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port (80 when the URL gives none).
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The request target: path and query.
    #[must_use]
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The path, without the query.
    #[must_use]
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("/")
    }
}

impl FromStr for Url {
    type Err = UrlError;

    fn from_str(text: &str) -> Result<Self, UrlError> {
        Self::parse(text)
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "http://{}{}", self.authority, self.target)
    }
}

fn unbracket(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// A request target this client sends: `/` first, and nothing the
/// request line cannot carry.
fn check_target(target: &str) -> Result<(), UrlError> {
    let ok = target.starts_with('/')
        && target
            .parse::<hyper::http::uri::PathAndQuery>()
            .is_ok_and(|p| p.as_str() == target);
    if ok {
        Ok(())
    } else {
        Err(UrlError::Path(target.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn http_urls_are_split_for_their_requests() {
        let u = Url::parse("http://127.0.0.1:3001/mcp?x=1").unwrap();
        assert_eq!((u.host(), u.port()), ("127.0.0.1", 3001));
        assert_eq!((u.authority(), u.target()), ("127.0.0.1:3001", "/mcp?x=1"));
        assert_eq!(u.path(), "/mcp");
        assert_eq!(u.to_string(), "http://127.0.0.1:3001/mcp?x=1");
        let u = Url::parse("http://[::1]").unwrap();
        assert_eq!((u.host(), u.port(), u.target()), ("::1", 80, "/"));
        assert_eq!(u.authority(), "[::1]");
        let u = Url::parse("HTTP://witness.test:8080?q").unwrap();
        assert_eq!(
            (u.host(), u.port(), u.target()),
            ("witness.test", 8080, "/?q")
        );
        let a: SocketAddr = "[::1]:9".parse().unwrap();
        let u = Url::for_addr(a, "/v1/envelopes").unwrap();
        assert_eq!((u.authority(), u.host(), u.port()), ("[::1]:9", "::1", 9));
        assert_eq!(u.to_string(), "http://[::1]:9/v1/envelopes");
    }

    #[test]
    fn paths_join_under_a_prefix() {
        let base = Url::parse("http://h:1/log/?x=1").unwrap();
        assert_eq!(
            base.join("/add-checkpoint").unwrap().target(),
            "/log/add-checkpoint"
        );
        let root = Url::parse("http://h:1").unwrap();
        assert_eq!(
            root.join("/v1/envelopes").unwrap().target(),
            "/v1/envelopes"
        );
        assert_eq!(root.with_target("/a?b=c").unwrap().target(), "/a?b=c");
        for bad in ["v1", "/a b", "/a\nHost: x"] {
            assert_eq!(root.join(bad), Err(UrlError::Path(bad.into())), "{bad:?}");
        }
    }

    #[test]
    fn unusable_urls_say_why() {
        for (bad, err, says) in [
            ("127.0.0.1:9/mcp", UrlError::NoScheme, "no scheme"),
            (
                "https://example.test/mcp",
                UrlError::Scheme("https".into()),
                "only http://",
            ),
            ("http://", UrlError::Syntax(String::new()), "not a URL"),
            (
                "http://[::1/mcp",
                UrlError::Syntax(String::new()),
                "not a URL",
            ),
            ("http://user:pw@h/", UrlError::UserInfo, "credentials"),
            ("http://h/#top", UrlError::Fragment, "fragment"),
            ("http://:80/", UrlError::NoHost, "no host"),
        ] {
            let e = Url::parse(bad).unwrap_err();
            assert_eq!(
                std::mem::discriminant(&e),
                std::mem::discriminant(&err),
                "{bad}: {e}"
            );
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }
}
