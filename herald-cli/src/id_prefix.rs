//! Envelope ids given on the command line by a unique prefix of their hex
//! form (ids by unique prefix): at least [`MIN_DIGITS`] hex digits,
//! case-insensitive; an ambiguous prefix is an error that lists every
//! match.

use herald_verify::hex;

use crate::error::CliError;

/// Shortest accepted prefix, in hex digits (32 bits: a collision among a
/// few thousand envelopes is unlikely, and an ambiguity is reported).
pub(crate) const MIN_DIGITS: usize = 8;

/// Hex digits of a full envelope id (32 bytes).
const FULL_DIGITS: usize = 64;

/// Most matches an ambiguity error lists.
const LISTED: usize = 10;

/// A prefix of an envelope id's lowercase hex form.
#[derive(Debug, Clone)]
pub(crate) struct IdPrefix {
    flag: String,
    digits: String,
}

impl IdPrefix {
    /// Parse `text`, given to `flag` (named in errors).
    pub(crate) fn parse(flag: &str, text: &str) -> Result<Self, CliError> {
        let ok_len = (MIN_DIGITS..=FULL_DIGITS).contains(&text.len());
        if !ok_len || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(CliError::new(format!(
                "{flag}: {text:?}: expected an envelope id, or a prefix of it: \
                 {MIN_DIGITS} to {FULL_DIGITS} hex digits"
            )));
        }
        Ok(Self {
            flag: flag.to_owned(),
            digits: text.to_ascii_lowercase(),
        })
    }

    /// Whether `id` starts with this prefix.
    pub(crate) fn matches(&self, id: &[u8]) -> bool {
        hex(id).starts_with(&self.digits)
    }

    /// The one candidate whose id starts with this prefix; candidates with
    /// the same id count once (the first is kept). `what` names where they
    /// were looked for (`in trace.cbor`).
    pub(crate) fn resolve<T>(
        &self,
        candidates: impl IntoIterator<Item = ([u8; 32], T)>,
        what: &str,
    ) -> Result<T, CliError> {
        let mut found: Vec<([u8; 32], T)> = Vec::new();
        for (id, item) in candidates {
            if self.matches(&id) && !found.iter().any(|(seen, _)| *seen == id) {
                found.push((id, item));
            }
        }
        let count = found.len();
        let mut found = found.into_iter();
        match (found.next(), count) {
            (Some((_, item)), 1) => Ok(item),
            (None, _) => Err(CliError::new(format!(
                "{}: no envelope {what} has an id starting with {}",
                self.flag, self.digits
            ))),
            (Some(first), _) => {
                let listed: Vec<String> = std::iter::once(first)
                    .chain(found)
                    .take(LISTED)
                    .map(|(id, _)| hex(&id))
                    .collect();
                let more = count.saturating_sub(LISTED);
                let tail = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                Err(CliError::new(format!(
                    "{}: {} is ambiguous: {count} envelopes {what} match: {}{tail}; give more digits",
                    self.flag,
                    self.digits,
                    listed.join(", ")
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_bounds_and_case() {
        assert!(IdPrefix::parse("ID", "abcdef1").is_err());
        assert!(IdPrefix::parse("ID", "abcdefgh").is_err());
        assert!(IdPrefix::parse("ID", &"a".repeat(65)).is_err());
        let p = IdPrefix::parse("ID", "ABCDEF12").unwrap();
        let mut id = [0u8; 32];
        id[..4].copy_from_slice(&[0xab, 0xcd, 0xef, 0x12]);
        assert!(p.matches(&id));
        id[3] = 0x13;
        assert!(!p.matches(&id));
    }

    #[test]
    fn resolve_unique_ambiguous_missing() {
        let a = [0x11u8; 32];
        let mut b = [0x11u8; 32];
        b[31] = 0;
        let p = IdPrefix::parse("ID", "11111111").unwrap();
        assert_eq!(p.resolve([(a, 1), (a, 2)], "in x").unwrap(), 1);
        let e = p.resolve([(a, 1), (b, 2)], "in x").unwrap_err().to_string();
        assert!(e.contains("ambiguous") && e.contains(&hex(&b)), "{e}");
        let q = IdPrefix::parse("ID", "22222222").unwrap();
        assert!(q.resolve([(a, 1)], "in x").is_err());
    }
}
