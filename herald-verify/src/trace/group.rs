//! Step 6 of an audit: the set grouped into traces, in order of first
//! appearance, each with its genesis, its leaves (envelopes nobody in the
//! set answers; a repeated envelope is one node, listed once) and its
//! counts (CLI.md `traces`).
//!
//! Sized for a set where every envelope is its own trace (the memory bound): a
//! trace is kept in 28 bytes, the leaves of all traces in one vector
//! grouped by trace, and a node is told by the first eight bytes of its
//! computed id, the full id recomputed only where those are equal.

use alloc::vec::Vec;
use std::collections::HashMap;

use herald_core::cbor::Limits;
use herald_core::{EnvelopeRef, Status};

use super::links::entry;
use super::{Checked, Marks};
use crate::compact::CompactTrace;

/// Every trace of the set, and the leaves they index into.
pub(super) fn traces(set: &Checked<'_>, limits: &Limits) -> (Vec<CompactTrace>, Vec<u32>) {
    let (mut traces, of) = number(set);
    let leaf = leaves(set, limits);
    // The leaves grouped by trace, each trace's in input order: count,
    // then place (`leaves.end` is the fill cursor until the last pass).
    for (&k, _) in of.iter().zip(&leaf).filter(|(_, l)| **l) {
        if let Some(t) = traces.get_mut(k as usize) {
            t.leaves.end += 1;
        }
    }
    let mut at = 0u32;
    for t in &mut traces {
        let n = t.leaves.end;
        t.leaves = at..at;
        at += n;
    }
    let mut flat = alloc::vec![0u32; at as usize];
    for (i, (&k, _)) in of.iter().zip(&leaf).enumerate().filter(|(_, (_, l))| **l) {
        if let Some(t) = traces.get_mut(k as usize)
            && let Some(slot) = flat.get_mut(t.leaves.end as usize)
        {
            *slot = entry(i);
            t.leaves.end += 1;
        }
    }
    (traces, flat)
}

/// Each trace's genesis and counts, numbered in order of first
/// appearance, and the number of each listed entry's trace (`u32::MAX`
/// for an item that did not decode).
fn number(set: &Checked<'_>) -> (Vec<CompactTrace>, Vec<u32>) {
    let decoded = set.facts.iter().filter(|f| f.is_some()).count();
    let mut at: HashMap<&[u8; 32], u32> = HashMap::with_capacity(decoded);
    let mut traces: Vec<CompactTrace> = Vec::new();
    let mut of = alloc::vec![u32::MAX; set.facts.len()];
    for (i, f) in set.facts.iter().enumerate() {
        let Some(f) = f else { continue };
        let k = *at.entry(f.trace).or_insert_with(|| {
            traces.push(CompactTrace::new(entry(i)));
            entry(traces.len() - 1)
        });
        of[i] = k;
        let Some(t) = traces.get_mut(k as usize) else {
            continue;
        };
        if f.genesis && set.id(i) == Some(f.trace) && t.genesis.is_none() {
            t.genesis = Some(entry(i));
        }
        match set.reports[i].status() {
            Status::Valid => t.valid += 1,
            Status::Partial => t.partial += 1,
            Status::Invalid => t.invalid += 1,
        }
    }
    (traces, of)
}

/// Which listed entries are leaves: decoded, with a computed id, named as
/// parent by no other, and the first of their node (the same computed id).
fn leaves(set: &Checked<'_>, limits: &Limits) -> Vec<bool> {
    let candidates: Vec<(u64, u32)> = set
        .marks
        .iter()
        .enumerate()
        .filter(|(_, m)| m.has(Marks::COMPUTED) && !m.has(Marks::HAS_CHILD))
        .map(|(i, _)| (set.computed[i], entry(i)))
        .collect();
    let mut leaf = alloc::vec![false; set.facts.len()];
    for i in first_of_each_node(candidates, |i| computed_id(set, i as usize, limits)) {
        leaf[i as usize] = true;
    }
    leaf
}

/// Of `(prefix, entry)` pairs (a prefix: the first eight bytes of the
/// entry's computed id), the first entry of each computed id; `full`
/// gives the whole id, asked for only where prefixes are equal.
fn first_of_each_node(mut candidates: Vec<(u64, u32)>, full: impl Fn(u32) -> [u8; 32]) -> Vec<u32> {
    candidates.sort_unstable();
    let mut firsts = Vec::with_capacity(candidates.len());
    for run in candidates.chunk_by(|a, b| a.0 == b.0) {
        if let [(_, i)] = run {
            firsts.push(*i);
            continue;
        }
        // Equal first bytes: a repeated envelope, or ids that differ later.
        let mut ids: Vec<([u8; 32], u32)> = run.iter().map(|&(_, i)| (full(i), i)).collect();
        ids.sort_unstable();
        firsts.extend(ids.chunk_by(|a, b| a.0 == b.0).map(|node| node[0].1));
    }
    firsts
}

/// Listed entry `i`'s computed id: its wire id when it owns it, else
/// formed again from its bytes (step 3 decoded them with these limits).
fn computed_id(set: &Checked<'_>, i: usize, limits: &Limits) -> [u8; 32] {
    if let Some(id) = set.id(i) {
        return *id;
    }
    set.bytes
        .get(i)
        .and_then(|b| EnvelopeRef::decode_with(b, limits).ok())
        .map(|v| v.computed_id())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries with the same computed id are one node, its first entry
    /// kept; entries whose ids share the first eight bytes and differ
    /// later are two nodes.
    #[test]
    fn one_node_per_computed_id_whatever_the_prefixes() {
        // Entry i's id: ids[i]; prefixes as given (0 and 1 collide on the
        // prefix though their ids differ; 2 and 4 are one envelope twice).
        let ids = [[1u8; 32], [2; 32], [3; 32], [4; 32], [3; 32]];
        let prefixes = [7u64, 7, 9, 5, 9];
        let candidates = prefixes
            .iter()
            .enumerate()
            .map(|(i, &p)| (p, entry(i)))
            .rev()
            .collect();
        let mut firsts = first_of_each_node(candidates, |i| ids[i as usize]);
        firsts.sort_unstable();
        assert_eq!(firsts, [0, 1, 2, 3]);
    }
}
