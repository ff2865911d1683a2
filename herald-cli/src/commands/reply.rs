//! `herald reply --parent FILE`: a reply in the parent's trace. When FILE
//! holds a CBOR sequence, the parent is its LAST envelope (a trace file
//! grows at the end).

use std::path::Path;
use std::process::ExitCode;

use crate::ComposeArgs;
use crate::commands::compose::{self, Start};
use crate::error::CliError;
use crate::input;

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
