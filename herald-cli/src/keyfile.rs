//! Secret key files (CLI.md: `NAME.key`, mode 0600): the format and the
//! loader are herald-verify's ([`herald_verify::load_key_file`]), shared with the Python
//! bindings; here the command's atomic writer and its error type.

use std::path::Path;

use herald_core::SigningKey;
use herald_verify::{encode_key_file, load_key_file};

use crate::error::CliError;
use crate::output::{Existing, write_atomic};

/// Whether `bytes` look like a secret key file (never to be sent anywhere).
pub(crate) fn is_key_file(bytes: &[u8]) -> bool {
    herald_verify::is_key_file(bytes)
}

/// Write `key`'s seed to `path` with mode 0600, atomically; an existing
/// file is kept unless `existing` is [`Existing::Replace`].
pub(crate) fn write(path: &Path, key: &SigningKey, existing: Existing) -> Result<(), CliError> {
    let text = encode_key_file(key);
    write_atomic(path, text.as_ref(), 0o600, existing)
}

/// Load the key of the secret key file `path`, refusing a file that group
/// or others may read (CLI.md).
pub(crate) fn load(path: &Path) -> Result<SigningKey, CliError> {
    load_key_file(path).map_err(|e| CliError::new(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_core::SigilForm;

    #[test]
    fn round_trip_and_refusals() {
        let dir = std::env::temp_dir().join(format!(
            "herald-keyfile-{}",
            crate::output::random_suffix().unwrap()
        ));
        std::fs::create_dir(&dir).unwrap();
        let path = dir.join("k.key");
        let key = SigningKey::from_seed(&[7; 32]);
        write(&path, &key, Existing::Keep).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(
            back.sigil(SigilForm::Default),
            key.sigil(SigilForm::Default)
        );
        // No silent overwrite.
        assert!(write(&path, &key, Existing::Keep).is_err());
        write(&path, &key, Existing::Replace).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
            let err = load(&path).unwrap_err().to_string();
            assert!(err.contains("0640") && err.contains("k.key"), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
