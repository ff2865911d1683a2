//! The `herald` command line (CLI.md): make keys, build, co-sign, inspect
//! and verify HERALD v0.2 envelopes.
//!
//! Exit status: 0 every envelope is valid (or the command succeeded), 1 at
//! least one is partial or invalid (or input did not parse), 2 the command
//! could not run. Every error of ours is one line, `herald: <what>`; clap's
//! usage errors keep clap's form and also exit 2.

mod clock;
mod commands;
mod error;
mod input;
mod json;
mod keyfile;
mod output;
mod progress;
mod render;
mod tree;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::commands::{kinds_help, scopes_help};

/// Create, co-sign, inspect and verify HERALD v0.2 signed envelopes.
#[derive(Parser, Debug)]
#[command(
    name = "herald",
    version,
    after_help = "Exit status: 0 all valid / success, 1 some envelope partial, invalid or unparseable, \
                  2 the command could not run.\nTry it: herald demo"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Make a key pair: NAME.key (secret, mode 0600) and NAME.pub; print the sigil
    Keygen(KeygenArgs),
    /// Build and sign a genesis envelope: the first of a new trace
    New(NewArgs),
    /// Build and sign a reply to an envelope, in the parent's trace
    Reply(ReplyArgs),
    /// Append a co-signature (a non-origin scope) to an envelope
    Cosign(CosignArgs),
    /// Show envelopes, one summary (or with --json one JSON object a line) each; verifies nothing
    Inspect(InspectArgs),
    /// Verify envelopes and the traces they form (a FILE may be a proof bundle)
    Verify(VerifyArgs),
    /// Pack envelopes, the inclusion proofs they need and public keys into one proof bundle
    Bundle(BundleArgs),
    /// Three agents hold a short conversation; verify it, then a tampered copy
    Demo(DemoArgs),
    /// Run the conformance vectors through this implementation
    Conformance(ConformanceArgs),
    /// An append-only audit log: signed tree heads, inclusion and consistency proofs (P9)
    Log(LogArgs),
    /// The reference conduit: pass-through, relay and notary over HTTP (CONDUIT.md)
    Conduit(commands::conduit::ConduitArgs),
    /// A conduit client: post, follow the inbox, verify each arrival, reply
    Agent(commands::agent::AgentArgs),
}

/// `herald log`.
#[derive(Args, Debug)]
struct LogArgs {
    #[command(subcommand)]
    command: commands::log::LogCommand,
}

/// `herald conformance`.
#[derive(Args, Debug)]
struct ConformanceArgs {
    /// The vectors directory (holding manifest.json)
    #[arg(value_name = "DIR", default_value = "vectors/conformance")]
    dir: PathBuf,
    /// Print a JSON report: implementation, vectors digest, counts, failures
    #[arg(long)]
    json: bool,
}

/// `herald keygen`.
#[derive(Args, Debug)]
struct KeygenArgs {
    /// Write NAME.key and NAME.pub (a trailing .key or .pub is dropped)
    #[arg(short = 'o', long = "output", value_name = "NAME")]
    name: PathBuf,
    /// Replace existing NAME.key / NAME.pub
    #[arg(long)]
    force: bool,
}

/// Options shared by `new` and `reply`.
#[derive(Args, Debug)]
struct ComposeArgs {
    /// Secret key file of the sender (from `herald keygen`)
    #[arg(long, value_name = "NAME.key")]
    key: PathBuf,
    /// Recipient sigil (`to`)
    #[arg(long, value_name = "SIGIL")]
    to: Option<String>,
    /// Sender sigil (`from`) [default: the key's own]; after a molt (P8), the identity whose
    /// new key --key is
    #[arg(long, value_name = "SIGIL")]
    from: Option<String>,
    #[arg(long, value_name = "KIND", help = kinds_help())]
    kind: Option<String>,
    /// Payload as JSON (integers stay CBOR integers); @FILE reads the JSON from FILE, @- from stdin
    #[arg(long, value_name = "JSON", conflicts_with_all = ["payload_file", "new_key"])]
    payload_json: Option<String>,
    /// Payload: the bytes of FILE as a CBOR byte string (- for stdin). Default payload: null
    #[arg(long, value_name = "FILE", conflicts_with = "new_key")]
    payload_file: Option<PathBuf>,
    /// With --kind molt: the public key file (NAME.pub) of the key the sigil molts to (P7)
    #[arg(long, value_name = "NAME.pub", requires = "not_before")]
    new_key: Option<PathBuf>,
    /// With --kind molt: when the new key takes over, Unix seconds (P8: at least 24 h after
    /// the old key's last envelope unless a Herald endorsement waives it)
    #[arg(long, value_name = "SECS", requires = "new_key")]
    not_before: Option<u64>,
    /// Attestation {type: TYPE, value: JSON} (repeatable; JSON may be @FILE)
    #[arg(long, value_name = "TYPE=JSON")]
    attest: Vec<String>,
    /// Creation time, Unix seconds [default: the clock]
    #[arg(long, value_name = "SECS")]
    ts: Option<u64>,
    /// Expiry, Unix seconds, or +SECS after --ts
    #[arg(long, value_name = "SECS")]
    expires: Option<String>,
    /// Where to write the envelope, replacing OUT atomically (- for standard output)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    out: PathBuf,
}

/// `herald new`.
#[derive(Args, Debug)]
#[command(
    after_help = "With --kind birth the birth attestation for the key is added (from --description \
                  and --lineage) unless --attest birth=JSON gives one."
)]
struct NewArgs {
    #[command(flatten)]
    compose: ComposeArgs,
    /// With --kind birth: the birth attestation's description [default: ""]
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
    /// With --kind birth: a lineage parent (repeatable)
    #[arg(long, value_name = "SIGIL")]
    lineage: Vec<String>,
}

/// `herald reply`.
#[derive(Args, Debug)]
struct ReplyArgs {
    /// The envelope replied to; in a CBOR sequence (a trace file) the LAST envelope
    #[arg(long, value_name = "FILE")]
    parent: PathBuf,
    /// Send to nobody in particular (without --to, a reply goes to the parent's sender,
    /// or to the parent's recipient when replying to oneself)
    #[arg(long, conflicts_with = "to")]
    no_to: bool,
    #[command(flatten)]
    compose: ComposeArgs,
}

/// `herald cosign`.
#[derive(Args, Debug)]
struct CosignArgs {
    /// Secret key file of the co-signer
    #[arg(long, value_name = "NAME.key")]
    key: PathBuf,
    #[arg(long, value_name = "SCOPE", help = scopes_help("Scope of the signature", false))]
    scope: String,
    /// A signing time claimed in the signature map (a claim only, P5) [default: none]
    #[arg(long, value_name = "SECS")]
    ts: Option<u64>,
    /// The envelope to co-sign (one envelope; - for standard input)
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// Where to write the co-signed envelope (- for standard output)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    out: PathBuf,
}

/// `herald inspect`.
#[derive(Args, Debug)]
struct InspectArgs {
    /// Envelope or trace files (- for standard input)
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// One JSON object a line: the P3 display form (byte strings as lowercase hex)
    #[arg(long)]
    json: bool,
}

/// `herald verify`.
#[derive(Args, Debug)]
#[command(
    after_help = "All FILEs form one set (parents, replays). Exit status: 0 every envelope valid, \
                  1 any partial or invalid (or unparseable input), 2 the command could not run."
)]
struct VerifyArgs {
    /// Envelope or trace files (- for standard input)
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Keyring file, or directory of *.pub files (repeatable)
    #[arg(long, value_name = "PATH")]
    keyring: Vec<PathBuf>,
    /// The time to check expiry and future timestamps against, Unix seconds [default: the clock]
    #[arg(long, value_name = "SECS")]
    now: Option<u64>,
    /// Print the report as one JSON object
    #[arg(long)]
    json: bool,
    #[arg(
        long,
        value_name = "SCOPE",
        help = scopes_help("Require a valid signature in SCOPE (repeatable)", true)
    )]
    require: Vec<String>,
    /// Show each reason's detail under its envelope
    #[arg(short, long)]
    verbose: bool,
    /// Do not draw the trace tree
    #[arg(long)]
    no_tree: bool,
}

/// `herald bundle`.
#[derive(Args, Debug)]
#[command(
    after_help = "Every item of every FILE must be an envelope, every PROOF an inclusion proof \
                  (herald log prove) of one of them. A FILE may itself be a bundle, to extend it. \
                  Verify the result with `herald verify OUT --keyring LOGS`: a proof counts only \
                  when its log's key is in the keyring."
)]
struct BundleArgs {
    /// Envelope, trace or bundle files (- for standard input)
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// An inclusion proof to carry (repeatable)
    #[arg(long, value_name = "PROOF")]
    proof: Vec<PathBuf>,
    /// A keyring file, or directory of *.pub files, whose public keys to carry (repeatable)
    #[arg(long, value_name = "PATH")]
    key: Vec<PathBuf>,
    /// Where to write the bundle, replacing OUT atomically (- for standard output)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    out: PathBuf,
}

/// `herald demo`.
#[derive(Args, Debug)]
struct DemoArgs {
    /// Write the keys, keyring and traces into DIR (created if missing; files there are
    /// not replaced) [default: a fresh directory under the system temp dir]
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Talk through a conduit on a free loopback port: two agent processes, then a public replay
    #[arg(long)]
    conduit: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Keygen(a) => commands::keygen::run(&a.name, a.force),
        Command::New(a) => commands::new::run(&a.compose, a.description.as_deref(), &a.lineage),
        Command::Reply(a) => commands::reply::run(&a.compose, &a.parent, a.no_to),
        Command::Cosign(a) => commands::cosign::run(&a.key, &a.scope, a.ts, &a.input, &a.out),
        Command::Inspect(a) => commands::inspect::run(&a.files, a.json),
        Command::Verify(a) => commands::verify::run(&commands::verify::Options {
            files: a.files,
            keyrings: a.keyring,
            now: a.now,
            json: a.json,
            require: a.require,
            verbose: a.verbose,
            tree: !a.no_tree,
        }),
        Command::Bundle(a) => commands::bundle::run(&commands::bundle::Options {
            files: a.files,
            proofs: a.proof,
            keys: a.key,
            out: a.out,
        }),
        Command::Demo(a) if a.conduit => commands::conduit_demo::run(a.dir.as_deref()),
        Command::Demo(a) => commands::demo::run(a.dir.as_deref()),
        Command::Conformance(a) => commands::conformance::run(&a.dir, a.json),
        Command::Log(a) => commands::log::run(a.command),
        Command::Conduit(a) => commands::conduit::run(a),
        Command::Agent(a) => commands::agent::run(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if !e.is_quiet() {
                eprintln!("herald: {e}");
            }
            ExitCode::from(e.code())
        }
    }
}
