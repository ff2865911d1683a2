//! Why a command could not run: one line on standard error and an exit
//! status (CLI.md: 2 when the command could not run).

use std::fmt;
use std::path::Path;

/// A failure to report as `herald: <message>` with exit status `code`.
#[derive(Debug)]
pub(crate) struct CliError {
    message: String,
    code: u8,
}

impl CliError {
    /// The command could not run (exit 2).
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 2,
        }
    }

    /// A file could not be read or written: `<path>: <os error>`.
    pub(crate) fn io(path: &Path, error: &std::io::Error) -> Self {
        Self::new(format!("{}: {error}", path.display()))
    }

    /// A local file was refused or could not be read
    /// ([`herald_verify::FileError`]): an OS error reads as from [`CliError::io`].
    pub(crate) fn file(error: herald_verify::FileError) -> Self {
        match error {
            herald_verify::FileError::Io(io) => Self::io(&io.path, &io.error),
            e => Self::new(e.to_string()),
        }
    }

    /// Writing to standard output failed. A closed pipe (`herald … | head`)
    /// is not worth a message: the reader left on purpose.
    pub(crate) fn stdout(error: &std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            Self {
                message: String::new(),
                code: 2,
            }
        } else {
            Self::new(format!("standard output: {error}"))
        }
    }

    /// The exit status.
    pub(crate) fn code(&self) -> u8 {
        self.code
    }

    /// Whether there is nothing to print (a closed pipe).
    pub(crate) fn is_quiet(&self) -> bool {
        self.message.is_empty()
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line, whatever the message carried.
        f.write_str(&self.message.replace('\n', " "))
    }
}
