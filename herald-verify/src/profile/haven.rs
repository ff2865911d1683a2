//! The Haven profile (docs/haven.md): a delegation is one trace of
//! envelopes, each from the acting party's sigil, whose payload is a map
//! with a `type`:
//!
//! | `type` | by | payload fields read |
//! |---|---|---|
//! | `offer` | the offerer | the Handoff packet: `packetId`, `summary`, `objective`, `budget: {maxSteps, maxTicks}`, `failurePolicy`, `parent`, `root`, `depth` |
//! | `claim` | the worker | |
//! | `yield` | the claimer | |
//! | `evidence` | the claimer | the evidence row |
//! | `complete` | the claimer | |
//! | `release` | the claimer | |
//! | `settle` | the offerer | |
//! | `acceptance`, `outcome` | a verifier or consumer | the receipt |
//!
//! A step belongs to the packet of the nearest `offer` among its
//! ancestors (`parent` links); a child packet is an `offer` whose nearest
//! ancestor offer is its parent packet. Steps are read in input order.

use alloc::{collections::BTreeMap, format, vec::Vec};

use herald_core::cbor::MapRef;

use super::{Entry, FindingCode as C, Findings, Set, common, present, text, unsigned};
use crate::lifecycle::Identity;

/// Step types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Type {
    Offer,
    Claim,
    Yield,
    Evidence,
    Complete,
    Release,
    Settle,
    Receipt,
}

impl Type {
    fn of(name: &str) -> Option<Self> {
        Some(match name {
            "offer" => Self::Offer,
            "claim" => Self::Claim,
            "yield" => Self::Yield,
            "evidence" => Self::Evidence,
            "complete" => Self::Complete,
            "release" => Self::Release,
            "settle" => Self::Settle,
            "acceptance" | "outcome" => Self::Receipt,
            _ => return None,
        })
    }
}

/// One packet's state as its steps are read.
#[derive(Default)]
struct Packet {
    offerer: Option<Identity>,
    /// The party holding the claim now.
    claimer: Option<Identity>,
    /// When the claimer's latest step expires (for `settle`).
    claim_expires: Option<u64>,
    /// The party that last worked the packet (receipts must not be by it).
    worker: Option<Identity>,
    /// The claimer has proved (an `evidence` step) since it claimed.
    proved: bool,
}

pub(super) fn check(set: &Set<'_>, out: &mut Findings) {
    // The packet (its offer's entry) of each entry.
    let offer_of = offers(set);
    let nearest = |k: usize| offer_of.get(k).copied().flatten();
    let mut packets: BTreeMap<usize, Packet> = BTreeMap::new();
    for (k, e) in set.entries.iter().enumerate() {
        if !e.signed {
            continue;
        }
        let Some(payload) = e.step_payload() else {
            continue;
        };
        common(e, out);
        let Some(map) = payload else {
            out.add(e, C::MalformedStep, "the payload is not a map");
            continue;
        };
        let Some(ty) = text(&map, "type").and_then(Type::of) else {
            out.add(
                e,
                C::MalformedStep,
                "no `type` naming a Haven step (offer, claim, yield, evidence, complete, release, \
                 settle, acceptance, outcome)",
            );
            continue;
        };
        if ty == Type::Offer {
            offer(set, nearest(k), e, &map, out);
            packets.insert(
                k,
                Packet {
                    offerer: e.signer,
                    ..Packet::default()
                },
            );
            continue;
        }
        let Some(p) = nearest(k).and_then(|o| packets.get_mut(&o)) else {
            out.add(
                e,
                C::NoPacket,
                "no offer among its ancestors: it belongs to no packet",
            );
            continue;
        };
        step(e, ty, p, out);
    }
}

/// For each entry, the nearest signed offer among its ancestors: each
/// entry's answer is its parent's offer or its parent, found once (a chain
/// of a million yields costs a million steps, not a million squared).
fn offers(set: &Set<'_>) -> Vec<Option<usize>> {
    /// Not yet resolved.
    const UNKNOWN: Option<Option<usize>> = None;
    let n = set.entries.len();
    let mut memo: Vec<Option<Option<usize>>> = alloc::vec![UNKNOWN; n];
    let mut path = Vec::new();
    for k in 0..n {
        // Walk up to an entry already resolved (or a root), then resolve
        // the path back down. Parents are found by hash, so there is no
        // cycle; the walk is bounded by the set's size anyway.
        let mut at = k;
        let mut found = None;
        for _ in 0..=n {
            if let Some(Some(known)) = memo.get(at) {
                found = *known;
                break;
            }
            path.push(at);
            match set.parent(at) {
                Some((p, e)) if e.signed && is_offer(e) => {
                    found = Some(p);
                    break;
                }
                Some((p, _)) => at = p,
                None => break,
            }
        }
        // Each entry on the path answers the same offer as the one above
        // it, unless that one is itself the offer.
        while let Some(j) = path.pop() {
            if let Some(slot) = memo.get_mut(j) {
                *slot = Some(found);
            }
            if let Some(e) = set.entries.get(j)
                && e.signed
                && is_offer(e)
            {
                found = Some(j);
            }
        }
    }
    memo.into_iter().map(Option::flatten).collect()
}

fn is_offer(e: &Entry<'_>) -> bool {
    matches!(e.step_payload(), Some(Some(m)) if text(&m, "type") == Some("offer"))
}

/// One step of a packet, against the packet's state.
fn step(e: &Entry<'_>, ty: Type, p: &mut Packet, out: &mut Findings) {
    let by = e.signer;
    match ty {
        Type::Offer => {}
        Type::Claim => {
            if by == p.offerer {
                out.add(
                    e,
                    C::ClaimByOfferer,
                    "claimed by the key that offered the packet",
                );
            } else if p.claimer.is_some() && p.claimer != by {
                out.add(
                    e,
                    C::SecondClaimer,
                    "another party holds the claim (no release or settlement since)",
                );
            } else {
                if p.claimer != by {
                    p.proved = false;
                }
                p.claimer = by;
                p.worker = by;
                p.claim_expires = e.env.expires();
            }
        }
        Type::Yield | Type::Evidence | Type::Complete | Type::Release => {
            if p.claimer.is_none() || by != p.claimer {
                out.add(
                    e,
                    C::NotClaimer,
                    format!(
                        "a {} by a key that does not hold the packet's claim",
                        name(ty)
                    ),
                );
                return;
            }
            p.claim_expires = e.env.expires();
            match ty {
                Type::Evidence => p.proved = true,
                Type::Complete => {
                    if !p.proved {
                        out.add(
                            e,
                            C::CompletionWithoutEvidence,
                            "completed with no evidence step from the claimer before it",
                        );
                    }
                    p.claimer = None;
                }
                Type::Release => {
                    p.claimer = None;
                    p.proved = false;
                }
                _ => {}
            }
        }
        Type::Settle => {
            if by != p.offerer {
                out.add(
                    e,
                    C::SettleByNonOfferer,
                    "settled by a key other than the offerer's",
                );
                return;
            }
            if p.claimer.is_some() {
                match p.claim_expires {
                    Some(expires) if e.env.ts() > expires => {}
                    Some(expires) => out.add(
                        e,
                        C::SettleBeforeSilence,
                        format!(
                            "settled at {} while the claimer's last step is good until {expires}",
                            e.env.ts()
                        ),
                    ),
                    None => out.add(
                        e,
                        C::SettleBeforeSilence,
                        "settled while the claimer's last step never expires",
                    ),
                }
            }
            p.claimer = None;
        }
        Type::Receipt => {
            if by.is_some() && by == p.worker {
                out.add(
                    e,
                    C::SelfReceipt,
                    "a receipt of the work by the worker's own key",
                );
            }
        }
    }
}

fn name(ty: Type) -> &'static str {
    match ty {
        Type::Offer => "offer",
        Type::Claim => "claim",
        Type::Yield => "yield",
        Type::Evidence => "evidence",
        Type::Complete => "complete",
        Type::Release => "release",
        Type::Settle => "settle",
        Type::Receipt => "receipt",
    }
}

/// An offer: the packet's shape, and narrowing against its parent packet.
fn offer(
    set: &Set<'_>,
    parent_offer: Option<usize>,
    e: &Entry<'_>,
    map: &MapRef<'_>,
    out: &mut Findings,
) {
    let budget = map.get("budget");
    if budget.is_some_and(|b| b.as_map().is_none())
        || ["maxSteps", "maxTicks"].iter().any(|f| {
            budget
                .and_then(|b| b.as_map())
                .is_some_and(|b| present(&b, f) && unsigned(&b, f).is_none())
        })
        || (present(map, "depth") && unsigned(map, "depth").is_none())
        || (present(map, "packetId") && text(map, "packetId").is_none())
    {
        out.add(
            e,
            C::MalformedStep,
            "an offer's `budget` is a map of unsigned `maxSteps`/`maxTicks`, `depth` unsigned, \
             `packetId` text",
        );
        return;
    }
    let Some(parent) = parent_offer.and_then(|p| set.entries.get(p)) else {
        return;
    };
    let Some(Some(pm)) = parent.step_payload() else {
        return;
    };
    let child_budget = budget.and_then(|b| b.as_map());
    let parent_budget = pm.get("budget").and_then(|b| b.as_map());
    for field in ["maxSteps", "maxTicks"] {
        let Some(limit) = parent_budget.as_ref().and_then(|b| unsigned(b, field)) else {
            continue;
        };
        match child_budget.as_ref().and_then(|b| unsigned(b, field)) {
            Some(n) if n <= limit => {}
            Some(n) => out.add(
                e,
                C::BudgetWidened,
                format!("{field} {n} is above its parent packet's {limit}"),
            ),
            None => out.add(
                e,
                C::BudgetWidened,
                format!("no {field}, where its parent packet has {limit}"),
            ),
        }
    }
    if let Some(limit) = unsigned(&pm, "depth") {
        match unsigned(map, "depth") {
            Some(d) if d < limit => {}
            Some(d) => out.add(
                e,
                C::DepthWidened,
                format!("depth {d} is not below its parent packet's {limit}"),
            ),
            None => out.add(
                e,
                C::DepthWidened,
                format!("no depth, where its parent packet has {limit}"),
            ),
        }
    }
    if text(&pm, "objective").is_some_and(|o| !o.is_empty())
        && text(map, "objective").is_none_or(str::is_empty)
    {
        out.add(
            e,
            C::ObjectiveDropped,
            "no objective, where its parent packet has one",
        );
    }
    if let Some(parent_id) = text(&pm, "packetId") {
        let root = text(&pm, "root").unwrap_or(parent_id);
        if text(map, "parent") != Some(parent_id) {
            out.add(
                e,
                C::LineageMismatch,
                format!("`parent` does not name its parent packet {parent_id:?}"),
            );
        }
        if text(map, "root") != Some(root) {
            out.add(
                e,
                C::LineageMismatch,
                format!("`root` does not name the root packet {root:?}"),
            );
        }
    }
}
