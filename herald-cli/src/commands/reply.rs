//! `herald reply --parent FILE`: a reply in the parent's trace. When FILE
//! holds a CBOR sequence, the parent is its LAST envelope (a trace file
//! grows at the end).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::commands::compose::ComposeArgs;
use crate::commands::compose::{self, Start};
use crate::error::CliError;
use crate::input;
use clap::Args;

/// Run `reply`.
pub(crate) fn run(args: &ComposeArgs, parent: &Path, no_to: bool) -> Result<ExitCode, CliError> {
    let envelopes = input::envelopes(parent)?;
    let Some(last) = envelopes.last() else {
        return Err(CliError::new(format!(
            "--parent {}: no envelope in it",
            input::display_name(parent)
        )));
    };
    let view = last.view();
    compose::run(
        args,
        Start::Reply {
            parent: &view,
            auto_to: !no_to,
        },
    )
}

/// `herald reply`.
#[derive(Args, Debug)]
pub(crate) struct ReplyArgs {
    /// The envelope replied to; in a CBOR sequence (a trace file) the LAST envelope
    #[arg(long, value_name = "FILE")]
    pub(crate) parent: PathBuf,
    /// Send to nobody in particular (without --to, a reply goes to the parent's sender,
    /// or to the parent's recipient when replying to oneself)
    #[arg(long, conflicts_with = "to")]
    pub(crate) no_to: bool,
    #[command(flatten)]
    pub(crate) compose: ComposeArgs,
}
