//! This process's standard input and output, the client's side of the
//! stdio transport (`herald mcp proxy`, `herald mcp guard`).
//!
//! When they are pipes (what an MCP client that starts the wrapper
//! normally gives it), they are read and written from the runtime's own
//! thread as the kernel reports them ready, exactly as the server's pipes
//! are: a line from the client wakes the wrapper directly, and a line for
//! the client is one `write(2)` at once. tokio's `stdin()` and `stdout()`
//! instead hand every read and write to a blocking thread, which costs a
//! thread wake-up each way on every call (docs/performance.md *(10)*).
//! Anything else (a terminal, a file, a socket) gets tokio's `stdin()` /
//! `stdout()` as before.
//!
//! Reading a pipe this way needs `O_NONBLOCK` on it, which is a flag of
//! the pipe end shared by every process holding it; when the wrapper is
//! done with them, the ends are set back to blocking.

use std::fs::File;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The client's input: this process's standard input.
pub(crate) type ClientRead = Box<dyn AsyncRead + Unpin + Send>;
/// The client's output: this process's standard output.
pub(crate) type ClientWrite = Box<dyn AsyncWrite + Unpin + Send>;

/// Standard input, polled by the runtime when it is a pipe.
pub(crate) fn stdin() -> ClientRead {
    #[cfg(unix)]
    if let Some(pipe) =
        dup(std::io::stdin()).and_then(|f| tokio::net::unix::pipe::Receiver::from_file(f).ok())
    {
        return Box::new(Restore(Some(pipe)));
    }
    Box::new(tokio::io::stdin())
}

/// Standard output, polled by the runtime when it is a pipe.
pub(crate) fn stdout() -> ClientWrite {
    #[cfg(unix)]
    if let Some(pipe) =
        dup(std::io::stdout()).and_then(|f| tokio::net::unix::pipe::Sender::from_file(f).ok())
    {
        return Box::new(Restore(Some(pipe)));
    }
    Box::new(tokio::io::stdout())
}

/// A file of its own for the descriptor behind `stream` (a duplicate).
#[cfg(unix)]
fn dup(stream: impl std::os::fd::AsFd) -> Option<File> {
    stream.as_fd().try_clone_to_owned().ok().map(File::from)
}

/// A pipe end set back to blocking when dropped.
struct Restore<T: IntoBlocking>(Option<T>);

/// A pipe end that can be set back to blocking.
trait IntoBlocking {
    fn into_blocking(self);
}

#[cfg(unix)]
impl IntoBlocking for tokio::net::unix::pipe::Receiver {
    fn into_blocking(self) {
        // Best effort: the process is done with it either way.
        let _ = self.into_blocking_fd();
    }
}

#[cfg(unix)]
impl IntoBlocking for tokio::net::unix::pipe::Sender {
    fn into_blocking(self) {
        let _ = self.into_blocking_fd();
    }
}

impl<T: IntoBlocking> Drop for Restore<T> {
    fn drop(&mut self) {
        if let Some(end) = self.0.take() {
            end.into_blocking();
        }
    }
}

impl<T: IntoBlocking> Restore<T> {
    /// The pipe end; it is only taken by `drop`.
    fn end(&mut self) -> io::Result<Pin<&mut T>>
    where
        T: Unpin,
    {
        self.0
            .as_mut()
            .map(Pin::new)
            .ok_or_else(|| io::Error::other("the pipe end was given back"))
    }
}

impl<T: IntoBlocking + AsyncRead + Unpin> AsyncRead for Restore<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.end() {
            Ok(end) => end.poll_read(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl<T: IntoBlocking + AsyncWrite + Unpin> AsyncWrite for Restore<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.end() {
            Ok(end) => end.poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.end() {
            Ok(end) => end.poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.end() {
            Ok(end) => end.poll_shutdown(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}
