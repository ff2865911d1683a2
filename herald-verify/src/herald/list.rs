//! The Herald list (PROFILE P14 *Herald list*): the Heralds a verifier
//! trusts and how many of them must agree.
//!
//! ```text
//! # comments and blank lines are ignored
//! herald <sigil> ed25519 <64 hex> <log origin> [<URL>] [label]
//! threshold N          (once at most; default 1)
//! ```
//!
//! The URL (`http://` or `https://`) is where the Herald's certifications
//! are fetched; a label (as a keyring's, CLI.md) never contains `:`, so it
//! is never read as a URL. A Herald is its key: the same key listed twice
//! (say under its default and its long sigil) is one Herald, counted once,
//! and must name the same log both times. A short sigil cannot be a Herald
//! (P2).

use alloc::{
    borrow::ToOwned,
    format,
    string::{String, ToString},
    vec::Vec,
};
use core::fmt;
use std::path::Path;

use herald_core::{PublicKey, Sigil, SigilForm};
use herald_fs::{self as files, FileError};

use crate::keyring::is_label;

/// Largest Herald list read, in bytes.
pub const MAX_HERALD_LIST_BYTES: u64 = 1 << 20;

/// One listed Herald.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Herald {
    /// Its key (the sigil of its line names it).
    pub key: PublicKey,
    /// The sigil its (first) line gave.
    pub sigil: Sigil,
    /// The origin of its log (a `log` line of the verifier's tlog-policy
    /// names the same origin).
    pub origin: String,
    /// Where its certifications are fetched (`GET /v1/certifications/{sigil}`).
    pub url: Option<String>,
    /// A name for people.
    pub label: Option<String>,
    /// The line that listed it first.
    pub line: usize,
}

/// A parsed Herald list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeraldList {
    heralds: Vec<Herald>,
    threshold: usize,
}

/// A Herald list that cannot be used; commands exit 2 on it.
#[derive(Debug)]
#[non_exhaustive]
pub enum HeraldListError {
    /// The file could not be read (not a regular file, too large, I/O).
    File(FileError),
    /// A line breaks a rule of the format. `line` counts from 1 (0: the
    /// whole list).
    Line {
        /// Where (a path, or a name the caller gave).
        origin: String,
        /// The line.
        line: usize,
        /// The rule broken.
        rule: String,
    },
}

impl fmt::Display for HeraldListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => write!(f, "{e}"),
            Self::Line {
                origin,
                line: 0,
                rule,
            } => write!(f, "{origin}: {rule} (PROFILE P14)"),
            Self::Line { origin, line, rule } => {
                write!(f, "{origin}:{line}: {rule} (PROFILE P14)")
            }
        }
    }
}

impl std::error::Error for HeraldListError {}

const SHAPE: &str = "expected `herald <sigil> ed25519 <64 hex> <log origin> [<URL>] [label]`";

impl HeraldList {
    /// Parse a Herald list; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, HeraldListError> {
        let err = |line, rule: &str| HeraldListError::Line {
            origin: origin.to_owned(),
            line,
            rule: rule.to_owned(),
        };
        let mut heralds: Vec<Herald> = Vec::new();
        let mut threshold: Option<(usize, usize)> = None;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let words: Vec<&str> = raw.split_ascii_whitespace().collect();
            match words.as_slice() {
                [] => {}
                [first, ..] if first.starts_with('#') => {}
                ["threshold", rest @ ..] => {
                    if threshold.is_some() {
                        return Err(err(n, "a second threshold line"));
                    }
                    let [k] = rest else {
                        return Err(err(n, "expected `threshold N`"));
                    };
                    let k = parse_count(k)
                        .ok_or_else(|| err(n, "the threshold is a decimal number from 1"))?;
                    threshold = Some((k, n));
                }
                ["herald", rest @ ..] => {
                    let h = parse_herald(n, rest).map_err(|rule| err(n, &rule))?;
                    match heralds.iter().find(|o| o.key == h.key) {
                        Some(o) if o.origin != h.origin => {
                            return Err(err(
                                n,
                                &format!(
                                    "the key of line {} again, with another log origin",
                                    o.line
                                ),
                            ));
                        }
                        // One key, one Herald, however many forms name it.
                        Some(_) => {}
                        None => heralds.push(h),
                    }
                }
                [other, ..] => {
                    return Err(err(
                        n,
                        &format!("unknown keyword {other:?} (herald or threshold)"),
                    ));
                }
            }
        }
        if heralds.is_empty() {
            return Err(err(0, "no herald line"));
        }
        let (threshold, line) = threshold.unwrap_or((1, 0));
        if threshold > heralds.len() {
            return Err(err(
                line,
                &format!(
                    "threshold {threshold} is more than the {} distinct Heralds listed",
                    heralds.len()
                ),
            ));
        }
        Ok(Self { heralds, threshold })
    }

    /// Read and parse the Herald list at `path` (a regular file of at most
    /// [`MAX_HERALD_LIST_BYTES`]).
    pub fn load(path: &Path) -> Result<Self, HeraldListError> {
        let bytes = files::read_capped(path, MAX_HERALD_LIST_BYTES, "Herald list")
            .map_err(HeraldListError::File)?;
        let name = path.display().to_string();
        let text = String::from_utf8(bytes).map_err(|_| HeraldListError::Line {
            origin: name.clone(),
            line: 0,
            rule: "not UTF-8 text".to_owned(),
        })?;
        Self::parse(&text, &name)
    }

    /// The distinct Heralds, in list order.
    pub fn heralds(&self) -> &[Herald] {
        &self.heralds
    }

    /// How many distinct Heralds must certify a claim.
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// The listed Herald whose key `sigil` names (any form).
    pub fn herald_named(&self, sigil: &Sigil) -> Option<&Herald> {
        self.heralds
            .iter()
            .find(|h| sigil.names_key(h.key.as_bytes()))
    }
}

fn parse_count(s: &str) -> Option<usize> {
    let ok = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0');
    if ok {
        s.parse().ok().filter(|&k| k >= 1)
    } else {
        None
    }
}

/// The words after `herald`, or the rule they break.
fn parse_herald(line: usize, words: &[&str]) -> Result<Herald, String> {
    let (sigil, alg, hex, origin, rest) = match words {
        [s, a, h, o, rest @ ..] if rest.len() <= 2 => (*s, *a, *h, *o, rest),
        _ => return Err(SHAPE.to_owned()),
    };
    let sigil = Sigil::parse(sigil).map_err(|e| format!("{e}"))?;
    if sigil.is_reserved() {
        return Err("a reserved sigil never signs, so is never a Herald (P2)".to_owned());
    }
    if sigil.form() == Some(SigilForm::Short) {
        return Err("a short sigil cannot be a Herald (P2)".to_owned());
    }
    if alg != "ed25519" {
        return Err("only ed25519 keys are supported".to_owned());
    }
    let bytes = decode_hex32(hex).ok_or("the key must be 64 lowercase hex characters")?;
    let key = PublicKey::from_bytes(&bytes).map_err(|e| format!("{e}"))?;
    if !sigil.names_key(key.as_bytes()) {
        return Err("the sigil is not this key's (P2)".to_owned());
    }
    if origin.chars().any(char::is_control) {
        return Err("the log origin holds a control character".to_owned());
    }
    let is_url = |w: &str| w.starts_with("http://") || w.starts_with("https://");
    let (url, label) = match rest {
        [] => (None, None),
        [u] if is_url(u) => (Some(*u), None),
        [l] => (None, Some(*l)),
        [u, l] if is_url(u) => (Some(*u), Some(*l)),
        _ => {
            return Err(
                "after the log origin: an http:// or https:// URL, then a label".to_owned(),
            );
        }
    };
    if url.is_some_and(|u| {
        u.strip_prefix("https://")
            .or_else(|| u.strip_prefix("http://"))
            .is_none_or(|host| host.is_empty() || host.starts_with('/'))
    }) {
        return Err("the URL names no host".to_owned());
    }
    if let Some(l) = label
        && !is_label(l)
    {
        return Err(
            "a label is 1 to 64 ASCII letters, digits, `.`, `_`, `-`, `@` or `+` (never `:`)"
                .to_owned(),
        );
    }
    Ok(Herald {
        key,
        sigil,
        origin: origin.to_owned(),
        url: url.map(str::to_owned),
        label: label.map(str::to_owned),
        line,
    })
}

fn decode_hex32(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(s.as_bytes().chunks_exact(2)) {
        let pair = core::str::from_utf8(pair).ok()?;
        *o = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}
