//! The memory bound: the densest sets an audit lists. The smallest
//! envelope that decodes is about 190 bytes (no signature), and an audit
//! lists at most `max_envelopes` (1 000 000) of them, so at that count the
//! bound `2 × input + 64 MiB` leaves each envelope its own size plus 67
//! bytes of state: about 257 bytes. These sets are too large to run here;
//! the tests run 200 000 envelopes of each shape (own traces, a chain, a
//! fan, orphans with four reasons each) and check the state each one costs
//! beyond its bytes against that figure (at this count the 64 MiB would
//! hide it), in text, `--json` and `--format dot`. docs/performance.md,
//! "Memory under hostile input", has the figures of the million-envelope
//! runs.
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::path::Path;

use herald_core::{EnvelopeBuilder, EnvelopeRef, Nonce, SigningKey};
use herald_testkit::T0 as TS;
use herald_verify::key_line;

const COUNT: usize = 200_000;

/// State an envelope may cost beyond its bytes: what the bound leaves the
/// smallest envelope at the most envelopes one audit lists.
const PER_ENVELOPE: u64 = 257;

/// A run's baseline (the binary, its allocator, its worker threads, the
/// keyring), measured on one envelope of the shape, three times: the
/// largest, and how far the three lie apart. That fixed cost alone moves by
/// up to ~1 MiB from run to run here (thread stacks and allocator arenas
/// touched or not), 5 B per envelope at this count, as much as the margin
/// the bound leaves; the spread is the measurement's own uncertainty.
fn baseline(dir: &Path, args: &[&str]) -> (u64, u64) {
    let peaks: Vec<u64> = (0..3)
        .map(|_| {
            let m = support::rss::peak_rss(dir, args, None);
            assert_eq!(m.code, 1, "{}", m.stderr);
            m.peak
        })
        .collect();
    let max = peaks.iter().copied().max().unwrap_or(0);
    let min = peaks.iter().copied().min().unwrap_or(0);
    (max, max - min)
}

/// How each envelope of a set links to the one before it.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Each a genesis of its own trace.
    Traces,
    /// Each the reply to the one before: one trace, a chain.
    Chain,
    /// Each a reply to the first: one trace, one node with every reply.
    Fan,
    /// Each a reply to a parent not in the set, its id not its own, its
    /// `ts` ahead of the verifier's clock: four reasons that cost no byte
    /// (`id_mismatch`, `future_ts`, `origin_missing`, `missing_parent`).
    Orphans,
}

/// `count` envelopes by `key`'s sigil, their signature arrays empty
/// (`origin_missing`), each carrying its own id (P4: `body(E, 0)` has no
/// signatures), linked as `shape`. One envelope is signed per shape; the
/// rest are it with the nonce, parent and trace rewritten and the id
/// computed again.
fn set(key: &SigningKey, count: usize, shape: Shape) -> Vec<u8> {
    let genesis = template(EnvelopeBuilder::genesis(TS), key);
    let reply = template(EnvelopeBuilder::reply_to([1; 32], [2; 32], TS), key);
    let mut bytes = Vec::with_capacity(count * reply.len());
    let (mut root, mut last) = ([0u8; 32], [0u8; 32]);
    for i in 0..count {
        let orphan = matches!(shape, Shape::Orphans);
        let is_genesis = !orphan && (i == 0 || matches!(shape, Shape::Traces));
        let mut env = if is_genesis {
            genesis.clone()
        } else {
            reply.clone()
        };
        let at = |field: fn(&EnvelopeRef<'_>) -> Option<*const u8>, env: &[u8]| {
            let view = EnvelopeRef::decode(env).unwrap();
            field(&view).unwrap() as usize - env.as_ptr() as usize
        };
        let nonce = at(|v| Some(v.nonce().as_ptr()), &env);
        env[nonce..nonce + 8].copy_from_slice(&(i as u64).to_be_bytes());
        if !is_genesis {
            let parent = at(|v| v.parent().map(|p| p.as_ptr()), &env);
            let to = match shape {
                Shape::Fan => root,
                Shape::Orphans => [0xee; 32],
                _ => last,
            };
            env[parent..parent + 32].copy_from_slice(&to);
            let trace = at(|v| Some(v.trace().as_ptr()), &env);
            env[trace..trace + 32].copy_from_slice(&root);
        }
        if orphan {
            // Its id stays the template's: not its own.
            bytes.extend_from_slice(&env);
            continue;
        }
        let id = EnvelopeRef::decode(&env).unwrap().computed_id();
        let at_id = at(|v| Some(v.id().as_ptr()), &env);
        env[at_id..at_id + 32].copy_from_slice(&id);
        if is_genesis {
            // A genesis carries its own id as its trace (P4).
            let trace = at(|v| Some(v.trace().as_ptr()), &env);
            env[trace..trace + 32].copy_from_slice(&id);
            if i == 0 {
                root = id;
            }
        }
        last = id;
        bytes.extend_from_slice(&env);
    }
    bytes
}

/// The envelope `builder` signs by `key`, its signatures dropped.
fn template(builder: EnvelopeBuilder, key: &SigningKey) -> Vec<u8> {
    let env = builder.nonce(Nonce([0x5a; 16])).sign(key).unwrap();
    without_signatures(env.as_bytes())
}

/// `envelope` with its `signatures` array (its last field: the longest
/// P3 key of a message with no attestations) emptied.
fn without_signatures(envelope: &[u8]) -> Vec<u8> {
    let key = b"\x6asignatures";
    let at = envelope
        .windows(key.len())
        .rposition(|w| w == key)
        .expect("a signatures field")
        + key.len();
    let mut out = envelope[..at].to_vec();
    out.push(0x80);
    out
}

fn check(shape: Shape) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let key = SigningKey::from_seed(&[0x42; 32]);
    std::fs::write(d.join("k.pub"), key_line(&key.public_key()) + "\n").unwrap();
    let bytes = set(&key, COUNT, shape);
    let one = set(&key, 1, shape);
    std::fs::write(d.join("set.cbor"), &bytes).unwrap();
    std::fs::write(d.join("one.cbor"), &one).unwrap();
    // Orphans are checked an hour before their `ts`.
    let now = match shape {
        Shape::Orphans => TS - 3600,
        _ => TS + 10,
    }
    .to_string();
    if let Shape::Orphans = shape {
        let run = support::herald(
            d,
            &["verify", "one.cbor", "--keyring", "k.pub", "--now", &now],
        );
        for code in [
            "id_mismatch",
            "future_ts",
            "origin_missing",
            "missing_parent",
        ] {
            assert!(run.out().contains(code), "{code}: {}", run.out());
        }
    }
    for mode in [&[][..], &["--json"], &["--format", "dot"]] {
        let args = |file| {
            let mut a = vec!["verify", file, "--keyring", "k.pub", "--now", &now];
            a.extend_from_slice(mode);
            a
        };
        let (base, spread) = baseline(d, &args("one.cbor"));
        let m = support::rss::peak_rss(d, &args("set.cbor"), None);
        assert_eq!(m.code, 1, "{}", m.stderr);
        let state = m.peak.saturating_sub(base + bytes.len() as u64) / COUNT as u64;
        // The measurement cannot tell apart what is within the baseline's
        // own spread, per envelope.
        let uncertainty = spread.div_ceil(COUNT as u64);
        println!(
            "{shape:?} {mode:?}: {COUNT} envelopes, {} B, peak {} B, baseline {base} B \
             (spread {spread} B): {state} B of state each (± {uncertainty})",
            bytes.len(),
            m.peak
        );
        assert!(
            state <= PER_ENVELOPE + uncertainty,
            "{shape:?} {mode:?}: {state} B of state per envelope, over {PER_ENVELOPE} \
             (+ {uncertainty} B of measurement uncertainty)"
        );
        assert!(
            m.written > COUNT * 20,
            "every envelope is reported or drawn"
        );
    }
}

#[test]
fn envelopes_each_its_own_trace_cost_their_bytes() {
    check(Shape::Traces);
}

#[test]
fn a_chain_costs_its_bytes() {
    check(Shape::Chain);
}

#[test]
fn a_node_with_every_reply_costs_its_bytes() {
    check(Shape::Fan);
}

#[test]
fn orphans_with_four_reasons_each_cost_their_bytes() {
    check(Shape::Orphans);
}
