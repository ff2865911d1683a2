//! The one accept-and-serve loop of every HERALD server, facing the
//! internet: each server is an axum router served by [`serve`] on a
//! listener from [`listen`], under [`Limits`].
//!
//! What a hostile client can no longer do (docs/conduit.md *Limits
//! against slow and idle clients*):
//! - hold a connection by sending a request head slowly, or nothing at
//!   all, or by leaving a keep-alive connection idle: the head must
//!   arrive whole within [`Limits::header_read_timeout`], counted from the
//!   moment the connection waits for a request (when it is accepted, and
//!   again after each answer), so an idle connection is closed after the
//!   same time. A request whose head has arrived is not idle: a long poll
//!   is answered however long it waits;
//! - exhaust the process's file descriptors: at most
//!   [`Limits::max_connections`] connections are served at once (past it
//!   `accept` waits and new clients queue in the kernel's backlog until a
//!   connection ends), and [`serve`] raises the descriptor soft limit to
//!   the hard limit ([`raise_fd_limit`]);
//! - make a refusal given before the body was read arrive as a reset: a
//!   connection closes lingering: its write side shut first, then what the
//!   client still sends read and discarded for at most [`LINGER`];
//! - keep the process from exiting: on shutdown the listener is closed,
//!   each connection finishes the request it is answering and closes, and
//!   those still open after [`Limits::shutdown_grace`] are closed.

use core::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

pub use crate::linger::LINGER;
use crate::linger::Lingering;

/// Connections the kernel completes and queues for `accept` (listen(2)'s
/// backlog; the kernel caps it at `net.core.somaxconn`). A burst of new
/// clients larger than the queue, while the server is busy, has its
/// handshakes dropped, and each client retries only after TCP's one-second
/// SYN timeout: a second added to its first answer. `tokio`'s and `std`'s
/// `bind` queue 128; 400 agents connecting at once overflowed that
/// (docs/performance.md *(8)*).
pub const LISTEN_BACKLOG: u32 = 1024;

/// File descriptors kept for everything but connections (the store, its
/// log, the PostgreSQL pool, child processes' pipes) when the connection
/// cap is fitted under the descriptor limit.
pub const RESERVED_FDS: u64 = 64;

/// How long and how many: the bounds [`serve`] holds every client to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The longest a connection may take to send a whole request head,
    /// counted from when it starts waiting for one (accepted, or its last
    /// answer sent): a head trickled a byte at a time, a connection that
    /// sends nothing and an idle keep-alive connection are all closed
    /// after it. Default 10 s: a genuine client sends its head in one
    /// write, and one that waits longer between requests reconnects.
    pub header_read_timeout: Duration,
    /// The most connections served at once; past it `accept` waits, so
    /// new clients wait in the listen backlog until a connection ends.
    /// Default 4096 (each connection holds a descriptor and a few tens of
    /// kilobytes); lowered to the descriptor limit less
    /// [`RESERVED_FDS`] when that is smaller.
    pub max_connections: usize,
    /// After shutdown begins, how long connections have to finish the
    /// request they are answering before they are closed. Default 10 s.
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            max_connections: 4096,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// These limits with a header read timeout of `d`.
    #[must_use]
    pub fn header_read_timeout(mut self, d: Duration) -> Self {
        self.header_read_timeout = d;
        self
    }

    /// These limits with at most `n` (at least 1) connections at once.
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// These limits with a shutdown grace of `d`.
    #[must_use]
    pub fn shutdown_grace(mut self, d: Duration) -> Self {
        self.shutdown_grace = d;
        self
    }

    /// The connection cap under a descriptor limit of `fds` (`None`:
    /// unlimited): [`Limits::max_connections`], or fewer so that
    /// [`RESERVED_FDS`] descriptors remain, and at least 1.
    #[must_use]
    pub fn connection_cap(&self, fds: Option<u64>) -> usize {
        let room = fds.map_or(usize::MAX, |f| {
            usize::try_from(f.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX)
        });
        self.max_connections.min(room).max(1)
    }
}

impl fmt::Display for Limits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "header read timeout {:?}, at most {} connections, shutdown grace {:?}",
            self.header_read_timeout, self.max_connections, self.shutdown_grace
        )
    }
}

/// A listener on `addr` with a backlog of [`LISTEN_BACKLOG`] (and
/// `SO_REUSEADDR`, as tokio's `bind`: a restarted server takes its port
/// again while its old connections are in TIME_WAIT). Call it inside a
/// tokio runtime.
pub fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Raise this process's file-descriptor soft limit to its hard limit (a
/// soft limit of 1024 or 512 is a few hundred idle clients away from a
/// server that can no longer accept). The soft limit in force afterwards
/// (`None`: unlimited, or not known on this platform); a refusal is
/// logged and leaves the limit as it was.
pub fn raise_fd_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        let (Some(current), maximum) = (limit.current, limit.maximum) else {
            return None;
        };
        if maximum.is_some_and(|m| m <= current) {
            return Some(current);
        }
        let raised = Rlimit {
            current: maximum,
            maximum,
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => {
                tracing::debug!(from = current, to = ?maximum, "file descriptor limit raised");
                maximum
            }
            Err(e) => {
                tracing::warn!(
                    limit = current,
                    error = %e,
                    "could not raise the file descriptor limit"
                );
                Some(current)
            }
        }
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Serve `app` on `listener` under `limits` until `shutdown` completes;
/// then stop accepting, let each connection finish what it is answering
/// for at most [`Limits::shutdown_grace`], close the rest, and return.
///
/// Call it once per process: it raises the descriptor limit
/// ([`raise_fd_limit`]) and fits the connection cap under it.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let cap = limits.connection_cap(raise_fd_limit());
    let slots = Arc::new(Semaphore::new(cap));
    let (stop, stopped) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);
    let mut full = false;
    loop {
        while connections.try_join_next().is_some() {}
        if slots.available_permits() == 0 && !full {
            tracing::warn!(cap, "connection cap reached: new clients wait");
        }
        full = slots.available_permits() == 0;
        let slot = tokio::select! {
            () = &mut shutdown => break,
            slot = Arc::clone(&slots).acquire_owned() => match slot {
                Ok(s) => s,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and the like: wait a little rather than spin;
                    // a connection that ends frees what accept needs.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::select! {
                        () = &mut shutdown => break,
                        () = tokio::time::sleep(Duration::from_millis(50)) => continue,
                    }
                }
            },
        };
        // No Nagle: an answer is written whole, and waiting for the
        // client's delayed ACK would add 40 ms to it.
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut stopped = stopped.clone();
        let header_read_timeout = limits.header_read_timeout;
        connections.spawn(async move {
            let _slot = slot;
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_read_timeout)
                .keep_alive(true);
            let mut conn =
                pin!(builder.serve_connection(TokioIo::new(Lingering::new(stream)), service));
            let stopping = async move {
                let _ = stopped.wait_for(|s| *s).await;
            };
            let ended = tokio::select! {
                ended = conn.as_mut() => ended,
                () = stopping => {
                    // Answer what is in flight, then close; an idle
                    // connection closes at once.
                    conn.as_mut().graceful_shutdown();
                    conn.as_mut().await
                }
            };
            if let Err(e) = ended {
                tracing::debug!(%peer, error = %e, "connection closed");
            }
        });
    }
    drop(listener);
    stop.send_replace(true);
    let open = connections.len();
    let drained = tokio::time::timeout(limits.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open,
            still_open = connections.len(),
            grace = ?limits.shutdown_grace,
            "shutdown grace over: closing the connections still open"
        );
        connections.shutdown().await;
    }
    Ok(())
}

/// SIGTERM or SIGINT (CONDUIT.md *Operation*: stop accepting, answer what
/// is in flight, exit 0). The handlers are installed when this is called
/// (inside a tokio runtime), before the future is first polled, so a
/// signal that arrives right after a `listening on` line is not missed.
pub fn termination() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate()).ok();
        let int = signal(SignalKind::interrupt()).ok();
        async move {
            let one = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = one(term) => {}
                () = one(int) => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_fits_under_the_descriptor_limit() {
        let l = Limits::default();
        assert_eq!(l.connection_cap(None), 4096);
        assert_eq!(l.connection_cap(Some(1 << 20)), 4096);
        assert_eq!(l.connection_cap(Some(512)), 512 - 64);
        assert_eq!(l.connection_cap(Some(10)), 1);
        assert_eq!(l.max_connections(0).max_connections, 1);
    }
}
