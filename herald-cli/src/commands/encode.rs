//! `herald encode FILE… -o OUT`: the JSON display form (P3; what
//! `inspect --json` and `log … --json` print) back into the P1 CBOR bytes
//! it was printed from. Envelopes come back byte for byte, their `id`
//! proving it (see `display_form`); several objects become a CBOR
//! sequence (a trace file).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::display_form;
use crate::error::CliError;
use crate::input;
use crate::output::OutputArgs;

/// `herald encode`.
#[derive(Args, Debug)]
pub(crate) struct EncodeArgs {
    /// JSON display form files: envelopes one object a line, or a signed tree head or proof
    /// (- for standard input)
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// Run `encode`.
pub(crate) fn run(args: &EncodeArgs) -> Result<ExitCode, CliError> {
    if args.files.iter().filter(|f| input::is_stdin(f)).count() > 1 {
        return Err(CliError::new("standard input (-) can be given only once"));
    }
    let mut out = Vec::new();
    for path in &args.files {
        let name = input::display_name(path);
        let bytes = input::read(path)?;
        if !display_form::is_json(&bytes) {
            return Err(CliError::new(format!(
                "{name}: not JSON (already P1 CBOR?); encode reads the JSON display form"
            )));
        }
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| CliError::new(format!("{name}: not UTF-8 text")))?;
        for (i, value) in display_form::values(text).enumerate() {
            let bad = |e: String| CliError::new(format!("{name}: JSON value {}: {e}", i + 1));
            let value = value.map_err(bad)?;
            let p1 = if display_form::is_envelope(value) {
                display_form::envelope(value)
            } else {
                display_form::audit_object(value)
            };
            out.extend(p1.map_err(bad)?);
        }
    }
    args.output.write(&out)?;
    Ok(ExitCode::SUCCESS)
}
