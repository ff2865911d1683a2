//! MCP's stdio transport as the wrapper speaks it on both sides: messages
//! are lines (newline-delimited JSON-RPC), the client on this process's
//! standard input and output, the server a child on its own (or the
//! streamable HTTP bridge of `--upstream URL`, which speaks lines too). Each
//! direction has a writer task that writes every line as soon as it is
//! queued and flushes it (no buffering of streams); either direction's
//! handler may queue lines for both.

use std::future::Future;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc};

use crate::proxy::ProxyError;
use crate::upstream::{self, Connected, EXIT_GRACE, Upstream};

/// What the server writes to the wrapper.
pub(crate) type ServerOutput = Box<dyn AsyncRead + Unpin + Send>;

/// A line to write, or the end of that direction.
pub(crate) enum Out {
    Line(Vec<u8>),
    Close,
}

/// The queue of one direction.
pub(crate) type Sender = mpsc::UnboundedSender<Out>;

/// Queue a line (without its newline).
pub(crate) fn send(to: &Sender, line: Vec<u8>) {
    // A closed direction drops what is left, as a closed pipe would.
    let _ = to.send(Out::Line(line));
}

/// Queue a JSON message.
pub(crate) fn send_json(to: &Sender, message: &serde_json::Value) {
    send(to, message.to_string().into_bytes());
}

/// Write lines as they come; close on [`Out::Close`].
pub(crate) async fn writer<W: AsyncWrite + Unpin>(
    mut out: W,
    mut lines: mpsc::UnboundedReceiver<Out>,
) -> std::io::Result<()> {
    while let Some(Out::Line(mut line)) = lines.recv().await {
        line.push(b'\n');
        out.write_all(&line).await?;
        out.flush().await?;
    }
    out.shutdown().await
}

/// Longest message (one line) read from either side: far above any real
/// MCP message (a base64 image of tens of MiB), and a bound on what a peer
/// that never sends a newline can make the wrapper hold.
pub(crate) const MAX_MESSAGE: u64 = 64 << 20;

/// Read one line into `buf`, without its newline; `false` at the end.
async fn read_line<R: AsyncRead + Unpin>(
    from: &mut BufReader<R>,
    buf: &mut Vec<u8>,
) -> std::io::Result<bool> {
    buf.clear();
    if (&mut *from)
        .take(MAX_MESSAGE)
        .read_until(b'\n', buf)
        .await?
        == 0
    {
        return Ok(false);
    }
    if buf.len() as u64 == MAX_MESSAGE && buf.last() != Some(&b'\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("an MCP message longer than {MAX_MESSAGE} bytes (no newline)"),
        ));
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    Ok(true)
}

/// The messages of one input, one line each.
pub(crate) struct Messages<R> {
    input: BufReader<R>,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> Messages<R> {
    pub(crate) fn new(input: R) -> Self {
        Self {
            input: BufReader::new(input),
            line: Vec::new(),
        }
    }

    /// The next line that is JSON (`None` at the end); a line that is not
    /// goes to `unparsed` as it is.
    pub(crate) async fn next(
        &mut self,
        unparsed: &Sender,
    ) -> std::io::Result<Option<serde_json::Value>> {
        while read_line(&mut self.input, &mut self.line).await? {
            match serde_json::from_slice(&self.line) {
                Ok(message) => return Ok(Some(message)),
                Err(_) => send(unparsed, self.line.clone()),
            }
        }
        Ok(None)
    }

    /// The bytes of the message [`Self::next`] returned last (copied only
    /// where a message is forwarded as received).
    pub(crate) fn line(&self) -> &[u8] {
        &self.line
    }
}

/// Forward every line of `input` to `to`, untouched.
pub(crate) async fn forward<R: AsyncRead + Unpin>(input: R, to: &Sender) -> std::io::Result<()> {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    while read_line(&mut input, &mut line).await? {
        send(to, line.clone());
    }
    Ok(())
}

/// Connect to the server and run until it closes its output: `client`
/// handles the client's side `down_read` (spawned: it ends when the client
/// closes, which closes the server's input), `server` the server's
/// output; lines for the client are written to `down_write`. Both handlers
/// get the queues `(up, down)`. Returns the server's exit code
/// ([`upstream::Running::finish`]).
pub(crate) async fn serve<DR, DW, C, CF, S, SF>(
    upstream: &Upstream,
    down_read: DR,
    down_write: DW,
    client: C,
    server: S,
) -> Result<i32, ProxyError>
where
    DW: AsyncWrite + Unpin + Send + 'static,
    C: FnOnce(DR, Sender, Sender) -> CF,
    CF: Future<Output = std::io::Result<()>> + Send + 'static,
    S: FnOnce(ServerOutput, Sender, Sender) -> SF,
    SF: Future<Output = std::io::Result<()>>,
{
    let Connected {
        write: up_write,
        read: up_read,
        running,
    } = upstream::connect(upstream)?;
    let (up, up_rx) = mpsc::unbounded_channel();
    let (down, down_rx) = mpsc::unbounded_channel();
    let up_task = tokio::spawn(writer(up_write, up_rx));
    let down_task = tokio::spawn(writer(down_write, down_rx));
    let client_gone = Arc::new(Notify::new());
    let client_task = {
        let (gone, up2) = (client_gone.clone(), up.clone());
        let run = client(down_read, up.clone(), down.clone());
        tokio::spawn(async move {
            let r = run.await;
            let _ = up2.send(Out::Close);
            gone.notify_one();
            r
        })
    };
    // The server's output until it closes; once the client has gone, the
    // server has EXIT_GRACE to finish.
    let served = tokio::select! {
        r = server(up_read, up.clone(), down.clone()) => r,
        () = async { client_gone.notified().await; tokio::time::sleep(EXIT_GRACE).await } => Ok(()),
    };
    let _ = down.send(Out::Close);
    let flushed = down_task.await;
    client_task.abort();
    // The server's input is closed once what was queued for it is written.
    let _ = up.send(Out::Close);
    let _ = tokio::time::timeout(EXIT_GRACE, up_task).await;
    let status = running.finish().await?;
    served.map_err(ProxyError::Io)?;
    match flushed {
        Ok(r) => r.map_err(ProxyError::Io)?,
        Err(e) => return Err(ProxyError::Io(std::io::Error::other(e))),
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn lines_are_messages_and_junk_passes_as_it_is() {
        let input: &[u8] = b"{\"a\":1}\nnot json\r\n{\"b\":2}";
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut messages = Messages::new(input);
        assert_eq!(
            messages.next(&tx).await.unwrap(),
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(messages.line(), b"{\"a\":1}");
        // The junk line went to `unparsed` untouched (its \r included).
        assert_eq!(
            messages.next(&tx).await.unwrap(),
            Some(serde_json::json!({"b": 2}))
        );
        assert!(matches!(rx.try_recv(), Ok(Out::Line(l)) if l == b"not json\r"));
        assert_eq!(messages.next(&tx).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_line_without_end_is_refused_at_the_cap() {
        let long = vec![b'x'; MAX_MESSAGE as usize + 1];
        let (tx, _rx) = mpsc::unbounded_channel();
        let err = Messages::new(&long[..]).next(&tx).await.unwrap_err();
        assert!(err.to_string().contains("longer than"), "{err}");
    }
}
