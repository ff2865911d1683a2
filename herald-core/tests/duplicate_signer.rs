//! `duplicate_signer` (spec §3.4) against a model: the windowed detection
//! in `verify/duplicate_signer.rs` must flag exactly the signatures a
//! naive comparison with every earlier signature flags, for signature
//! counts on both sides of its window boundaries.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use herald_core::cbor::Value;
use herald_core::{
    CheckOptions, EnvelopeBuilder, ReasonCode, Sigil, SigilForm, Status, check, sigil::Reserved,
};
use proptest::prelude::*;
use support::{Raw, TS, TestRng, alice, keyring, sig_map};

/// What one extra signature map holds.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// Pool key `n` (0 is Alice, who signed the origin) in a given form.
    Key(u8, SigilForm),
    /// A reserved sigil: parses, names no key.
    Reserved(usize),
    /// A map without `sig`: does not parse, never a duplicate, never counted.
    Malformed(u8, SigilForm),
}

fn entry() -> impl Strategy<Value = Entry> {
    let form = prop::sample::select(SigilForm::ALL.to_vec());
    prop_oneof![
        8 => (0u8..6, form).prop_map(|(n, f)| Entry::Key(n, f)),
        1 => (0..Reserved::ALL.len()).prop_map(Entry::Reserved),
        1 => (0u8..6).prop_map(|n| Entry::Malformed(n, SigilForm::Default)),
    ]
}

/// Key `n` of the pool: Alice, or the sigil of some other 32 bytes (an
/// unknown signer; a sigil needs no real key).
fn pool_sigil(n: u8, form: SigilForm) -> Sigil {
    if n == 0 {
        return alice().sigil(form);
    }
    let mut k = [0xab; 32];
    k[0] = n;
    Sigil::from_key(&k, form)
}

/// A genesis by Alice, then one signature map per entry (zeroed `sig`s).
fn envelope(entries: &[Entry]) -> Vec<u8> {
    let env = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&alice(), &mut TestRng::new(7))
        .unwrap();
    let mut raw = Raw::from_bytes(env.as_bytes());
    let mut sigs = raw.signatures();
    for e in entries {
        let by = match *e {
            Entry::Key(n, f) | Entry::Malformed(n, f) => pool_sigil(n, f).to_string(),
            Entry::Reserved(r) => Reserved::ALL[r].as_str().to_string(),
        };
        let mut sig = sig_map("ed25519", &by, "tool_sandbox", &[0; 64], None);
        if let (Entry::Malformed(..), Value::Map(m)) = (e, &mut sig) {
            m.remove("sig");
        }
        sigs.push(sig);
    }
    raw.set_signatures(sigs);
    raw.bytes()
}

/// The model: signature k (1-based here, 0 being the origin) is a
/// duplicate when it parses, names a key, and an earlier parsed one named
/// the same key (whatever the forms, P2).
fn expected(entries: &[Entry]) -> Vec<u32> {
    let mut seen = vec![0u8]; // the origin: Alice
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match *e {
            Entry::Key(n, _) => {
                if seen.contains(&n) {
                    out.push(i as u32 + 1);
                } else {
                    seen.push(n);
                }
            }
            Entry::Reserved(_) | Entry::Malformed(..) => {}
        }
    }
    out
}

fn flagged(bytes: &[u8]) -> Vec<u32> {
    let mut reasons = Vec::new();
    let checked = check(bytes, &keyring(), &CheckOptions::DEFAULT, &mut reasons);
    assert_ne!(checked.status, Status::Invalid, "{reasons:?}");
    reasons
        .iter()
        .filter(|r| r.code == ReasonCode::DuplicateSigner)
        .map(|r| r.index.expect("duplicate_signer names its index"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn duplicates_match_the_model(entries in prop::collection::vec(entry(), 0..140)) {
        let bytes = envelope(&entries);
        prop_assert_eq!(flagged(&bytes), expected(&entries));
    }
}

/// The one key named in several forms across every window boundary up to
/// five windows: each later naming is a duplicate, whatever the forms.
#[test]
fn one_key_in_every_form_across_windows() {
    for n in [31usize, 32, 33, 63, 64, 65, 160] {
        let entries: Vec<Entry> = (0..n)
            .map(|i| Entry::Key((i % 2) as u8 + 1, SigilForm::ALL[i % 3]))
            .collect();
        let got = flagged(&envelope(&entries));
        // Keys 1 and 2 alternate: their first namings (signatures 1 and 2)
        // are new, every later one a duplicate.
        let want: Vec<u32> = (3..=n as u32).collect();
        assert_eq!(got, want, "n = {n}");
    }
}

/// A duplicate whose first naming lies many windows back is still found,
/// and distinct keys in between are not flagged.
#[test]
fn a_duplicate_far_back() {
    let mut entries: Vec<Entry> = vec![Entry::Key(1, SigilForm::Short)];
    // 100 distinct unknown signers and some reserved names in between.
    entries.extend((0..100).map(|i| Entry::Key(i + 2, SigilForm::Default)));
    entries.extend((0..3).map(Entry::Reserved));
    entries.push(Entry::Key(1, SigilForm::Long));
    entries.push(Entry::Key(0, SigilForm::Default)); // Alice, the origin's signer
    let got = flagged(&envelope(&entries));
    assert_eq!(got, vec![105, 106]);
}
