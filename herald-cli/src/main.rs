//! The `herald` command line (CLI.md): make keys, build, co-sign, inspect
//! and verify HERALD v0.2 envelopes.
//!
//! Exit status: 0 every envelope is valid (or the command succeeded), 1 at
//! least one is partial or invalid (or input did not parse), 2 the command
//! could not run. Every error of ours is one line, `herald: <what>`; clap's
//! usage errors keep clap's form and also exit 2.

mod clock;
mod commands;
mod display_form;
mod error;
mod graph;
mod heralds;
mod id_prefix;
mod input;
mod inspector;
mod json;
mod keyfile;
mod logging;
mod names;
mod notice;
mod output;
mod profile;
mod progress;
mod render;
mod resolution;
mod tree;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::agent::AgentArgs;
use crate::commands::bundle::BundleArgs;
use crate::commands::completions::CompletionsArgs;
use crate::commands::conduit::ConduitArgs;
use crate::commands::conformance::ConformanceArgs;
use crate::commands::cosign::CosignArgs;
use crate::commands::demo::DemoArgs;
#[cfg(feature = "dht")]
use crate::commands::dht::DhtArgs;
use crate::commands::encode::EncodeArgs;
use crate::commands::explain::ExplainArgs;
use crate::commands::extract::ExtractArgs;
use crate::commands::heraldry::HeraldryArgs;
use crate::commands::inspect::InspectArgs;
use crate::commands::keygen::KeygenArgs;
use crate::commands::log::LogArgs;
use crate::commands::man::ManArgs;
use crate::commands::mcp::McpArgs;
use crate::commands::new::NewArgs;
use crate::commands::reply::ReplyArgs;
use crate::commands::resolve::ResolveArgs;
use crate::commands::verify::VerifyArgs;
use crate::commands::witness::WitnessArgs;

/// Create, co-sign, inspect and verify HERALD v0.2 signed envelopes.
#[derive(Parser, Debug)]
#[command(
    name = "herald",
    version,
    after_help = "Exit status: 0 all valid / success, 1 some envelope partial, invalid or unparseable, \
                  2 the command could not run.\nTry it: herald demo"
)]
struct Cli {
    /// No notes or warnings, and no report from verify: only errors and the exit status
    #[arg(short, long, global = true)]
    quiet: bool,
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
    /// Show envelopes, one summary (or with --json one JSON object a line) each; --serve opens the
    /// inspector web app, which verifies in the browser
    Inspect(InspectArgs),
    /// Verify envelopes and the traces they form (a FILE may be a proof bundle)
    Verify(VerifyArgs),
    /// Which sigils a handle names (DNS), or which key a sigil is (PROFILE P15)
    Resolve(ResolveArgs),
    /// What a reason code means, and the PROFILE.md section of its rule; without CODE, every code
    Explain(ExplainArgs),
    /// Turn the JSON display form (inspect --json, log --json) back into its P1 CBOR bytes
    Encode(EncodeArgs),
    /// Write out one envelope of a trace or bundle file, chosen by id or unique id prefix
    Extract(ExtractArgs),
    /// Pack envelopes, the inclusion proofs they need and public keys into one proof bundle
    Bundle(BundleArgs),
    /// Three agents hold a short conversation; verify it, then a tampered copy
    Demo(DemoArgs),
    /// Run the conformance vectors through this implementation
    Conformance(ConformanceArgs),
    /// Print a shell completion script (bash, elvish, fish, powershell, zsh)
    Completions(CompletionsArgs),
    /// Print a man page (roff): herald(1), or a subcommand's; --dir writes every page
    Man(ManArgs),
    /// An append-only audit log: signed tree heads, inclusion and consistency proofs (P9)
    Log(LogArgs),
    /// A C2SP tlog-witness: cosign the checkpoints of the logs it knows (CONDUIT.md)
    Witness(WitnessArgs),
    /// The reference conduit: pass-through, relay and notary over HTTP (CONDUIT.md)
    Conduit(ConduitArgs),
    /// A conduit client: post, follow the inbox, verify each arrival, reply
    Agent(AgentArgs),
    /// A Herald: certify handles, keys, lineage and models into a witnessed log (PROFILE P14)
    Heraldry(HeraldryArgs),
    /// The MCP wrapper: sign every tools/call and its result into a trace (docs/mcp.md)
    Mcp(McpArgs),
    /// The Mainline DHT: publish an agent's signed record naming its conduit (docs/resolution.md)
    #[cfg(feature = "dht")]
    Dht(DhtArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    notice::set_quiet(cli.quiet);
    logging::init(
        match &cli.command {
            Command::Conduit(_)
            | Command::Witness(_)
            | Command::Agent(_)
            | Command::Heraldry(_) => logging::Verbosity::Service,
            Command::Mcp(_) => logging::Verbosity::Wrapper,
            Command::Inspect(a) if a.serve => logging::Verbosity::Service,
            _ => logging::Verbosity::OneShot,
        },
        cli.quiet,
    );
    let result = match cli.command {
        Command::Keygen(a) => commands::keygen::run(&a.name, a.force, a.handle.as_deref()),
        Command::New(a) => commands::new::run(&a.compose, a.description.as_deref(), &a.lineage),
        Command::Reply(a) => commands::reply::run(&a),
        Command::Cosign(a) => commands::cosign::run(&a),
        Command::Inspect(a) if a.serve => inspector::serve(&inspector::ServeOptions {
            files: &a.files,
            keyrings: &a.keyring,
            listen: a.listen,
            key: a.key.as_deref(),
            allow_lifecycle: a.allow_lifecycle,
        }),
        Command::Inspect(a) => match &a.export_site {
            Some(dir) => inspector::export_site(dir),
            None => commands::inspect::run(&a.files, a.json),
        },
        Command::Verify(a) => commands::verify::run(&commands::verify::Options {
            files: a.files,
            keyrings: a.keyring,
            now: a.now,
            json: a.json,
            format: a.format,
            require: a.require,
            verbose: a.verbose,
            tree: !a.no_tree,
            log_policy: a.log_policy,
            heralds: a.heralds,
            resolve: a.resolve,
            channels: a.channels,
            profile: a.profile,
        }),
        Command::Resolve(a) => commands::resolve::run(&a),
        Command::Explain(a) => commands::explain::run(&a),
        Command::Bundle(a) => commands::bundle::run(&commands::bundle::Options {
            files: a.files,
            proofs: a.proof,
            keys: a.key,
            checkpoints: a.checkpoint,
            certifications: a.certification,
            output: a.output,
        }),
        Command::Encode(a) => commands::encode::run(&a),
        Command::Extract(a) => commands::extract::run(&a),
        Command::Demo(a) if a.conduit => commands::conduit_demo::run(a.dir.as_deref()),
        Command::Demo(a) if a.heralds => commands::heralds_demo::run(a.dir.as_deref()),
        Command::Demo(a) => commands::demo::run(a.dir.as_deref(), a.force),
        Command::Conformance(a) => commands::conformance::run(a.dir.as_deref(), a.json),
        Command::Completions(a) => commands::completions::run(&a),
        Command::Man(a) => commands::man::run(&a),
        Command::Log(a) => commands::log::run(a.command),
        Command::Witness(a) => commands::witness::run(a),
        Command::Conduit(a) => commands::conduit::run(a),
        Command::Agent(a) => commands::agent::run(&a),
        Command::Heraldry(a) => commands::heraldry::run(a),
        Command::Mcp(a) => commands::mcp::run(a.command),
        #[cfg(feature = "dht")]
        Command::Dht(a) => commands::dht::run(a),
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
