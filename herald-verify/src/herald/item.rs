//! The wire item of a Herald (CONDUIT.md `herald heraldry serve`): the P1
//! map `{certification: bstr, proof: text}`, where `certification` is the
//! certification envelope's bytes and `proof` the C2SP tlog-proof of those
//! bytes in the Herald's log. `POST /v1/certify` answers one;
//! `GET /v1/certifications/{sigil}` answers a CBOR sequence (RFC 8742) of
//! them. Decoding checks the shape only: whether a certification counts is
//! [`Heralds`](super::quorum::Heralds)' business (PROFILE P14).

use alloc::{borrow::ToOwned, string::String, vec::Vec};
use core::fmt;

use herald_core::cbor::{self, DecodeError, Limits, Map, Value};
use herald_tlog::proof::MAX_PROOF_TEXT;

/// Largest item: an envelope at the P1 size limit, a proof at
/// [`MAX_PROOF_TEXT`], and the map around them.
pub const MAX_ITEM_BYTES: usize = Limits::DEFAULT.max_size + MAX_PROOF_TEXT + 64;

/// The limits an item is decoded under.
const ITEM_LIMITS: Limits = Limits {
    max_size: MAX_ITEM_BYTES,
    ..Limits::DEFAULT
};

/// One certification and its proof, as a Herald serves them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificationItem {
    /// The certification envelope's P1 bytes (kind `certification`, P7).
    pub certification: Vec<u8>,
    /// Its C2SP tlog-proof text in the Herald's log.
    pub proof: String,
}

/// An item is not the CONDUIT.md map.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertificationItemError {
    /// Not one canonical CBOR item (P1), or past [`MAX_ITEM_BYTES`].
    Cbor(DecodeError),
    /// A canonical item of the wrong shape: what is wrong.
    Shape(&'static str),
    /// A sequence holds more items than the caller allows.
    TooMany {
        /// The caller's cap.
        max: usize,
    },
}

impl fmt::Display for CertificationItemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cbor(e) => write!(f, "certification item: {e}"),
            Self::Shape(what) => write!(f, "certification item: {what}"),
            Self::TooMany { max } => write!(f, "more than {max} certification items"),
        }
    }
}

impl std::error::Error for CertificationItemError {}

impl CertificationItem {
    /// An item of `certification` (envelope bytes) and its `proof` text.
    pub fn new(certification: Vec<u8>, proof: String) -> Self {
        Self {
            certification,
            proof,
        }
    }

    /// Decode one item filling all of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<Self, CertificationItemError> {
        let value = cbor::decode_with(bytes, &ITEM_LIMITS).map_err(CertificationItemError::Cbor)?;
        Self::from_value(value)
    }

    /// Decode a CBOR sequence of items (a `GET /v1/certifications/{sigil}`
    /// answer), at most `max` of them.
    pub fn decode_sequence(bytes: &[u8], max: usize) -> Result<Vec<Self>, CertificationItemError> {
        let mut items = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            if items.len() == max {
                return Err(CertificationItemError::TooMany { max });
            }
            let (value, end) =
                cbor::decode_prefix(rest, &ITEM_LIMITS).map_err(CertificationItemError::Cbor)?;
            items.push(Self::from_value(value)?);
            rest = rest.get(end..).unwrap_or_default();
        }
        Ok(items)
    }

    fn from_value(value: cbor::ValueRef<'_>) -> Result<Self, CertificationItemError> {
        let map = value
            .as_map()
            .ok_or(CertificationItemError::Shape("not a map"))?;
        if map
            .iter()
            .any(|(k, _)| k != "certification" && k != "proof")
        {
            return Err(CertificationItemError::Shape(
                "a key other than certification and proof",
            ));
        }
        let certification = map.get("certification").and_then(|v| v.as_bytes()).ok_or(
            CertificationItemError::Shape("certification must be a byte string"),
        )?;
        let proof = map
            .get("proof")
            .and_then(|v| v.as_text())
            .ok_or(CertificationItemError::Shape("proof must be text"))?;
        if proof.len() > MAX_PROOF_TEXT {
            return Err(CertificationItemError::Shape("proof is too long"));
        }
        Ok(Self {
            certification: certification.to_vec(),
            proof: proof.to_owned(),
        })
    }

    /// The item's P1 bytes (what [`decode`](Self::decode) reads back).
    pub fn encode(&self) -> Vec<u8> {
        let mut m = Map::new();
        m.insert("certification", Value::Bytes(self.certification.clone()));
        m.insert("proof", Value::text(self.proof.as_str()));
        Value::Map(m).to_vec()
    }

    /// Items as one CBOR sequence (`application/cbor-seq`).
    pub fn encode_sequence(items: &[Self]) -> Vec<u8> {
        items.iter().flat_map(Self::encode).collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use alloc::vec;

    #[test]
    fn items_round_trip_alone_and_in_sequence() {
        let a = CertificationItem::new(vec![0xa0], "c2sp.org/tlog-proof@v1\n".into());
        let b = CertificationItem::new(vec![1, 2, 3], String::new());
        assert_eq!(CertificationItem::decode(&a.encode()).unwrap(), a);
        let seq = CertificationItem::encode_sequence(&[a.clone(), b.clone()]);
        assert_eq!(
            CertificationItem::decode_sequence(&seq, 2).unwrap(),
            [a.clone(), b]
        );
        assert_eq!(
            CertificationItem::decode_sequence(&seq, 1),
            Err(CertificationItemError::TooMany { max: 1 })
        );
    }

    #[test]
    fn other_shapes_are_refused() {
        let mut m = Map::new();
        m.insert("certification", Value::text("not bytes"));
        m.insert("proof", Value::text("p"));
        assert!(matches!(
            CertificationItem::decode(&Value::Map(m.clone()).to_vec()),
            Err(CertificationItemError::Shape(_))
        ));
        m.insert("certification", Value::Bytes(vec![]));
        m.insert("extra", Value::Null);
        assert!(matches!(
            CertificationItem::decode(&Value::Map(m).to_vec()),
            Err(CertificationItemError::Shape(_))
        ));
        assert!(matches!(
            CertificationItem::decode(&[0xff]),
            Err(CertificationItemError::Cbor(_))
        ));
    }
}
