//! `herald conformance [DIR] [--json]`: run every case of the conformance
//! vectors (default `vectors/conformance`) through this implementation.
//! One line per failure and a final `N passed, N failed`; exit 0 only when
//! nothing failed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::error::CliError;
use clap::Args;

/// Run `conformance`.
pub(crate) fn run(dir: &Path, as_json: bool) -> Result<ExitCode, CliError> {
    let outcome =
        herald_vectors::run(dir).map_err(|e| CliError::new(format!("{}: {e}", dir.display())))?;
    let mut out = std::io::stdout().lock();
    let text = if as_json {
        serde_json::to_string(&outcome).map_err(|e| CliError::new(e.to_string()))? + "\n"
    } else {
        let mut s = String::new();
        for f in &outcome.failures {
            s.push_str(&format!("FAIL {}: {}\n", f.case, f.message));
        }
        s.push_str(&format!(
            "{} passed, {} failed, {} skipped\n",
            outcome.passed, outcome.failed, outcome.skipped
        ));
        s
    };
    out.write_all(text.as_bytes())
        .map_err(|e| CliError::stdout(&e))?;
    Ok(if outcome.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `herald conformance`.
#[derive(Args, Debug)]
pub(crate) struct ConformanceArgs {
    /// The vectors directory (holding manifest.json)
    #[arg(value_name = "DIR", default_value = "vectors/conformance")]
    pub(crate) dir: PathBuf,
    /// Print a JSON report: implementation, vectors digest, counts, failures
    #[arg(long)]
    pub(crate) json: bool,
}
