//! `herald inspect --serve` and `--export-site` (docs/inspector.md): the
//! inspector web app. The page verifies in the browser (herald-js's
//! WebAssembly build, the npm package's module); this
//! server only hands it its files, the FILES and keyrings of the command
//! line, and (with `--key`) signs what the compose tab builds and sends it
//! to a conduit. It listens on loopback unless told otherwise, and never on
//! another address while it holds a key.
//!
//! The per-run token that opens `/api/` is handed out of band: printed once,
//! in the fragment of the URL on the `listening on` line, which only the
//! user who started the server sees. No answer of this server carries it,
//! so another local user who can connect to the port (loopback is shared by
//! every user of the machine) cannot read it from a page and sign with the
//! key they cannot read.

mod assets;
mod conduit;
mod guard;
mod sign;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use herald_core::{SigilForm, SigningKey};
use herald_verify::{key_line, labelled_key_line};

use crate::error::CliError;
use crate::{input, keyfile};
use guard::Guard;

pub(crate) use assets::export;

/// What `--serve` was given.
pub(crate) struct ServeOptions<'a> {
    /// Envelope, trace or bundle files, loaded when the page opens.
    pub(crate) files: &'a [PathBuf],
    /// Keyring files, loaded with them.
    pub(crate) keyrings: &'a [PathBuf],
    /// Where to listen.
    pub(crate) listen: SocketAddr,
    /// The key that signs composed envelopes.
    pub(crate) key: Option<&'a Path>,
    /// Whether that key may sign the kinds of [`sign::LIFECYCLE`].
    pub(crate) allow_lifecycle: bool,
}

/// The server's state.
struct App {
    guard: Guard,
    /// `(name, bytes)` of each FILE.
    inputs: Vec<(String, Vec<u8>)>,
    /// `(name, text)` of each keyring.
    keyrings: Vec<(String, String)>,
    key: Option<SigningKey>,
    /// `--allow-lifecycle`.
    allow_lifecycle: bool,
}

/// Run the server until interrupted.
pub(crate) fn serve(opts: &ServeOptions<'_>) -> Result<ExitCode, CliError> {
    if opts.key.is_some() && !opts.listen.ip().is_loopback() {
        return Err(CliError::new(format!(
            "--listen {}: with --key the signing endpoint listens on loopback only",
            opts.listen
        )));
    }
    let inputs = opts
        .files
        .iter()
        .map(|p| {
            Ok((
                input::display_name(p),
                not_a_key(p, input::read_envelopes(p)?)?,
            ))
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    // Each keyring (a file or a directory of *.pub) is loaded as `herald
    // verify --keyring` loads it (a bad line stops the command) and handed
    // to the page as keyring text written from the keys loaded, never as
    // the bytes of the files named.
    let keyrings = opts
        .keyrings
        .iter()
        .map(|p| {
            let ring = crate::commands::verify::load_keyrings(std::slice::from_ref(p))?;
            let text: String = ring
                .keys()
                .map(|key| match ring.label(&key) {
                    Some(label) => labelled_key_line(&key, label) + "\n",
                    None => key_line(&key) + "\n",
                })
                .collect();
            Ok((input::display_name(p), text))
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    let key = opts.key.map(keyfile::load).transpose()?;
    let token = token()?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the server: {e}")))?;
    runtime.block_on(async move {
        // Installed before the `listening on` line.
        let stop = herald_http::server::termination();
        let listener = herald_http::server::listen(opts.listen)
            .map_err(|e| CliError::new(format!("--listen {}: {e}", opts.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::new(format!("--listen {}: {e}", opts.listen)))?;
        // The URL the user opens: the token only in its fragment, which a
        // browser never sends; the page reads it from `location.hash`.
        let url = format!("http://{addr}/#token={token}");
        let app = Arc::new(App {
            guard: Guard::new(addr, token),
            inputs,
            keyrings,
            key,
            allow_lifecycle: opts.allow_lifecycle,
        });
        let router = Router::new()
            .route("/api/session", get(session))
            .route("/api/input/{n}", get(input_bytes))
            .route("/api/sign", post(sign_envelope))
            .route("/api/send", post(send_envelope))
            .fallback(get(asset))
            .layer(middleware::from_fn_with_state(app.clone(), guarded))
            .with_state(app);
        println!("listening on {url}");
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        // The limits every HERALD server has (docs/inspector.md).
        herald_http::server::serve(
            listener,
            router,
            herald_http::server::Limits::default(),
            stop,
        )
        .await
        .map_err(|e| CliError::new(format!("the server stopped: {e}")))
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `bytes`, unless they are a secret key file: what the page is given it
/// shows, so a key named as a FILE or keyring by mistake never reaches it.
fn not_a_key(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, CliError> {
    if keyfile::is_key_file(&bytes) {
        return Err(CliError::new(format!(
            "{}: a secret key file; the page is never given one (sign with --key)",
            input::display_name(path)
        )));
    }
    Ok(bytes)
}

/// 32 random bytes, hex: the per-run token of the `/api/` endpoints.
fn token() -> Result<String, CliError> {
    let mut bytes = Vec::with_capacity(32);
    for _ in 0..2 {
        let nonce = herald_core::Nonce::generate()
            .map_err(|_| CliError::new("the OS random source failed"))?;
        bytes.extend_from_slice(nonce.as_bytes());
    }
    Ok(herald_verify::hex(&bytes))
}

/// Every request passes the guard; every answer carries the headers that
/// keep the page to itself.
async fn guarded(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let checked = app
        .guard
        .check(request.method(), request.uri().path(), request.headers());
    let mut response = match checked {
        Ok(()) => next.run(request).await,
        Err((status, why)) => (status, why).into_response(),
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
             img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
             frame-ancestors 'none'; form-action 'none'",
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

async fn asset(request: Request) -> Response {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    match assets::find(request.uri().path().trim_start_matches('/')) {
        Some(a) => ([(header::CONTENT_TYPE, a.mime)], a.bytes).into_response(),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

/// What the page loads first: the FILES (by index), the keyrings, and the
/// signer's public sigil.
async fn session(State(app): State<Arc<App>>) -> Response {
    let signer = app.key.as_ref().map(|k| {
        serde_json::json!({
            "sigil": k.sigil(SigilForm::Default).to_string(),
            "lifecycle": app.allow_lifecycle,
        })
    });
    let keyrings: Vec<_> = app
        .keyrings
        .iter()
        .map(|(name, text)| serde_json::json!({ "name": name, "text": text }))
        .collect();
    let inputs: Vec<_> = app.inputs.iter().map(|(name, _)| name).collect();
    json(
        StatusCode::OK,
        &serde_json::json!({ "inputs": inputs, "keyrings": keyrings, "signer": signer }),
    )
}

async fn input_bytes(State(app): State<Arc<App>>, UrlPath(n): UrlPath<usize>) -> Response {
    match app.inputs.get(n) {
        Some((_, bytes)) => (
            [(header::CONTENT_TYPE, "application/cbor-seq")],
            bytes.clone(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such input").into_response(),
    }
}

async fn sign_envelope(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let Some(key) = &app.key else {
        return problem(
            StatusCode::NOT_FOUND,
            "no --key was given: this inspector cannot sign",
        );
    };
    let request: sign::Request = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return problem(StatusCode::BAD_REQUEST, &format!("invalid request: {e}")),
    };
    match sign::sign(&request, key, app.allow_lifecycle) {
        Ok(bytes) => json(StatusCode::OK, &sign::answer(&bytes)),
        Err(e @ sign::Refused::Lifecycle(_)) => problem(StatusCode::FORBIDDEN, &e.to_string()),
        Err(e) => problem(StatusCode::UNPROCESSABLE_ENTITY, &e.to_string()),
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SendRequest {
    conduit: String,
    envelope: String,
}

async fn send_envelope(State(app): State<Arc<App>>, body: Bytes) -> Response {
    if app.key.is_none() {
        return problem(
            StatusCode::NOT_FOUND,
            "no --key was given: this inspector cannot send",
        );
    }
    let request: SendRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return problem(StatusCode::BAD_REQUEST, &format!("invalid request: {e}")),
    };
    let Ok(envelope) = data_encoding::HEXLOWER.decode(request.envelope.as_bytes()) else {
        return problem(StatusCode::BAD_REQUEST, "envelope: expected lowercase hex");
    };
    match conduit::post(&request.conduit, &envelope).await {
        Ok(answer) => json(StatusCode::OK, &conduit::answer_json(&answer)),
        Err(e) => problem(StatusCode::BAD_GATEWAY, &e),
    }
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn problem(status: StatusCode, detail: &str) -> Response {
    json(status, &serde_json::json!({ "error": detail }))
}

/// `--export-site DIR`.
pub(crate) fn export_site(dir: &Path) -> Result<ExitCode, CliError> {
    let n = export(dir)?;
    println!("wrote {n} files into {}", dir.display());
    Ok(ExitCode::SUCCESS)
}
