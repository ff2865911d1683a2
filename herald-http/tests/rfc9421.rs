//! RFC 9421's own Ed25519 example (Appendix B.1.4 key, B.2 test-request,
//! B.2.6 signature) through herald-http's signature base, parser and
//! verification: the vectors are the RFC's text (tests/vectors/
//! rfc9421-ed25519.txt, with their provenance), never our output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use data_encoding::BASE64;
use herald_core::{PublicKey, SigningKey};
use herald_http::signature::{self, signature_base};

const VECTORS: &str = include_str!("vectors/rfc9421-ed25519.txt");

fn section(name: &str) -> String {
    let marker = format!("== {name} ==\n");
    let start = VECTORS.find(&marker).expect(name) + marker.len();
    let rest = &VECTORS[start..];
    let end = rest.find("\n== ").map_or(rest.len(), |e| e + 1);
    rest[..end].trim_end_matches('\n').to_owned()
}

/// The DER body of a PEM block, its last 32 bytes after `prefix`.
fn pem_key(name: &str, prefix: &[u8]) -> [u8; 32] {
    let body: String = section(name)
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let der = BASE64.decode(body.as_bytes()).unwrap();
    assert_eq!(&der[..prefix.len()], prefix, "{name}: not an Ed25519 key");
    der[prefix.len()..].try_into().unwrap()
}

/// PKCS#8 (RFC 8410 §7) and SubjectPublicKeyInfo (RFC 8410 §4) prefixes of
/// an Ed25519 key.
const PKCS8: &[u8] = &[
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];
const SPKI: &[u8] = &[
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// The value of component `name` of the test-request (RFC 9421 §2.1,
/// §2.2: derived components from the request line and `Host`, fields by
/// lower-cased name with their values trimmed).
fn component(request: &str, name: &str) -> String {
    let mut lines = request.lines();
    let mut request_line = lines.next().unwrap().split(' ');
    let (method, target) = (request_line.next().unwrap(), request_line.next().unwrap());
    let field = |want: &str| {
        request
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .filter_map(|l| l.split_once(':'))
            .filter(|(n, _)| n.eq_ignore_ascii_case(want))
            .map(|(_, v)| v.trim().to_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        "@method" => method.to_owned(),
        "@path" => target.split('?').next().unwrap().to_owned(),
        "@authority" => field("host").to_ascii_lowercase(),
        other => field(other),
    }
}

#[test]
fn the_b26_signature_base_is_rebuilt_from_the_test_request() {
    let input = section("B.2.6 Signature-Input");
    let sig = section("B.2.6 Signature");
    let p = signature::parse("sig-b26", &[input.as_bytes()], &[sig.as_bytes()]).unwrap();
    assert_eq!(p.keyid(), Some("test-key-ed25519"));
    assert_eq!(p.created(), Some(1_618_884_473));
    assert!(!p.is_herald_form(), "B.2.6 covers other components");
    let request = section("B.2 test-request");
    let values: Vec<String> = p.components().map(|c| component(&request, c)).collect();
    let covered: Vec<(&str, &str)> = p
        .components()
        .zip(values.iter().map(String::as_str))
        .collect();
    assert_eq!(
        signature_base(&covered, &p.signature_params()),
        section("B.2.6 signature base")
    );
}

#[test]
fn the_b26_signature_verifies_with_the_b14_key_and_is_reproduced() {
    let public = PublicKey::from_bytes(&pem_key("B.1.4 public key", SPKI)).unwrap();
    let secret = SigningKey::from_seed(&pem_key("B.1.4 private key", PKCS8));
    assert_eq!(secret.public_key(), public);
    let input = section("B.2.6 Signature-Input");
    let sig = section("B.2.6 Signature");
    let p = signature::parse("sig-b26", &[input.as_bytes()], &[sig.as_bytes()]).unwrap();
    let request = section("B.2 test-request");
    let values: Vec<String> = p.components().map(|c| component(&request, c)).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    assert!(p.verify_values(&public, &values));
    // Ed25519 is deterministic (RFC 8032): signing the RFC's base with the
    // RFC's key gives the RFC's signature, byte for byte.
    let base = section("B.2.6 signature base");
    assert_eq!(&secret.sign(base.as_bytes()), p.signature());
    // One byte of the base changed: it no longer verifies.
    let mut other = values.clone();
    other[1] = "GET";
    assert!(!p.verify_values(&public, &other));
}
