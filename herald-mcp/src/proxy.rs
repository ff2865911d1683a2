//! `herald mcp proxy` (docs/mcp.md): between an MCP client (the model's host)
//! and an MCP server (the tools), over stdio on both sides.
//!
//! ```text
//! client ──stdin──▶ proxy ──child stdin──▶ server
//! client ◀─stdout── proxy ◀─child stdout── server
//! ```
//!
//! Messages are newline-delimited JSON-RPC (MCP stdio transport). Each one
//! is handled as it arrives and written out at once (no buffering of
//! streams). Only these are touched:
//! - `tools/call` requests: signed (herald-agent's `Session::request`), written to the
//!   trace file, and forwarded with the envelope in `params._meta`;
//! - their responses: signed (herald-agent's `Session::result`), appended, and released
//!   with the envelope in `result._meta`, never before it and its request are on disk
//!   (`--sync`, [`crate::recorder::SyncPolicy`]);
//! - `tools/list` results without a next page: compared with the pinned
//!   tool set, and given a `herald/warning` when it changed.
//!
//! Every other message (notifications, progress, cancellation, resources,
//! prompts, sampling, elicitation, pings, errors) is forwarded as the bytes
//! received. The wrapper also sends requests of its own to the server: the
//! complete `tools/list` that the genesis pins, after `initialized` and
//! after each `notifications/tools/list_changed`; their responses are
//! consumed, never forwarded. The keys stay in this process: nothing sent
//! either way holds more of them than signatures and public keys.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestMethod, CancelledNotificationMethod, ConstString, InitializeResultMethod,
    InitializedNotificationMethod, ListToolsRequestMethod, ToolListChangedNotificationMethod,
};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use crate::jsonrpc::{self, Kind};
use crate::ledger::{Ledger, invalid_call};
use crate::recorder::{Conduit, Recorder, SyncPolicy};
use crate::stdio::{self, Messages, Sender, send, send_json};
use crate::trace_file::{TraceFile, TraceFileError};
use crate::upstream::Upstream;
use herald_agent::mcp::{Handshake, Keys, ToolSet};

/// `tools/call`.
pub(crate) const TOOLS_CALL: &str = CallToolRequestMethod::VALUE;
const TOOLS_LIST: &str = ListToolsRequestMethod::VALUE;
const INITIALIZE: &str = InitializeResultMethod::VALUE;
const INITIALIZED: &str = InitializedNotificationMethod::VALUE;
/// `notifications/cancelled`.
pub(crate) const CANCELLED: &str = CancelledNotificationMethod::VALUE;
const TOOLS_CHANGED: &str = ToolListChangedNotificationMethod::VALUE;

/// The prefix of the ids of the wrapper's own requests to the server.
const OWN_ID: &str = "herald-mcp/tools/list/";

/// How long a `tools/call` waits for the session's genesis (the server's
/// answer to the pinning `tools/list`).
const GENESIS_WAIT: Duration = Duration::from_secs(30);

/// Most pages of the wrapper's own `tools/list` followed.
const MAX_PAGES: u64 = 1000;

/// What `herald mcp proxy` is given.
#[derive(Debug)]
pub struct ProxyConfig {
    /// The agent and sandbox keys.
    pub keys: Keys,
    /// `--trace FILE`.
    pub trace: PathBuf,
    /// `--pin FILE`.
    pub pin: Option<PathBuf>,
    /// `--conduit URL` (and `--conduit-key`): the conduit.
    pub conduit: Option<Conduit>,
    /// `--sync`: when the trace file is made durable.
    pub sync: SyncPolicy,
    /// The server: the command after `--`, or `--upstream URL`.
    pub upstream: Upstream,
}

/// Why the proxy could not run.
#[derive(Debug)]
#[non_exhaustive]
pub enum ProxyError {
    /// The trace file cannot be opened.
    Trace(TraceFileError),
    /// No server command was given.
    NoCommand,
    /// The server could not be started.
    Spawn {
        /// The command.
        command: String,
        /// The error.
        error: std::io::Error,
    },
    /// The upstream URL cannot be used.
    Url {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// Reading or writing standard input and output, or the async runtime.
    Io(std::io::Error),
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Trace(e) => write!(f, "--trace: {e}"),
            Self::NoCommand => f.write_str("no server command given after `--`"),
            Self::Spawn { command, error } => write!(f, "cannot start {command:?}: {error}"),
            Self::Url { url, reason } => write!(f, "--upstream {url}: {reason}"),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ProxyError {}

/// Run the stdio proxy until the server exits; returns its exit code (or
/// 1 when it was killed by a signal).
pub fn run_stdio(config: ProxyConfig) -> Result<i32, ProxyError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProxyError::Io)?;
    let code = runtime.block_on(serve_stdio(config));
    // When standard input is neither a pipe nor a socket, its read is a
    // blocking thread that only returns when the client writes or closes:
    // when the server ended first, do not wait for it (everything for the
    // client is already written).
    runtime.shutdown_background();
    code
}

/// [`run_stdio`] on the caller's runtime.
pub(crate) async fn serve_stdio(config: ProxyConfig) -> Result<i32, ProxyError> {
    let ProxyConfig {
        keys,
        trace,
        pin,
        conduit,
        sync,
        upstream,
    } = config;
    let recorder = open_recorder(&trace, conduit, sync)?;
    serve_session(
        Ledger::new(keys, recorder, pin),
        &upstream,
        crate::own_stdio::stdin(),
        crate::own_stdio::stdout(),
    )
    .await
}

/// The recorder of `--trace`, `--conduit` and `--sync`, the one start-up
/// of the stdio and the HTTP proxy: the trace file opened, a torn last item
/// a crash left cut and said (herald-agent's TraceFile).
pub(crate) fn open_recorder(
    trace: &Path,
    conduit: Option<Conduit>,
    sync: SyncPolicy,
) -> Result<Recorder, ProxyError> {
    let trace = TraceFile::open(trace).map_err(ProxyError::Trace)?;
    if trace.recovered() > 0 {
        tracing::warn!(
            "herald-mcp: cut a torn last item ({} bytes) from the trace file",
            trace.recovered()
        );
    }
    Ok(Recorder::new(trace, conduit, sync))
}

/// What a client's message is answered with at once, before any routing,
/// facing the client as the proxy and the guard both do: a `tools/call`
/// without a usable id (docs/mcp.md *Ids and batches*: it could never be
/// answered with its refusal, and a lenient server would run it) and a
/// JSON-RPC batch holding a call the wrapper signs or pins. Whether
/// `message` was answered so.
pub(crate) fn refused_unroutable(message: &Value, down: &Sender) -> bool {
    if jsonrpc::without_usable_id(message, TOOLS_CALL) {
        send_json(down, &jsonrpc::no_usable_id(TOOLS_CALL));
        return true;
    }
    if matches!(jsonrpc::classify(message), Kind::Batch) && batch_has_wrapped(message) {
        let answers = refuse_batch(message);
        if !answers.is_empty() {
            send_json(down, &Value::Array(answers));
        }
        return true;
    }
    false
}

/// One MCP session: its client on `down_read`/`down_write`, `upstream` as
/// its server, `ledger` its trace.
pub(crate) async fn serve_session<DR, DW>(
    ledger: Ledger,
    upstream: &Upstream,
    down_read: DR,
    down_write: DW,
) -> Result<i32, ProxyError>
where
    DR: AsyncRead + Unpin + Send + 'static,
    DW: AsyncWrite + Unpin + Send + 'static,
{
    let wrapper = Wrapper::new(ledger);
    let client = wrapper.clone();
    stdio::serve(
        upstream,
        down_read,
        down_write,
        move |input, up, down| async move { client.client_to_server(input, &up, &down).await },
        |output, up, down| async move { wrapper.server_to_client(output, &up, &down).await },
    )
    .await
}

/// The wrapper's own `tools/list` in flight.
struct PinFetch {
    id: String,
    page: u64,
    tools: Vec<Value>,
    /// `true` for the genesis, `false` for a recheck after `list_changed`.
    genesis: bool,
}

/// Which messages are whose: what both directions share besides the ledger.
#[derive(Default)]
struct Routes {
    handshake: Handshake,
    initialize: Option<String>,
    /// The client sent `notifications/initialized` (MCP lifecycle): calls
    /// before it are answered with an error at once.
    initialized: bool,
    /// Pending `tools/call` requests: JSON id → request envelope id.
    calls: HashMap<String, [u8; 32]>,
    /// Pending `tools/list` requests of the client for a first page.
    lists: HashSet<String>,
    fetch: Option<PinFetch>,
    /// A recheck was asked for while a fetch was in flight.
    recheck: bool,
    fetches: u64,
}

/// The proxy's shared state.
#[derive(Clone)]
struct Wrapper {
    routes: Arc<Mutex<Routes>>,
    /// Held while an envelope is signed and recorded (across the conduit's
    /// answer), so the file and the conduit see the chain in order.
    ledger: Arc<tokio::sync::Mutex<Ledger>>,
    /// Set once the session is open (or could not be).
    ready: Arc<watch::Sender<bool>>,
}

impl Wrapper {
    fn new(ledger: Ledger) -> Self {
        Self {
            routes: Arc::new(Mutex::new(Routes::default())),
            ledger: Arc::new(tokio::sync::Mutex::new(ledger)),
            ready: Arc::new(watch::channel(false).0),
        }
    }

    fn routes(&self) -> MutexGuard<'_, Routes> {
        // The routes hold no invariant a panic elsewhere could break
        // halfway: keep going.
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Client → server.
    async fn client_to_server<R: AsyncRead + Unpin>(
        &self,
        input: R,
        up: &Sender,
        down: &Sender,
    ) -> std::io::Result<()> {
        let mut messages = Messages::new(input);
        while let Some(message) = messages.next(up).await? {
            let line = messages.line();
            if refused_unroutable(&message, down) {
                continue;
            }
            match jsonrpc::classify(&message) {
                Kind::Request {
                    method: TOOLS_CALL, ..
                } => self.call(message, up, down).await,
                Kind::Request {
                    id,
                    method: INITIALIZE,
                } => {
                    let mut routes = self.routes();
                    routes.initialize = Some(id);
                    routes.handshake.request = message.get("params").cloned().unwrap_or_default();
                    send(up, line.to_vec());
                }
                Kind::Request {
                    id,
                    method: TOOLS_LIST,
                } => {
                    let first_page = message.pointer("/params/cursor").is_none_or(Value::is_null);
                    if first_page {
                        self.routes().lists.insert(id);
                    }
                    send(up, line.to_vec());
                }
                Kind::Notification {
                    method: INITIALIZED,
                } => {
                    self.routes().initialized = true;
                    send(up, line.to_vec());
                    self.start_fetch(true, up).await;
                }
                Kind::Notification { method: CANCELLED } => {
                    self.cancelled(&message).await;
                    send(up, line.to_vec());
                }
                _ => send(up, line.to_vec()),
            }
        }
        Ok(())
    }

    /// Server → client.
    async fn server_to_client<R: AsyncRead + Unpin>(
        &self,
        input: R,
        up: &Sender,
        down: &Sender,
    ) -> std::io::Result<()> {
        let mut messages = Messages::new(input);
        while let Some(message) = messages.next(down).await? {
            let line = messages.line();
            match jsonrpc::classify(&message) {
                Kind::Response { id } => self.response(id, message, line, up, down).await,
                Kind::Notification {
                    method: TOOLS_CHANGED,
                } => {
                    send(down, line.to_vec());
                    if self.ledger.lock().await.opened() {
                        self.start_fetch(false, up).await;
                    }
                }
                _ => send(down, line.to_vec()),
            }
        }
        Ok(())
    }

    /// A response from the server.
    async fn response(
        &self,
        id: String,
        mut message: Value,
        line: &[u8],
        up: &Sender,
        down: &Sender,
    ) {
        enum Route {
            Fetch,
            Call([u8; 32]),
            List,
            Other,
        }
        let route = {
            let mut routes = self.routes();
            if routes.fetch.as_ref().is_some_and(|f| f.id == id) {
                Route::Fetch
            } else if routes.initialize.as_ref() == Some(&id) {
                routes.initialize = None;
                routes.handshake.result = message.get("result").cloned().unwrap_or_default();
                Route::Other
            } else if let Some(request) = routes.calls.remove(&id) {
                Route::Call(request)
            } else if routes.lists.remove(&id) {
                Route::List
            } else {
                Route::Other
            }
        };
        match route {
            Route::Fetch => self.fetched(&message, up, down).await,
            Route::Call(request) => {
                let released = self.ledger.lock().await.answer(request, message).await;
                send_json(down, &released);
            }
            Route::List => {
                let warning = self.ledger.lock().await.listed(&mut message).await;
                match warning {
                    Some(warning) => {
                        send_json(down, &jsonrpc::warning(&warning));
                        send_json(down, &message);
                    }
                    None => send(down, line.to_vec()),
                }
            }
            Route::Other => send(down, line.to_vec()),
        }
    }

    /// A `tools/call` from the client: signed and forwarded, or answered here.
    async fn call(&self, mut message: Value, up: &Sender, down: &Sender) {
        let id = message.get("id").cloned().unwrap_or_default();
        if message
            .pointer("/params/name")
            .and_then(Value::as_str)
            .is_none()
        {
            return send_json(down, &invalid_call(&id));
        }
        if !self.routes().initialized {
            // MCP lifecycle: no request but pings before the client's
            // `initialized`; the session's trace opens after it. Answered
            // now, never left waiting.
            return send_json(
                down,
                &jsonrpc::error(
                    &id,
                    jsonrpc::INVALID_REQUEST,
                    "herald-mcp: tools/call before notifications/initialized: the session's \
                     trace opens once the client has initialized (MCP lifecycle)",
                ),
            );
        }
        let mut ready = self.ready.subscribe();
        if tokio::time::timeout(GENESIS_WAIT, ready.wait_for(|r| *r))
            .await
            .is_err()
        {
            let text = "herald-mcp: no MCP session to sign this call in (the client has not \
                        initialized, or the server did not answer the pinning tools/list)";
            return send_json(down, &jsonrpc::response(&id, jsonrpc::tool_error(text)));
        }
        // The ledger is held until the call is routed, so its answer can
        // never be looked for before it is known to be pending.
        let mut ledger = self.ledger.lock().await;
        match ledger.call(&mut message).await {
            Ok(request) => {
                self.routes().calls.insert(jsonrpc::id_key(&id), request);
                send_json(up, &message);
            }
            Err(answer) => send_json(down, &answer),
        }
    }

    /// `notifications/cancelled` for a pending call: an event in the trace.
    async fn cancelled(&self, message: &Value) {
        let Some(params) = message.get("params") else {
            return;
        };
        let request = params
            .get("requestId")
            .and_then(|id| self.routes().calls.get(&jsonrpc::id_key(id)).copied());
        if let Some(request) = request {
            self.ledger.lock().await.cancelled(request, params).await;
        }
    }

    /// Ask the server for its complete tool list (its answer is consumed).
    async fn start_fetch(&self, genesis: bool, up: &Sender) {
        let opened = self.ledger.lock().await.opened();
        let request = {
            let mut routes = self.routes();
            if genesis && opened {
                return;
            }
            if routes.fetch.is_some() {
                routes.recheck |= !genesis;
                return;
            }
            let has_tools = routes
                .handshake
                .result
                .pointer("/capabilities/tools")
                .is_some();
            if genesis && !has_tools {
                None
            } else {
                routes.fetches += 1;
                let id = format!("{OWN_ID}{}", routes.fetches);
                routes.fetch = Some(PinFetch {
                    id: jsonrpc::id_key(&Value::from(id.as_str())),
                    page: 0,
                    tools: Vec::new(),
                    genesis,
                });
                Some(json!({"jsonrpc": "2.0", "id": id, "method": TOOLS_LIST, "params": {}}))
            }
        };
        match request {
            Some(request) => send_json(up, &request),
            None => {
                // A server without tools: the genesis pins the empty set.
                self.open(Ok(ToolSet::empty())).await;
            }
        }
    }

    async fn open(&self, tools: Result<ToolSet, String>) {
        let handshake = self.routes().handshake.clone();
        self.ledger.lock().await.open(&handshake, tools).await;
        self.ready.send_replace(true);
    }

    /// A page of the wrapper's own `tools/list`.
    async fn fetched(&self, message: &Value, up: &Sender, down: &Sender) {
        let done = {
            let mut routes = self.routes();
            let Some(mut fetch) = routes.fetch.take() else {
                return;
            };
            let result = message.get("result");
            if let Some(tools) = result
                .and_then(|r| r.get("tools"))
                .and_then(Value::as_array)
            {
                fetch.tools.extend(tools.iter().cloned());
            }
            let cursor = result
                .and_then(|r| r.get("nextCursor"))
                .filter(|c| !c.is_null())
                .cloned();
            match cursor {
                Some(cursor) if fetch.page < MAX_PAGES => {
                    fetch.page += 1;
                    let id = format!("{OWN_ID}{}.{}", routes.fetches, fetch.page);
                    fetch.id = jsonrpc::id_key(&Value::from(id.as_str()));
                    routes.fetch = Some(fetch);
                    drop(routes);
                    return send_json(
                        up,
                        &json!({"jsonrpc": "2.0", "id": id, "method": TOOLS_LIST,
                                "params": {"cursor": cursor}}),
                    );
                }
                _ => {}
            }
            let set = match message.get("error") {
                Some(error) => Err(format!("the server refused tools/list: {error}")),
                None => ToolSet::of(&fetch.tools).map_err(|e| e.to_string()),
            };
            let again = std::mem::take(&mut routes.recheck);
            (fetch.genesis, set, again)
        };
        let (genesis, set, again) = done;
        if genesis {
            return self.open(set).await;
        }
        let warning = self.ledger.lock().await.changed(set).await;
        if let Some(warning) = warning {
            send_json(down, &jsonrpc::warning(&warning));
        }
        if again {
            Box::pin(self.start_fetch(false, up)).await;
        }
    }
}

/// The answer to a JSON-RPC batch that holds a `tools/call` or a
/// `tools/list`: refused whole, an error per request in it, nothing
/// forwarded. The wrapper signs calls one at a time, and MCP 2025-06-18
/// removed JSON-RPC batching (docs/mcp.md *Batches*).
pub(crate) fn refuse_batch(batch: &Value) -> Vec<Value> {
    jsonrpc::batch_refusal(
        batch,
        &[TOOLS_CALL, TOOLS_LIST],
        "herald-mcp: a JSON-RPC batch holding tools/call or tools/list is refused whole \
         (MCP 2025-06-18 has no batches; each call is signed on its own): send its messages \
         one by one",
    )
}

/// Whether a batch holds a request the wrapper signs or pins.
pub(crate) fn batch_has_wrapped(batch: &Value) -> bool {
    batch.as_array().is_some_and(|items| {
        items.iter().any(|m| {
            matches!(
                m.get("method").and_then(Value::as_str),
                Some(TOOLS_CALL | TOOLS_LIST)
            )
        })
    })
}
