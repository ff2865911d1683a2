//! Handles (PROFILE.md P15, P12 `handle`): `acme.com` or `alice@acme.com`,
//! and the DNS name their records live at.

use core::fmt;
use core::str::FromStr;

/// Longest handle, in bytes (a DNS name is at most 253 characters; the
/// `_herald.` label it is looked up under must still fit).
pub const MAX_HANDLE_LEN: usize = 240;

/// A handle: a DNS name (`acme.com`, the domain's own sigils) or `name@` a
/// DNS name (`alice@acme.com`). Stored in lower case (DNS names compare
/// without case).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle {
    /// The whole handle, lower case.
    text: String,
    /// Where the domain starts in `text` (0 without a name).
    domain_at: usize,
}

/// Why a text is not a handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandleError {
    /// Empty, or longer than [`MAX_HANDLE_LEN`].
    Length,
    /// A label is empty, longer than 63 bytes, or holds a byte other than
    /// an ASCII letter, digit or `-` (`_` too in the name part), or starts
    /// or ends with `-`.
    Label,
    /// The domain is a single label (`localhost`): a handle names a domain
    /// someone owns.
    SingleLabel,
    /// More than one `@`, or nothing before it.
    At,
}

impl fmt::Display for HandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Length => "a handle is 1 to 240 bytes",
            Self::Label => {
                "a handle's labels are 1 to 63 ASCII letters, digits or '-', not starting or ending with '-'"
            }
            Self::SingleLabel => "a handle's domain has at least two labels (name.tld)",
            Self::At => "a handle is a domain or name@domain, with one '@'",
        })
    }
}

impl std::error::Error for HandleError {}

/// Whether `label` is a DNS label as handles allow it (`name_part`: the
/// part before `@`, where `_` is allowed too).
fn label_ok(label: &str, name_part: bool) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && !label.starts_with('-')
        && !label.ends_with('-')
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || (name_part && b == b'_'))
}

impl Handle {
    /// Parse `text` strictly: a DNS name of two labels or more, or
    /// `name@` such a name, where `name` is one or more labels.
    pub fn parse(text: &str) -> Result<Self, HandleError> {
        if text.is_empty() || text.len() > MAX_HANDLE_LEN {
            return Err(HandleError::Length);
        }
        let (name, domain) = match text.split_once('@') {
            Some((name, domain)) => {
                if name.is_empty() || domain.contains('@') {
                    return Err(HandleError::At);
                }
                (Some(name), domain)
            }
            None => (None, text),
        };
        if let Some(name) = name
            && !name.split('.').all(|l| label_ok(l, true))
        {
            return Err(HandleError::Label);
        }
        if !domain.split('.').all(|l| label_ok(l, false)) {
            return Err(HandleError::Label);
        }
        if !domain.contains('.') {
            return Err(HandleError::SingleLabel);
        }
        Ok(Self {
            text: text.to_ascii_lowercase(),
            domain_at: name.map_or(0, |n| n.len() + 1),
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
        for (text, err) in [
            ("", HandleError::Length),
            ("localhost", HandleError::SingleLabel),
            ("@acme.com", HandleError::At),
            ("a@b@acme.com", HandleError::At),
            ("a..b.com", HandleError::Label),
            ("-a.com", HandleError::Label),
            ("a_b.com", HandleError::Label),
            ("acme.com.", HandleError::Label),
            ("al ice@acme.com", HandleError::Label),
            ("sigil:abc", HandleError::Label),
        ] {
            assert_eq!(Handle::parse(text), Err(err), "{text}");
        }
        assert!(Handle::parse(&"a.".repeat(121)).is_err());
        assert!(Handle::parse("first_last@acme.com").is_ok());
    }
}
