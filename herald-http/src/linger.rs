//! Lingering close: a connection the server ends while the client is still
//! sending (an answer given before the request's body was read, such as a
//! `413` from the head, docs/conduit.md *Limits*) is closed in two steps.
//! The write side is shut first (the client gets the whole answer, then
//! end of stream), and what the client still sends is read and discarded
//! until it closes its side, for at most [`LINGER`]. Closing at once with
//! unread bytes in the socket's receive queue makes the kernel answer with
//! a reset, and a reset can make the client's kernel discard the answer
//! before the client reads it: it sees `connection reset` instead of its
//! `413`. (As nginx's `lingering_close`; RFC 9112 §9.6 asks a server to
//! close in this order.)
//!
//! Bounded: at most [`LINGER`] of wall time per connection, counted from
//! the shutdown, and at most [`READS_PER_POLL`] reads before yielding to
//! the other tasks, so a client that keeps sending can neither hold the
//! connection longer nor starve the runtime.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// The longest a closing connection reads and discards what its client
/// still sends.
pub const LINGER: Duration = Duration::from_secs(2);

/// Reads of discarded bytes in one poll before the task yields.
const READS_PER_POLL: usize = 16;

/// A stream whose `poll_shutdown` closes lingering (module documentation).
pub(crate) struct Lingering<S> {
    inner: S,
    /// Set once the write side is shut: when the lingering ends.
    until: Option<Pin<Box<Sleep>>>,
}

impl<S> Lingering<S> {
    pub(crate) fn new(inner: S) -> Self {
        Self { inner, until: None }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Lingering<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Lingering<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.until.is_none() {
            // The answer is out; end of stream follows it.
            std::task::ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            this.until = Some(Box::pin(tokio::time::sleep(LINGER)));
        }
        let Some(until) = this.until.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        let mut scratch = [0u8; 8192];
        for _ in 0..READS_PER_POLL {
            if until.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Ok(()));
            }
            let mut discard = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut discard) {
                // The client closed its side (or the connection broke):
                // nothing unread is left to cause a reset.
                Poll::Ready(Ok(())) if discard.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {}
                Poll::Pending => return Poll::Pending,
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
