//! `herald reply --parent FILE [--id PREFIX]`: a reply in the parent's
//! trace. When FILE holds a CBOR sequence, the parent is the envelope whose
//! id starts with PREFIX, or without `--id` its LAST envelope (a trace file
//! grows at the end).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::commands::compose::ComposeArgs;
use crate::commands::compose::{self, Start};
use crate::error::CliError;
use crate::id_prefix::IdPrefix;
use crate::input;
use clap::Args;

/// Run `reply`.
pub(crate) fn run(args: &ReplyArgs) -> Result<ExitCode, CliError> {
    let parent = &args.parent;
    let envelopes = input::envelopes(parent)?;
    let name = input::display_name(parent);
    let chosen = match &args.id {
        Some(text) => {
            let prefix = IdPrefix::parse("--id", text)?;
            let candidates = envelopes.iter().map(|e| (e.id(), e));
            Some(prefix.resolve(candidates, &format!("in {name}"))?)
        }
        None => envelopes.last(),
    };
    let Some(chosen) = chosen else {
        return Err(CliError::new(format!("--parent {name}: no envelope in it")));
    };
    let view = chosen.view();
    compose::run(
        &args.compose,
        Start::Reply {
            parent: &view,
            auto_to: !args.no_to,
        },
    )
}

/// `herald reply`.
#[derive(Args, Debug)]
pub(crate) struct ReplyArgs {
    /// The envelope replied to; in a CBOR sequence (a trace file) the one --id names, else
    /// the LAST envelope
    #[arg(long, value_name = "FILE")]
    pub(crate) parent: PathBuf,
    /// Which envelope of the --parent FILE: its id, or a unique prefix of it (at least 8 hex
    /// digits)
    #[arg(long, value_name = "PREFIX")]
    pub(crate) id: Option<String>,
    /// Send to nobody in particular (without --to, a reply goes to the parent's sender,
    /// or to the parent's recipient when replying to oneself)
    #[arg(long, conflicts_with = "to")]
    pub(crate) no_to: bool,
    #[command(flatten)]
    pub(crate) compose: ComposeArgs,
}
