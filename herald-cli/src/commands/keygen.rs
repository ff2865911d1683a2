//! `herald keygen -o NAME`: NAME.key (secret, 0600) and NAME.pub (a
//! keyring line, CLI.md); prints the sigil.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use herald_core::{SigilForm, SigningKey};
use herald_verify::labelled_key_line;

use crate::error::CliError;
use crate::keyfile;
use crate::output::{Existing, with_extension, write_atomic};

/// Run `keygen`.
pub(crate) fn run(name: &Path, force: bool) -> Result<ExitCode, CliError> {
    let key = SigningKey::generate_os();
    let (secret, public) = paths(name);
    write_pair(&key, &secret, &public, Existing::from_force(force))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", key.sigil(SigilForm::Default)).map_err(|e| CliError::stdout(&e))?;
    Ok(ExitCode::SUCCESS)
}

/// `NAME.key` and `NAME.pub` (a trailing `.key`/`.pub` on NAME is dropped).
pub(crate) fn paths(name: &Path) -> (PathBuf, PathBuf) {
    let base = match name.extension() {
        Some(ext) if ext == "key" || ext == "pub" => name.with_extension(""),
        _ => name.to_path_buf(),
    };
    (with_extension(&base, "key"), with_extension(&base, "pub"))
}

/// Write both files, or neither: checked first, and the secret one removed
/// again if the public one cannot be written.
pub(crate) fn write_pair(
    key: &SigningKey,
    secret: &Path,
    public: &Path,
    existing: Existing,
) -> Result<(), CliError> {
    if existing == Existing::Keep {
        for path in [secret, public] {
            if path.exists() {
                return Err(CliError::new(format!(
                    "{}: already exists; pass --force to replace it",
                    path.display()
                )));
            }
        }
    }
    keyfile::write(secret, key, existing)?;
    let label = public
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    let line = format!("{}\n", labelled_key_line(&key.public_key(), &label));
    if let Err(e) = write_atomic(public, line.as_bytes(), 0o644, existing) {
        let _ = std::fs::remove_file(secret);
        return Err(e);
    }
    Ok(())
}

/// `herald keygen`.
#[derive(Args, Debug)]
pub(crate) struct KeygenArgs {
    /// Write NAME.key and NAME.pub (a trailing .key or .pub is dropped)
    #[arg(short = 'o', long = "output", value_name = "NAME")]
    pub(crate) name: PathBuf,
    /// Replace existing NAME.key / NAME.pub
    #[arg(long)]
    pub(crate) force: bool,
}
