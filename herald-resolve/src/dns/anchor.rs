//! DNSSEC trust anchors the caller gives (PROFILE.md P15: a DNS answer is
//! reported `dnssec: true` only when it was validated up to one of them).

use core::fmt;
use std::sync::Arc;

use hickory_resolver::proto::dnssec::{Algorithm, PublicKeyBuf, TrustAnchors as Anchors};
use hickory_resolver::proto::rr::{LowerName, Name};

/// Most trust anchor records read.
pub const MAX_TRUST_ANCHORS: usize = 64;

/// The zones a DNS channel validates, and the keys it validates them with:
/// DNSKEY records in zone-file form (`signed.example. DNSKEY 257 3 13
/// <base64>`, as `keymgr ZONE dnskey` or `dig DNSKEY` print them), or the
/// root zone's keys built into the resolver ([`TrustAnchors::root`]).
/// Answers for names under an anchor must validate (else an error);
/// answers for other names are not validated (`dnssec: false`).
#[derive(Clone)]
pub struct TrustAnchors {
    /// The anchored zones.
    zones: Vec<Name>,
    anchors: Arc<Anchors>,
}

impl fmt::Debug for TrustAnchors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrustAnchors")
            .field("zones", &self.zones)
            .finish_non_exhaustive()
    }
}

/// Why a trust anchor text is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnchorError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub problem: &'static str,
}

impl fmt::Display for AnchorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trust anchor line {}: {}", self.line, self.problem)
    }
}

impl std::error::Error for AnchorError {}

impl TrustAnchors {
    /// The root zone's key-signing keys (IANA), as built into
    /// hickory-resolver: every name is validated from the root down.
    pub fn root() -> Self {
        Self {
            zones: vec![Name::root()],
            anchors: Arc::new(Anchors::default()),
        }
    }

    /// Parse DNSKEY records, one a line (`;` or `#` comments, blank lines
    /// ignored): `OWNER [TTL] [IN] DNSKEY FLAGS 3 ALGORITHM BASE64...`.
    pub fn parse(text: &str) -> Result<Self, AnchorError> {
        let mut zones = Vec::new();
        let mut anchors = Anchors::empty();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            let err = |problem| AnchorError {
                line: i + 1,
                problem,
            };
            if zones.len() >= MAX_TRUST_ANCHORS {
                return Err(err("too many trust anchors"));
            }
            let (zone, key) = parse_line(line).map_err(err)?;
            anchors.insert_with_name(&key, LowerName::from(&zone));
            if !zones.contains(&zone) {
                zones.push(zone);
            }
        }
        if zones.is_empty() {
            return Err(AnchorError {
                line: 0,
                problem: "no DNSKEY record",
            });
        }
        Ok(Self {
            zones,
            anchors: Arc::new(anchors),
        })
    }

    /// Whether `name` is at or under an anchored zone.
    pub(crate) fn covers(&self, name: &Name) -> bool {
        self.zones.iter().any(|z| z.zone_of(name))
    }

    /// The keys, for the validating resolver.
    pub(crate) fn anchors(&self) -> Arc<Anchors> {
        self.anchors.clone()
    }
}

/// One DNSKEY line: its owner and key.
fn parse_line(line: &str) -> Result<(Name, PublicKeyBuf), &'static str> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let at = tokens
        .iter()
        .position(|t| t.eq_ignore_ascii_case("DNSKEY"))
        .ok_or("not a DNSKEY record")?;
    // OWNER, then at most a TTL and the class IN.
    let between = tokens.get(1..at).unwrap_or_default();
    let ttl_or_class =
        |t: &&str| t.eq_ignore_ascii_case("IN") || t.bytes().all(|b| b.is_ascii_digit());
    if !(1..=3).contains(&at) || !between.iter().all(ttl_or_class) {
        return Err("expected OWNER [TTL] [IN] DNSKEY");
    }
    let owner = tokens.first().ok_or("no owner")?;
    let mut zone = Name::from_ascii(owner).map_err(|_| "the owner is not a DNS name")?;
    zone.set_fqdn(true);
    let field = |n: usize| tokens.get(at + n).copied().ok_or("DNSKEY fields missing");
    let flags: u16 = field(1)?.parse().map_err(|_| "flags are not a number")?;
    if flags & 0x0100 == 0 {
        return Err("not a zone key (flags lack bit 7)");
    }
    if field(2)? != "3" {
        return Err("protocol is not 3");
    }
    let algorithm: u8 = field(3)?.parse().map_err(|_| "algorithm is not a number")?;
    let b64: String = tokens.get(at + 4..).unwrap_or_default().concat();
    let key = data_encoding::BASE64
        .decode(b64.as_bytes())
        .map_err(|_| "the key is not base64")?;
    if key.is_empty() {
        return Err("no key");
    }
    Ok((zone, PublicKeyBuf::new(key, Algorithm::from_u8(algorithm))))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const KEY: &str = "signed.test. DNSKEY 257 3 13 Oq88mEr7mNOplZrrZHVN/VbSiYnSjIMaUeXlRYgyt75HWe9do78lAXET8ubUPzaSlRtd3IW5QLxHfb/IUDR1bA==";

    #[test]
    fn dnskey_lines() {
        let a = TrustAnchors::parse(&format!(
            "; comment\n{KEY}\n\nbroken.test 300 IN DNSKEY 257 3 13 AAAA BBBB\n"
        ))
        .unwrap();
        assert!(a.covers(&Name::from_ascii("_herald.signed.test.").unwrap()));
        assert!(a.covers(&Name::from_ascii("alice._herald.broken.test.").unwrap()));
        assert!(!a.covers(&Name::from_ascii("_herald.plain.test.").unwrap()));
        assert!(TrustAnchors::root().covers(&Name::from_ascii("_herald.plain.test.").unwrap()));
        for (bad, line) in [
            ("", 0),
            ("signed.test. DS 63440 13 2 c9dc", 1),
            ("signed.test. DNSKEY 256 2 13 AAAA", 1),
            ("signed.test. DNSKEY 1 3 13 AAAA", 1),
            ("signed.test. DNSKEY 257 3 13 !!", 1),
            ("DNSKEY 257 3 13 AAAA", 1),
            (
                "signed.test. 300 RRSIG DNSKEY 13 2 300 1 2 3 signed.test. AAAA",
                1,
            ),
        ] {
            assert_eq!(TrustAnchors::parse(bad).unwrap_err().line, line, "{bad}");
        }
    }
}
