//! `herald explain [CODE]` (CLI.md): what a reason code means and the
//! PROFILE.md section of its rule, one line per code, from the table the
//! inspector shows too ([`herald_verify::explain`]); `herald verify -v`
//! ends with the lines of the codes it reported.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use herald_core::ReasonCode;

use crate::error::CliError;

/// `herald explain`.
#[derive(Args, Debug)]
#[command(after_help = "Exit status: 0 explained, 2 no such reason code.")]
pub(crate) struct ExplainArgs {
    /// A reason code as `herald verify` reports it (e.g. bad_signature); without it, every code
    #[arg(value_name = "CODE")]
    pub(crate) code: Option<String>,
}

/// `code (Pn): what it means`, or `None` for a code the table lacks (none
/// of [`ReasonCode::ALL`], tested).
pub(crate) fn line(code: ReasonCode) -> Option<String> {
    let e = herald_verify::explain(code)?;
    Some(format!("{} ({}): {}", code.name(), e.section, e.text))
}

/// Run `explain`.
pub(crate) fn run(a: &ExplainArgs) -> Result<ExitCode, CliError> {
    let codes = match a.code.as_deref() {
        Some(name) => vec![ReasonCode::from_name(name).ok_or_else(|| {
            CliError::new(format!(
                "unknown reason code {name:?} (`herald explain` lists every code)"
            ))
        })?],
        None => ReasonCode::ALL.to_vec(),
    };
    let mut text = String::new();
    for code in codes {
        if let Some(l) = line(code) {
            text.push_str(&l);
            text.push('\n');
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::stdout(&e))?;
    Ok(ExitCode::SUCCESS)
}

/// After a `verify -v` report: a line for each code that any envelope was
/// given, in the order of [`ReasonCode::ALL`], under a heading.
pub(crate) fn write_reported(
    out: &mut dyn Write,
    report: &herald_verify::CompactReport<'_>,
) -> std::io::Result<()> {
    let mut first = true;
    for &code in ReasonCode::ALL {
        if !(0..report.len()).any(|k| report.has(k, code)) {
            continue;
        }
        let Some(l) = line(code) else { continue };
        if first {
            writeln!(out, "\nreason codes (herald explain CODE):")?;
            first = false;
        }
        writeln!(out, "  {l}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_line() {
        for &code in ReasonCode::ALL {
            let l = line(code).unwrap_or_default();
            assert!(l.starts_with(code.name()), "{}: {l:?}", code.name());
            assert!(!l.contains('\n'), "{l}");
        }
    }
}
