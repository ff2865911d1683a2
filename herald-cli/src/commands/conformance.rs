//! `herald conformance [DIR] [--json]`: run every case of the conformance
//! vectors through this implementation: those of DIR, or without it the
//! copy built into herald-vectors ([`herald_vectors::builtin`]), so an installed
//! `herald` needs no checkout.
//! One line per failure and a final `N passed, N failed`; exit 0 only when
//! nothing failed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::error::CliError;
use crate::output::random_suffix;
use clap::Args;

/// Run `conformance`.
pub(crate) fn run(dir: Option<&Path>, as_json: bool) -> Result<ExitCode, CliError> {
    let outcome = match dir {
        Some(dir) => herald_vectors::run(dir)
            .map_err(|e| CliError::new(format!("{}: {e}", dir.display())))?,
        None => run_embedded()?,
    };
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
    /// A vectors directory (holding manifest.json) [default: the vectors built into herald]
    #[arg(value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
    /// Print a JSON report: implementation, vectors digest, counts, failures
    #[arg(long)]
    pub(crate) json: bool,
}

/// The embedded vectors, written to a private temporary directory (removed
/// afterwards) and run from there.
fn run_embedded() -> Result<herald_vectors::Outcome, CliError> {
    let dir = std::env::temp_dir().join(format!("herald-conformance-{}", random_suffix()?));
    let result = write_embedded(&dir).and_then(|()| {
        herald_vectors::run(&dir)
            .map_err(|e| CliError::new(format!("the built-in conformance vectors: {e}")))
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn write_embedded(dir: &Path) -> Result<(), CliError> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| CliError::io(dir, &e))?;
    for (rel, bytes) in herald_vectors::builtin() {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CliError::io(parent, &e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| CliError::io(&path, &e))?;
    }
    Ok(())
}
