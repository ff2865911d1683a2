//! Sigils (spec §2.1, PROFILE.md P2): derivation in the three forms against
//! independently computed values, strict parsing (one string per key and
//! form), reserved names, and form conversion.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::{Reserved, Sigil, SigilError, SigilForm};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// RFC 8032 §7.1 TEST 1 and TEST 2 public keys.
const TEST1_PK: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const TEST2_PK: &str = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c";

/// Expected sigils, computed outside this crate (Python: `"sigil:" +
/// base64.b32encode(hashlib.sha256(pk).digest()[:n]).decode().rstrip("=").lower()`).
const KNOWN: [(&str, [&str; 3]); 2] = [
    (
        TEST1_PK,
        [
            "sigil:eh7ddx5bksrgcytl7bkai36se4",
            "sigil:long:eh7ddx5bksrgcytl7bkai36se4nxx3klnk7elkq",
            "sigil:short:eh7ddx5bksrgcytl",
        ],
    ),
    (
        TEST2_PK,
        [
            "sigil:hh3rhufgiqst6bcssqq3t5i3tm",
            "sigil:long:hh3rhufgiqst6bcssqq3t5i3tmejphiiffmvtra",
            "sigil:short:hh3rhufgiqst6bcs",
        ],
    ),
];

/// The twelve reserved names of PROFILE.md P2 (spec §9), in P2 order.
const RESERVED: [&str; 12] = [
    "sigil:none",
    "sigil:dreamer",
    "sigil:crier",
    "sigil:confessor",
    "sigil:scribe",
    "sigil:almoner",
    "sigil:mortician",
    "sigil:lighthouse",
    "sigil:dovecote",
    "sigil:seal_keeper",
    "sigil:translator",
    "sigil:librarian",
];

fn key(hex: &str) -> [u8; 32] {
    hex::decode(hex).unwrap().try_into().unwrap()
}

/// A second, independent RFC 4648 §6 encoder (lower case, no padding).
fn base32_lower(data: &[u8]) -> String {
    let mut out = String::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in data {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ALPHABET[((acc >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((acc << (5 - bits)) & 31) as usize]));
    }
    out
}

fn expected(pk: &[u8; 32], form: SigilForm) -> String {
    let n = match form {
        SigilForm::Default => 16,
        SigilForm::Long => 24,
        SigilForm::Short => 10,
    };
    let prefix = match form {
        SigilForm::Default => "sigil:",
        SigilForm::Long => "sigil:long:",
        SigilForm::Short => "sigil:short:",
    };
    format!("{prefix}{}", base32_lower(&Sha256::digest(pk)[..n]))
}

fn chars(form: SigilForm) -> usize {
    match form {
        SigilForm::Default => 26,
        SigilForm::Long => 39,
        SigilForm::Short => 16,
    }
}

/// Unused low bits of the last character: 130 − 128, 195 − 192, 80 − 80.
fn unused_bits(form: SigilForm) -> u32 {
    match form {
        SigilForm::Default => 2,
        SigilForm::Long => 3,
        SigilForm::Short => 0,
    }
}

fn with_last(s: &str, c: char) -> String {
    let mut t = s.to_owned();
    t.pop();
    t.push(c);
    t
}

#[test]
fn known_keys_derive_the_expected_sigils() {
    for (pk_hex, strings) in KNOWN {
        let pk = key(pk_hex);
        for (form, want) in SigilForm::ALL.into_iter().zip(strings) {
            let sigil = Sigil::from_key(&pk, form);
            let s = sigil.to_string();
            assert_eq!(s, want, "{form:?}");
            assert_eq!(s, expected(&pk, form));
            let body = s.strip_prefix(form.prefix()).unwrap();
            assert_eq!(body.len(), chars(form));
            assert_eq!(form.chars(), chars(form));
            assert!(body.bytes().all(|c| ALPHABET.contains(&c)), "{s}");
            assert_eq!(Sigil::parse(&s), Ok(sigil));
            assert_eq!(s.parse::<Sigil>(), Ok(sigil));
            assert_eq!(format!("{sigil:?}"), format!("Sigil({s})"));
            let mut buf = [0u8; 52];
            assert_eq!(sigil.write_str(&mut buf), s);
            assert_eq!(sigil.form(), Some(form));
            assert!(!sigil.is_reserved());
            assert_eq!(sigil.is_short(), form == SigilForm::Short);
            assert_eq!(sigil.hash_prefix(), &Sha256::digest(pk)[..form.hash_len()]);
            assert!(sigil.names_key(&pk));
            let other = key(if pk_hex == TEST1_PK {
                TEST2_PK
            } else {
                TEST1_PK
            });
            assert!(!sigil.names_key(&other));
            assert_ne!(sigil, Sigil::from_key(&other, form));
        }
    }
}

#[test]
fn forms_of_one_key_are_distinct_and_convert_downwards_only() {
    let pk = key(TEST1_PK);
    let [d, l, s] = SigilForm::ALL.map(|f| Sigil::from_key(&pk, f));
    assert_ne!(d, l);
    assert_ne!(d, s);
    assert_ne!(l, s);
    // Every pair names the same key.
    for a in [d, l, s] {
        for b in [d, l, s] {
            assert!(a.same_key_as(&b));
        }
    }
    let other = Sigil::from_key(&key(TEST2_PK), SigilForm::Long);
    assert!(!d.same_key_as(&other));
    // to_form: only to a form with no more hash bytes.
    assert_eq!(l.to_form(SigilForm::Long), Some(l));
    assert_eq!(l.to_form(SigilForm::Default), Some(d));
    assert_eq!(l.to_form(SigilForm::Short), Some(s));
    assert_eq!(d.to_form(SigilForm::Long), None);
    assert_eq!(d.to_form(SigilForm::Default), Some(d));
    assert_eq!(d.to_form(SigilForm::Short), Some(s));
    assert_eq!(s.to_form(SigilForm::Long), None);
    assert_eq!(s.to_form(SigilForm::Default), None);
    assert_eq!(s.to_form(SigilForm::Short), Some(s));
}

#[test]
fn upper_case_is_rejected_where_it_occurs() {
    for form in SigilForm::ALL {
        let s = Sigil::from_key(&key(TEST1_PK), form).to_string();
        let p = form.prefix().len();
        for i in [0, chars(form) / 2, chars(form) - 1] {
            let mut t = s.clone().into_bytes();
            t[p + i] = t[p + i].to_ascii_uppercase();
            let t = String::from_utf8(t).unwrap();
            if t == s {
                continue; // a digit has no upper case
            }
            assert_eq!(
                Sigil::parse(&t),
                Err(SigilError::Character { offset: p + i }),
                "{t}"
            );
        }
        let upper = s[p..].to_ascii_uppercase();
        assert!(Sigil::parse(&format!("{}{upper}", form.prefix())).is_err());
        // An upper-case prefix is no prefix.
        assert_eq!(
            Sigil::parse(&s.to_ascii_uppercase()),
            Err(SigilError::Prefix)
        );
    }
    assert_eq!(Sigil::parse("Sigil:none"), Err(SigilError::Prefix));
}

#[test]
fn padding_is_rejected() {
    for form in SigilForm::ALL {
        let s = Sigil::from_key(&key(TEST2_PK), form).to_string();
        let end = s.len();
        // Appended padding, as an RFC 4648 encoder with padding would write it.
        for pad in ["=", "===", "======"] {
            assert_eq!(
                Sigil::parse(&format!("{s}{pad}")),
                Err(SigilError::Character { offset: end }),
                "{s}{pad}"
            );
        }
        // Padding in place of the last character.
        assert_eq!(
            Sigil::parse(&with_last(&s, '=')),
            Err(SigilError::Character { offset: end - 1 })
        );
    }
}

#[test]
fn one_character_too_few_or_too_many_is_rejected() {
    for form in SigilForm::ALL {
        let s = Sigil::from_key(&key(TEST1_PK), form).to_string();
        let n = chars(form);
        let mut short = s.clone();
        short.pop();
        assert_eq!(
            Sigil::parse(&short),
            Err(SigilError::Length { form, found: n - 1 })
        );
        for extra in ALPHABET {
            let long = format!("{s}{}", char::from(*extra));
            assert_eq!(
                Sigil::parse(&long),
                Err(SigilError::Length { form, found: n + 1 })
            );
        }
    }
}

#[test]
fn empty_bodies_are_rejected() {
    assert_eq!(
        Sigil::parse("sigil:"),
        Err(SigilError::Length {
            form: SigilForm::Default,
            found: 0
        })
    );
    assert_eq!(
        Sigil::parse("sigil:long:"),
        Err(SigilError::Length {
            form: SigilForm::Long,
            found: 0
        })
    );
    assert_eq!(
        Sigil::parse("sigil:short:"),
        Err(SigilError::Length {
            form: SigilForm::Short,
            found: 0
        })
    );
    assert_eq!(Sigil::parse(""), Err(SigilError::Prefix));
    assert_eq!(Sigil::parse("sigil"), Err(SigilError::Prefix));
}

#[test]
fn a_form_prefix_with_another_forms_length_is_rejected() {
    let pk = key(TEST1_PK);
    let default_body = Sigil::from_key(&pk, SigilForm::Default).to_string()[6..].to_owned();
    let long_body = Sigil::from_key(&pk, SigilForm::Long).to_string()[11..].to_owned();
    let short_body = Sigil::from_key(&pk, SigilForm::Short).to_string()[12..].to_owned();
    assert_eq!(
        Sigil::parse(&format!("sigil:long:{default_body}")),
        Err(SigilError::Length {
            form: SigilForm::Long,
            found: 26
        })
    );
    assert_eq!(
        Sigil::parse(&format!("sigil:short:{default_body}")),
        Err(SigilError::Length {
            form: SigilForm::Short,
            found: 26
        })
    );
    assert_eq!(
        Sigil::parse(&format!("sigil:{long_body}")),
        Err(SigilError::Length {
            form: SigilForm::Default,
            found: 39
        })
    );
    assert_eq!(
        Sigil::parse(&format!("sigil:long:{short_body}")),
        Err(SigilError::Length {
            form: SigilForm::Long,
            found: 16
        })
    );
    // A colon is not in the alphabet: `sigil:short` without its colon is
    // a default-form body, and `sigil:medium:` is no form.
    assert_eq!(
        Sigil::parse(&format!("sigil:medium:{default_body}")),
        Err(SigilError::Character { offset: 12 })
    );
}

#[test]
fn digits_outside_base32_are_rejected() {
    for form in SigilForm::ALL {
        let s = Sigil::from_key(&key(TEST2_PK), form).to_string();
        let p = form.prefix().len();
        for bad in ['0', '1', '8', '9', '-', '_', ' ', 'é'] {
            for i in [0, chars(form) - 1] {
                let mut t: Vec<char> = s.chars().collect();
                t[p + i] = bad;
                let t: String = t.into_iter().collect();
                assert_eq!(
                    Sigil::parse(&t),
                    Err(SigilError::Character { offset: p + i }),
                    "{t:?}"
                );
            }
        }
    }
    // The spec's illustrative sigil is not valid (P2): its '9' is at offset 20.
    assert_eq!(
        Sigil::parse("sigil:m7zr4hb2qa6kpl9xn3qg4w"),
        Err(SigilError::Character { offset: 20 })
    );
}

#[test]
fn nonzero_trailing_bits_are_rejected() {
    let mut checked = 0;
    for (pk_hex, _) in KNOWN {
        for form in [SigilForm::Default, SigilForm::Long] {
            let s = Sigil::from_key(&key(pk_hex), form).to_string();
            let last = s.as_bytes()[s.len() - 1];
            let v = ALPHABET.iter().position(|&c| c == last).unwrap();
            let unused = (1usize << unused_bits(form)) - 1;
            assert_eq!(
                v & unused,
                0,
                "{s}: the canonical string has zero trailing bits"
            );
            // Same data bits, each nonzero pattern of the unused bits.
            for low in 1..=unused {
                let c = char::from(ALPHABET[v | low]);
                let t = with_last(&s, c);
                assert_eq!(Sigil::parse(&t), Err(SigilError::TrailingBits), "{t}");
                checked += 1;
            }
        }
    }
    // (2^2 − 1) + (2^3 − 1) patterns per key, two keys.
    assert_eq!(checked, 2 * (3 + 7));
}

#[test]
fn every_reserved_name_parses_as_reserved() {
    let all: Vec<&str> = Reserved::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(all, RESERVED, "Reserved::ALL differs from PROFILE.md P2");
    let pk = key(TEST1_PK);
    for &r in Reserved::ALL {
        let s = Sigil::parse(r.as_str()).unwrap();
        assert_eq!(s.reserved(), Some(r));
        assert!(s.is_reserved());
        assert!(!s.is_short());
        assert_eq!(s.form(), None);
        assert_eq!(s.to_string(), r.as_str());
        assert!(s.hash_prefix().is_empty());
        assert!(!s.names_key(&pk));
        for form in SigilForm::ALL {
            assert_eq!(s.to_form(form), None, "{r:?} to {form:?}");
            assert!(!s.same_key_as(&Sigil::from_key(&pk, form)));
        }
        assert!(!s.same_key_as(&s), "a reserved name names no key");
        // Near misses are not reserved.
        for near in [
            format!("{}x", r.as_str()),
            r.as_str().to_ascii_uppercase(),
            r.as_str()[..r.as_str().len() - 1].to_owned(),
        ] {
            assert!(
                Sigil::parse(&near).map_or(true, |s| !s.is_reserved()),
                "{near}"
            );
        }
    }
    assert!(Sigil::parse("sigil:seal-keeper").is_err());
    assert!(Sigil::parse("sigil:herald").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn one_string_per_key_and_form(pk in any::<[u8; 32]>()) {
        for form in SigilForm::ALL {
            let sigil = Sigil::from_key(&pk, form);
            let s = sigil.to_string();
            prop_assert_eq!(&s, &expected(&pk, form));
            prop_assert_eq!(Sigil::parse(&s), Ok(sigil));
            prop_assert!(sigil.names_key(&pk));
            // Every other last character: none parses to this sigil, and
            // exactly 2^(5 − unused) − 1 parse at all (to other sigils).
            let mut parsed = 0;
            let mut trailing = 0;
            for &c in ALPHABET {
                let t = with_last(&s, char::from(c));
                if t == s {
                    continue;
                }
                match Sigil::parse(&t) {
                    Ok(other) => {
                        prop_assert_ne!(other, sigil);
                        prop_assert_eq!(other.to_string(), t);
                        parsed += 1;
                    }
                    Err(SigilError::TrailingBits) => trailing += 1,
                    Err(e) => prop_assert!(false, "{t}: {e:?}"),
                }
            }
            let keep = 1usize << (5 - unused_bits(form));
            prop_assert_eq!(parsed, keep - 1);
            prop_assert_eq!(trailing, 32 - keep);
            // And every form converts down to the derived sigil of that form.
            for to in SigilForm::ALL {
                if to.hash_len() <= form.hash_len() {
                    prop_assert_eq!(sigil.to_form(to), Some(Sigil::from_key(&pk, to)));
                } else {
                    prop_assert_eq!(sigil.to_form(to), None);
                }
            }
        }
    }
}
