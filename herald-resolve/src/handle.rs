//! Handles (PROFILE.md P15, P12 `handle`): `acme.com` or `alice@acme.com`,
//! and the DNS name their records live at.

use core::fmt;
use core::str::FromStr;

use herald_core::handle::{self, HandleError};

/// A handle (PROFILE.md P12, P15): a DNS name (`acme.com`, the domain's
/// own sigils) or `name@` a DNS name (`alice@acme.com`), checked by
/// [`herald_core::handle::check`]. Stored in lower case (DNS names compare
/// without case).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle {
    /// The whole handle, lower case.
    text: String,
    /// Where the domain starts in `text` (0 without a name).
    domain_at: usize,
}

impl Handle {
    /// Parse `text` strictly (P12): a DNS name, or `name@` a DNS name.
    pub fn parse(text: &str) -> Result<Self, HandleError> {
        let domain_at = handle::check(text)?;
        Ok(Self {
            text: text.to_ascii_lowercase(),
            domain_at,
        })
    }

    /// The handle as text (lower case).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The name before `@`, if any.
    pub fn name(&self) -> Option<&str> {
        self.text.get(..self.domain_at.checked_sub(1)?)
    }

    /// The domain.
    pub fn domain(&self) -> &str {
        self.text.get(self.domain_at..).unwrap_or_default()
    }

    /// The DNS name whose TXT records name this handle's sigils (P15):
    /// `_herald.<domain>` or `<name>._herald.<domain>`, fully qualified.
    pub fn record_name(&self) -> String {
        match self.name() {
            Some(name) => format!("{name}._herald.{}.", self.domain()),
            None => format!("_herald.{}.", self.domain()),
        }
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Handle {
    type Err = HandleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn record_names() {
        let h = Handle::parse("Alice@Acme.COM").unwrap();
        assert_eq!(h.as_str(), "alice@acme.com");
        assert_eq!(h.name(), Some("alice"));
        assert_eq!(h.domain(), "acme.com");
        assert_eq!(h.record_name(), "alice._herald.acme.com.");
        let d = Handle::parse("acme.com").unwrap();
        assert_eq!(d.name(), None);
        assert_eq!(d.record_name(), "_herald.acme.com.");
    }

    #[test]
    fn refusals() {
        for text in ["", "@acme.com", "a..b.com", "acme.com.", "sigil:abc"] {
            assert!(Handle::parse(text).is_err(), "{text}");
        }
    }
}
