//! How a sender is named in the human outputs (`herald verify` text and
//! tree, `--format dot|mermaid|svg`): its keyring label when a keyring
//! line labels its key; else, for a key a birth in the set introduced
//! (`key_source` `"birth"`, PROFILE P7), that birth's own description,
//! quoted and marked self-described (nobody vouched for it); else its
//! sigil.

use herald_core::{PublicKey, Sigil, SigilForm};
use herald_verify::{CompactReport, Descriptions, Keyring};

/// Characters of a self-description shown before it is cut with `…`.
pub(crate) const DESCRIPTION_CHARS: usize = 40;

/// The names of one verified set's senders.
#[derive(Debug)]
pub(crate) struct Names<'k> {
    keyring: &'k Keyring,
    /// Keys introduced by a birth of the set, with their descriptions.
    described: Descriptions<'k>,
}

/// A sender's name as found.
enum Found<'n> {
    Label(&'n str, PublicKey),
    Described(&'n str, PublicKey),
}

impl<'k> Names<'k> {
    /// The names of `report`'s senders: `keyring`'s labels and the
    /// descriptions of the set's births.
    pub(crate) fn of(report: &CompactReport<'k>, keyring: &'k Keyring) -> Self {
        Self {
            keyring,
            described: (0..report.len())
                .filter_map(|k| report.self_described(k))
                .collect(),
        }
    }

    fn find(&self, sigil: &Sigil) -> Option<Found<'_>> {
        if let Some((key, _)) = self.keyring.lookup(sigil) {
            if let Some(label) = self.keyring.label(&key) {
                return Some(Found::Label(label, key));
            }
            // A handle DNS confirmed both ways (PROFILE P15); an
            // unconfirmed claim is never in the keyring.
            if let Some(at) = self.keyring.resolved_at(&key) {
                return Some(Found::Label(&at.handle, key));
            }
        }
        let d = self.described.get(sigil)?;
        Some(Found::Described(
            d.description,
            PublicKey::from_bytes(d.key).ok()?,
        ))
    }

    /// A sender as a text line shows it: `label (sigil:short…)` for a
    /// keyring label, `"description" (self-described, sigil:short…)` for
    /// a birth's description, else the sigil as the envelope names it.
    pub(crate) fn signer(&self, from: Option<&str>) -> String {
        let Some(from) = from else {
            return String::from("-");
        };
        let Some(sigil) = Sigil::parse(from).ok() else {
            return from.to_owned();
        };
        match self.find(&sigil) {
            Some(Found::Label(label, key)) => {
                format!("{label} ({})", key.sigil(SigilForm::Short))
            }
            Some(Found::Described(d, key)) => format!(
                "{} (self-described, {})",
                quoted(d),
                key.sigil(SigilForm::Short)
            ),
            None => from.to_owned(),
        }
    }

    /// A sender as a graph node shows it: its keyring label, the quoted
    /// self-description, else its short sigil.
    pub(crate) fn node(&self, from: Option<&str>) -> String {
        let Some(from) = from else {
            return "unparsed".into();
        };
        let Ok(sigil) = Sigil::parse(from) else {
            return from.to_owned();
        };
        match self.find(&sigil) {
            Some(Found::Label(label, _)) => label.to_owned(),
            Some(Found::Described(d, _)) => quoted(d),
            None => match self.keyring.lookup(&sigil) {
                Some((key, _)) => key.sigil(SigilForm::Short).to_string(),
                None => sigil
                    .to_form(SigilForm::Short)
                    .map_or_else(|| from.to_owned(), |s| s.to_string()),
            },
        }
    }
}

/// `description` in double quotes, its control characters dropped (it is
/// the key's own text: it must not draw on the terminal) and cut after
/// [`DESCRIPTION_CHARS`] characters with `…`.
fn quoted(description: &str) -> String {
    let clean: Vec<char> = description.chars().filter(|c| !c.is_control()).collect();
    let mut out = String::from("\"");
    out.extend(clean.iter().take(DESCRIPTION_CHARS));
    if clean.len() > DESCRIPTION_CHARS {
        out.push('…');
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn quoted_cuts_long_text_and_drops_control_characters() {
        assert_eq!(quoted("MCP tool"), "\"MCP tool\"");
        assert_eq!(quoted("a\x1b[31mb\nc"), "\"a[31mbc\"");
        let long = "x".repeat(50);
        assert_eq!(quoted(&long), format!("\"{}…\"", "x".repeat(40)));
    }
}
