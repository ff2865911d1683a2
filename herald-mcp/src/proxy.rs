//! `herald mcp proxy` (issue 19): between an MCP client (the model's host)
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
//! - `tools/call` requests: signed ([`Session::request`]), appended to the
//!   trace file, and forwarded with the envelope in `params._meta`;
//! - their responses: signed ([`Session::result`]), appended, and released
//!   with the envelope in `result._meta`, never before it is on disk;
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
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use data_encoding::HEXLOWER;
use herald_core::Envelope;
use herald_core::cbor::{Map as CborMap, Value as CborValue, to_value};
use rmcp::model::{
    CallToolRequestMethod, CancelledNotificationMethod, ConstString, InitializeResultMethod,
    InitializedNotificationMethod, ListToolsRequestMethod, ToolListChangedNotificationMethod,
};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{Notify, mpsc, watch};

use crate::jsonrpc::{self, Kind, meta};
use crate::pin::{PinCheck, ToolSet, check_pin_file};
use crate::session::{Handshake, Keys, Session};
use crate::trace_file::{TraceFile, TraceFileError};

const TOOLS_CALL: &str = CallToolRequestMethod::VALUE;
const TOOLS_LIST: &str = ListToolsRequestMethod::VALUE;
const INITIALIZE: &str = InitializeResultMethod::VALUE;
const INITIALIZED: &str = InitializedNotificationMethod::VALUE;
const CANCELLED: &str = CancelledNotificationMethod::VALUE;
const TOOLS_CHANGED: &str = ToolListChangedNotificationMethod::VALUE;

/// The prefix of the ids of the wrapper's own requests to the server.
const OWN_ID: &str = "herald-mcp/tools/list/";

/// How long a `tools/call` waits for the session's genesis (the server's
/// answer to the pinning `tools/list`).
const GENESIS_WAIT: Duration = Duration::from_secs(30);

/// How long the server has to exit once the client has closed its end.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// JSON-RPC "invalid request" and "invalid params".
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// What `herald mcp proxy` is given.
#[derive(Debug)]
pub struct ProxyConfig {
    /// The agent and sandbox keys.
    pub keys: Keys,
    /// `--trace FILE`.
    pub trace: PathBuf,
    /// `--pin FILE`.
    pub pin: Option<PathBuf>,
    /// The server's command and arguments (after `--`).
    pub command: Vec<OsString>,
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
    /// Reading or writing standard input and output, or the async runtime.
    Io(std::io::Error),
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Trace(e) => write!(f, "--trace: {e}"),
            Self::NoCommand => f.write_str("no server command given after `--`"),
            Self::Spawn { command, error } => write!(f, "cannot start {command:?}: {error}"),
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
    runtime.block_on(serve_stdio(config))
}

/// [`run_stdio`] on the caller's runtime.
pub async fn serve_stdio(config: ProxyConfig) -> Result<i32, ProxyError> {
    let ProxyConfig {
        keys,
        trace,
        pin,
        command,
    } = config;
    let trace = TraceFile::open(&trace).map_err(ProxyError::Trace)?;
    if trace.recovered() > 0 {
        eprintln!(
            "herald-mcp: cut a torn last item ({} bytes) from the trace file",
            trace.recovered()
        );
    }
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
    let (Some(up_write), Some(up_read)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(ProxyError::Io(std::io::Error::other(
            "the server's standard input or output is not a pipe",
        )));
    };
    let wrapper = Wrapper::new(keys, trace, pin);
    let client_gone = Arc::new(Notify::new());
    let served = {
        let gone = client_gone.clone();
        let pump = wrapper.pump(
            tokio::io::stdin(),
            tokio::io::stdout(),
            up_read,
            up_write,
            gone,
        );
        tokio::select! {
            r = pump => r,
            () = async { client_gone.notified().await; tokio::time::sleep(EXIT_GRACE).await } => Ok(()),
        }
    };
    let status = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        Ok(status) => status.map_err(ProxyError::Io)?,
        Err(_) => {
            let _ = child.kill().await;
            child.wait().await.map_err(ProxyError::Io)?
        }
    };
    served?;
    Ok(status.code().unwrap_or(1))
}

/// A line to write, or the end of that direction.
enum Out {
    Line(Vec<u8>),
    Close,
}

type Sender = mpsc::UnboundedSender<Out>;

fn send(to: &Sender, line: Vec<u8>) {
    // A closed direction drops what is left, as a closed pipe would.
    let _ = to.send(Out::Line(line));
}

fn send_json(to: &Sender, message: &Value) {
    send(to, message.to_string().into_bytes());
}

/// Write lines as they come; close on [`Out::Close`].
async fn writer<W: AsyncWrite + Unpin>(
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

/// One line of input, without its newline; `None` at the end.
async fn read_line<R: AsyncRead + Unpin>(
    from: &mut BufReader<R>,
    buf: &mut Vec<u8>,
) -> std::io::Result<bool> {
    buf.clear();
    if from.read_until(b'\n', buf).await? == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    Ok(true)
}

/// The wrapper's own `tools/list` in flight.
struct PinFetch {
    id: String,
    page: u64,
    tools: Vec<Value>,
    /// `true` for the genesis, `false` for a recheck after `list_changed`.
    genesis: bool,
}

/// What both directions share.
struct State {
    keys: Option<Keys>,
    session: Option<Session>,
    trace: TraceFile,
    pin: Option<PathBuf>,
    /// Why `tools/call` is refused (the tool set is not the pinned one).
    refuse: Option<String>,
    handshake: Handshake,
    initialize: Option<String>,
    /// Pending `tools/call` requests: JSON id → request envelope id.
    calls: HashMap<String, [u8; 32]>,
    /// Pending `tools/list` requests of the client for a first page.
    lists: HashSet<String>,
    fetch: Option<PinFetch>,
    /// A recheck was asked for while a fetch was in flight.
    recheck: bool,
    fetches: u64,
}

/// The proxy's state and the signal that the session is open.
#[derive(Clone)]
struct Wrapper {
    state: Arc<Mutex<State>>,
    ready: Arc<watch::Sender<bool>>,
}

impl Wrapper {
    fn new(keys: Keys, trace: TraceFile, pin: Option<PathBuf>) -> Self {
        let state = State {
            keys: Some(keys),
            session: None,
            trace,
            pin,
            refuse: None,
            handshake: Handshake::default(),
            initialize: None,
            calls: HashMap::new(),
            lists: HashSet::new(),
            fetch: None,
            recheck: false,
            fetches: 0,
        };
        Self {
            state: Arc::new(Mutex::new(state)),
            ready: Arc::new(watch::channel(false).0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere cannot leave the state half-written in a way
        // that matters more than stopping would: keep going.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Move messages both ways until the server closes its output.
    async fn pump<DR, DW, UR, UW>(
        &self,
        down_read: DR,
        down_write: DW,
        up_read: UR,
        up_write: UW,
        client_gone: Arc<Notify>,
    ) -> Result<(), ProxyError>
    where
        DR: AsyncRead + Unpin + Send + 'static,
        DW: AsyncWrite + Unpin + Send + 'static,
        UR: AsyncRead + Unpin,
        UW: AsyncWrite + Unpin + Send + 'static,
    {
        let (up, up_rx) = mpsc::unbounded_channel();
        let (down, down_rx) = mpsc::unbounded_channel();
        let up_task = tokio::spawn(writer(up_write, up_rx));
        let down_task = tokio::spawn(writer(down_write, down_rx));
        let client = {
            let (this, up, down) = (self.clone(), up.clone(), down.clone());
            tokio::spawn(async move {
                let r = this.client_to_server(down_read, &up, &down).await;
                let _ = up.send(Out::Close);
                client_gone.notify_one();
                r
            })
        };
        let served = self.server_to_client(up_read, &up, &down).await;
        let _ = down.send(Out::Close);
        let flushed = down_task.await;
        client.abort();
        up_task.abort();
        served.map_err(ProxyError::Io)?;
        match flushed {
            Ok(r) => r.map_err(ProxyError::Io),
            Err(e) => Err(ProxyError::Io(std::io::Error::other(e))),
        }
    }

    /// Client → server.
    async fn client_to_server<R: AsyncRead + Unpin>(
        &self,
        input: R,
        up: &Sender,
        down: &Sender,
    ) -> std::io::Result<()> {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        while read_line(&mut input, &mut line).await? {
            let Ok(message) = serde_json::from_slice::<Value>(&line) else {
                send(up, line.clone());
                continue;
            };
            match jsonrpc::classify(&message) {
                Kind::Request {
                    method: TOOLS_CALL, ..
                } => self.call(message, up, down).await,
                Kind::Request {
                    id,
                    method: INITIALIZE,
                } => {
                    let mut state = self.lock();
                    state.initialize = Some(id);
                    state.handshake.request = message.get("params").cloned().unwrap_or_default();
                    send(up, line.clone());
                }
                Kind::Request {
                    id,
                    method: TOOLS_LIST,
                } => {
                    let first_page = message.pointer("/params/cursor").is_none_or(Value::is_null);
                    if first_page {
                        self.lock().lists.insert(id);
                    }
                    send(up, line.clone());
                }
                Kind::Notification {
                    method: INITIALIZED,
                } => {
                    send(up, line.clone());
                    self.start_fetch(true, up);
                }
                Kind::Notification { method: CANCELLED } => {
                    self.cancelled(&message);
                    send(up, line.clone());
                }
                Kind::Batch if batch_has_wrapped(&message) => send_json(
                    down,
                    &json!({"jsonrpc": "2.0", "id": null, "error": {"code": INVALID_REQUEST,
                        "message": "herald-mcp: tools/call and tools/list are signed one at a \
                                    time; send them outside a JSON-RPC batch"}}),
                ),
                _ => send(up, line.clone()),
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
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        while read_line(&mut input, &mut line).await? {
            let Ok(message) = serde_json::from_slice::<Value>(&line) else {
                send(down, line.clone());
                continue;
            };
            match jsonrpc::classify(&message) {
                Kind::Response { id } => self.response(id, message, &line, up, down),
                Kind::Notification {
                    method: TOOLS_CHANGED,
                } => {
                    send(down, line.clone());
                    if self.lock().session.is_some() {
                        self.start_fetch(false, up);
                    }
                }
                _ => send(down, line.clone()),
            }
        }
        Ok(())
    }

    /// A response from the server.
    fn response(&self, id: String, mut message: Value, line: &[u8], up: &Sender, down: &Sender) {
        let mut state = self.lock();
        if state.fetch.as_ref().is_some_and(|f| f.id == id) {
            drop(state);
            return self.fetched(&message, up, down);
        }
        if state.initialize.as_ref() == Some(&id) {
            state.initialize = None;
            state.handshake.result = message.get("result").cloned().unwrap_or_default();
        } else if let Some(request) = state.calls.remove(&id) {
            let released = state.release(request, &mut message);
            drop(state);
            return send_json(down, &released);
        } else if state.lists.remove(&id)
            && let Some(result) = message.get_mut("result").and_then(Value::as_object_mut)
            && result.get("nextCursor").is_none_or(Value::is_null)
        {
            let tools = result
                .get("tools")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(warning) = state.compare(&tools) {
                jsonrpc::with_meta(result, |m| {
                    m.insert(meta::WARNING.into(), warning.clone().into());
                });
                drop(state);
                send_json(down, &jsonrpc::warning(&warning));
                return send_json(down, &message);
            }
        }
        drop(state);
        send(down, line.to_vec());
    }

    /// A `tools/call` from the client: signed and forwarded, or answered here.
    async fn call(&self, mut message: Value, up: &Sender, down: &Sender) {
        let id = message.get("id").cloned().unwrap_or_default();
        let name = message
            .pointer("/params/name")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let Some(name) = name else {
            return send_json(
                down,
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": INVALID_PARAMS,
                    "message": "herald-mcp: tools/call without a text params.name"}}),
            );
        };
        let mut ready = self.ready.subscribe();
        if tokio::time::timeout(GENESIS_WAIT, ready.wait_for(|r| *r))
            .await
            .is_err()
        {
            let text = "herald-mcp: no MCP session to sign this call in (the client has not \
                        initialized, or the server did not answer the pinning tools/list)";
            return send_json(down, &jsonrpc::response(&id, jsonrpc::tool_error(text)));
        }
        let mut state = self.lock();
        let arguments = message.pointer("/params/arguments").cloned();
        let request = match state.sign(|s| s.request(&name, arguments.as_ref())) {
            Ok(request) => request,
            Err(text) => {
                drop(state);
                return send_json(down, &jsonrpc::response(&id, jsonrpc::tool_error(&text)));
            }
        };
        if let Some(reason) = state.refuse.clone() {
            let mut answer =
                json!({"jsonrpc": "2.0", "id": id, "result": jsonrpc::tool_error(&reason)});
            let released = state.release_refusal(request.id(), &mut answer);
            drop(state);
            return send_json(down, &released);
        }
        let trace = state.trace_id();
        state.calls.insert(jsonrpc::id_key(&id), request.id());
        drop(state);
        if let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) {
            jsonrpc::with_meta(params, |m| jsonrpc::stamp(m, &request, &trace));
        }
        send_json(up, &message);
    }

    /// `notifications/cancelled` for a pending call: an event in the trace.
    fn cancelled(&self, message: &Value) {
        let Some(request_id) = message.pointer("/params/requestId") else {
            return;
        };
        let mut state = self.lock();
        let Some(&request) = state.calls.get(&jsonrpc::id_key(request_id)) else {
            return;
        };
        let mut payload = CborMap::new();
        if let Ok(v) = to_value(request_id) {
            payload.insert("requestId", v);
        }
        if let Some(reason) = message.pointer("/params/reason").and_then(Value::as_str) {
            payload.insert("reason", CborValue::text(reason));
        }
        if let Err(e) = state.sign(|s| s.event("cancelled", payload, Some(request))) {
            eprintln!("herald-mcp: cancellation not recorded: {e}");
        }
    }

    /// Ask the server for its complete tool list (its answer is consumed).
    fn start_fetch(&self, genesis: bool, up: &Sender) {
        let mut state = self.lock();
        if genesis && state.session.is_some() {
            return;
        }
        if state.fetch.is_some() {
            state.recheck |= !genesis;
            return;
        }
        let has_tools = state
            .handshake
            .result
            .pointer("/capabilities/tools")
            .is_some();
        if genesis && !has_tools {
            // A server without tools: the genesis pins the empty set.
            let opened = ToolSet::of(&[]).map_err(|e| e.to_string());
            state.open(opened);
            drop(state);
            self.ready.send_replace(true);
            return;
        }
        state.fetches += 1;
        let id = format!("{OWN_ID}{}", state.fetches);
        state.fetch = Some(PinFetch {
            id: jsonrpc::id_key(&Value::from(id.as_str())),
            page: 0,
            tools: Vec::new(),
            genesis,
        });
        drop(state);
        send_json(
            up,
            &json!({"jsonrpc": "2.0", "id": id, "method": TOOLS_LIST, "params": {}}),
        );
    }

    /// A page of the wrapper's own `tools/list`.
    fn fetched(&self, message: &Value, up: &Sender, down: &Sender) {
        let mut state = self.lock();
        let Some(mut fetch) = state.fetch.take() else {
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
        if let Some(cursor) = cursor
            && fetch.page < 1000
        {
            fetch.page += 1;
            let id = format!("{OWN_ID}{}.{}", state.fetches, fetch.page);
            fetch.id = jsonrpc::id_key(&Value::from(id.as_str()));
            state.fetch = Some(fetch);
            drop(state);
            return send_json(
                up,
                &json!({"jsonrpc": "2.0", "id": id, "method": TOOLS_LIST,
                        "params": {"cursor": cursor}}),
            );
        }
        let set = if message.get("error").is_some() {
            Err(format!(
                "the server refused tools/list: {}",
                message
                    .get("error")
                    .map(Value::to_string)
                    .unwrap_or_default()
            ))
        } else {
            ToolSet::of(&fetch.tools).map_err(|e| e.to_string())
        };
        if fetch.genesis {
            state.open(set);
            drop(state);
            self.ready.send_replace(true);
            return;
        }
        let warning = match set {
            Ok(set) => state.changed(&set),
            Err(e) => Some(format!("herald-mcp: cannot check the tool set: {e}")),
        };
        let again = std::mem::take(&mut state.recheck);
        drop(state);
        if let Some(warning) = warning {
            send_json(down, &jsonrpc::warning(&warning));
        }
        if again {
            self.start_fetch(false, up);
        }
    }
}

impl State {
    fn trace_id(&self) -> [u8; 32] {
        self.session.as_ref().map_or([0; 32], Session::trace)
    }

    /// Sign with the session and append to the trace file: the envelope,
    /// or a message for the client saying why not.
    fn sign(
        &mut self,
        make: impl FnOnce(&mut Session) -> Result<Envelope, crate::session::SignError>,
    ) -> Result<Envelope, String> {
        let Some(session) = self.session.as_mut() else {
            return Err("herald-mcp: the MCP session could not be opened".into());
        };
        let envelope = make(session).map_err(|e| format!("herald-mcp: {e}"))?;
        self.trace
            .append(envelope.as_bytes())
            .map_err(|e| format!("herald-mcp: cannot record the envelope: {e}"))?;
        Ok(envelope)
    }

    /// Open the session: birth and genesis into the trace file, then the
    /// pin file checked. A failure leaves no session (calls are refused).
    fn open(&mut self, tools: Result<ToolSet, String>) {
        let Some(keys) = self.keys.take() else {
            return;
        };
        let tools = match tools {
            Ok(tools) => tools,
            Err(e) => {
                eprintln!("herald-mcp: cannot pin the tool set: {e}");
                self.refuse = Some(format!("herald-mcp: cannot pin the tool set: {e}"));
                ToolSet::of(&[]).unwrap_or_else(|_| ToolSet {
                    sha256: [0; 32],
                    names: Vec::new(),
                })
            }
        };
        let (session, envelopes) = match Session::open(keys, &self.handshake, tools) {
            Ok(opened) => opened,
            Err(e) => return eprintln!("herald-mcp: cannot open the session: {e}"),
        };
        for envelope in &envelopes {
            if let Err(e) = self.trace.append(envelope.as_bytes()) {
                return eprintln!("herald-mcp: {e}");
            }
        }
        if let Some(path) = &self.pin {
            match check_pin_file(path, session.tools()) {
                Ok(PinCheck::Matches | PinCheck::Pinned) => {}
                Ok(PinCheck::Changed { pinned }) => {
                    self.refuse = Some(format!(
                        "herald-mcp: refused: the server's tool set (sha256 {}) is not the one \
                         pinned in {} (sha256 {pinned})",
                        session.tools().hex(),
                        path.display()
                    ));
                }
                Err(e) => self.refuse = Some(format!("herald-mcp: --pin: {e}")),
            }
        }
        self.session = Some(session);
    }

    /// Compare a complete tool list with the pinned set: a warning (and a
    /// signed event) when it changed.
    fn compare(&mut self, tools: &[Value]) -> Option<String> {
        match ToolSet::of(tools) {
            Ok(set) => self.changed(&set),
            Err(e) => Some(format!("herald-mcp: cannot check the tool set: {e}")),
        }
    }

    fn changed(&mut self, set: &ToolSet) -> Option<String> {
        let session = self.session.as_ref()?;
        if session.tools().sha256 == set.sha256 {
            return None;
        }
        let pinned = session.tools().hex();
        let mut warning = format!(
            "herald-mcp: the server's tool set changed since the session began \
             (pinned sha256 {pinned}, now {})",
            set.hex()
        );
        match self.sign(|s| s.tools_changed(set)) {
            Ok(event) => {
                warning.push_str(&format!(
                    "; recorded as envelope {}",
                    HEXLOWER.encode(&event.id())
                ));
            }
            Err(e) => warning.push_str(&format!("; {e}")),
        }
        if self.pin.is_some() && self.refuse.is_none() {
            self.refuse = Some(format!("{warning}; tools/call is refused (--pin)"));
        }
        Some(warning)
    }

    /// The server's answer to a signed call, signed and stamped; if it
    /// cannot be recorded it is withheld and an `isError` result says why.
    fn release(&mut self, request: [u8; 32], message: &mut Value) -> Value {
        let id = message.get("id").cloned().unwrap_or_default();
        let signed = if let Some(result) = message.get("result") {
            let result = result.clone();
            self.sign(|s| s.result(request, &result, true))
        } else {
            let error = message.get("error").cloned().unwrap_or_default();
            self.sign(|s| s.error(request, &error))
        };
        match signed {
            Ok(envelope) => {
                let trace = self.trace_id();
                if let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) {
                    stamp_result(result, &envelope, &request, &trace);
                }
                message.take()
            }
            Err(text) => jsonrpc::response(
                &id,
                jsonrpc::tool_error(&format!("{text}; the tool's result is withheld")),
            ),
        }
    }

    /// A result made by the wrapper (a refused call), signed without the
    /// sandbox's co-signature: the sandbox ran nothing.
    fn release_refusal(&mut self, request: [u8; 32], answer: &mut Value) -> Value {
        let result = answer.get("result").cloned().unwrap_or_default();
        match self.sign(|s| s.result(request, &result, false)) {
            Ok(envelope) => {
                let trace = self.trace_id();
                if let Some(result) = answer.get_mut("result").and_then(Value::as_object_mut) {
                    stamp_result(result, &envelope, &request, &trace);
                }
            }
            Err(text) => eprintln!("{text}"),
        }
        answer.take()
    }
}

fn stamp_result(
    result: &mut Map<String, Value>,
    envelope: &Envelope,
    request: &[u8; 32],
    trace: &[u8; 32],
) {
    jsonrpc::with_meta(result, |m| {
        jsonrpc::stamp(m, envelope, trace);
        m.insert(meta::REQUEST.into(), HEXLOWER.encode(request).into());
    });
}

/// Whether a batch holds a request the wrapper signs or pins.
fn batch_has_wrapped(batch: &Value) -> bool {
    batch.as_array().is_some_and(|items| {
        items.iter().any(|m| {
            matches!(
                jsonrpc::classify(m),
                Kind::Request {
                    method: TOOLS_CALL | TOOLS_LIST,
                    ..
                }
            )
        })
    })
}
