//! Attestations (spec §4, PROFILE.md P7, P12): each a map `{type, value}`;
//! the standard types have checked shapes, every other type is a signed,
//! uninterpreted blob.

use crate::cbor::{ArrayRef, MapRef, RawRef, ValueRef};
#[cfg(feature = "alloc")]
use crate::cbor::{Map, Value};
use crate::reason::Detail;
use crate::sigil::Sigil;

fn bad(field: &'static str, problem: &'static str) -> Detail {
    Detail::Field { field, problem }
}

/// One attestation: `{type: text, value: any}` (P3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attestation<'a> {
    /// The type.
    pub ty: &'a str,
    /// The value.
    pub value: ValueRef<'a>,
}

impl<'a> Attestation<'a> {
    /// Parse one element of `attestations`: exactly the keys `type` and `value` (P3).
    pub fn parse(v: ValueRef<'a>) -> Result<Self, Detail> {
        let raw = RawAttestation::parse(v)?;
        let shape = || bad("attestations", SHAPE);
        Ok(Self {
            ty: core::str::from_utf8(raw.ty).map_err(|_| shape())?,
            value: raw.value.value().ok_or_else(shape)?,
        })
    }

    /// Check a standard type's shape (P12); other types always pass.
    pub fn check_shape(&self) -> Result<(), Detail> {
        RawAttestation {
            ty: self.ty.as_bytes(),
            value: RawRef::from(self.value),
        }
        .check_shape()
    }
}

/// The P3 shape of an attestation, in the `attestations` field's problem.
const SHAPE: &str = "each attestation is a map {type: text, value} (P3)";

/// An [`Attestation`] whose texts are left as the bytes the strict decoder
/// checked (P1): what the single-envelope check reads, with no second
/// UTF-8 check.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawAttestation<'a> {
    /// The type.
    pub(crate) ty: &'a [u8],
    /// The value.
    pub(crate) value: RawRef<'a>,
}

impl<'a> RawAttestation<'a> {
    /// [`Attestation::parse`]. A canonical map of two entries has the keys
    /// `type` and `value` exactly when its first key is `type` and its
    /// second `value` (P1 orders `type` first: it is shorter).
    pub(crate) fn parse(v: ValueRef<'a>) -> Result<Self, Detail> {
        let shape = bad("attestations", SHAPE);
        let map = v.as_map().ok_or(shape)?;
        if map.len() != 2 {
            return Err(shape);
        }
        let mut entries = map.raw_entries();
        match (entries.next(), entries.next()) {
            (Some(t), Some(value)) if t.key == b"type" && value.key == b"value" => Ok(Self {
                ty: t.value.text().ok_or(shape)?,
                value: value.value,
            }),
            _ => Err(shape),
        }
    }

    /// [`Attestation::check_shape`].
    pub(crate) fn check_shape(&self) -> Result<(), Detail> {
        let v = self.value;
        let ok = |cond: bool, field, problem| {
            if cond {
                Ok(())
            } else {
                Err(bad(field, problem))
            }
        };
        match self.ty {
            b"model" => ok(v.text().is_some(), "model", "must be text (P12)"),
            b"tools" => ok(
                v.as_array()
                    .is_some_and(|a| a.raw_iter().all(|t| t.text().is_some())),
                "tools",
                "must be an array of text (P12)",
            ),
            b"temperature" => ok(
                v.as_number().is_some_and(|t| t >= 0.0),
                "temperature",
                "must be a number >= 0 (P12)",
            ),
            b"confidence" => ok(
                v.as_number().is_some_and(|c| (0.0..=1.0).contains(&c)),
                "confidence",
                "must be a number in [0, 1] (P12)",
            ),
            b"citation" => ok(
                is_citation(v),
                "citation",
                "must be {kind: text, ref?: bstr 32} (P12)",
            ),
            b"log_metadata_consent" => ok(
                matches!(v, RawRef::Value(ValueRef::Bool(_))),
                "log_metadata_consent",
                "must be a bool (P12)",
            ),
            b"handle" => ok(
                v.value()
                    .and_then(|h| h.as_text())
                    .is_some_and(|h| crate::handle::check(h).is_ok()),
                "handle",
                "must be text, a DNS name or name@ a DNS name (P12, P15)",
            ),
            b"birth" => BirthAttestation::parse_raw(v).map(|_| ()),
            b"molt_policy" => MoltPolicy::parse_raw(v).map(|_| ()),
            b"duress_witness" => DuressWitness::parse_raw(v).map(|_| ()),
            _ => Ok(()),
        }
    }
}

fn is_citation(v: RawRef<'_>) -> bool {
    let Some(m) = v.as_map() else { return false };
    let kind_ok = m.get_raw(b"kind").is_some_and(|k| k.text().is_some());
    let ref_ok = m
        .get_raw(b"ref")
        .is_none_or(|r| r.as_bytes().is_some_and(|b| b.len() == 32));
    let keys_ok = m.raw_entries().all(|e| e.key == b"kind" || e.key == b"ref");
    kind_ok && ref_ok && keys_ok
}

fn closed<'a>(
    v: RawRef<'a>,
    allowed: &[&str],
    field: &'static str,
    shape: &'static str,
) -> Result<MapRef<'a>, Detail> {
    let m = v.as_map().ok_or(bad(field, shape))?;
    if m.raw_entries()
        .any(|e| !allowed.iter().any(|a| a.as_bytes() == e.key))
    {
        return Err(bad(field, shape));
    }
    Ok(m)
}

fn sigil_array(
    v: Option<RawRef<'_>>,
    field: &'static str,
    shape: &'static str,
) -> Result<(), Detail> {
    let a = v.and_then(|v| v.as_array()).ok_or(bad(field, shape))?;
    for s in a.raw_iter() {
        let text = s.text().ok_or(bad(field, shape))?;
        Sigil::parse_bytes(text).map_err(|error| Detail::Sigil { field, error })?;
    }
    Ok(())
}

/// A `birth` attestation `{key: bstr 32, description: text, lineage: [sigil]}` (P7).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BirthAttestation<'a> {
    /// The birth key, whose sigil must be the envelope's `from`.
    pub key: &'a [u8; 32],
    /// Self-description.
    pub description: &'a str,
    /// Lineage parents (each a valid sigil string).
    pub lineage: ArrayRef<'a>,
}

impl<'a> BirthAttestation<'a> {
    /// Parse the value of a `birth` attestation.
    pub fn parse(v: ValueRef<'a>) -> Result<Self, Detail> {
        Self::parse_raw(RawRef::from(v))
    }

    pub(crate) fn parse_raw(v: RawRef<'a>) -> Result<Self, Detail> {
        const SHAPE: &str = "must be {key: bstr 32, description: text, lineage: [sigil]} (P7)";
        let m = closed(v, &["key", "description", "lineage"], "birth", SHAPE)?;
        sigil_array(m.get_raw(b"lineage"), "birth.lineage", SHAPE)?;
        Ok(Self {
            key: m
                .get_raw(b"key")
                .and_then(|k| k.as_bytes())
                .and_then(|b| b.try_into().ok())
                .ok_or(bad("birth.key", SHAPE))?,
            description: m
                .get("description")
                .and_then(|d| d.as_text())
                .ok_or(bad("birth.description", SHAPE))?,
            lineage: m
                .get_raw(b"lineage")
                .and_then(|l| l.as_array())
                .ok_or(bad("birth.lineage", SHAPE))?,
        })
    }

    /// The lineage parents, parsed.
    pub fn parents(&self) -> impl Iterator<Item = Sigil> + 'a {
        self.lineage
            .iter()
            .filter_map(|s| s.as_text().and_then(|t| Sigil::parse(t).ok()))
    }
}

/// The value of a `birth` attestation for `key` (P7): what
/// [`BirthAttestation::parse`] reads.
#[cfg(feature = "alloc")]
pub fn birth_attestation(key: &crate::PublicKey, description: &str, lineage: &[Sigil]) -> Value {
    let mut m = Map::new();
    m.insert("key", Value::Bytes(key.as_bytes().to_vec()));
    m.insert("description", Value::text(description));
    m.insert(
        "lineage",
        Value::Array(
            lineage
                .iter()
                .map(|s| Value::Text(alloc::format!("{s}")))
                .collect(),
        ),
    );
    Value::Map(m)
}

/// A `molt_policy` attestation `{cosigners: [sigil], threshold: uint}` (P7, P8).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoltPolicy<'a> {
    /// Who may co-sign a molt.
    pub cosigners: ArrayRef<'a>,
    /// How many distinct co-signatures a molt needs.
    pub threshold: u64,
}

impl<'a> MoltPolicy<'a> {
    /// Parse the value of a `molt_policy` attestation.
    pub fn parse(v: ValueRef<'a>) -> Result<Self, Detail> {
        Self::parse_raw(RawRef::from(v))
    }

    pub(crate) fn parse_raw(v: RawRef<'a>) -> Result<Self, Detail> {
        const SHAPE: &str = "must be {cosigners: [sigil], threshold: uint} (P7)";
        let m = closed(v, &["cosigners", "threshold"], "molt_policy", SHAPE)?;
        sigil_array(m.get_raw(b"cosigners"), "molt_policy.cosigners", SHAPE)?;
        Ok(Self {
            cosigners: m
                .get_raw(b"cosigners")
                .and_then(|c| c.as_array())
                .ok_or(bad("molt_policy", SHAPE))?,
            threshold: m
                .get_raw(b"threshold")
                .and_then(|t| t.as_unsigned())
                .ok_or(bad("molt_policy.threshold", SHAPE))?,
        })
    }

    /// The co-signers, parsed.
    pub fn cosigners(&self) -> impl Iterator<Item = Sigil> + 'a {
        self.cosigners
            .iter()
            .filter_map(|s| s.as_text().and_then(|t| Sigil::parse(t).ok()))
    }
}

/// A `duress_witness` attestation `{sigil: sigil}` (P7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DuressWitness {
    /// The registered witness.
    pub sigil: Sigil,
}

impl DuressWitness {
    /// Parse the value of a `duress_witness` attestation.
    pub fn parse(v: ValueRef<'_>) -> Result<Self, Detail> {
        Self::parse_raw(RawRef::from(v))
    }

    pub(crate) fn parse_raw(v: RawRef<'_>) -> Result<Self, Detail> {
        const SHAPE: &str = "must be {sigil: sigil} (P7)";
        let m = closed(v, &["sigil"], "duress_witness", SHAPE)?;
        let text = m
            .get_raw(b"sigil")
            .and_then(|s| s.text())
            .ok_or(bad("duress_witness", SHAPE))?;
        let sigil = Sigil::parse_bytes(text).map_err(|error| Detail::Sigil {
            field: "duress_witness.sigil",
            error,
        })?;
        Ok(Self { sigil })
    }
}
