//! The `keyring_parse` target: keyring text.

use super::*;

/// `keyring_parse`: [`Keyring::parse`] over the input as lossy UTF-8. On
/// success every key line's sigil resolves to a key whose own keyring line
/// parses back; errors display.
pub fn keyring_parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut ring = Keyring::new();
    match ring.parse(&text, "fuzz") {
        Ok(added) => {
            assert!(ring.len() <= added, "duplicates are kept once");
            assert_eq!(ring.is_empty(), added == 0);
            for line in text.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let sigil = line.split_ascii_whitespace().next().map(Sigil::parse);
                assert!(
                    matches!(sigil, Some(Ok(_))),
                    "an accepted line starts with a sigil"
                );
                let Some(Ok(sigil)) = sigil else { return };
                let found = ring.lookup(&sigil);
                assert!(found.is_some(), "every accepted sigil resolves");
                let Some((key, provenance)) = found else {
                    return;
                };
                assert_eq!(provenance, Provenance::Pinned);
                let mut again = Keyring::new();
                assert_eq!(again.parse(&key_line(&key), "again").ok(), Some(1));
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}
