//! `herald heraldry serve|certify|monitor` (CONDUIT.md `herald heraldry
//! serve`, CLI.md *Resolution and Heralds*, PROFILE P14), through
//! `herald-heraldry`. docs/heralds.md is the operator's guide.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use data_encoding::HEXLOWER;
use herald_core::cbor::{Map, Value};
use herald_core::{Sigil, SigilForm};
use herald_heraldry::monitor::{self, Watch};
use herald_heraldry::{Certification, Config, Herald};
use herald_resolve::{DnsServer, Handle};
use herald_witness::client::WitnessTarget;

use crate::clock;
use crate::error::CliError;
use crate::keyfile;
use crate::output::{self, Existing};

/// `herald heraldry`.
#[derive(Args, Debug)]
pub(crate) struct HeraldryArgs {
    #[command(subcommand)]
    command: HeraldryCommand,
}

#[derive(Subcommand, Debug)]
enum HeraldryCommand {
    /// Serve a Herald: certify handles (DNS) and keys on request, log every certification
    Serve(ServeArgs),
    /// Issue a certification as the Herald's operator, into its log (offline: the server must
    /// be stopped)
    Certify(CertifyArgs),
    /// Follow Herald logs from a tlog-policy: consistency, split views, certifications about
    /// watched sigils and handles
    Monitor(MonitorArgs),
}

#[derive(Args, Debug)]
struct ServeArgs {
    /// The Herald's secret key file (from `herald keygen`)
    #[arg(long, value_name = "HERALD.key")]
    key: PathBuf,
    /// Directory of the Herald's state (its log of certifications)
    #[arg(long, value_name = "DIR")]
    state: PathBuf,
    /// The log's origin (C2SP tlog-checkpoint), e.g. herald.example.com/log
    #[arg(long, value_name = "ORIGIN")]
    origin: String,
    /// Address to listen on (port 0 picks a free port)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8472")]
    listen: SocketAddr,
    /// DNS server handle claims are resolved through [default: the system's]
    #[arg(long, value_name = "SERVER:PORT")]
    dns: Option<SocketAddr>,
    /// A witness cosigning the log's checkpoints: its cosigner key and URL (repeatable)
    #[arg(long = "witness", value_name = "VKEY=URL")]
    witnesses: Vec<String>,
    /// How often a checkpoint is signed and sent to the witnesses, milliseconds
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    batch_ms: u64,
    /// Every request is answered within this, milliseconds
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    deadline_ms: u64,
    /// Largest request body, bytes
    #[arg(long, value_name = "BYTES", default_value_t = 65536)]
    max_body: usize,
    /// How long a certification issued on request counts (its not_after), days; 0: no limit
    #[arg(long, value_name = "DAYS", default_value_t = 90)]
    validity_days: u64,
    /// Certify requests a minute one subject may make, past it 429 rate_limited; 0: no limit
    #[arg(long, value_name = "N", default_value_t = herald_heraldry::DEFAULT_RATE_SUBJECT)]
    rate_subject: u32,
    /// Certify requests a second from subjects the log names nowhere yet, all together; 0: no
    /// limit
    #[arg(long, value_name = "N", default_value_t = herald_heraldry::DEFAULT_RATE_UNKNOWN)]
    rate_unknown: u32,
}

#[derive(Args, Debug)]
struct CertifyArgs {
    /// The Herald's secret key file
    #[arg(long, value_name = "HERALD.key")]
    key: PathBuf,
    /// The Herald's state directory (refused while `heraldry serve` holds it)
    #[arg(long, value_name = "DIR")]
    state: PathBuf,
    /// The sigil the claim is about (default or long form)
    #[arg(long, value_name = "SIGIL")]
    subject: String,
    /// The claim: handle, key, lineage, model, deprecated, revocation, or another
    #[arg(long, value_name = "CLAIM")]
    claim: String,
    /// The claim's value as JSON (bytes as lowercase hex: key, model_hash); null for a
    /// revocation
    #[arg(long, value_name = "JSON", default_value = "null")]
    value: String,
    /// When the certification stops counting (Unix seconds or RFC 3339)
    #[arg(long, value_name = "TIME", value_parser = clock::parse_time)]
    not_after: Option<u64>,
    /// For a revocation: the id (64 hex) of the certification it revokes
    #[arg(long, value_name = "ID")]
    revokes: Option<String>,
}

#[derive(Args, Debug)]
struct MonitorArgs {
    /// A C2SP tlog-policy naming each Herald's log (with its URL) and the witnesses
    #[arg(long, value_name = "FILE")]
    log_policy: PathBuf,
    /// A sigil whose certifications are reported (repeatable)
    #[arg(long = "subject", value_name = "SIGIL")]
    subjects: Vec<String>,
    /// A handle whose handle certifications are reported (repeatable)
    #[arg(long = "handle", value_name = "HANDLE")]
    handles: Vec<String>,
    /// Another place a log is read from, to compare what it serves there (repeatable)
    #[arg(long = "source", value_name = "ORIGIN=URL")]
    sources: Vec<String>,
    /// Directory keeping each log's largest consistent checkpoint between runs
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// Where to write split-view evidence (a second one gets OUT.2, …)
    #[arg(long, value_name = "OUT", default_value = "split_view.evidence")]
    evidence: PathBuf,
    /// One JSON object
    #[arg(long)]
    json: bool,
}

/// Run `herald heraldry …`.
pub(crate) fn run(args: HeraldryArgs) -> Result<ExitCode, CliError> {
    match args.command {
        HeraldryCommand::Serve(a) => serve(a),
        HeraldryCommand::Certify(a) => certify(&a),
        HeraldryCommand::Monitor(a) => monitor_run(&a),
    }
}

fn serve(a: ServeArgs) -> Result<ExitCode, CliError> {
    let key = keyfile::load(&a.key)?;
    let mut config = Config::new(&a.origin);
    for w in &a.witnesses {
        config
            .witnesses
            .push(WitnessTarget::parse(w).map_err(|e| CliError::new(format!("--witness: {e}")))?);
    }
    config.dns = a.dns.map(DnsServer::At);
    config.batch = Duration::from_millis(a.batch_ms.max(1));
    config.deadline = Duration::from_millis(a.deadline_ms.max(1));
    config.max_body = a.max_body;
    config.validity = (a.validity_days > 0).then(|| Duration::from_secs(a.validity_days * 86_400));
    config.rate_subject = a.rate_subject;
    config.rate_unknown = a.rate_unknown;
    let state = a.state.clone();
    herald_heraldry::http::run(a.listen, move || {
        Herald::open(key, &state, config)
            .map_err(|e| e.to_string())?
            .with_dns()
            .map_err(|e| format!("--dns: {e}"))
    })
    .map_err(CliError::new)?;
    Ok(ExitCode::SUCCESS)
}

/// JSON to a claim value (P14's table): hex strings become bytes where
/// the claim holds bytes (`key`, `model_hash`).
fn claim_value(claim: &str, json: &serde_json::Value) -> Result<Value, String> {
    let hex32 = |v: &serde_json::Value, what: &str| -> Result<Value, String> {
        v.as_str()
            .and_then(|s| HEXLOWER.decode(s.as_bytes()).ok())
            .filter(|b| b.len() == 32)
            .map(Value::Bytes)
            .ok_or_else(|| format!("{what} must be 64 lowercase hex characters"))
    };
    let map = |fields: &[(&str, bool)], bytes: &[&str]| -> Result<Value, String> {
        let obj = json
            .as_object()
            .ok_or_else(|| format!("a {claim} value is a JSON object"))?;
        let mut m = Map::new();
        for (k, v) in obj {
            let known = fields.iter().any(|(f, _)| f == k);
            if !known {
                return Err(format!("a {claim} value has no field {k:?}"));
            }
            let value = if bytes.contains(&k.as_str()) {
                hex32(v, k)?
            } else {
                generic(v)?
            };
            m.insert(k.clone(), value);
        }
        for (f, required) in fields {
            if *required && m.get(f).is_none() {
                return Err(format!("a {claim} value needs {f:?}"));
            }
        }
        Ok(Value::Map(m))
    };
    match claim {
        "key" => hex32(json, "a key value"),
        "handle" => {
            let h = json.as_str().ok_or("a handle value is a JSON string")?;
            Handle::parse(h).map_err(|e| format!("handle: {e}"))?;
            Ok(Value::text(h.to_ascii_lowercase()))
        }
        "lineage" => {
            let v = map(&[("parent", true), ("model_hash", false)], &["model_hash"])?;
            let parent = v
                .as_map()
                .and_then(|m| m.get("parent"))
                .and_then(Value::as_text)
                .and_then(|s| Sigil::parse(s).ok())
                .filter(|s| !s.is_short());
            parent.ok_or("lineage parent must be a default or long sigil")?;
            Ok(v)
        }
        "model" => map(&[("name", true), ("model_hash", false)], &["model_hash"]),
        "deprecated" => {
            let v = map(&[("ts", true)], &[])?;
            match v.as_map().and_then(|m| m.get("ts")) {
                Some(Value::Unsigned(_)) => Ok(v),
                _ => Err("deprecated ts must be Unix seconds".to_owned()),
            }
        }
        "revocation" if json.is_null() => Ok(Value::Null),
        "revocation" => Err("a revocation's value is null".to_owned()),
        _ => generic(json),
    }
}

/// JSON as CBOR: strings text, integers, arrays, objects.
fn generic(v: &serde_json::Value) -> Result<Value, String> {
    Ok(match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Value::Unsigned(u),
            (None, Some(i)) => Value::from(i),
            _ => Value::from_f64(n.as_f64().unwrap_or(0.0)).map_err(|e| e.to_string())?,
        },
        serde_json::Value::String(s) => Value::text(s.clone()),
        serde_json::Value::Array(a) => {
            Value::Array(a.iter().map(generic).collect::<Result<_, _>>()?)
        }
        serde_json::Value::Object(o) => Value::Map(
            o.iter()
                .map(|(k, v)| generic(v).map(|v| (k.clone(), v)))
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn certify(a: &CertifyArgs) -> Result<ExitCode, CliError> {
    let key = keyfile::load(&a.key)?;
    let subject = Sigil::parse(&a.subject)
        .ok()
        .filter(|s| !s.is_short() && !s.is_reserved())
        .ok_or_else(|| CliError::new("--subject: not a default or long sigil (P2, P14)"))?;
    let json: serde_json::Value = serde_json::from_str(&a.value)
        .map_err(|e| CliError::new(format!("--value: not JSON: {e}")))?;
    let value = claim_value(&a.claim, &json).map_err(|e| CliError::new(format!("--value: {e}")))?;
    let revokes = match &a.revokes {
        Some(h) => Some(
            HEXLOWER
                .decode(h.as_bytes())
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| CliError::new("--revokes: not 64 lowercase hex characters"))?,
        ),
        None => None,
    };
    if (a.claim == "revocation") != revokes.is_some() {
        return Err(CliError::new(
            "--revokes goes with --claim revocation, and a revocation needs it",
        ));
    }
    // The origin is not needed to append: the server signs checkpoints.
    let herald = Herald::open(key, &a.state, Config::new("herald.invalid/offline"))
        .map_err(|e| CliError::new(e.to_string()))?;
    let c = Certification {
        subject: subject.to_form(SigilForm::Default).unwrap_or(subject),
        claim: a.claim.clone(),
        value,
        not_after: a.not_after,
        revokes,
    };
    let (index, bytes) = herald
        .certify(&c)
        .map_err(|e| CliError::new(e.to_string()))?;
    let id = herald_core::EnvelopeRef::decode(&bytes)
        .map(|e| HEXLOWER.encode(e.id()))
        .unwrap_or_default();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "certified {} {} of {}: entry {index}, id {id}",
        c.claim,
        monitor::value_json(&c.value),
        c.subject
    )
    .map_err(|e| CliError::stdout(&e))?;
    Ok(ExitCode::SUCCESS)
}

fn monitor_run(a: &MonitorArgs) -> Result<ExitCode, CliError> {
    let text = std::fs::read(&a.log_policy).map_err(|e| CliError::io(&a.log_policy, &e))?;
    let policy = herald_tlog::Policy::parse(&text)
        .map_err(|e| CliError::new(format!("--log-policy: {e}")))?;
    let mut watch = Watch::default();
    for s in &a.subjects {
        watch
            .subjects
            .push(Sigil::parse(s).map_err(|e| CliError::new(format!("--subject {s}: {e}")))?);
    }
    for h in &a.handles {
        let h = Handle::parse(h).map_err(|e| CliError::new(format!("--handle {h}: {e}")))?;
        watch.handles.push(h.as_str().to_owned());
    }
    if watch.subjects.is_empty() && watch.handles.is_empty() {
        return Err(CliError::new("give at least one --subject or --handle"));
    }
    let mut sources = Vec::new();
    for s in &a.sources {
        let (o, u) = s
            .split_once("=http")
            .map(|(o, u)| (o.to_owned(), format!("http{u}")))
            .ok_or_else(|| CliError::new(format!("--source {s}: not ORIGIN=http://…")))?;
        sources.push((o, u));
    }
    let report = monitor::follow(&policy, &sources, a.state.as_deref(), &watch)
        .map_err(|e| CliError::new(e.to_string()))?;
    let mut paths = Vec::new();
    for (i, s) in report.splits.iter().enumerate() {
        let path = if i == 0 {
            a.evidence.clone()
        } else {
            let mut p = a.evidence.clone().into_os_string();
            p.push(format!(".{}", i + 1));
            PathBuf::from(p)
        };
        output::write_atomic(&path, &s.evidence.to_bytes(), 0o644, Existing::Replace)?;
        paths.push(path);
    }
    let mut out = String::new();
    if a.json {
        let v = serde_json::json!({
            "logs": report.logs.iter().map(|(o, size, w, q)| serde_json::json!({
                "origin": o, "size": size, "cosigned_by": w, "quorum": q,
            })).collect::<Vec<_>>(),
            "split_views": report.splits.iter().zip(&paths).map(|(s, p)| serde_json::json!({
                "origin": s.origin, "sources": [s.sources.0, s.sources.1],
                "evidence": p.display().to_string(),
            })).collect::<Vec<_>>(),
            "problems": report.problems,
            "certifications": report.found.iter().map(monitor::found_json).collect::<Vec<_>>(),
        });
        out.push_str(&v.to_string());
        out.push('\n');
    } else {
        for (o, size, w, q) in &report.logs {
            let by = if w.is_empty() {
                "no witness".to_owned()
            } else {
                w.join(", ")
            };
            let quorum = if *q { "" } else { " (policy quorum NOT met)" };
            out.push_str(&format!("log {o}: size {size}, cosigned by {by}{quorum}\n"));
        }
        for (s, p) in report.splits.iter().zip(&paths) {
            out.push_str(&format!(
                "split_view: {}: {} and {} disagree; evidence in {}\n",
                s.origin,
                s.sources.0,
                s.sources.1,
                p.display()
            ));
        }
        for p in &report.problems {
            out.push_str(&format!("problem: {p}\n"));
        }
        for f in &report.found {
            let c = &f.certification;
            out.push_str(&format!(
                "{} {} certified {} {} {}{} ({} #{}, id {})\n",
                clock::utc(f.ts),
                f.herald,
                c.subject,
                c.claim,
                monitor::value_json(&c.value),
                c.not_after
                    .map(|t| format!(" until {}", clock::utc(t)))
                    .unwrap_or_default(),
                f.origin,
                f.index,
                &HEXLOWER.encode(&f.id)[..16],
            ));
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .map_err(|e| CliError::stdout(&e))?;
    Ok(if report.splits.is_empty() && report.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
