//! `herald new`: a genesis envelope (P4: `parent: null`, `trace` = id).

use std::process::ExitCode;

use crate::ComposeArgs;
use crate::commands::compose::{self, BirthArgs, Start};
use crate::error::CliError;

/// Run `new`.
pub(crate) fn run(
    args: &ComposeArgs,
    description: Option<&str>,
    lineage: &[String],
) -> Result<ExitCode, CliError> {
    compose::run(
        args,
        Start::Genesis(BirthArgs {
            description,
            lineage,
        }),
    )
}
