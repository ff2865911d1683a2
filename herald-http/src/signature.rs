//! HTTP Message Signatures (RFC 9421) with Ed25519, as CONDUIT.md *Who may
//! read what* (revision 3) uses them: a client proves it holds a sigil's
//! key by signing its request,
//!
//! ```text
//! Signature-Input: herald=("@method" "@target-uri");created=<unix>;keyid="<sigil>";alg="ed25519"
//! Signature: herald=:<base64 of the 64-byte Ed25519 signature>:
//! ```
//!
//! over the signature base of RFC 9421 §2.5. One rule in one place: the
//! client signs with [`sign`] (or [`crate::client::Request::signed`]), the
//! server reads the two fields with [`parse`], bounded before any work
//! ([`MAX_FIELD`], [`MAX_MEMBERS`]), checks [`Presented::is_herald_form`]
//! and verifies with [`Presented::verify`]. Which keys may sign for the
//! sigil, how old `created` may be and the replay window are the server's
//! (herald-conduit).
//!
//! The parser reads the subset of RFC 8941 dictionaries these fields take:
//! members `label=inner-list;params` with string items and integer or
//! string parameters (`Signature-Input`), and `label=:byte-sequence:`
//! (`Signature`). Anything else in the member that is looked for makes it
//! [`SignatureError::Malformed`]; other members are skipped, at most
//! [`MAX_MEMBERS`] of them.

use std::borrow::Cow;
use std::fmt;

use data_encoding::BASE64;
use herald_core::{PublicKey, SigningKey};

/// The label of HERALD's signature (CONDUIT.md).
pub const LABEL: &str = "herald";
/// The `alg` parameter (RFC 9421 §6.2.2, Ed25519).
pub const ALG: &str = "ed25519";
/// The components a HERALD read signs, in order (CONDUIT.md).
pub const COMPONENTS: [&str; 2] = ["@method", "@target-uri"];
/// Bytes of all `Signature-Input` (or all `Signature`) field lines read at
/// most: a longer field is refused unread.
pub const MAX_FIELD: usize = 2048;
/// Dictionary members looked at most in one field.
pub const MAX_MEMBERS: usize = 8;
/// Components of one signature read at most.
const MAX_COMPONENTS: usize = 16;

/// Why a request's signature fields cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignatureError {
    /// No `Signature-Input` or no `Signature` field.
    Missing,
    /// A field longer than [`MAX_FIELD`], or more than [`MAX_MEMBERS`]
    /// members before the label.
    TooLarge,
    /// No member with the label in one of the fields.
    NoLabel,
    /// The member with the label does not parse; what is wrong.
    Malformed(&'static str),
}

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => write!(f, "no Signature-Input and Signature fields"),
            Self::TooLarge => write!(
                f,
                "a signature field longer than {MAX_FIELD} bytes or with more than {MAX_MEMBERS} members"
            ),
            Self::NoLabel => write!(f, "no signature with the expected label"),
            Self::Malformed(why) => write!(f, "malformed signature field: {why}"),
        }
    }
}

impl std::error::Error for SignatureError {}

/// One parameter of a signature (RFC 9421 §2.3), as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Param {
    Integer(u64),
    Text(String),
}

/// A signature found in a request: its covered components, parameters and
/// value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Presented {
    components: Vec<String>,
    params: Vec<(String, Param)>,
    signature: [u8; 64],
}

impl Presented {
    /// The covered component identifiers, in order (without quotes).
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.components.iter().map(String::as_str)
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.params.iter().find_map(|(n, v)| match v {
            Param::Text(t) if n == name => Some(t.as_str()),
            _ => None,
        })
    }

    /// The `keyid` parameter.
    pub fn keyid(&self) -> Option<&str> {
        self.text("keyid")
    }

    /// The `alg` parameter.
    pub fn alg(&self) -> Option<&str> {
        self.text("alg")
    }

    /// The `created` parameter, Unix seconds.
    pub fn created(&self) -> Option<u64> {
        self.params.iter().find_map(|(n, v)| match v {
            Param::Integer(i) if n == "created" => Some(*i),
            _ => None,
        })
    }

    /// The signature value.
    pub fn signature(&self) -> &[u8; 64] {
        &self.signature
    }

    /// Whether it is the form CONDUIT.md gives: exactly [`COMPONENTS`],
    /// and `created`, `keyid` and `alg="ed25519"` each once, nothing else.
    pub fn is_herald_form(&self) -> bool {
        let once = |name: &str| self.params.iter().filter(|(n, _)| n == name).count() == 1;
        self.components.iter().map(String::as_str).eq(COMPONENTS)
            && self.params.len() == 3
            && once("created")
            && once("keyid")
            && once("alg")
            && self.created().is_some()
            && self.keyid().is_some()
            && self.alg() == Some(ALG)
    }

    /// The `@signature-params` value (RFC 9421 §2.3): the inner list and
    /// its parameters serialized as RFC 8941 does, in the order sent.
    pub fn signature_params(&self) -> String {
        let mut out = String::new();
        self.push_signature_params(&mut out);
        out
    }

    /// [`Presented::signature_params`] appended to `out`.
    fn push_signature_params(&self, out: &mut String) {
        out.push('(');
        for (i, c) in self.components.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            push_string(out, c);
        }
        out.push(')');
        for (name, value) in &self.params {
            out.push(';');
            out.push_str(name);
            out.push('=');
            match value {
                Param::Integer(i) => {
                    use std::fmt::Write as _;
                    let _ = write!(out, "{i}");
                }
                Param::Text(t) => push_string(out, t),
            }
        }
    }

    /// The signature base (RFC 9421 §2.5) over the components' values
    /// `values` (in the order of [`Presented::components`]), built in one
    /// buffer; `None` when there are not as many values as components.
    pub fn base_of(&self, values: &[&str]) -> Option<String> {
        if values.len() != self.components.len() {
            return None;
        }
        let mut out = String::with_capacity(
            64 + values.iter().map(|v| v.len() + 24).sum::<usize>() + self.params.len() * 32,
        );
        for (name, value) in self.components.iter().zip(values) {
            push_string(&mut out, name);
            out.push_str(": ");
            out.push_str(value);
            out.push('\n');
        }
        out.push_str("\"@signature-params\": ");
        self.push_signature_params(&mut out);
        Some(out)
    }

    /// The signature base of this HERALD-form signature for a request
    /// `method` `target_uri` (RFC 9421 §2.2.1, §2.2.2, §2.5): what
    /// [`Presented::verify`] verifies the signature over, for a caller that
    /// verifies it otherwise (with [`herald_core::PublicKey::prepare`] and
    /// a batch); `None` when the signature is not of the HERALD form.
    pub fn base(&self, method: &str, target_uri: &str) -> Option<String> {
        if !self.is_herald_form() {
            return None;
        }
        self.base_of(&[method, target_uri])
    }

    /// Whether the signature verifies with `key` over the signature base
    /// of the components' values `values` (in the order of
    /// [`Presented::components`]).
    pub fn verify_values(&self, key: &PublicKey, values: &[&str]) -> bool {
        self.base_of(values)
            .is_some_and(|base| key.verify(base.as_bytes(), &self.signature).is_ok())
    }

    /// Whether this HERALD-form signature verifies with `key` for a
    /// request `method` `target_uri` (RFC 9421 §2.2.1, §2.2.2).
    pub fn verify(&self, key: &PublicKey, method: &str, target_uri: &str) -> bool {
        self.base(method, target_uri)
            .is_some_and(|base| key.verify(base.as_bytes(), &self.signature).is_ok())
    }
}

/// An sf-string (RFC 8941 §3.3.3): quoted, `"` and `\` escaped.
fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// The signature base (RFC 9421 §2.5) of the covered components `covered`
/// (identifier without quotes, value) and the `@signature-params` value
/// `params`: one line per component, then the parameters line, no
/// trailing newline.
pub fn signature_base(covered: &[(&str, &str)], params: &str) -> String {
    let mut out = String::new();
    for (name, value) in covered {
        push_string(&mut out, name);
        out.push_str(": ");
        out.push_str(value);
        out.push('\n');
    }
    out.push_str("\"@signature-params\": ");
    out.push_str(params);
    out
}

/// `@target-uri` of a request (RFC 9421 §2.2.2) made to `authority` (the
/// `Host`) with request target `target` (path and query), over plain
/// HTTP.
pub fn target_uri(authority: &str, target: &str) -> String {
    format!("http://{authority}{target}")
}

/// The two fields that sign a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signed {
    /// `Signature-Input`.
    pub input: String,
    /// `Signature`.
    pub signature: String,
}

/// Sign the request `method` `target_uri` with `key` for `keyid` (a
/// sigil) at `created`, in the form CONDUIT.md gives.
pub fn sign(key: &SigningKey, keyid: &str, method: &str, target_uri: &str, created: u64) -> Signed {
    let presented = Presented {
        components: COMPONENTS.iter().map(|c| (*c).to_owned()).collect(),
        params: vec![
            ("created".into(), Param::Integer(created)),
            ("keyid".into(), Param::Text(keyid.to_owned())),
            ("alg".into(), Param::Text(ALG.to_owned())),
        ],
        signature: [0; 64],
    };
    let params = presented.signature_params();
    let base = signature_base(
        &[(COMPONENTS[0], method), (COMPONENTS[1], target_uri)],
        &params,
    );
    let signature = key.sign(base.as_bytes());
    Signed {
        input: format!("{LABEL}={params}"),
        signature: format!("{LABEL}=:{}:", BASE64.encode(&signature)),
    }
}

/// The field lines of one field joined as RFC 9110 §5.3 combines them,
/// refused past [`MAX_FIELD`] bytes; one line is used as it is.
fn combined<'a>(lines: &[&'a [u8]]) -> Result<Cow<'a, str>, SignatureError> {
    let text =
        |l: &'a [u8]| std::str::from_utf8(l).map_err(|_| SignatureError::Malformed("not text"));
    let total = lines
        .iter()
        .map(|l| l.len())
        .fold(0usize, |a, n| a.saturating_add(n).saturating_add(2));
    if total > MAX_FIELD + 2 {
        return Err(SignatureError::TooLarge);
    }
    match lines {
        [] => Err(SignatureError::Missing),
        [one] => text(one).map(Cow::Borrowed),
        _ => {
            let mut out = String::new();
            for (i, l) in lines.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(text(l)?);
            }
            Ok(Cow::Owned(out))
        }
    }
}

/// The value of the member `label` of the dictionary `field`: members are
/// split at commas outside strings and parentheses; at most
/// [`MAX_MEMBERS`] are looked at.
fn member<'a>(field: &'a str, label: &str) -> Result<&'a str, SignatureError> {
    let bytes = field.as_bytes();
    let (mut start, mut depth, mut quoted, mut escaped) = (0usize, 0usize, false, false);
    let mut members = 0usize;
    let mut check = |m: &'a str| -> Result<Option<&'a str>, SignatureError> {
        members += 1;
        if members > MAX_MEMBERS {
            return Err(SignatureError::TooLarge);
        }
        let m = m.trim_matches([' ', '\t']);
        Ok(m.strip_prefix(label)
            .and_then(|rest| rest.strip_prefix('=')))
    };
    for (i, &b) in bytes.iter().enumerate() {
        if quoted {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => quoted = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => quoted = true,
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                if let Some(v) = check(field.get(start..i).unwrap_or_default())? {
                    return Ok(v);
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    check(field.get(start..).unwrap_or_default())?.ok_or(SignatureError::NoLabel)
}

/// A small reader of one member's value.
struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// An sf-string: printable ASCII, `\"` and `\\` the only escapes.
    fn string(&mut self) -> Result<String, SignatureError> {
        if !self.eat(b'"') {
            return Err(SignatureError::Malformed("expected a string"));
        }
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(SignatureError::Malformed("an unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(c @ (b'"' | b'\\')) => out.push(char::from(c)),
                        _ => return Err(SignatureError::Malformed("a bad escape in a string")),
                    }
                    self.pos += 1;
                }
                Some(c @ 0x20..=0x7e) => {
                    out.push(char::from(c));
                    self.pos += 1;
                }
                Some(_) => return Err(SignatureError::Malformed("a control byte in a string")),
            }
        }
    }

    /// A parameter key (RFC 8941 §3.1.2).
    fn key(&mut self) -> Result<String, SignatureError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            let ok = c.is_ascii_lowercase()
                || c == b'*'
                || (self.pos > start && (c.is_ascii_digit() || matches!(c, b'_' | b'-' | b'.')));
            if !ok {
                break;
            }
            self.pos += 1;
        }
        match std::str::from_utf8(self.s.get(start..self.pos).unwrap_or_default()) {
            Ok(k) if !k.is_empty() => Ok(k.to_owned()),
            _ => Err(SignatureError::Malformed("expected a parameter name")),
        }
    }

    /// A non-negative sf-integer (at most 15 digits, RFC 8941 §3.3.1).
    fn integer(&mut self) -> Result<u64, SignatureError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) && self.pos - start < 15 {
            self.pos += 1;
        }
        if self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err(SignatureError::Malformed(
                "an integer longer than 15 digits",
            ));
        }
        std::str::from_utf8(self.s.get(start..self.pos).unwrap_or_default())
            .ok()
            .and_then(|d| d.parse().ok())
            .ok_or(SignatureError::Malformed("expected an integer"))
    }
}

/// The signature `label` of a request from its `Signature-Input` and
/// `Signature` field lines (RFC 9421 §4.1, §4.2), bounded: fields longer
/// than [`MAX_FIELD`] or with too many members are refused unread.
pub fn parse(
    label: &str,
    inputs: &[&[u8]],
    signatures: &[&[u8]],
) -> Result<Presented, SignatureError> {
    let (input, signature) = (combined(inputs)?, combined(signatures)?);
    let input = member(&input, label)?;
    let value = member(&signature, label)?;
    let b64 = value
        .strip_prefix(':')
        .and_then(|v| v.strip_suffix(':'))
        .ok_or(SignatureError::Malformed(
            "the signature is not a byte sequence",
        ))?;
    let signature: [u8; 64] = BASE64
        .decode(b64.as_bytes())
        .ok()
        .and_then(|v| v.try_into().ok())
        .ok_or(SignatureError::Malformed(
            "the signature is not 64 bytes of base64",
        ))?;
    let mut c = Cursor {
        s: input.as_bytes(),
        pos: 0,
    };
    if !c.eat(b'(') {
        return Err(SignatureError::Malformed(
            "the covered components are not a list",
        ));
    }
    let mut components = Vec::new();
    loop {
        while c.eat(b' ') {}
        if c.eat(b')') {
            break;
        }
        if components.len() == MAX_COMPONENTS {
            return Err(SignatureError::Malformed("too many covered components"));
        }
        components.push(c.string()?);
        if !matches!(c.peek(), Some(b' ' | b')')) {
            return Err(SignatureError::Malformed(
                "components not separated by spaces",
            ));
        }
    }
    let mut params = Vec::new();
    while c.eat(b';') {
        let name = c.key()?;
        if !c.eat(b'=') {
            return Err(SignatureError::Malformed("a parameter without a value"));
        }
        let value = if c.peek() == Some(b'"') {
            Param::Text(c.string()?)
        } else {
            Param::Integer(c.integer()?)
        };
        if params.len() == MAX_COMPONENTS {
            return Err(SignatureError::Malformed("too many parameters"));
        }
        params.push((name, value));
    }
    if c.peek().is_some() {
        return Err(SignatureError::Malformed(
            "trailing bytes after the parameters",
        ));
    }
    Ok(Presented {
        components,
        params,
        signature,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn key() -> SigningKey {
        SigningKey::from_seed(&[7; 32])
    }

    #[test]
    fn a_signed_request_verifies_and_nothing_else_does() {
        let k = key();
        let uri = target_uri("127.0.0.1:8470", "/v1/inbox/x?after=0");
        let s = sign(&k, "sigil:abc", "GET", &uri, 1_700_000_000);
        assert_eq!(
            s.input,
            r#"herald=("@method" "@target-uri");created=1700000000;keyid="sigil:abc";alg="ed25519""#
        );
        let p = parse(LABEL, &[s.input.as_bytes()], &[s.signature.as_bytes()]).unwrap();
        assert!(p.is_herald_form());
        assert_eq!(p.keyid(), Some("sigil:abc"));
        assert_eq!(p.created(), Some(1_700_000_000));
        assert!(p.verify(&k.public_key(), "GET", &uri));
        assert!(!p.verify(&k.public_key(), "POST", &uri));
        let other = target_uri("127.0.0.1:8470", "/v1/inbox/y?after=0");
        assert!(!p.verify(&k.public_key(), "GET", &other));
        let stranger = SigningKey::from_seed(&[8; 32]).public_key();
        assert!(!p.verify(&stranger, "GET", &uri));
    }

    #[test]
    fn other_members_are_skipped_within_bounds() {
        let k = key();
        let s = sign(&k, "sigil:abc", "GET", "http://h/", 5);
        let input = format!(r#"a=("x");created=1, {}"#, s.input);
        let sig = format!("a=:AAAA:, {}", s.signature);
        let p = parse(LABEL, &[input.as_bytes()], &[sig.as_bytes()]).unwrap();
        assert!(p.verify(&k.public_key(), "GET", "http://h/"));
        let many = format!("{}{}", "a=:AAAA:, ".repeat(MAX_MEMBERS), s.signature);
        assert_eq!(
            parse(LABEL, &[s.input.as_bytes()], &[many.as_bytes()]),
            Err(SignatureError::TooLarge)
        );
        let long = "x".repeat(MAX_FIELD + 1);
        assert_eq!(
            parse(LABEL, &[long.as_bytes()], &[s.signature.as_bytes()]),
            Err(SignatureError::TooLarge)
        );
        assert_eq!(
            parse(LABEL, &[], &[s.signature.as_bytes()]),
            Err(SignatureError::Missing)
        );
        assert_eq!(
            parse("other", &[s.input.as_bytes()], &[s.signature.as_bytes()]),
            Err(SignatureError::NoLabel)
        );
    }

    #[test]
    fn malformed_members_are_refused() {
        let sig = format!("herald=:{}:", BASE64.encode(&[0u8; 64]));
        for input in [
            r#"herald="@method""#,
            r#"herald=("@method" "@target-uri";created=1"#,
            r#"herald=("@method");created=x"#,
            r#"herald=("@method");created=1234567890123456"#,
            r#"herald=("@method");created"#,
            r#"herald=("@method");keyid="a\b""#,
            r#"herald=("@method")junk"#,
        ] {
            assert!(
                matches!(
                    parse(LABEL, &[input.as_bytes()], &[sig.as_bytes()]),
                    Err(SignatureError::Malformed(_))
                ),
                "{input}"
            );
        }
        let ok = r#"herald=("@method");created=1"#;
        for bad in ["herald=:AAAA:", "herald=AAAA", "herald=:!!:"] {
            assert!(matches!(
                parse(LABEL, &[ok.as_bytes()], &[bad.as_bytes()]),
                Err(SignatureError::Malformed(_))
            ));
        }
        // Parsed, but not the form CONDUIT.md gives.
        for input in [
            r#"herald=("@method");created=1;keyid="k";alg="ed25519""#,
            r#"herald=("@method" "@target-uri");created=1;keyid="k""#,
            r#"herald=("@method" "@target-uri");created=1;keyid="k";alg="rsa-v1_5-sha256""#,
            r#"herald=("@method" "@target-uri");created=1;keyid="k";alg="ed25519";nonce="n""#,
            r#"herald=("@method" "@target-uri");created=1;created=2;alg="ed25519""#,
        ] {
            let p = parse(LABEL, &[input.as_bytes()], &[sig.as_bytes()]).unwrap();
            assert!(!p.is_herald_form(), "{input}");
        }
    }
}
