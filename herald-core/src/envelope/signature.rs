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
        let bad = |field, problem| Detail::Field { field, problem };
        let map = value
            .as_map()
            .ok_or(bad("signatures", "each signature must be a map"))?;
        let (mut alg, mut by, mut scope, mut sig, mut ts) = (None, None, None, None, None);
        for (key, v) in map.iter() {
            match key {
                "alg" => alg = Some(v.as_text().ok_or(bad("alg", "must be text"))?),
                "by" => by = Some(v.as_text().ok_or(bad("by", "must be a sigil string"))?),
                "scope" => scope = Some(v.as_text().ok_or(bad("scope", "must be text"))?),
                "sig" => {
                    sig = Some(
                        v.as_bytes()
                            .and_then(|b| <&[u8; 64]>::try_from(b).ok())
                            .ok_or(bad("sig", "must be a 64-byte byte string"))?,
                    )
                }
                "ts" => {
                    ts = Some(
                        v.as_unsigned()
                            .ok_or(bad("ts", "must be an unsigned integer"))?,
                    )
                }
                _ => return Err(bad("signatures", "unknown key in a signature map (P3)")),
            }
        }
        let by = by.ok_or(bad("by", "required field missing (P3)"))?;
        let signer = Sigil::parse(by).map_err(|error| Detail::Sigil { field: "by", error })?;
        Ok(Self {
            alg: alg.ok_or(bad("alg", "required field missing (P3)"))?,
            by,
            signer,
            scope: scope.ok_or(bad("scope", "required field missing (P3)"))?,
            sig: sig.ok_or(bad("sig", "required field missing (P3)"))?,
            ts,
        })
    }
}
