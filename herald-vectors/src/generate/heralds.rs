//! Heralds in a verification (PROFILE P14 *Effects in a verification*,
//! revision 3): an envelope's `lineage_proof` names a `lineage`
//! certification of its `from`; when that claim is not certified by the
//! verifier's Herald quorum the envelope gets the warning
//! `lineage_unproven`, which never changes its status (P11: a warning;
//! P14: nothing a Herald says changes a signature's verdict).
//!
//! The verifier's inputs are written beside the envelopes: its Herald list
//! (P14 *Herald list*), its C2SP tlog-policy naming each Herald's log and
//! a witness, and the `{certification, proof}` items (CONDUIT.md
//! `herald heraldry serve`) with C2SP tlog-proofs against a checkpoint the
//! witness cosigned, all built here from the formats, not read from a
//! Herald. Generated last, so that every earlier case keeps its bytes.

use herald_core::payload::{Claim, certification};
use herald_merkle::{Tree, leaf_hash};
use herald_tlog::checkpoint::{Checkpoint, SignedCheckpoint};
use herald_tlog::note::NoteVerifier;
use herald_tlog::{TlogProof, cosignature};
use herald_verify::CertificationItem;

use super::*;

/// The witness's name in the policy (its key is the manifest's `witness`).
const WITNESS: &str = "w.example";

/// A Herald of the vectors: a manifest key that signs its certifications
/// and its log's checkpoints, its log's origin, and the log's entries.
struct Herald {
    name: &'static str,
    origin: &'static str,
    entries: Vec<Vec<u8>>,
}

impl Herald {
    /// `claim` about `subject` at `T0`, `to` the subject, appended to the
    /// Herald's log.
    fn certify(&mut self, g: &mut Gen, subject: Sigil, claim: &Claim<'_>) -> Envelope {
        let n = g.fresh_nonce();
        let e = g.build(
            self.name,
            EnvelopeBuilder::genesis(T0)
                .kind(Kind::Certification)
                .to(subject)
                .nonce(n)
                .payload(certification(&subject, claim, None)),
        );
        self.entries.push(e.as_bytes().to_vec());
        e
    }

    /// Its Herald list line.
    fn list_line(&self, g: &Gen) -> String {
        format!(
            "herald {} {}\n",
            herald_verify::key_line(&g.key(self.name).public_key()),
            self.origin
        )
    }

    /// Its log's line in the policy (the log is signed by the Herald's key).
    fn policy_line(&self, g: &Gen) -> Result<String, String> {
        let v = NoteVerifier::ed25519(self.origin, g.key(self.name).public_key())
            .map_err(|e| e.to_string())?;
        Ok(format!("log {v}\n"))
    }

    /// Every entry with its proof in the checkpoint of the whole log,
    /// cosigned by the `witness` key at `T0`.
    fn items(&self, g: &Gen) -> Result<Vec<CertificationItem>, String> {
        let tree = Tree::from_leaf_hashes(self.entries.iter().map(|e| leaf_hash(e)));
        let size = tree.len();
        let cp = Checkpoint::new(self.origin, size, tree.root()).map_err(|e| e.to_string())?;
        let mut signed =
            SignedCheckpoint::sign(cp, self.origin, g.key(self.name)).map_err(|e| e.to_string())?;
        let body = signed.checkpoint().to_text();
        let cosig = cosignature::sign(WITNESS, g.key("witness"), T0, body.as_bytes())
            .map_err(|e| e.to_string())?;
        signed.note_mut().push(cosig).map_err(|e| e.to_string())?;
        let text = signed.note().to_text();
        let mut items = Vec::new();
        for (index, entry) in (0u64..).zip(&self.entries) {
            let path = tree
                .inclusion_proof(index, size)
                .map_err(|e| e.to_string())?;
            items.push(CertificationItem::new(
                entry.clone(),
                TlogProof::new(index, path, &text).to_text(),
            ));
        }
        Ok(items)
    }
}

/// The verifier's policy: every Herald's log, the witness, quorum it.
fn policy(g: &Gen, heralds: &[&Herald]) -> Result<String, String> {
    let mut text = String::new();
    for h in heralds {
        text.push_str(&h.policy_line(g)?);
    }
    let w = NoteVerifier::cosigner(WITNESS, g.key("witness").public_key())
        .map_err(|e| e.to_string())?;
    text.push_str(&format!("witness {WITNESS} {w}\nquorum {WITNESS}\n"));
    Ok(text)
}

/// The verifier's Herald list: `heralds`, `threshold`.
fn list(g: &Gen, heralds: &[&Herald], threshold: usize) -> String {
    let mut text = String::from("# the verifier's Heralds (PROFILE P14)\n");
    for h in heralds {
        text.push_str(&h.list_line(g));
    }
    text.push_str(&format!("threshold {threshold}\n"));
    text
}

/// Alice's message at `T0 + minutes` naming `lineage_proof`, if any.
fn speaks(g: &mut Gen, minutes: u64, lineage_proof: Option<[u8; 32]>) -> Vec<u8> {
    let n = g.fresh_nonce();
    let mut b = EnvelopeBuilder::genesis(T0 + minutes * 60)
        .to(g.key("bob").sigil(SigilForm::Default))
        .nonce(n)
        .payload(Value::text("my lineage is certified"));
    if let Some(id) = lineage_proof {
        b = b.lineage_proof(id);
    }
    bytes_of(&g.build("alice", b))
}

/// Every case of Heralds in a verification.
pub(super) fn herald_cases(g: &mut Gen) -> Result<(), String> {
    let alice = g.key("alice").sigil(SigilForm::Default);
    let bob = g.key("bob").sigil(SigilForm::Default);
    let carol = g.key("carol").sigil(SigilForm::Default);
    let mut herald = Herald {
        name: "herald",
        origin: "herald.example/log",
        entries: Vec::new(),
    };
    // alice's lineage (parent carol), bob's lineage, and alice's model.
    let alice_lineage = herald.certify(
        g,
        alice,
        &Claim::Lineage {
            parent: carol,
            model_hash: None,
        },
    );
    let bob_lineage = herald.certify(
        g,
        bob,
        &Claim::Lineage {
            parent: carol,
            model_hash: None,
        },
    );
    let alice_model = herald.certify(
        g,
        alice,
        &Claim::Model {
            name: "m-1",
            model_hash: None,
        },
    );
    let items = herald.items(g)?;
    let nowhere: [u8; 32] = Sha256::digest(b"herald-vectors/v1/no such certification").into();
    let envs = vec![
        speaks(g, 1, Some(alice_lineage.id())),
        speaks(g, 2, Some(bob_lineage.id())),
        speaks(g, 3, Some(alice_model.id())),
        speaks(g, 4, Some(nowhere)),
        speaks(g, 5, None),
    ];
    let unproven = || expect(Status::Valid, &[(R::LineageUnproven, None)]);
    g.heralds(
        "lineage_unproven",
        "one listed Herald (threshold 1) certified alice's lineage, bob's lineage and alice's \
         model, each with its proof in a witnessed checkpoint: alice's lineage_proof naming her \
         certified lineage is proven; naming bob's lineage, her model certification, or no \
         certification at all, it is lineage_unproven, a warning; without a lineage_proof \
         nothing is checked (P11, P14)",
        &envs,
        &["alice", "bob"],
        (&list(g, &[&herald], 1), &policy(g, &[&herald])?, &items),
        vec![valid(), unproven(), unproven(), unproven(), valid()],
    );

    // The same proof with a second listed Herald (carol's key) that
    // certified nothing, at threshold 2: one Herald's word is not a
    // certified claim.
    let carol_herald = Herald {
        name: "carol",
        origin: "carol.example/log",
        entries: Vec::new(),
    };
    let both = [&herald, &carol_herald];
    g.heralds(
        "lineage_unproven_below_threshold",
        "alice's lineage_proof names her lineage certification by one of two listed Heralds at \
         threshold 2: the claim is not certified, lineage_unproven (P14: certified at \
         threshold distinct Heralds)",
        &envs[..1],
        &["alice", "bob"],
        (&list(g, &both, 2), &policy(g, &both)?, &items),
        vec![unproven()],
    );
    Ok(())
}
