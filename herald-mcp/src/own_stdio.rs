//! This process's standard input and output, the client's side of the
//! stdio transport (`herald mcp proxy`, `herald mcp guard`).
//!
//! When they are pipes or stream sockets (what an MCP client that starts
//! the wrapper gives it: Python's `subprocess` and Rust's `Command` make
//! pipes, Node.js's `child_process` socket pairs), they are read and
//! written from the runtime's own thread as the kernel reports them ready,
//! as the server's pipes are: a line from the client wakes the wrapper
//! directly, and a line for the client is one `write(2)` at once. tokio's
//! `stdin()` and `stdout()` instead hand every read and write to a blocking
//! thread, a thread wake-up more each way on every call
//! (docs/performance.md *(10)*). Anything else (a terminal, a file) gets
//! tokio's `stdin()` / `stdout()`.
//!
//! Polling needs `O_NONBLOCK`, a flag of the pipe end or socket that every
//! process holding it shares (a shell pipeline, a parent that kept its
//! copy). The ends are set back to blocking when the wrapper is done with
//! them, on every way out but a kill.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The client's input: this process's standard input.
pub(crate) type ClientRead = Box<dyn AsyncRead + Unpin + Send>;
/// The client's output: this process's standard output.
pub(crate) type ClientWrite = Box<dyn AsyncWrite + Unpin + Send>;

/// Standard input, polled by the runtime when it is a pipe or a socket.
pub(crate) fn stdin() -> ClientRead {
    #[cfg(unix)]
    if let Some(end) = Polled::input(std::io::stdin()) {
        return Box::new(end);
    }
    Box::new(tokio::io::stdin())
}

/// Standard output, polled by the runtime when it is a pipe or a socket.
pub(crate) fn stdout() -> ClientWrite {
    #[cfg(unix)]
    if let Some(end) = Polled::output(std::io::stdout()) {
        return Box::new(end);
    }
    Box::new(tokio::io::stdout())
}

/// A pipe end or socket registered with the runtime (a duplicate of the
/// standard descriptor), set back to blocking when dropped.
#[cfg(unix)]
struct Polled(Option<End>);

#[cfg(unix)]
enum End {
    Read(tokio::net::unix::pipe::Receiver),
    Write(tokio::net::unix::pipe::Sender),
    Socket(tokio::net::UnixStream),
}

#[cfg(unix)]
impl Polled {
    fn input(stream: impl std::os::fd::AsFd) -> Option<Self> {
        use tokio::net::unix::pipe::Receiver;
        Self::open(stream, |file| Receiver::from_file(file).ok().map(End::Read))
    }

    fn output(stream: impl std::os::fd::AsFd) -> Option<Self> {
        use tokio::net::unix::pipe::Sender;
        Self::open(stream, |file| Sender::from_file(file).ok().map(End::Write))
    }

    /// A duplicate of `stream`'s descriptor: given to `pipe` when it is a
    /// FIFO, registered as a socket when it is a Unix one, else `None`.
    fn open(
        stream: impl std::os::fd::AsFd,
        pipe: impl FnOnce(std::fs::File) -> Option<End>,
    ) -> Option<Self> {
        use std::os::unix::fs::FileTypeExt;
        use std::os::unix::net::UnixStream;
        let fd = stream.as_fd().try_clone_to_owned().ok()?;
        let file = std::fs::File::from(fd);
        let kind = file.metadata().ok()?.file_type();
        let end = if kind.is_fifo() {
            pipe(file)?
        } else if kind.is_socket() {
            let socket = UnixStream::from(std::os::fd::OwnedFd::from(file));
            // A TCP socket (inetd style) stays with tokio's blocking
            // threads: only a Unix socket has a Unix local address.
            socket.local_addr().ok()?;
            socket.set_nonblocking(true).ok()?;
            match tokio::net::UnixStream::from_std(socket) {
                Ok(socket) => End::Socket(socket),
                Err(_) => return None,
            }
        } else {
            return None;
        };
        Some(Self(Some(end)))
    }

    fn end(&mut self) -> io::Result<&mut End> {
        self.0
            .as_mut()
            .ok_or_else(|| io::Error::other("the descriptor was given back"))
    }
}

#[cfg(unix)]
impl Drop for Polled {
    fn drop(&mut self) {
        // Best effort: the process is done with it either way.
        match self.0.take() {
            Some(End::Read(pipe)) => drop(pipe.into_blocking_fd()),
            Some(End::Write(pipe)) => drop(pipe.into_blocking_fd()),
            Some(End::Socket(socket)) => {
                if let Ok(socket) = socket.into_std() {
                    let _ = socket.set_nonblocking(false);
                }
            }
            None => {}
        }
    }
}

#[cfg(unix)]
impl AsyncRead for Polled {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.end() {
            Ok(End::Read(pipe)) => Pin::new(pipe).poll_read(cx, buf),
            Ok(End::Socket(socket)) => Pin::new(socket).poll_read(cx, buf),
            Ok(End::Write(_)) => Poll::Ready(Err(io::Error::other("standard output is not read"))),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

#[cfg(unix)]
impl AsyncWrite for Polled {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.end() {
            Ok(End::Write(pipe)) => Pin::new(pipe).poll_write(cx, buf),
            Ok(End::Socket(socket)) => Pin::new(socket).poll_write(cx, buf),
            Ok(End::Read(_)) => Poll::Ready(Err(io::Error::other("standard input is not written"))),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.end() {
            Ok(End::Write(pipe)) => Pin::new(pipe).poll_flush(cx),
            Ok(End::Socket(socket)) => Pin::new(socket).poll_flush(cx),
            Ok(End::Read(_)) => Poll::Ready(Ok(())),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    /// A flush only, for a socket too: the client sees the end of output
    /// when the process exits, as with tokio's `stdout()` (a `shutdown(2)`
    /// would end it for every holder of the socket).
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}
