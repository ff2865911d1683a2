//! Haven's parties and example traces (docs/haven.md): the offerer, two
//! workers and a verifier.

use herald_core::cbor::Value;
use herald_core::{SigilForm, SigningKey};

use super::{LIFETIME, Trace, map, t};
use crate::{T0, key};

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
pub fn packet(id: &str, max_steps: u64, max_ticks: u64, depth: u64) -> Vec<(&'static str, Value)> {
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
