//! Heralds for tests (PROFILE P14): a Herald key with its own C2SP log
//! ([`TestHerald`]), witnesses that cosign its checkpoints ([`Witness`]),
//! and the Herald list and tlog-policy texts a verifier reads, all built
//! from herald-core's builder and herald-tlog's formats, so a test states
//! what it expects from the rules, never from this crate's output.

use herald_core::payload::{Claim, certification};
use herald_core::{Envelope, EnvelopeBuilder, Kind, Sigil, SigilForm, SigningKey};
use herald_merkle::{Tree, leaf_hash};
use herald_tlog::checkpoint::{Checkpoint, SignedCheckpoint};
use herald_tlog::note::NoteVerifier;
use herald_tlog::{TlogProof, cosignature};
use herald_verify::CertificationItem;

/// A witness: a name and a cosigning key (C2SP tlog-witness).
pub struct Witness {
    /// Its name in the policy (and its key name).
    pub name: String,
    /// Its key.
    pub key: SigningKey,
}

impl Witness {
    /// Witness `name` with test key `seed`.
    pub fn new(name: &str, seed: u8) -> Self {
        Self {
            name: name.to_owned(),
            key: crate::key(seed),
        }
    }

    /// Its policy line: `witness <name> <vkey>`.
    pub fn policy_line(&self) -> String {
        let v = NoteVerifier::cosigner(&self.name, self.key.public_key()).unwrap();
        format!("witness {} {v}", self.name)
    }
}

/// A Herald: its identity key, its log's key and origin, and the entries
/// of its log (certification bytes, in the order issued).
pub struct TestHerald {
    /// The Herald's identity key (signs certifications).
    pub key: SigningKey,
    /// The key its log's checkpoints are signed with.
    pub log_key: SigningKey,
    /// Its log's origin.
    pub origin: String,
    /// The log's entries.
    pub entries: Vec<Vec<u8>>,
    next_nonce: u64,
}

impl TestHerald {
    /// Herald of test key `seed` (its log key is `seed + 100`), log origin
    /// `example.com/herald-<seed>`.
    pub fn new(seed: u8) -> Self {
        Self {
            key: crate::key(seed),
            log_key: crate::key(seed.wrapping_add(100)),
            origin: format!("example.com/herald-{seed}"),
            entries: Vec::new(),
            next_nonce: u64::from(seed) << 32,
        }
    }

    /// Its default sigil.
    pub fn sigil(&self) -> Sigil {
        self.key.sigil(SigilForm::Default)
    }

    /// Its Herald list line (`herald <sigil> ed25519 <hex> <origin>`),
    /// followed by `extra` (a URL, a label) when not empty.
    pub fn list_line(&self, extra: &str) -> String {
        let mut line = format!(
            "herald {} {}",
            herald_verify::key_line(&self.key.public_key()),
            self.origin
        );
        if !extra.is_empty() {
            line.push(' ');
            line.push_str(extra);
        }
        line
    }

    /// Its log's policy line: `log <vkey>`.
    pub fn policy_line(&self) -> String {
        let v = NoteVerifier::ed25519(&self.origin, self.log_key.public_key()).unwrap();
        format!("log {v}")
    }

    /// A certification of `claim` about `subject` at `ts` (`to` the
    /// subject), signed by the Herald as `from_form`, NOT logged.
    pub fn sign(
        &mut self,
        subject: Sigil,
        claim: &Claim<'_>,
        ts: u64,
        not_after: Option<u64>,
        from_form: SigilForm,
    ) -> Envelope {
        self.next_nonce += 1;
        EnvelopeBuilder::genesis(ts)
            .kind(Kind::Certification)
            .from_form(from_form)
            .to(subject)
            .nonce(crate::nonce(self.next_nonce))
            .payload(certification(&subject, claim, not_after))
            .sign(&self.key)
            .unwrap()
    }

    /// [`TestHerald::sign`] by the default sigil, then appended to the log.
    pub fn certify(
        &mut self,
        subject: Sigil,
        claim: &Claim<'_>,
        ts: u64,
        not_after: Option<u64>,
    ) -> Envelope {
        let e = self.sign(subject, claim, ts, not_after, SigilForm::Default);
        self.log(&e);
        e
    }

    /// Append `e`'s bytes to the log.
    pub fn log(&mut self, e: &Envelope) {
        self.entries.push(e.as_bytes().to_vec());
    }

    /// The tree of the first `size` entries.
    fn tree(&self, size: usize) -> Tree {
        Tree::from_leaf_hashes(self.entries[..size].iter().map(|e| leaf_hash(e)))
    }

    /// The signed checkpoint of the log's current size, cosigned by
    /// `witnesses` at `time`: its note text with every signature line.
    pub fn checkpoint(&self, witnesses: &[&Witness], time: u64) -> String {
        let tree = self.tree(self.entries.len());
        let cp = Checkpoint::new(&self.origin, tree.len(), tree.root()).unwrap();
        let mut signed = SignedCheckpoint::sign(cp, &self.origin, &self.log_key).unwrap();
        let body = signed.checkpoint().to_text();
        for w in witnesses {
            let sig = cosignature::sign(&w.name, &w.key, time, body.as_bytes()).unwrap();
            signed.note_mut().push(sig).unwrap();
        }
        signed.note().to_text()
    }

    /// The C2SP tlog-proof of `e` (a logged entry) in `checkpoint` (one of
    /// [`TestHerald::checkpoint`]'s, of the current size).
    pub fn proof(&self, e: &Envelope, checkpoint: &str) -> String {
        let index = self
            .entries
            .iter()
            .position(|x| x == e.as_bytes())
            .expect("a logged certification");
        let size = self.entries.len() as u64;
        let path = self
            .tree(self.entries.len())
            .inclusion_proof(index as u64, size)
            .unwrap();
        TlogProof::new(index as u64, path, checkpoint).to_text()
    }

    /// `e` and its proof in a checkpoint of the current size cosigned by
    /// `witnesses`.
    pub fn item(&self, e: &Envelope, witnesses: &[&Witness]) -> CertificationItem {
        let cp = self.checkpoint(witnesses, crate::T0);
        CertificationItem::new(e.as_bytes().to_vec(), self.proof(e, &cp))
    }
}

/// A tlog-policy naming each Herald's log and each witness, with the
/// quorum line `quorum` (a witness name, a group defined in `extra`, or
/// `none`).
pub fn policy(
    heralds: &[&TestHerald],
    witnesses: &[&Witness],
    extra: &str,
    quorum: &str,
) -> String {
    let mut text = String::new();
    for h in heralds {
        text.push_str(&h.policy_line());
        text.push('\n');
    }
    for w in witnesses {
        text.push_str(&w.policy_line());
        text.push('\n');
    }
    text.push_str(extra);
    text.push_str(&format!("quorum {quorum}\n"));
    text
}

/// A Herald list of `heralds` (each line as [`TestHerald::list_line`]
/// with no extra) and `threshold N`.
pub fn list(heralds: &[&TestHerald], threshold: usize) -> String {
    let mut text = String::from("# the verifier's Heralds\n");
    for h in heralds {
        text.push_str(&h.list_line(""));
        text.push('\n');
    }
    text.push_str(&format!("threshold {threshold}\n"));
    text
}

/// The `model` claim of `name`, with no hash.
pub fn model(name: &str) -> Claim<'_> {
    Claim::Model {
        name,
        model_hash: None,
    }
}
