//! `herald keygen -o NAME [--handle HANDLE]`: NAME.key (secret, 0600)
//! and NAME.pub (a keyring line, CLI.md); prints the sigil, and with
//! `--handle` the DNS TXT record that publishes it at that handle
//! (PROFILE P15, docs/resolution.md).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use herald_core::{PublicKey, SigilForm, SigningKey};
use herald_resolve::Handle;
use herald_verify::labelled_key_line;

use crate::error::CliError;
use crate::keyfile;
use crate::output::{Existing, with_extension, write_atomic};

/// Run `keygen`.
pub(crate) fn run(name: &Path, force: bool, handle: Option<&str>) -> Result<ExitCode, CliError> {
    let handle = handle
        .map(|h| Handle::parse(h).map_err(|e| CliError::new(format!("--handle {h}: {e}"))))
        .transpose()?;
    let key = SigningKey::generate_os();
    let (secret, public) = paths(name);
    write_pair(&key, &secret, &public, Existing::from_force(force))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", key.sigil(SigilForm::Default)).map_err(|e| CliError::stdout(&e))?;
    if let Some(handle) = handle {
        writeln!(stdout, "{}", txt_record(&handle, &key.public_key()))
            .map_err(|e| CliError::stdout(&e))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The zone-file line publishing `key` at `handle` (PROFILE P15):
/// `alice._herald.acme.com. 3600 IN TXT "v=herald1; sigil=…; key=…"`.
pub(crate) fn txt_record(handle: &Handle, key: &PublicKey) -> String {
    format!(
        "{} 3600 IN TXT \"v=herald1; sigil={}; key={}\"",
        handle.record_name(),
        key.sigil(SigilForm::Default),
        herald_verify::hex(key.as_bytes())
    )
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
    /// Also print the DNS TXT record (zone-file line) that publishes the key at HANDLE
    /// (acme.com or alice@acme.com; docs/resolution.md)
    #[arg(long, value_name = "HANDLE")]
    pub(crate) handle: Option<String>,
}
