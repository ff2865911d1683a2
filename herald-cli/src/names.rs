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

/// Senders a [`SignerMemo`] remembers.
const MEMO: usize = 8;

/// [`Names::signer`], remembering the last [`MEMO`] senders it named: a
/// set's senders repeat, and naming one costs a sigil parse, a keyring
/// lookup and a format. Bounded, so a set of a million senders costs it no
/// more; one for each thread that renders.
pub(crate) struct SignerMemo<'n> {
    names: &'n Names<'n>,
    /// `(from, its name)`, at most [`MEMO`].
    seen: Vec<(String, String)>,
    /// The entry replaced next once `seen` is full.
    next: usize,
}

impl<'n> SignerMemo<'n> {
    pub(crate) fn new(names: &'n Names<'n>) -> Self {
        Self {
            names,
            seen: Vec::with_capacity(MEMO),
            next: 0,
        }
    }

    /// What [`Names::signer`] returns for `from`.
    pub(crate) fn signer(&mut self, from: Option<&str>) -> &str {
        let Some(from) = from else {
            return "-";
        };
        let k = match self.seen.iter().position(|(f, _)| f == from) {
            Some(k) => k,
            None => {
                let entry = (from.to_owned(), self.names.signer(Some(from)));
                if self.seen.len() < MEMO {
                    self.seen.push(entry);
                    self.seen.len() - 1
                } else {
                    let k = self.next;
                    self.seen[k] = entry;
                    self.next = (k + 1) % MEMO;
                    k
                }
            }
        };
        &self.seen[k].1
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
    use super::{MEMO, Names, SignerMemo, quoted};
    use herald_core::{SigilForm, SigningKey};
    use herald_verify::{Descriptions, Keyring, labelled_key_line};

    #[test]
    fn the_memo_names_as_names_do_past_its_size() {
        let mut keyring = Keyring::new();
        let keys: Vec<_> = (0..=MEMO as u8 * 2)
            .map(|n| SigningKey::from_seed(&[n; 32]).public_key())
            .collect();
        // Every other key labelled, the rest unknown (named by the sigil).
        let lines: String = keys
            .iter()
            .step_by(2)
            .enumerate()
            .map(|(n, key)| labelled_key_line(key, &format!("signer-{n}")) + "\n")
            .collect();
        keyring.parse(&lines, "test").unwrap();
        let names = Names {
            keyring: &keyring,
            described: Descriptions::new(),
        };
        let mut memo = SignerMemo::new(&names);
        let froms: Vec<String> = keys
            .iter()
            .map(|k| k.sigil(SigilForm::Long).to_string())
            .collect();
        for round in 0..3 {
            for (n, from) in froms.iter().enumerate().skip(round) {
                assert_eq!(memo.signer(Some(from)), names.signer(Some(from)), "{n}");
            }
            assert_eq!(memo.signer(Some("not a sigil")), "not a sigil");
            assert_eq!(memo.signer(None), "-");
        }
        assert!(memo.seen.len() <= MEMO);
    }

    #[test]
    fn quoted_cuts_long_text_and_drops_control_characters() {
        assert_eq!(quoted("MCP tool"), "\"MCP tool\"");
        assert_eq!(quoted("a\x1b[31mb\nc"), "\"a[31mbc\"");
        let long = "x".repeat(50);
        assert_eq!(quoted(&long), format!("\"{}…\"", "x".repeat(40)));
    }
}
