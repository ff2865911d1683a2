//! `herald inspect FILE… [--json]`: what the envelopes say, without
//! verifying anything. `--json` prints the P3 display form, one object a
//! line; the human form is a short summary per envelope.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use herald_core::EnvelopeRef;
use herald_verify::hex;

use crate::error::CliError;
use crate::input::{self, Item};
use crate::{clock, json};

/// Longest payload preview in the human form, in characters.
const PREVIEW: usize = 72;

/// Items that are not envelopes listed one by one; past this many, they are
/// counted (ten million one-byte items would otherwise be ten million
/// lines, docs/performance.md *Memory under hostile input*, B2).
const MAX_LISTED_BAD: u64 = 100;

/// Run `inspect`: exit 1 if some input is not envelopes.
pub(crate) fn run(files: &[PathBuf], as_json: bool) -> Result<ExitCode, CliError> {
    let inputs = files
        .iter()
        .map(|path| Ok((input::display_name(path), input::read_envelopes(path)?)))
        .collect::<Result<Vec<_>, CliError>>()?;
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let mut unparsed = 0u64;
    let mut first = true;
    for (name, bytes) in &inputs {
        let mut unlisted = 0u64;
        for item in input::items(bytes) {
            match item {
                Item::Envelope(offset, env) => {
                    let text = if as_json {
                        json::display(herald_core::cbor::ValueRef::Map(env.map()))
                    } else {
                        let summary = summary(&env, name, offset);
                        if first {
                            summary
                        } else {
                            format!("\n{summary}")
                        }
                    };
                    first = false;
                    writeln!(stdout, "{text}").map_err(|e| CliError::stdout(&e))?;
                }
                Item::Bad(offset, why) => {
                    unparsed += 1;
                    if unparsed > MAX_LISTED_BAD {
                        unlisted += 1;
                        continue;
                    }
                    // Keep standard output pure (JSON lines stay parseable).
                    stdout.flush().map_err(|e| CliError::stdout(&e))?;
                    eprintln!("herald: {name}: byte {offset}: {why}");
                }
            }
        }
        if unlisted > 0 {
            eprintln!(
                "herald: {name}: {unlisted} more item{} that are not envelopes, not listed",
                if unlisted == 1 { "" } else { "s" }
            );
        }
    }
    stdout.flush().map_err(|e| CliError::stdout(&e))?;
    Ok(if unparsed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The first 12 hex digits of an id.
pub(crate) fn short(id: &[u8]) -> String {
    hex(id.get(..6).unwrap_or(id))
}

fn summary(env: &EnvelopeRef<'_>, name: &str, offset: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "envelope {} ({name}, byte {offset}; not verified)",
        short(env.id())
    );
    let mut line = |label: &str, value: &str| {
        let _ = writeln!(s, "  {label:<12} {value}");
    };
    line("from", env.from());
    if let Some((to, _)) = env.to() {
        line("to", to);
    }
    line("kind", env.kind().name());
    match env.parent() {
        None => line("parent", "none (genesis)"),
        Some(p) => line("parent", &short(p)),
    }
    line("trace", &short(env.trace()));
    line("ts", &format!("{} ({})", env.ts(), clock::utc(env.ts())));
    if let Some(x) = env.expires() {
        line("expires", &format!("{x} ({})", clock::utc(x)));
    }
    if let Some(attestations) = env.attestations() {
        let types: Vec<&str> = attestations
            .iter()
            .map(|a| {
                a.as_map()
                    .and_then(|m| m.get("type"))
                    .and_then(|t| t.as_text())
                    .unwrap_or("?")
            })
            .collect();
        line("attestations", &types.join(", "));
    }
    if env.unknown_fields() > 0 {
        line(
            "unknown",
            &format!("{} top-level field(s) outside P3", env.unknown_fields()),
        );
    }
    line(
        "payload",
        &format!(
            "{} (CBOR, {} bytes)",
            preview(&herald_verify::display_diagnostic(env.payload())),
            env.payload_bytes().len()
        ),
    );
    let _ = writeln!(s, "  signatures   {}", env.signature_count());
    for (i, sig) in env.signatures().enumerate() {
        let _ = match sig {
            Ok(sig) => {
                let claimed = sig
                    .ts
                    .map(|t| format!("  ts {t} (claimed)"))
                    .unwrap_or_default();
                writeln!(s, "    [{i}] {:<18} {}{claimed}", sig.scope, sig.by)
            }
            Err(why) => writeln!(s, "    [{i}] malformed signature map: {why}"),
        };
    }
    s.pop();
    s
}

/// `text` cut to [`PREVIEW`] characters.
fn preview(text: &str) -> String {
    match text.char_indices().nth(PREVIEW) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// `herald inspect`.
#[derive(Args, Debug)]
#[command(
    after_help = "--serve opens the inspector web app: the FILEs and keyrings are verified in the \
                  browser (WebAssembly) when the page opens. It prints 'listening on \
                  http://ADDR/#token=TOKEN' once it accepts connections: open that URL (the \
                  token is given only there, never by the server); Ctrl-C stops it."
)]
pub(crate) struct InspectArgs {
    /// Envelope or trace files (- for standard input)
    #[arg(value_name = "FILE", required_unless_present_any = ["serve", "export_site"])]
    pub(crate) files: Vec<PathBuf>,
    /// One JSON object a line: the P3 display form (byte strings as lowercase hex)
    #[arg(long, conflicts_with_all = ["serve", "export_site"])]
    pub(crate) json: bool,
    /// Open the inspector web app (DAG, reasons, compose and send) on --listen
    #[arg(long, conflicts_with = "export_site")]
    pub(crate) serve: bool,
    /// Address for --serve (port 0 picks a free one)
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:8473",
        requires = "serve"
    )]
    pub(crate) listen: std::net::SocketAddr,
    /// Keyring file for --serve, loaded with the FILEs (repeatable)
    #[arg(long, value_name = "PATH", requires = "serve")]
    pub(crate) keyring: Vec<PathBuf>,
    /// Secret key file that signs what the compose tab builds (--serve; loopback only)
    #[arg(long, value_name = "KEYFILE", requires = "serve")]
    pub(crate) key: Option<PathBuf>,
    /// Let --key sign the kinds that change what the key means to others: molt, deprecation, duress (PROFILE P8)
    #[arg(long, requires = "key")]
    pub(crate) allow_lifecycle: bool,
    /// Write the inspector as a static site into DIR (verifies in the browser; no signing)
    #[arg(long, value_name = "DIR")]
    pub(crate) export_site: Option<PathBuf>,
}
