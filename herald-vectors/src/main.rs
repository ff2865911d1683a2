//! `herald-vectors [OUT]`: write the conformance vectors (default
//! `vectors/conformance`) and check this implementation against them.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let out = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("vectors/conformance"), PathBuf::from);
    match herald_vectors::generate(&out) {
        Ok(outcome) if outcome.failed == 0 => {
            println!(
                "wrote {} ({} cases, all agree)",
                out.display(),
                outcome.passed
            );
            ExitCode::SUCCESS
        }
        Ok(outcome) => {
            for f in &outcome.failures {
                eprintln!("herald-vectors: {}: {}", f.case, f.message);
            }
            eprintln!(
                "herald-vectors: {} of {} cases disagree with their stated expectation",
                outcome.failed,
                outcome.passed + outcome.failed
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("herald-vectors: {e}");
            ExitCode::from(2)
        }
    }
}
