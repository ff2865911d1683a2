//! `herald verify FILE… [--keyring PATH]… [--now SECS] [--json] [--require SCOPE]…
//! [--profile haven|valp]` (CLI.md): every FILE forms one set; exit 0 when every
//! envelope is valid (and the profile, if any, found nothing), 1 otherwise, 2 when
//! the command could not run.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use herald_core::cbor::Limits;
use herald_verify::{
    AuditOptions, CompactReport, Input, ItemEnds, Keyring, audit_compact_read, sequence_pieces,
};

use crate::commands::parse_scope;
use crate::error::CliError;
use crate::render::{self, Style};
use crate::{clock, input, progress};

/// What `verify` was asked.
#[derive(Debug, Default)]
pub(crate) struct Options {
    /// Envelope or trace files (`-` is standard input).
    pub(crate) files: Vec<PathBuf>,
    /// Keyring files or directories.
    pub(crate) keyrings: Vec<PathBuf>,
    /// The time for expiry and future-ts checks (default: the clock).
    pub(crate) now: Option<u64>,
    /// JSON output (CLI.md shape).
    pub(crate) json: bool,
    /// The trace DAG as a picture instead of a report (docs/inspector.md).
    pub(crate) format: Option<crate::graph::Format>,
    /// Scopes the policy requires.
    pub(crate) require: Vec<String>,
    /// Reason details in the human form, and the reported codes explained.
    pub(crate) verbose: bool,
    /// Draw the trace tree in the human form.
    pub(crate) tree: bool,
    /// A C2SP tlog-policy file: bundled proofs count only under it.
    pub(crate) log_policy: Option<PathBuf>,
    /// The Herald list (PROFILE P14), its logs under `log_policy`.
    pub(crate) heralds: Option<PathBuf>,
    /// Channels resolving the signers with no pinned key (PROFILE P15).
    pub(crate) resolve: Vec<crate::resolution::ChannelName>,
    /// Their flags.
    pub(crate) channels: crate::resolution::ChannelArgs,
    /// A protocol profile to run over the verified set (docs/haven.md, docs/valp.md).
    pub(crate) profile: crate::profile::ProfileArgs,
}

/// Run `verify`.
pub(crate) fn run(opts: &Options) -> Result<ExitCode, CliError> {
    let read = read(opts)?;
    let report = read.audit();
    let profile = opts.profile.run(&report)?;
    let code = match &profile {
        Some(p) if !p.is_clean() => ExitCode::from(1),
        _ => exit_code(&report),
    };
    let names = crate::names::Names::of(&report, &read.keyring);
    if let Some(format) = opts.format {
        crate::graph::check(&report, format)?;
    }
    if crate::notice::quiet() {
        return Ok(code);
    }
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    if let Some(format) = opts.format {
        crate::graph::write(&mut stdout, &report, &names, format)
    } else if opts.json {
        match &profile {
            Some(p) => report
                .write_document_with_profile(p, &mut stdout)
                .and_then(|()| writeln!(stdout)),
            None => write_json(&mut stdout, &report),
        }
    } else {
        let style = Style::for_stdout();
        render::write_report(
            &mut stdout,
            &report,
            &render::Options {
                names: &names,
                style,
                verbose: opts.verbose,
                tree: opts.tree,
                keyring_given: !opts.keyrings.is_empty() || !opts.resolve.is_empty(),
            },
        )
        .and_then(|()| match &profile {
            Some(p) => crate::profile::write_text(&mut stdout, p),
            None => Ok(()),
        })
        .and_then(|()| {
            if opts.verbose {
                super::explain::write_reported(&mut stdout, &report)
            } else {
                Ok(())
            }
        })
    }
    .and_then(|()| stdout.flush())
    .map_err(|e| CliError::stdout(&e))?;
    Ok(code)
}

/// The `--json` report (CLI.md), as [`CompactReport::write_document`] writes it
/// (each envelope's report formed as it is written), and a newline.
fn write_json(out: &mut impl Write, report: &CompactReport<'_>) -> std::io::Result<()> {
    report.write_document(out)?;
    writeln!(out)
}

/// 0 when every envelope is valid (and there was at least one), else 1.
pub(crate) fn exit_code(report: &CompactReport<'_>) -> ExitCode {
    if report.all_valid() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// What `verify` audits: the inputs read, the keyring and the options.
pub(crate) struct Read {
    inputs: Vec<Input>,
    /// Where each input's items end, as read (taken by the audit).
    ends: std::cell::Cell<Vec<ItemEnds>>,
    pub(crate) keyring: Keyring,
    options: AuditOptions,
}

impl Read {
    /// Audit the inputs as one set, with a progress indicator on a terminal.
    pub(crate) fn audit(&self) -> CompactReport<'_> {
        let _indicator = if std::io::stderr().is_terminal() {
            progress::start(count(&self.inputs))
        } else {
            None
        };
        audit_compact_read(&self.inputs, self.ends.take(), &self.keyring, &self.options)
    }
}

/// Read everything `verify` audits.
pub(crate) fn read(opts: &Options) -> Result<Read, CliError> {
    let required_scopes = opts
        .require
        .iter()
        .map(|s| parse_scope("--require", s, true))
        .collect::<Result<Vec<_>, _>>()?;
    if opts.files.iter().filter(|f| input::is_stdin(f)).count() > 1 {
        return Err(CliError::new("standard input (-) can be given only once"));
    }
    let mut keyring = load_keyrings(&opts.keyrings)?;
    let now = match opts.now {
        Some(now) => now,
        None => clock::now()?,
    };
    let policy = match &opts.log_policy {
        Some(path) => Some(super::tlog::read_policy(path).map_err(CliError::new)?),
        None => None,
    };
    let heralds = match &opts.heralds {
        Some(list) => Some(crate::heralds::load(list, policy.as_ref())?),
        None => None,
    };
    let log_policy =
        policy.map(|p| std::sync::Arc::new(p) as std::sync::Arc<dyn herald_verify::LogPolicy>);
    let mut options = AuditOptions {
        now: Some(now),
        required_scopes,
        log_policy,
        ..AuditOptions::default()
    };
    let mut ends = Vec::with_capacity(opts.files.len());
    let mut inputs = opts
        .files
        .iter()
        .map(|path| {
            let (bytes, items) = input::read_sequence_items(path, options.max_envelopes)?;
            ends.push(items);
            Ok(Input {
                name: path.display().to_string(),
                bytes,
            })
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    if let Some(heralds) = &heralds {
        // Inputs of certifications leave the list: the ends no longer
        // line up with it (the audit walks every input).
        ends.clear();
        // PROFILE P14: certifications given as inputs and fetched from the
        // Heralds; certified keys resolve their sigils (key_source herald).
        let given = crate::heralds::take_items(&mut inputs)?;
        let certified = crate::heralds::certified(heralds, &inputs, given, now)?;
        certified.extend_keyring(&mut keyring);
        options.heralds = Some(std::sync::Arc::new(certified));
    }
    if !opts.resolve.is_empty() {
        crate::resolution::resolve_signers(&inputs, &mut keyring, &opts.resolve, &opts.channels)?;
    }
    Ok(Read {
        inputs,
        ends: std::cell::Cell::new(ends),
        keyring,
        options,
    })
}

/// Every `--keyring`, as one keyring; a bad line stops the command (CLI.md).
pub(crate) fn load_keyrings(paths: &[PathBuf]) -> Result<Keyring, CliError> {
    let mut keyring = Keyring::new();
    for path in paths {
        load_one(&mut keyring, path)?;
    }
    Ok(keyring)
}

/// Load one `--keyring`; a directory's skipped `*.pub` entries are noted
/// on standard error (docs/performance.md *Memory under hostile input*, B6).
fn load_one(keyring: &mut Keyring, path: &Path) -> Result<(), CliError> {
    let loaded = keyring
        .load(path)
        .map_err(|e| CliError::new(e.to_string()))?;
    for (file, why) in &loaded.skipped {
        crate::notice::note(&format!("{}: {why}, skipped", file.display()));
    }
    if loaded.keys == 0 {
        let what = if path.is_dir() {
            "a directory with no *.pub key files"
        } else {
            "a keyring file with no keys"
        };
        crate::notice::warning(&format!(
            "--keyring {}: {what}; no signer is known from it",
            path.display()
        ));
    }
    Ok(())
}

/// How many items the inputs split into (cheap: no decoding).
fn count(inputs: &[Input]) -> usize {
    inputs
        .iter()
        .map(|i| sequence_pieces(&i.bytes, Limits::DEFAULT.max_size, input::SPLIT_DEPTH).count())
        .sum()
}

/// `herald verify`.
#[derive(Args, Debug)]
#[command(
    after_help = "All FILEs form one set (parents, replays). Exit status: 0 every envelope valid, \
                  1 any partial or invalid (or unparseable input), 2 the command could not run."
)]
pub(crate) struct VerifyArgs {
    /// Envelope or trace files (- for standard input)
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// Keyring file, or directory of *.pub files (repeatable)
    #[arg(long, value_name = "PATH")]
    pub(crate) keyring: Vec<PathBuf>,
    /// The time to check expiry and future timestamps against, Unix seconds or RFC 3339
    /// [default: the clock]
    #[arg(long, value_name = "TIME", value_parser = crate::clock::parse_time)]
    pub(crate) now: Option<u64>,
    /// Print the report as one JSON object
    #[arg(long)]
    pub(crate) json: bool,
    /// Draw the trace DAG instead of the report: Graphviz DOT, Mermaid or SVG (exit status as
    /// without it)
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub(crate) format: Option<crate::graph::Format>,
    #[arg(
        long,
        value_name = "SCOPE",
        help = super::scopes_help("Require a valid signature in SCOPE (repeatable)", true)
    )]
    pub(crate) require: Vec<String>,
    /// Show each reason's detail under its envelope, and at the end what each reason code reported
    /// means (as herald explain CODE)
    #[arg(short, long)]
    pub(crate) verbose: bool,
    /// Do not draw the trace tree
    #[arg(long)]
    pub(crate) no_tree: bool,
    /// A C2SP tlog-policy file: a bundled inclusion proof (and so a molt it proves) counts only
    /// when a checkpoint of its bundle is its tree head, signed by a policy log and cosigned by
    /// the policy's quorum of witnesses
    #[arg(long = "log-policy", value_name = "FILE")]
    pub(crate) log_policy: Option<PathBuf>,
    /// The Herald list (PROFILE P14): certifications (given as FILEs of {certification, proof}
    /// items, or fetched from each listed Herald's URL) count under --log-policy, and a claim a
    /// threshold of distinct Heralds certifies resolves keys, deprecates, and is reported
    #[arg(long, value_name = "FILE", requires = "log_policy")]
    pub(crate) heralds: Option<PathBuf>,
    /// Resolve the signers no keyring pins through these channels, in order (PROFILE P15): dns
    /// through the handle a signer's own envelopes claim
    #[arg(long, value_enum, value_name = "CHANNEL", value_delimiter = ',')]
    pub(crate) resolve: Vec<crate::resolution::ChannelName>,
    #[command(flatten)]
    pub(crate) channels: crate::resolution::ChannelArgs,
    #[command(flatten)]
    pub(crate) profile: crate::profile::ProfileArgs,
}
