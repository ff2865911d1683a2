//! The scanner for secret-shaped payload values (docs/haven.md *Secrets*):
//! credentials must never enter a signed payload, which every reader of
//! the trace keeps forever. A hit names the rule and where the value is
//! (its path in the payload), never the value.
//!
//! Rules, each over every text value (and every map key's value):
//! - `private_key`: a PEM block `-----BEGIN … PRIVATE KEY-----`;
//! - `aws_access_key`: `AKIA` or `ASIA` and 16 upper-case letters or digits;
//! - `github_token`: `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` or `github_pat_`
//!   and at least 20 token characters;
//! - `api_key`: `sk-` and at least 20 token characters;
//! - `slack_token`: `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-` or `xoxs-` and at
//!   least 10 token characters;
//! - `jwt`: three base64url segments joined by dots, the first starting
//!   `eyJ` (a JSON header);
//! - `bearer`: `Bearer ` and at least 20 token characters;
//! - `secret_field`: a non-empty text under a key named `password`,
//!   `passwd`, `secret`, `client_secret`, `api_key`, `apikey`,
//!   `access_token`, `refresh_token`, `private_key` or `credentials`
//!   (case-insensitive, `-` read as `_`).
//!
//! Token characters: ASCII letters, digits, `_` and `-`.

use alloc::{format, string::String, vec::Vec};

use herald_core::cbor::ValueRef;

/// Deepest nesting scanned (the P1 decoder's own limit is 32).
const MAX_DEPTH: usize = 32;

/// Most hits reported for one payload.
const MAX_HITS: usize = 8;

/// Key names whose text value is a secret.
const SECRET_KEYS: [&str; 10] = [
    "password",
    "passwd",
    "secret",
    "client_secret",
    "api_key",
    "apikey",
    "access_token",
    "refresh_token",
    "private_key",
    "credentials",
];

/// Every secret-shaped value in `payload`: "RULE at PATH".
pub(crate) fn scan(payload: ValueRef<'_>) -> Vec<String> {
    let mut hits = Vec::new();
    walk(payload, &mut String::from("payload"), 0, &mut hits);
    hits
}

fn walk(v: ValueRef<'_>, path: &mut String, depth: usize, hits: &mut Vec<String>) {
    if depth > MAX_DEPTH || hits.len() >= MAX_HITS {
        return;
    }
    match v {
        ValueRef::Text(s) => {
            if let Some(rule) = shaped(s) {
                hits.push(format!("{rule} at {path}"));
            }
        }
        ValueRef::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, path, depth + 1, hits);
                path.truncate(len);
            }
        }
        ValueRef::Map(m) => {
            for (key, value) in m.iter() {
                let len = path.len();
                path.push('.');
                path.push_str(key);
                if secret_key(key) && value.as_text().is_some_and(|s| !s.is_empty()) {
                    if hits.len() < MAX_HITS {
                        hits.push(format!("secret_field at {path}"));
                    }
                } else {
                    walk(value, path, depth + 1, hits);
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace('-', "_");
    SECRET_KEYS.contains(&key.as_str())
}

/// The rule `s` matches, if any.
fn shaped(s: &str) -> Option<&'static str> {
    if let Some(begin) = s.find("-----BEGIN ")
        && s[begin..].contains("PRIVATE KEY-----")
    {
        return Some("private_key");
    }
    for (i, _) in s.char_indices() {
        let rest = &s[i..];
        // A token starts at a word boundary.
        if i > 0 && s.as_bytes().get(i - 1).is_some_and(|&b| token_byte(b)) {
            continue;
        }
        if let Some(rule) = token_at(rest) {
            return Some(rule);
        }
    }
    None
}

fn token_at(rest: &str) -> Option<&'static str> {
    for prefix in ["AKIA", "ASIA"] {
        if let Some(tail) = rest.strip_prefix(prefix) {
            let n = tail
                .bytes()
                .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
                .count();
            if n == 16 {
                return Some("aws_access_key");
            }
        }
    }
    let prefixed: [(&[&str], usize, &'static str); 4] = [
        (
            &["github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
            20,
            "github_token",
        ),
        (&["sk-"], 20, "api_key"),
        (
            &["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"],
            10,
            "slack_token",
        ),
        (&["Bearer "], 20, "bearer"),
    ];
    for (prefixes, min, rule) in prefixed {
        for p in prefixes {
            if let Some(tail) = rest.strip_prefix(p)
                && tail.bytes().take_while(|&b| token_byte(b)).count() >= min
            {
                return Some(rule);
            }
        }
    }
    if rest.starts_with("eyJ") && jwt(rest) {
        return Some("jwt");
    }
    None
}

/// Three base64url segments (each ≥ 2 characters) joined by dots.
fn jwt(s: &str) -> bool {
    let token: &str = s
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .next()
        .unwrap_or_default();
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| p.len() >= 2)
}

fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

#[cfg(test)]
mod tests {
    use super::shaped;

    #[test]
    fn each_rule_hits_its_shape_and_not_prose() {
        let cases = [
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
                Some("private_key"),
            ),
            ("key AKIAIOSFODNN7EXAMPLE here", Some("aws_access_key")),
            ("ghp_0123456789abcdefghij0123", Some("github_token")),
            ("sk-abcdefghijklmnopqrstuvwx", Some("api_key")),
            ("xoxb-1234567890-abc", Some("slack_token")),
            ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", Some("jwt")),
            (
                "Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
                Some("bearer"),
            ),
            ("ask-me-anything about the task", None),
            ("the desk-lamp is AKIA short", None),
            ("a summary of the objective", None),
            ("task-0123456789abcdefghijklmn", None),
        ];
        for (text, rule) in cases {
            assert_eq!(shaped(text), rule, "{text}");
        }
    }
}
