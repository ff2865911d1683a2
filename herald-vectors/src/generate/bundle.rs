//! Proof-bundle cases (`docs/audit-log.md`, "Proof bundle"; PROFILE.md P8
//! rule 3, P9): molts proven, or not, by inclusion proofs that travel in
//! the bundle with the very molt they name, and bundles whose container
//! or items are broken.
//!
//! One story: Alice is born, speaks, and molts to Carol's key once the
//! 24 h cool-off allows (P8 rule 2); the new key then speaks for Alice's
//! sigil, and so, too late, does the old one. The audit log `log` (pinned
//! in the cases' keyrings unless a case says otherwise) holds a message of
//! Bob's, Alice's birth and first message, the molt, another molt of the
//! same keys that no bundle carries, and the first of two overlapping
//! molts (P8 rule 5).

use herald_core::cbor::{self, Value};
use herald_core::{Envelope, ReasonCode as R, SigilForm};
use herald_verify::{InclusionProof, Leaf, encode_bundle};

use super::proof::{MemLog, flipped, flipped_sig};
use super::{Gen, NOW, T0, hex, invalid, valid};
use crate::forge;
use crate::manifest::{BundleExpect, BundleProofExpect, Case, EnvelopeExpect};

/// The non-normative JSON display of a bundle, on one line: the container
/// as P3's display, except that each envelope and proof byte string is
/// shown as the display of the item it holds (or as
/// `{"non_canonical_hex": …}` when that is not canonical CBOR).
fn display(bytes: &[u8]) -> String {
    let opaque = |b: &[u8]| format!("{{\"non_canonical_hex\":\"{}\"}}", hex(b));
    let item = |b: &[u8]| match cbor::decode(b) {
        Ok(v) => herald_verify::display_json(v),
        Err(_) => opaque(b),
    };
    let Ok(value) = cbor::decode(bytes) else {
        return opaque(bytes);
    };
    let Some(map) = value.as_map() else {
        return herald_verify::display_json(value);
    };
    let mut fields = Vec::new();
    for (key, v) in map.iter() {
        let shown = match (key, v.as_array()) {
            ("envelopes" | "proofs", Some(items)) => {
                let shown: Vec<String> = items
                    .iter()
                    .map(|i| {
                        i.as_bytes()
                            .map_or_else(|| herald_verify::display_json(i), item)
                    })
                    .collect();
                format!("[{}]", shown.join(","))
            }
            _ => herald_verify::display_json(v),
        };
        let key = serde_json::to_string(key).unwrap_or_default();
        fields.push(format!("{key}:{shown}"));
    }
    format!("{{{}}}", fields.join(","))
}

impl Gen {
    /// A `bundle` case: the bundle's bytes, its display, the pinned keys,
    /// the verdict of each envelope and whether each proof is valid.
    fn bundle_case(
        &mut self,
        name: &str,
        description: &str,
        bytes: Vec<u8>,
        keyring: &[&str],
        envelopes: Vec<EnvelopeExpect>,
        proofs: &[bool],
    ) {
        let input = format!("cases/bundle/{name}.cbor");
        let shown = format!("cases/bundle/{name}.json");
        let mut line = display(&bytes);
        line.push('\n');
        self.files.insert(input.clone(), bytes);
        self.files.insert(shown.clone(), line.into_bytes());
        self.cases.push(Case::Bundle {
            name: name.into(),
            description: description.into(),
            input,
            display: shown,
            keyring: keyring.iter().map(|s| (*s).into()).collect(),
            now: NOW,
            skew: 300,
            required_scopes: Vec::new(),
            expect: BundleExpect {
                envelopes,
                proofs: proofs
                    .iter()
                    .map(|&valid| BundleProofExpect { valid })
                    .collect(),
            },
        });
    }
}

/// The bundle of `envs`, `proofs` and the public keys of the keys named.
fn make(g: &Gen, envs: &[&Envelope], proofs: &[&[u8]], keys: &[&str]) -> Vec<u8> {
    let envs: Vec<&[u8]> = envs.iter().map(|e| e.as_bytes()).collect();
    let keys: Vec<_> = keys.iter().map(|k| g.key(k).public_key()).collect();
    encode_bundle(&envs, proofs, &keys)
}

fn unproven() -> EnvelopeExpect {
    invalid(&[(R::MoltUnproven, None)])
}

fn rotated() -> EnvelopeExpect {
    invalid(&[(R::RotatedKey, None)])
}

fn malformed() -> EnvelopeExpect {
    invalid(&[(R::Malformed, None)])
}

/// Every bundle case.
#[allow(clippy::too_many_lines)]
pub(super) fn bundle_cases(g: &mut Gen) -> Result<(), String> {
    let day = 86_400;
    // The story (as the lifecycle case `molt_accepted`, with fresh nonces).
    let filler = g.msg("bob", "carol", None, "logged before Alice's story");
    let born = g.born("alice", T0, Vec::new(), Vec::new());
    let last = g.said("alice", T0 + 100);
    let not_before = T0 + 100 + day;
    let molt = g.molt("alice", "carol", T0 + 200, not_before);
    let new_key = g.speak_as("alice", "carol", not_before + 10);
    let old_key = g.said("alice", not_before + 20);
    let early = g.speak_as("alice", "carol", not_before - 10);
    // The same keys, another not_before: another molt, logged, never bundled.
    let other_molt = g.molt("alice", "carol", T0 + 200, not_before + 1);
    // Two molts of Alice's key with overlapping windows (P8 rule 5), and
    // the first one's new key speaking after its not_before.
    let m1 = g.molt("alice", "bob", T0 + 10, NOW);
    let m2 = g.molt("alice", "carol", T0 + 20, NOW + 100);
    let after_dispute = g.said("alice", T0 + 30);
    let bob_as_alice = g.speak_as("alice", "bob", NOW + 50);

    let logged = [&filler, &born, &last, &molt, &other_molt, &m1];
    let log = MemLog::new(
        "log",
        logged
            .iter()
            .map(|e| Leaf::from_envelope(&e.view()))
            .collect(),
    );
    let size = 6;
    let prove = |g: &Gen, i: u64| log.inclusion(g, i, size);
    let of_molt = prove(g, 3)?;
    let of_molt_bytes = of_molt.encode();
    let of_last = prove(g, 2)?.encode();
    let of_other_molt = prove(g, 4)?.encode();
    let of_m1 = prove(g, 5)?.encode();

    let story = [&born, &last, &molt, &new_key, &old_key];
    let proven = make(g, &story, &[&of_molt_bytes], &[]);
    g.bundle_case(
        "bundle_molt_proven",
        "an accepted molt with a bundled inclusion proof of it in the pinned log: the new key's envelope after not_before is valid, the old key's is rotated_key (P8 rule 3)",
        proven.clone(),
        &["log"],
        vec![valid(), valid(), valid(), valid(), rotated()],
        &[true],
    );
    g.bundle_case(
        "bundle_log_key_not_pinned",
        "the same proof, the log's key carried only in the bundle's keys: a bundle key never makes a log trusted; the proof is invalid and the new key unproven",
        make(g, &story, &[&of_molt_bytes], &["log"]),
        &[],
        vec![valid(), valid(), valid(), unproven(), rotated()],
        &[false],
    );
    g.bundle_case(
        "bundle_proof_of_another_envelope",
        "a valid inclusion proof of Alice's earlier message, which is in the set: it proves that message, not the molt",
        make(g, &story, &[&of_last], &[]),
        &["log"],
        vec![valid(), valid(), valid(), unproven(), rotated()],
        &[true],
    );
    g.bundle_case(
        "bundle_proof_of_another_molt",
        "an honest proof of another molt of the same keys (another not_before), which the set does not hold: it names no envelope of the set",
        make(g, &story, &[&of_other_molt], &[]),
        &["log"],
        vec![valid(), valid(), valid(), unproven(), rotated()],
        &[false],
    );
    let bad_path = InclusionProof::new(
        of_molt.index(),
        of_molt.leaf().clone(),
        flipped(of_molt.path(), 0),
        of_molt.sth().clone(),
    );
    g.bundle_case(
        "bundle_proof_path_flipped",
        "the molt's proof with one bit of its first path hash flipped",
        make(g, &story, &[&bad_path.encode()], &[]),
        &["log"],
        vec![valid(), valid(), valid(), unproven(), rotated()],
        &[false],
    );
    let bad_sig = InclusionProof::new(
        of_molt.index(),
        of_molt.leaf().clone(),
        of_molt.path().to_vec(),
        flipped_sig(of_molt.sth()),
    );
    g.bundle_case(
        "bundle_proof_sth_signature_flipped",
        "the molt's proof with one bit of its tree head's signature flipped",
        make(g, &story, &[&bad_sig.encode()], &[]),
        &["log"],
        vec![valid(), valid(), valid(), unproven(), rotated()],
        &[false],
    );
    g.bundle_case(
        "bundle_new_key_before_not_before",
        "a valid proof of the molt; the new key also signed before not_before, which no proof makes count (P8)",
        make(g, &[&born, &last, &molt, &early, &new_key], &[&of_molt_bytes], &[]),
        &["log"],
        vec![valid(), valid(), valid(), unproven(), valid()],
        &[true],
    );
    let disputed = invalid(&[(R::Disputed, None)]);
    g.bundle_case(
        "bundle_disputed_one_proven",
        "two molts with overlapping windows, the first proven included in the pinned log: both stay void and the sigil disputed (P8 rule 5); the first molt's new key does not count",
        make(
            g,
            &[&born, &m1, &m2, &after_dispute, &bob_as_alice],
            &[&of_m1],
            &[],
        ),
        &["log"],
        vec![
            valid(),
            disputed.clone(),
            disputed.clone(),
            disputed,
            invalid(&[(R::Disputed, None), (R::MoltUnproven, None)]),
        ],
        &[true],
    );

    // Keys a bundle carries verify the sigils they hash to, nothing else.
    let from_bob = g.msg("bob", "alice", None, "bob, known only by the bundle");
    let from_carol = g.msg("carol", "alice", None, "carol, known to no one");
    g.bundle_case(
        "bundle_keys_verify_unpinned_sender",
        "a bundle carrying Bob's key, verified with an empty keyring: Bob's envelope is valid, Carol's (no key anywhere) has an unknown signer",
        make(g, &[&from_bob, &from_carol], &[], &["bob"]),
        &[],
        vec![valid(), invalid(&[(R::UnknownSigner, Some(0))])],
        &[],
    );

    // A broken container is one malformed entry, and no proof is checked.
    g.bundle_case(
        "bundle_unknown_field",
        "the proven bundle with an extra field `note`: not herald-bundle-v1",
        forge::edit(&proven, |m| {
            m.insert("note", Value::text("hello"));
        }),
        &["log"],
        vec![malformed()],
        &[],
    );
    g.bundle_case(
        "bundle_no_envelopes",
        "a bundle with an empty `envelopes` and the molt's proof: verifying nothing must not look like success",
        forge::edit(&proven, |m| {
            m.insert("envelopes", Value::Array(Vec::new()));
        }),
        &["log"],
        vec![malformed()],
        &[],
    );
    let wrong_line = format!(
        "{} ed25519 {}",
        g.sigil("bob", SigilForm::Default),
        hex(g.key("carol").public_key().as_bytes())
    );
    g.bundle_case(
        "bundle_key_not_its_sigil",
        "a `keys` line naming Bob's sigil with Carol's key: the line is refused, and with it the bundle",
        forge::edit(&make(g, &[&from_bob], &[], &[]), |m| {
            m.insert("keys", Value::Array(vec![Value::text(wrong_line)]));
        }),
        &[],
        vec![malformed()],
        &[],
    );

    // One bad item hides no other.
    let mut cut = last.as_bytes().to_vec();
    cut.truncate(cut.len() - 3);
    let mut cut_proof = of_last.clone();
    cut_proof.truncate(cut_proof.len() - 3);
    let envs: [&[u8]; 4] = [born.as_bytes(), &cut, molt.as_bytes(), new_key.as_bytes()];
    g.bundle_case(
        "bundle_truncated_items",
        "Alice's earlier message truncated by three bytes, and a second proof truncated likewise: each is one invalid item; the molt's proof still holds and the new key speaks",
        encode_bundle(&envs, &[&of_molt_bytes, &cut_proof], &[]),
        &["log"],
        vec![valid(), malformed(), valid(), valid()],
        &[true, false],
    );
    Ok(())
}
