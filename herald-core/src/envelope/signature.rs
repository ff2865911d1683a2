//! Signature maps (PROFILE.md P3, P5).

use crate::cbor::ValueRef;
use crate::reason::Detail;
use crate::scope::Scope;
use crate::sigil::Sigil;

/// The only registered `alg` (spec §3.4).
pub const ED25519: &str = "ed25519";

/// One signature map, parsed: `{alg, by, scope, sig, ts?}` (P3). `alg` and
/// `scope` are kept as received so unknown values can be reported.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignatureRef<'a> {
    /// The algorithm named.
    pub alg: &'a str,
    /// The signer's sigil string, as received.
    pub by: &'a str,
    /// The signer's sigil, parsed.
    pub signer: Sigil,
    /// The scope named.
    pub scope: &'a str,
    /// The 64-byte signature.
    pub sig: &'a [u8; 64],
    /// An optional claimed time (a claim only, P5).
    pub ts: Option<u64>,
}

impl<'a> SignatureRef<'a> {
    /// The registered scope, if `scope` names one.
    pub fn registered_scope(&self) -> Option<Scope> {
        Scope::from_name(self.scope)
    }

    /// Parse a signature map. Unknown keys are malformed (P3).
    pub fn parse(value: ValueRef<'a>) -> Result<Self, Detail> {
        let (raw, ts) = RawSignature::parse_with_ts(value, None)?;
        let text = |t: &'a [u8], field, problem| {
            core::str::from_utf8(t).map_err(|_| Detail::Field { field, problem })
        };
        Ok(Self {
            alg: text(raw.alg, "alg", "must be text")?,
            by: text(raw.by, "by", "must be a sigil string")?,
            signer: raw.signer,
            scope: text(raw.scope, "scope", "must be text")?,
            sig: raw.sig,
            ts,
        })
    }
}

/// A [`SignatureRef`] whose texts are left as the bytes the strict decoder
/// checked (P1): what the single-envelope check reads, with no second
/// UTF-8 check.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawSignature<'a> {
    pub(crate) alg: &'a [u8],
    pub(crate) by: &'a [u8],
    pub(crate) signer: Sigil,
    pub(crate) scope: &'a [u8],
    pub(crate) sig: &'a [u8; 64],
}

impl<'a> RawSignature<'a> {
    /// [`SignatureRef::parse`]: the same checks in the same order, so the
    /// same first error.
    pub(crate) fn parse(value: ValueRef<'a>) -> Result<Self, Detail> {
        Ok(Self::parse_with_ts(value, None)?.0)
    }

    /// [`RawSignature::parse`] knowing that the sigil string `known.0`
    /// parses as `known.1` (the envelope's `from`, which signature 0's
    /// `by` repeats): a `by` of the same bytes is not parsed again.
    pub(crate) fn parse_knowing(
        value: ValueRef<'a>,
        known: Option<(&[u8], Sigil)>,
    ) -> Result<Self, Detail> {
        Ok(Self::parse_with_ts(value, known)?.0)
    }

    fn parse_with_ts(
        value: ValueRef<'a>,
        known: Option<(&[u8], Sigil)>,
    ) -> Result<(Self, Option<u64>), Detail> {
        let bad = |field, problem| Detail::Field { field, problem };
        let map = value
            .as_map()
            .ok_or(bad("signatures", "each signature must be a map"))?;
        let (mut alg, mut by, mut scope, mut sig, mut ts) = (None, None, None, None, None);
        for e in map.raw_entries() {
            let v = e.value;
            match e.key {
                b"alg" => alg = Some(v.text().ok_or(bad("alg", "must be text"))?),
                b"by" => by = Some(v.text().ok_or(bad("by", "must be a sigil string"))?),
                b"scope" => scope = Some(v.text().ok_or(bad("scope", "must be text"))?),
                b"sig" => {
                    sig = Some(
                        v.as_bytes()
                            .and_then(|b| <&[u8; 64]>::try_from(b).ok())
                            .ok_or(bad("sig", "must be a 64-byte byte string"))?,
                    )
                }
                b"ts" => {
                    ts = Some(
                        v.as_unsigned()
                            .ok_or(bad("ts", "must be an unsigned integer"))?,
                    )
                }
                _ => return Err(bad("signatures", "unknown key in a signature map (P3)")),
            }
        }
        let by = by.ok_or(bad("by", "required field missing (P3)"))?;
        let signer = match known {
            Some((text, sigil)) if text == by => sigil,
            _ => Sigil::parse_bytes(by).map_err(|error| Detail::Sigil { field: "by", error })?,
        };
        let raw = Self {
            alg: alg.ok_or(bad("alg", "required field missing (P3)"))?,
            by,
            signer,
            scope: scope.ok_or(bad("scope", "required field missing (P3)"))?,
            sig: sig.ok_or(bad("sig", "required field missing (P3)"))?,
        };
        Ok((raw, ts))
    }
}
