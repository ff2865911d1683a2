//! Sigil cases (P2).

use super::*;

pub(super) fn sigil_cases(g: &mut Gen) {
    for name in ["alice", "bob", "carol"] {
        for form in SigilForm::ALL {
            let s = g.sigil(name, form);
            let expect = SigilExpect {
                valid: true,
                form: Some(form.name().into()),
                key: Some(name.into()),
                error: None,
            };
            g.sigil_case(
                &format!("derive_{name}_{}", form.name()),
                &format!("the {} sigil of {name}'s key", form.name()),
                &s,
                expect,
            );
        }
    }
    let bad = |error: &str| SigilExpect {
        valid: false,
        form: None,
        key: None,
        error: Some(error.into()),
    };
    let alice = g.sigil("alice", SigilForm::Default);
    let body = alice.trim_start_matches("sigil:");
    g.sigil_case(
        "upper_case",
        "the default sigil in upper case",
        &format!("sigil:{}", body.to_uppercase()),
        bad("character"),
    );
    g.sigil_case(
        "padding",
        "base32 padding appended",
        &format!("{alice}======"),
        bad("character"),
    );
    g.sigil_case(
        "too_short",
        "one character missing",
        &alice[..alice.len() - 1],
        bad("length"),
    );
    g.sigil_case(
        "too_long",
        "one character too many",
        &format!("{alice}a"),
        bad("length"),
    );
    // 26 characters carry 130 bits for 128: the last character's low 2 bits must be zero.
    let alphabet = b"abcdefghijklmnopqrstuvwxyz234567";
    let last = alice.as_bytes()[alice.len() - 1];
    let v = alphabet.iter().position(|&c| c == last).unwrap_or(0);
    let with_bits = alphabet[(v & !3) | 1] as char;
    g.sigil_case(
        "trailing_bits",
        "the last character's unused low bits set",
        &format!("{}{with_bits}", &alice[..alice.len() - 1]),
        bad("trailing_bits"),
    );
    g.sigil_case(
        "prefix",
        "a wrong prefix",
        &format!("sigl:{body}"),
        bad("prefix"),
    );
    g.sigil_case(
        "spec_example",
        "the spec's illustrative sigil (has '9', and 22 characters)",
        "sigil:m7zr4hb2qa6kpl9xn3qg4w",
        bad("character"),
    );
    g.sigil_case(
        "long_prefix_default_length",
        "sigil:long: with a default-form body",
        &format!("sigil:long:{body}"),
        bad("length"),
    );
    for r in herald_core::Reserved::ALL {
        let expect = SigilExpect {
            valid: true,
            form: Some("reserved".into()),
            key: None,
            error: None,
        };
        g.sigil_case(
            &format!("reserved_{}", r.as_str().trim_start_matches("sigil:")),
            "a reserved name (spec §9)",
            r.as_str(),
            expect,
        );
    }
}
