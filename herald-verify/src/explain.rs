//! Every reason code (PROFILE P11) in plain words, with the section of
//! PROFILE.md that defines its rule: one table, which the inspector's
//! reasons panel (herald-js's WebAssembly build), `herald verify -v` and
//! `herald explain` (CLI.md) all show.

use herald_core::ReasonCode;

/// What a reason means and where the rule is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// One or two sentences for someone who has not read the spec.
    pub text: &'static str,
    /// The PROFILE.md section of the rule, `P1` … `P15`.
    pub section: &'static str,
}

const fn e(text: &'static str, section: &'static str) -> Option<Explanation> {
    Some(Explanation { text, section })
}

/// The explanation of `code`; every code of [`ReasonCode::ALL`] has one
/// (tested).
pub fn explain(code: ReasonCode) -> Option<Explanation> {
    use ReasonCode as C;
    match code {
        C::Malformed => e(
            "The bytes are not a well-formed envelope: bad canonical CBOR, a missing or mistyped field, a bad sigil string or an unknown kind.",
            "P3",
        ),
        C::UnsupportedVersion => e("The envelope's `v` is not herald/0.2.", "P3"),
        C::IdMismatch => e(
            "The `id` carried is not the SHA-256 of the canonical body: the content was changed after it was signed.",
            "P4",
        ),
        C::GenesisTraceMismatch => e(
            "A genesis (no parent) must name itself as its trace: its `trace` is not its `id`.",
            "P4",
        ),
        C::TraceMismatch => e(
            "A reply must stay in its parent's trace; this one names another trace.",
            "P4",
        ),
        C::MissingParent => e(
            "The parent this envelope answers is not among the envelopes given, so the chain is broken here.",
            "P11",
        ),
        C::OriginMissing => e(
            "There is no signature, or signature 0 is not the sender's `origin` signature.",
            "P5",
        ),
        C::OriginSignerMismatch => e(
            "The origin signature was made by someone other than the `from` sigil.",
            "P5",
        ),
        C::BadSignature => e(
            "A signature does not verify under the signer's key (strict Ed25519 over the domain-separated body).",
            "P5",
        ),
        C::UnknownAlg => e("A signature names an algorithm other than ed25519.", "P5"),
        C::UnknownScope => e("A signature names a scope outside the registry.", "P6"),
        C::DuplicateSigner => e("The same key signs the envelope twice.", "P5"),
        C::UnknownSigner => e(
            "No trusted channel (keyring, a birth, a bundle) gives the key of the signer's sigil, so the signature cannot be checked.",
            "P7",
        ),
        C::ReservedSigil => e("A reserved sigil appears as a signer.", "P2"),
        C::ShortSigilMisuse => e(
            "A short sigil is used where the spec requires the full form.",
            "P2",
        ),
        C::RequiredSignatureMissing => e(
            "A signature the policy or the kind requires is absent or does not verify.",
            "P13",
        ),
        C::ReplayedNonce => e(
            "The same sender key used this nonce before: the envelope is a replay.",
            "P10",
        ),
        C::Expired => e("The envelope's `expires` time has passed.", "P10"),
        C::Stale => e(
            "No `expires`, and the `ts` is older than the replay window vouches for.",
            "P10",
        ),
        C::FutureTs => e(
            "The `ts` is further in the future than the clock skew allows.",
            "P10",
        ),
        C::DeprecatedSigner => e(
            "The signer had deprecated its identity before this envelope's `ts`.",
            "P8",
        ),
        C::RotatedKey => e(
            "Signed with a key that a molt (key rotation) retired.",
            "P8",
        ),
        C::Disputed => e(
            "The signer has two overlapping molts: which key is current is disputed.",
            "P8",
        ),
        C::MoltCooloff => e("A molt inside its 24-hour cool-off period.", "P8"),
        C::MoltUnproven => e(
            "Signed by a molted-to key without an inclusion proof of the molt in an audit log.",
            "P8",
        ),
        C::MoltCosignMissing => e(
            "A molt without the co-signatures its molt policy requires.",
            "P8",
        ),
        C::LineageSelf => e("A birth names its own sigil in its lineage.", "P7"),
        C::LineageCycle => e("The lineage of births closes a cycle.", "P7"),
        C::LineageDeprecatedParent => {
            e("A lineage parent was deprecated at the birth's `ts`.", "P7")
        }
        C::SignerUnderDuress => e(
            "Warning: the signer has published a current duress envelope.",
            "P8",
        ),
        C::UnknownField => e(
            "Warning: a top-level field outside P3; it is signed and kept but not interpreted.",
            "P3",
        ),
        C::AttestationMalformed => e(
            "Warning: a standard attestation does not have its registered shape.",
            "P12",
        ),
        C::LineageUnproven => e(
            "Warning: the lineage proof names a lineage claim that the verifier's Heralds have not certified.",
            "P14",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    // Tests unwrap: a failure is the assertion.
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn every_code_is_explained_with_a_profile_section() {
        for &code in ReasonCode::ALL {
            let Some(x) = explain(code) else {
                panic!("{} has no explanation", code.name());
            };
            let n: u32 = x.section.trim_start_matches('P').parse().unwrap_or(0);
            assert!(
                (1..=15).contains(&n),
                "{}: section {}",
                code.name(),
                x.section
            );
            assert!(x.text.ends_with('.'), "{}", code.name());
        }
    }
}
