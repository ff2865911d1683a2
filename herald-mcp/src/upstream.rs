//! The server side of the wrapper (docs/mcp.md *Putting it in front of a
//! server*): a command started as a child and spoken to over stdio, or
//! an MCP server at a URL spoken to over streamable HTTP
//! (`upstream/streamable.rs`).
//!
//! Either way the wrapper sees the same thing: newline-delimited JSON-RPC
//! to write and to read.

mod streamable;

use std::ffi::OsString;
use std::process::Stdio;
use std::time::Duration;

use herald_http::client::Url;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use crate::proxy::ProxyError;

/// How long the server has to finish once the client has gone: a child to
/// exit, a URL to answer the requests still pending.
pub(crate) const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Where the MCP server is.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Upstream {
    /// A command and its arguments, started as a child; its standard input
    /// and output speak MCP's stdio transport.
    Command(Vec<OsString>),
    /// The URL of an MCP server speaking streamable HTTP
    /// (`http://HOST:PORT/mcp`).
    Url(String),
}

impl Upstream {
    /// Check what can be checked before anything is started.
    pub(crate) fn check(&self) -> Result<(), ProxyError> {
        match self {
            Self::Command(c) if c.is_empty() => Err(ProxyError::NoCommand),
            Self::Url(url) => parse(url).map(drop),
            Self::Command(_) => Ok(()),
        }
    }
}

/// The server, connected: where the wrapper writes to it and reads from it.
pub(crate) struct Connected {
    pub(crate) write: Box<dyn AsyncWrite + Unpin + Send>,
    pub(crate) read: Box<dyn AsyncRead + Unpin + Send>,
    pub(crate) running: Running,
}

/// The child, or the bridge to a URL.
pub(crate) enum Running {
    /// The child.
    Child(Child),
    /// The bridge; `Ok(true)` when the upstream ended the session first.
    Bridge(JoinHandle<bool>),
}

/// `--upstream URL`, parsed.
fn parse(url: &str) -> Result<Url, ProxyError> {
    Url::parse(url).map_err(|e| ProxyError::Url {
        url: url.to_owned(),
        reason: e.to_string(),
    })
}

/// Start the child or the bridge.
pub(crate) fn connect(upstream: &Upstream) -> Result<Connected, ProxyError> {
    upstream.check()?;
    match upstream {
        Upstream::Command(command) => {
            let (program, args) = command.split_first().ok_or(ProxyError::NoCommand)?;
            let mut child = Command::new(program)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .map_err(|error| ProxyError::Spawn {
                    command: program.to_string_lossy().into_owned(),
                    error,
                })?;
            let (Some(write), Some(read)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(ProxyError::Io(std::io::Error::other(
                    "the server's standard input or output is not a pipe",
                )));
            };
            Ok(Connected {
                write: Box::new(write),
                read: Box::new(read),
                running: Running::Child(child),
            })
        }
        Upstream::Url(url) => {
            let endpoint = parse(url)?;
            let (write, bridge_in) = tokio::io::duplex(streamable::PIPE);
            let (bridge_out, read) = tokio::io::duplex(streamable::PIPE);
            Ok(Connected {
                write: Box::new(write),
                read: Box::new(read),
                running: Running::Bridge(tokio::spawn(streamable::bridge(
                    endpoint, bridge_in, bridge_out,
                ))),
            })
        }
    }
}

impl Running {
    /// Wait for the server to end (at most [`EXIT_GRACE`], then a child is
    /// killed); its exit code, for a URL 0, or 1 when the upstream ended
    /// the session before the client did.
    pub(crate) async fn finish(self) -> Result<i32, ProxyError> {
        match self {
            Self::Child(mut child) => {
                let status = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
                    Ok(status) => status.map_err(ProxyError::Io)?,
                    Err(_) => {
                        let _ = child.kill().await;
                        child.wait().await.map_err(ProxyError::Io)?
                    }
                };
                Ok(status.code().unwrap_or(1))
            }
            Self::Bridge(mut bridge) => {
                match tokio::time::timeout(EXIT_GRACE * 2, &mut bridge).await {
                    Ok(Ok(false)) => Ok(0),
                    Ok(Ok(true)) => Ok(1),
                    Ok(Err(e)) => Err(ProxyError::Io(std::io::Error::other(e))),
                    Err(_) => {
                        bridge.abort();
                        Ok(1)
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_http_urls_and_commands_are_accepted() {
        assert!(matches!(
            Upstream::Command(Vec::new()).check(),
            Err(ProxyError::NoCommand)
        ));
        assert!(
            Upstream::Url("http://127.0.0.1:9/mcp".into())
                .check()
                .is_ok()
        );
        for bad in ["https://example.test/mcp", "127.0.0.1:9", "http://[::1/mcp"] {
            let err = Upstream::Url(bad.into()).check().unwrap_err();
            assert!(err.to_string().contains(bad), "{err}");
        }
    }
}
