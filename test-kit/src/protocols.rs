//! Example traces of the agent protocols HERALD signs for (docs/haven.md,
//! docs/valp.md), built from each protocol's own operation sequence, with
//! fixed keys, nonces and times: the honest runs and one bad input per
//! rule. herald-verify's profile tests check them, herald-cli writes them
//! as its snapshot fixtures.
//!
//! Each function returns the envelopes in log order; a case's expected
//! findings are the tests' business (derived there from the rules).

use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Kind, Sigil, SigilForm, SigningKey};
use sha2::Digest;

use crate::{T0, key, nonce};

/// How long each step stays good (`expires = ts + LIFETIME`).
pub const LIFETIME: u64 = 3_600;

/// A map value from its pairs.
pub fn map(pairs: &[(&str, Value)]) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(*k, v.clone());
    }
    Value::Map(m)
}

fn t(s: &str) -> Value {
    Value::text(s)
}

/// A trace under construction: each step a reply to the one named.
pub struct Trace {
    /// The envelopes, in log order.
    pub steps: Vec<Envelope>,
    n: u64,
    /// Nonce base: keeps two traces' nonces apart.
    base: u64,
}

impl Trace {
    /// An empty trace whose nonces start at `base`.
    pub fn new(base: u64) -> Self {
        Self {
            steps: Vec::new(),
            n: 0,
            base,
        }
    }

    /// Step `parent` (an index into the steps, or a genesis) by `by` at
    /// `T0 + at`, good for [`LIFETIME`] unless `expires` is false.
    pub fn step(
        &mut self,
        parent: Option<usize>,
        by: &SigningKey,
        at: u64,
        payload: Value,
        expires: bool,
    ) -> usize {
        self.step_with(parent, by, at, payload, |b| {
            if expires {
                b.expires(T0 + at + LIFETIME)
            } else {
                b
            }
        })
    }

    /// As [`Trace::step`], the builder adjusted by `f`.
    pub fn step_with(
        &mut self,
        parent: Option<usize>,
        by: &SigningKey,
        at: u64,
        payload: Value,
        f: impl FnOnce(EnvelopeBuilder) -> EnvelopeBuilder,
    ) -> usize {
        self.n += 1;
        let b = match parent.and_then(|p| self.steps.get(p)) {
            Some(p) => EnvelopeBuilder::reply(&p.view(), T0 + at),
            None => EnvelopeBuilder::genesis(T0 + at),
        };
        let env = f(b.nonce(nonce(self.base + self.n)).payload(payload))
            .sign(by)
            .expect("a test step signs");
        self.steps.push(env);
        self.steps.len() - 1
    }

    /// The trace as one CBOR sequence.
    pub fn bytes(&self) -> Vec<u8> {
        self.steps
            .iter()
            .flat_map(|e| e.as_bytes().to_vec())
            .collect()
    }
}

/// Haven's parties: the offerer, two workers and a verifier.
pub mod haven {
    use super::*;

    /// The agent that offers the packet.
    pub fn offerer() -> SigningKey {
        key(10)
    }
    /// The agent that claims it.
    pub fn worker() -> SigningKey {
        key(11)
    }
    /// A second worker.
    pub fn other() -> SigningKey {
        key(12)
    }
    /// The verifier that accepts the work.
    pub fn verifier() -> SigningKey {
        key(13)
    }

    /// A Handoff packet (`type: offer`).
    pub fn packet(
        id: &str,
        max_steps: u64,
        max_ticks: u64,
        depth: u64,
    ) -> Vec<(&'static str, Value)> {
        vec![
            ("type", t("offer")),
            ("packetId", t(id)),
            ("summary", t("summarise the incident log")),
            (
                "objective",
                t("a five-line summary of the outage, with its cause"),
            ),
            (
                "budget",
                map(&[
                    ("maxSteps", Value::Unsigned(max_steps)),
                    ("maxTicks", Value::Unsigned(max_ticks)),
                ]),
            ),
            ("failurePolicy", t("release")),
            ("root", t(id)),
            ("depth", Value::Unsigned(depth)),
        ]
    }

    fn op(ty: &str) -> Value {
        map(&[("type", t(ty))])
    }

    fn evidence_row() -> Value {
        map(&[
            ("type", t("evidence")),
            ("artifact", t("summary.md")),
            (
                "sha256",
                t("6f1ed002ab5595859014ebf0951522d9f3f4c1e2f0b4b8c1a6b0e1d2c3b4a596"),
            ),
        ])
    }

    /// Offer, claim, a yield, the evidence row, completion and the
    /// verifier's acceptance (the `complete` ending).
    pub fn complete() -> Trace {
        let mut tr = Trace::new(1000);
        let offer = tr.step(None, &offerer(), 0, map(&packet("pkt-1", 20, 600, 2)), true);
        let claim = tr.step(Some(offer), &worker(), 10, op("claim"), true);
        let y = tr.step(Some(claim), &worker(), 20, op("yield"), true);
        let ev = tr.step(Some(y), &worker(), 30, evidence_row(), true);
        let done = tr.step(Some(ev), &worker(), 40, op("complete"), true);
        tr.step(Some(done), &verifier(), 50, op("acceptance"), true);
        tr
    }

    /// The first worker releases the packet, a second claims it, proves
    /// and completes it, and the offerer records the outcome (`release`).
    pub fn release() -> Trace {
        let mut tr = Trace::new(2000);
        let offer = tr.step(None, &offerer(), 0, map(&packet("pkt-2", 20, 600, 2)), true);
        let claim = tr.step(Some(offer), &worker(), 10, op("claim"), true);
        tr.step(Some(claim), &worker(), 20, op("release"), true);
        let again = tr.step(Some(offer), &other(), 30, op("claim"), true);
        let ev = tr.step(Some(again), &other(), 40, evidence_row(), true);
        let done = tr.step(Some(ev), &other(), 50, op("complete"), true);
        tr.step(Some(done), &offerer(), 60, op("outcome"), true);
        tr
    }

    /// The worker claims and goes silent; once its claim has expired the
    /// offerer settles the packet (`silence-then-settle`).
    pub fn settle() -> Trace {
        let mut tr = Trace::new(3000);
        let offer = tr.step(None, &offerer(), 0, map(&packet("pkt-3", 20, 600, 2)), true);
        tr.step(Some(offer), &worker(), 10, op("claim"), true);
        tr.step(
            Some(offer),
            &offerer(),
            10 + LIFETIME + 900,
            op("settle"),
            true,
        );
        tr
    }

    /// The worker delegates part of the packet to a child packet within
    /// its own budget; the child's worker proves and completes, then the
    /// worker does, and the verifier accepts.
    pub fn delegated() -> Trace {
        delegated_with(&packet("pkt-4.1", 5, 300, 1))
    }

    /// [`delegated`] with the child packet's fields given.
    pub fn delegated_with(child: &[(&'static str, Value)]) -> Trace {
        let mut tr = Trace::new(4000);
        let offer = tr.step(None, &offerer(), 0, map(&packet("pkt-4", 20, 600, 2)), true);
        let claim = tr.step(Some(offer), &worker(), 10, op("claim"), true);
        let mut fields = child.to_vec();
        fields.retain(|(k, _)| *k != "root");
        fields.push(("parent", t("pkt-4")));
        fields.push(("root", t("pkt-4")));
        let sub = tr.step(Some(claim), &worker(), 20, map(&fields), true);
        let sub_claim = tr.step(Some(sub), &other(), 30, op("claim"), true);
        let sub_ev = tr.step(Some(sub_claim), &other(), 40, evidence_row(), true);
        let sub_done = tr.step(Some(sub_ev), &other(), 50, op("complete"), true);
        // The worker, the child packet's consumer, accepts its result, then
        // proves its own packet.
        tr.step(Some(sub_done), &worker(), 55, op("acceptance"), true);
        let ev = tr.step(Some(claim), &worker(), 60, evidence_row(), true);
        let done = tr.step(Some(ev), &worker(), 70, op("complete"), true);
        tr.step(Some(done), &verifier(), 80, op("acceptance"), true);
        tr
    }

    /// Bad: a completion with no evidence step.
    pub fn unproven() -> Trace {
        let mut tr = Trace::new(5000);
        let offer = tr.step(None, &offerer(), 0, map(&packet("pkt-5", 20, 600, 2)), true);
        let claim = tr.step(Some(offer), &worker(), 10, op("claim"), true);
        tr.step(Some(claim), &worker(), 20, op("complete"), true);
        tr
    }

    /// Bad: the worker accepts its own work.
    pub fn self_accepted() -> Trace {
        let mut tr = Trace::new(6000);
        let offer = tr.step(None, &offerer(), 0, map(&packet("pkt-6", 20, 600, 2)), true);
        let claim = tr.step(Some(offer), &worker(), 10, op("claim"), true);
        let ev = tr.step(Some(claim), &worker(), 20, evidence_row(), true);
        let done = tr.step(Some(ev), &worker(), 30, op("complete"), true);
        tr.step(Some(done), &worker(), 40, op("acceptance"), true);
        tr
    }

    /// Bad: the child packet's budget is wider than its parent's.
    pub fn widened() -> Trace {
        delegated_with(&packet("pkt-4.1", 50, 300, 1))
    }

    /// Bad: the offerer claims its own packet under its long-form sigil,
    /// naming the worker in the payload.
    pub fn offerer_claims() -> Trace {
        let mut tr = Trace::new(7000);
        let offer = tr.step(None, &offerer(), 0, map(&packet("pkt-7", 20, 600, 2)), true);
        tr.step_with(
            Some(offer),
            &offerer(),
            10,
            map(&[("type", t("claim")), ("claimer", t("worker"))]),
            |b| b.from_form(SigilForm::Long).expires(T0 + 10 + LIFETIME),
        );
        tr
    }

    /// Bad: a second worker claims a packet the first still holds.
    pub fn two_claimers() -> Trace {
        let mut tr = Trace::new(8000);
        let offer = tr.step(None, &offerer(), 0, map(&packet("pkt-8", 20, 600, 2)), true);
        tr.step(Some(offer), &worker(), 10, op("claim"), true);
        tr.step(Some(offer), &other(), 20, op("claim"), true);
        tr
    }

    /// Bad: the offerer settles while the claim is still good, the
    /// evidence row holds a credential and a step has no `expires`.
    pub fn hasty() -> Trace {
        let mut tr = Trace::new(9000);
        let offer = tr.step(None, &offerer(), 0, map(&packet("pkt-9", 20, 600, 2)), true);
        let claim = tr.step(Some(offer), &worker(), 10, op("claim"), true);
        tr.step(
            Some(claim),
            &worker(),
            20,
            map(&[
                ("type", t("evidence")),
                ("artifact", t("deploy.log")),
                ("password", t("hunter2")),
            ]),
            false,
        );
        tr.step(Some(offer), &offerer(), 30, op("settle"), true);
        tr
    }
}

/// VALP's principals: the installation, the user, the leader, a reviewer.
pub mod valp {
    use super::*;

    /// The installation's own sigil (bootstrap controller, events).
    pub fn installation() -> SigningKey {
        key(20)
    }
    /// The human who selects the leader.
    pub fn user() -> SigningKey {
        key(21)
    }
    /// The selected leader (a runtime controller).
    pub fn leader() -> SigningKey {
        key(22)
    }
    /// An independent reviewer.
    pub fn reviewer() -> SigningKey {
        key(23)
    }

    /// The evidence bytes of the example (`evidence/tests.log`).
    pub const EVIDENCE: &[u8] = b"test result: ok. 42 passed; 0 failed\n";

    /// The evidence's `content_ref`.
    pub const EVIDENCE_REF: &str = "evidence/tests.log";

    /// `sha256:` and the lowercase hex SHA-256 of `bytes`.
    pub fn digest(bytes: &[u8]) -> String {
        let d = sha2::Sha256::digest(bytes);
        let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }

    /// A `valp-message.v1`.
    pub fn message(
        id: &str,
        correlation: &str,
        causation: Option<&str>,
        sender: &str,
        kind: &str,
        epoch: u64,
        payload: Value,
    ) -> Value {
        map(&[
            ("schema_version", t("valp-message.v1")),
            ("message_id", t(id)),
            ("correlation_id", t(correlation)),
            ("causation_id", causation.map_or(Value::Null, t)),
            ("sender_principal_id", t(sender)),
            ("kind", t(kind)),
            ("leader_epoch", Value::Unsigned(epoch)),
            ("payload_digest", t(&digest(&payload.to_vec()))),
            ("payload", payload),
        ])
    }

    /// Installation init, leader selection and activation (epoch 0 to 1),
    /// then the leader's evidence and gate-bearing `done` claim, reviewed
    /// by another principal.
    pub fn activation() -> Trace {
        activation_with(EVIDENCE, &reviewer())
    }

    /// [`activation`] with the evidence digest taken over `attested`
    /// bytes and the review signed by `reviewer`.
    pub fn activation_with(attested: &[u8], reviewer: &SigningKey) -> Trace {
        let mut tr = Trace::new(10_000);
        let init = tr.step(
            None,
            &installation(),
            0,
            message(
                "msg-1",
                "corr-bootstrap",
                None,
                "bootstrap-controller",
                "command.installation.init",
                0,
                map(&[("protocol_version", t("0.3.0-draft"))]),
            ),
            true,
        );
        let select = tr.step(
            Some(init),
            &user(),
            10,
            message(
                "msg-2",
                "corr-bootstrap",
                Some("msg-1"),
                "user",
                "command.leader.select",
                0,
                map(&[("selected_principal_id", t("valp-reference-cli"))]),
            ),
            true,
        );
        let active = tr.step(
            Some(select),
            &installation(),
            20,
            message(
                "msg-3",
                "corr-bootstrap",
                Some("msg-2"),
                "bootstrap-controller",
                "event.leader.activated",
                0,
                map(&[
                    (
                        "active_leader",
                        map(&[("principal_id", t("valp-reference-cli"))]),
                    ),
                    ("active_leader_epoch", Value::Unsigned(1)),
                ]),
            ),
            true,
        );
        let evidence = tr.step(
            Some(active),
            &leader(),
            30,
            message(
                "msg-4",
                "corr-task-1",
                Some("msg-3"),
                "valp-reference-cli",
                "evidence.add",
                1,
                map(&[
                    ("evidence_id", t("evidence-1")),
                    ("evidence_kind", t("test_log")),
                    ("content_ref", t(EVIDENCE_REF)),
                    ("content_digest", t(&digest(attested))),
                    ("producer_principal_id", t("valp-reference-cli")),
                ]),
            ),
            true,
        );
        let claim = tr.step(
            Some(evidence),
            &leader(),
            40,
            message(
                "msg-5",
                "corr-task-1",
                Some("msg-4"),
                "valp-reference-cli",
                "claim.declare",
                1,
                map(&[
                    ("claim_id", t("claim-1")),
                    ("claimant_principal_id", t("valp-reference-cli")),
                    ("claim_kind", t("done")),
                    ("predicate", t("tests pass")),
                    ("evidence_refs", Value::Array(vec![t(EVIDENCE_REF)])),
                ]),
            ),
            true,
        );
        tr.step(
            Some(claim),
            reviewer,
            50,
            message(
                "msg-6",
                "corr-task-1",
                Some("msg-5"),
                "reviewer",
                "claim.review",
                1,
                map(&[
                    ("review_id", t("review-1")),
                    ("claim_ids", Value::Array(vec![t("claim-1")])),
                    ("verdict", t("pass")),
                ]),
            ),
            true,
        );
        tr
    }

    /// Bad: the evidence envelope's digest is of other bytes (forged).
    pub fn forged() -> Trace {
        activation_with(b"test result: FAILED. 41 passed; 1 failed\n", &reviewer())
    }

    /// Bad: the leader reviews its own claim.
    pub fn self_reviewed() -> Trace {
        activation_with(EVIDENCE, &leader())
    }

    /// Bad: the claim message again, in a new envelope, under another
    /// correlation id.
    pub fn replayed() -> Trace {
        let mut tr = activation();
        tr.step(
            Some(3),
            &leader(),
            60,
            message(
                "msg-5",
                "corr-task-2",
                Some("msg-4"),
                "valp-reference-cli",
                "claim.declare",
                1,
                map(&[
                    ("claim_id", t("claim-1")),
                    ("claimant_principal_id", t("valp-reference-cli")),
                    ("claim_kind", t("done")),
                    ("predicate", t("tests pass")),
                    ("evidence_refs", Value::Array(vec![t(EVIDENCE_REF)])),
                ]),
            ),
            true,
        );
        tr
    }

    /// Bad: after epoch 1 is active, a message from epoch 0.
    pub fn rollback() -> Trace {
        let mut tr = activation();
        tr.step(
            Some(5),
            &user(),
            60,
            message(
                "msg-7",
                "corr-task-1",
                Some("msg-6"),
                "user",
                "command.leader.select",
                0,
                map(&[("selected_principal_id", t("manual-user"))]),
            ),
            true,
        );
        tr
    }

    /// Bad: the installation is retired (its sigil deprecated), then
    /// accepts a message.
    pub fn retired() -> Trace {
        let mut tr = activation();
        tr.step_with(
            None,
            &installation(),
            60,
            map(&[("reason", t("installation retired"))]),
            |b| b.kind(Kind::Deprecation).expires(T0 + 60 + LIFETIME),
        );
        tr.step(
            Some(5),
            &installation(),
            70,
            message(
                "msg-7",
                "corr-task-1",
                Some("msg-6"),
                "bootstrap-controller",
                "event.claim.accepted",
                1,
                map(&[("claim_id", t("claim-1"))]),
            ),
            true,
        );
        tr
    }

    /// The sigil of `k`, default form.
    pub fn sigil(k: &SigningKey) -> Sigil {
        k.sigil(SigilForm::Default)
    }
}
