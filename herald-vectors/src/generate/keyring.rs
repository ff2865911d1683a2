//! Keyring file cases (CLI.md, P5 revision 2).

use super::*;

/// Keyring files (CLI.md): a good one, and one refusal per P2/P5 rule a
/// key line can break. A refused line refuses the whole file.
pub(super) fn keyring_cases(g: &mut Gen) {
    let line = |key: &[u8; 32], sigil: &Sigil| {
        let mut buf = [0u8; 52];
        format!("{} ed25519 {}\n", sigil.write_str(&mut buf), hex(key))
    };
    let named = |key: &[u8; 32]| line(key, &Sigil::from_key(key, SigilForm::Default));
    let public = |g: &Gen, name: &str| *g.key(name).public_key().as_bytes();
    let three = format!(
        "# three pinned keys\n{}\n{}{}",
        named(&public(g, "alice")),
        named(&public(g, "bob")),
        named(&public(g, "carol"))
    );
    let mixed = forge::mixed_order_key(1);
    let cases: [(&str, &str, String, KeyringExpect); 4] = [
        (
            "keyring_three_keys",
            "three key lines, a comment and a blank line",
            three,
            KeyringExpect {
                valid: true,
                keys: Some(3),
                line: None,
                error: None,
            },
        ),
        (
            "keyring_mixed_order_key",
            "line 2: a canonical key of mixed order ([0x1234567]B + an order-8 point), \
             under its own sigil: refused, not of prime order (P5 revision 2)",
            format!("{}{}", named(&public(g, "alice")), named(&mixed)),
            KeyringExpect {
                valid: false,
                keys: None,
                line: Some(2),
                error: Some("torsion".into()),
            },
        ),
        (
            "keyring_small_order_key",
            "an order-8 point under its own sigil: refused (P5)",
            named(&forge::small_order_key(1)),
            KeyringExpect {
                valid: false,
                keys: None,
                line: Some(1),
                error: Some("small_order".into()),
            },
        ),
        (
            "keyring_sigil_of_another_key",
            "bob's key under alice's sigil (P2)",
            line(
                &public(g, "bob"),
                &Sigil::from_key(&public(g, "alice"), SigilForm::Default),
            ),
            KeyringExpect {
                valid: false,
                keys: None,
                line: Some(1),
                error: Some("sigil_mismatch".into()),
            },
        ),
    ];
    for (name, description, text, expect) in cases {
        let input = format!("cases/keyring/{name}.pub");
        g.cases.push(Case::Keyring {
            name: name.into(),
            description: description.into(),
            input: input.clone(),
            expect,
        });
        g.files.insert(input, text.into_bytes());
    }
}
