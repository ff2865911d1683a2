//! Writing results: `-o -` to standard output, anything else atomically
//! (a temporary file in the same directory, fsync, then into place), so a
//! reader never sees half a file and a crash never leaves one.

use std::fs::{self, File, OpenOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use crate::error::CliError;

/// `-o OUT` and `--force`, shared by every command that writes one file.
#[derive(Args, Debug)]
pub(crate) struct OutputArgs {
    /// Where to write it, atomically (- for standard output)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub(crate) out: PathBuf,
    /// Replace OUT if it exists
    #[arg(long)]
    pub(crate) force: bool,
}

impl OutputArgs {
    /// Write `bytes` to OUT ([`write_envelope`]), replacing it only with `--force`.
    pub(crate) fn write(&self, bytes: &[u8]) -> Result<(), CliError> {
        write_envelope(&self.out, bytes, Existing::from_force(self.force))
    }
}

/// Write `bytes` to standard output and flush.
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::stdout(&e))
}

/// Whether an existing file may be replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Existing {
    /// Replace it.
    Replace,
    /// Refuse (the error says to pass `--force`).
    Keep,
}

impl Existing {
    /// [`Existing::Replace`] when `--force` was given, else [`Existing::Keep`].
    pub(crate) fn from_force(force: bool) -> Self {
        if force { Self::Replace } else { Self::Keep }
    }
}

/// Write envelope bytes to `out`: `-` is standard output (refused when it
/// is a terminal: CBOR is binary), any other path is written atomically,
/// an existing file replaced only with [`Existing::Replace`] (`--force`).
pub(crate) fn write_envelope(out: &Path, bytes: &[u8], existing: Existing) -> Result<(), CliError> {
    if out == Path::new("-") {
        if std::io::stdout().is_terminal() {
            return Err(CliError::new(
                "-o -: refusing to write binary CBOR to a terminal; redirect it or give a file",
            ));
        }
        write_stdout(bytes)
    } else {
        write_atomic(out, bytes, 0o644, existing)
    }
}

/// Write `bytes` to `path` atomically with permission bits `mode` (Unix).
///
/// The temporary file is created with `mode` from the start (never wider),
/// flushed to disk, then linked into place: with [`Existing::Keep`] by a
/// hard link, which fails if `path` exists, so two writers cannot both win.
pub(crate) fn write_atomic(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    existing: Existing,
) -> Result<(), CliError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| CliError::new(format!("{}: not a file name", path.display())))?;
    if !dir.is_dir() {
        return Err(CliError::new(format!(
            "{}: no such directory (create it first)",
            dir.display()
        )));
    }
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        random_suffix()?
    ));
    let result = write_new(&tmp, bytes, mode).and_then(|()| place(&tmp, path, existing));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    } else if let Ok(d) = File::open(dir) {
        // Make the rename itself durable; not every filesystem supports it.
        let _ = d.sync_all();
    }
    result
}

fn write_new(tmp: &Path, bytes: &[u8], mode: u32) -> Result<(), CliError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(tmp).map_err(|e| CliError::io(tmp, &e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| CliError::io(tmp, &e))
}

fn place(tmp: &Path, path: &Path, existing: Existing) -> Result<(), CliError> {
    let exists = || {
        CliError::new(format!(
            "{}: already exists; pass --force to replace it",
            path.display()
        ))
    };
    match existing {
        Existing::Replace => fs::rename(tmp, path).map_err(|e| CliError::io(path, &e)),
        Existing::Keep => match fs::hard_link(tmp, path) {
            Ok(()) => fs::remove_file(tmp).map_err(|e| CliError::io(tmp, &e)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists()),
            // No hard links here (some network or FAT filesystems): check, then rename.
            Err(_) if path.exists() => Err(exists()),
            Err(_) => fs::rename(tmp, path).map_err(|e| CliError::io(path, &e)),
        },
    }
}

/// Sixteen random hex digits from the OS CSPRNG, for temporary names.
pub(crate) fn random_suffix() -> Result<String, CliError> {
    let nonce =
        herald_core::Nonce::generate().map_err(|_| CliError::new("the OS random source failed"))?;
    Ok(herald_verify::hex(
        nonce.as_bytes().get(..8).unwrap_or_default(),
    ))
}

/// `path` with `.ext` appended to its file name (`alice` → `alice.key`).
pub(crate) fn with_extension(path: &Path, ext: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}
