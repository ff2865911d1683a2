//! VALP's principals and example logs (docs/valp.md): the installation,
//! the user, the leader, a reviewer.

use herald_core::cbor::Value;
use herald_core::{Kind, Sigil, SigilForm, SigningKey};
use sha2::Digest;

use super::{LIFETIME, Trace, map, t};
use crate::{T0, key};

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
