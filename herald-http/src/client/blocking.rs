//! [`Client`] for callers that block (the CLI's `herald log
//! witness`, a notary's witness submissions from its worker thread, the
//! Python bindings): each call runs on a runtime of its own, on a thread of
//! its own, so that it may be called from anywhere, inside an async runtime
//! included (where, like any blocking call, it holds its worker thread
//! until it returns).

use std::future::Future;

use super::{Client, ClientError, Request, Response, Url};

/// `GET url`, blocking.
pub fn get(client: &Client, url: &Url) -> Result<Response, ClientError> {
    send(client, &Request::get(url.clone()))
}

/// [`Client::send`], blocking.
pub fn send(client: &Client, request: &Request) -> Result<Response, ClientError> {
    let client = *client;
    run(client.send(request))?
}

/// Run `work` (requests made with the client, and what is done with their
/// answers) to its end, blocking; its output, or why it could not run.
pub fn run<T: Send>(work: impl Future<Output = T> + Send) -> Result<T, ClientError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(ClientError::Runtime)?;
            Ok(rt.block_on(work))
        })
        .join()
        .unwrap_or_else(|_| {
            Err(ClientError::Runtime(std::io::Error::other(
                "the request's thread panicked",
            )))
        })
    })
}
