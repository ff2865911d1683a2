//! Handles (PROFILE.md P12 `handle`, P15): `acme.com` (a DNS name) or
//! `alice@acme.com` (`name@` a DNS name), the names DNS resolution looks
//! up at `_herald.<domain>` and `<name>._herald.<domain>`.

use core::fmt;

/// Longest handle, in bytes: its record name `<name>._herald.<domain>.`
/// must fit in a DNS name's 253 characters.
pub const MAX_HANDLE_LEN: usize = 244;

/// Why a text is not a handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandleError {
    /// Empty, or longer than [`MAX_HANDLE_LEN`].
    Length,
    /// A label is empty or longer than 63 bytes, holds a byte other than
    /// an ASCII letter, digit or `-` (`_` too in the name before `@`), or
    /// starts or ends with `-`.
    Label,
    /// More than one `@`, or nothing before it.
    At,
}

impl fmt::Display for HandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Length => "a handle is 1 to 244 bytes",
            Self::Label => {
                "a handle's labels are 1 to 63 ASCII letters, digits or '-', not starting or ending with '-'"
            }
            Self::At => "a handle is a DNS name or name@ a DNS name, with one '@'",
        })
    }
}

impl core::error::Error for HandleError {}

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

/// Check `text` as a handle (P12, P15): a DNS name (labels joined by
/// `.`, no trailing dot), or `name@` a DNS name where `name` is one or
/// more labels. Returns where the domain starts (0 without a name).
pub fn check(text: &str) -> Result<usize, HandleError> {
    if text.is_empty() || text.len() > MAX_HANDLE_LEN {
        return Err(HandleError::Length);
    }
    let (name, domain) = match text.split_once('@') {
        Some((name, domain)) if !name.is_empty() && !domain.contains('@') => (Some(name), domain),
        Some(_) => return Err(HandleError::At),
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
    Ok(name.map_or(0, |n| n.len() + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles() {
        assert_eq!(check("acme.com"), Ok(0));
        assert_eq!(check("alice@acme.com"), Ok(6));
        assert_eq!(check("first_last.x@Acme.COM"), Ok(13));
        assert_eq!(check("localhost"), Ok(0));
        for (text, err) in [
            ("", HandleError::Length),
            ("@acme.com", HandleError::At),
            ("a@b@acme.com", HandleError::At),
            ("a..b.com", HandleError::Label),
            ("-a.com", HandleError::Label),
            ("a_b.com", HandleError::Label),
            ("acme.com.", HandleError::Label),
            ("al ice@acme.com", HandleError::Label),
            ("sigil:abc", HandleError::Label),
        ] {
            assert_eq!(check(text), Err(err), "{text}");
        }
        // "a.a.…a": 244 bytes pass, 246 do not.
        let mut buf = [b'a'; 246];
        for b in buf.iter_mut().skip(1).step_by(2) {
            *b = b'.';
        }
        let text = |n| core::str::from_utf8(&buf[..n]).unwrap_or_default();
        assert_eq!(check(text(243)), Ok(0));
        assert_eq!(check(text(245)), Err(HandleError::Length));
    }
}
