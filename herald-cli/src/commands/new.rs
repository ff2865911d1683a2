//! `herald new`: a genesis envelope (P4: `parent: null`, `trace` = id).

use std::process::ExitCode;

use crate::commands::compose::ComposeArgs;
use crate::commands::compose::{self, BirthArgs, Start};
use crate::error::CliError;
use clap::Args;

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

/// `herald new`.
#[derive(Args, Debug)]
#[command(
    after_help = "With --kind birth the birth attestation for the key is added (from --description \
                  and --lineage) unless --attest birth=JSON gives one."
)]
pub(crate) struct NewArgs {
    #[command(flatten)]
    pub(crate) compose: ComposeArgs,
    /// With --kind birth: the birth attestation's description [default: ""]
    #[arg(long, value_name = "TEXT")]
    pub(crate) description: Option<String>,
    /// With --kind birth: a lineage parent (repeatable)
    #[arg(long, value_name = "SIGIL")]
    pub(crate) lineage: Vec<String>,
}
