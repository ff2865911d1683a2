//! `herald cosign --key K --scope SCOPE IN -o OUT`: append signature k over
//! `tag(scope) || body(E, k)` (P5, P6) without re-encoding the rest.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::commands::parse_scope;
use crate::error::CliError;
use crate::output::OutputArgs;
use crate::{input, keyfile};
use clap::Args;

/// Run `cosign`.
pub(crate) fn run(args: &CosignArgs) -> Result<ExitCode, CliError> {
    let CosignArgs {
        key,
        scope,
        ts,
        input: input_path,
        output,
    } = args;
    let ts = *ts;
    let scope = parse_scope("--scope", scope, false)?;
    let envelopes = input::envelopes(input_path)?;
    let name = input::display_name(input_path);
    let envelope = match envelopes.as_slice() {
        [one] => one,
        many => {
            return Err(CliError::new(format!(
                "{name}: holds {} envelopes; cosign takes exactly one",
                many.len()
            )));
        }
    };
    let key = keyfile::load(key)?;
    let public = key.public_key();
    let already = envelope
        .view()
        .signatures()
        .filter_map(Result::ok)
        .any(|s| s.signer.names_key(public.as_bytes()));
    if already {
        return Err(CliError::new(format!(
            "{name}: already signed by this key (a second signature would be duplicate_signer)"
        )));
    }
    let signed = envelope
        .cosign(&key, scope, ts)
        .map_err(|e| CliError::new(format!("cannot co-sign {name}: {e}")))?;
    output.write(signed.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// `herald cosign`.
#[derive(Args, Debug)]
pub(crate) struct CosignArgs {
    /// Secret key file of the co-signer
    #[arg(long, value_name = "NAME.key")]
    pub(crate) key: PathBuf,
    #[arg(long, value_name = "SCOPE", help = super::scopes_help("Scope of the signature", false))]
    pub(crate) scope: String,
    /// A signing time claimed in the signature map (a claim only, P5), Unix seconds or
    /// RFC 3339 [default: none]
    #[arg(long, value_name = "TIME", value_parser = crate::clock::parse_time)]
    pub(crate) ts: Option<u64>,
    /// The envelope to co-sign (one envelope; - for standard input)
    #[arg(value_name = "IN")]
    pub(crate) input: PathBuf,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}
