//! `herald extract FILE ID -o OUT`: one envelope of an envelope, trace or
//! bundle file (P1 CBOR or its JSON display form), chosen by its id or a
//! unique prefix of it, written out as its P1 bytes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::error::CliError;
use crate::id_prefix::IdPrefix;
use crate::input::{self, Item};
use crate::output::OutputArgs;

/// `herald extract`.
#[derive(Args, Debug)]
pub(crate) struct ExtractArgs {
    /// Envelope, trace or bundle file (- for standard input)
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    /// The envelope's id, or a unique prefix of it (at least 8 hex digits)
    #[arg(value_name = "ID")]
    pub(crate) id: String,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// Run `extract`.
pub(crate) fn run(args: &ExtractArgs) -> Result<ExitCode, CliError> {
    let prefix = IdPrefix::parse("ID", &args.id)?;
    let bytes = input::read_envelopes(&args.file)?;
    let name = input::display_name(&args.file);
    let candidates = input::items(&bytes).filter_map(|item| match item {
        Item::Envelope(_, env) => Some((*env.id(), env.as_bytes().to_vec())),
        Item::Bad(..) => None,
    });
    let envelope = prefix.resolve(candidates, &format!("in {name}"))?;
    args.output.write(&envelope)?;
    Ok(ExitCode::SUCCESS)
}
