//! The trace tree of a verification, drawn as text: each genesis at a root,
//! replies indented under their parent with `├─` / `└─`.
//!
//! Built and drawn without recursion (an explicit stack), every envelope
//! drawn at most once, at most
//! [`MAX_DEPTH`] levels and [`MAX_LINES`] envelopes: deeper or further
//! envelopes are counted, not drawn. Envelopes whose ancestry does not
//! reach a genesis in the set are drawn after a note.
//!
//! Parents are found by id, and only an envelope whose carried id is its
//! own owns one (as in the audit, P13 revision 2). An id is a hash over
//! the body, which names the parent, so no parent chain can close on
//! itself: every decoded envelope is reached from a root or an orphan.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

use herald_core::ReasonCode;
use herald_verify::audited::TraceCounts;
use herald_verify::{Audited, Keyring};

use herald_verify::report::hex;

use crate::render::{Style, short, signer};

/// Deepest level drawn; below it a subtree is one "… N more" line.
pub(crate) const MAX_DEPTH: usize = 32;

/// Most envelopes drawn in one tree.
pub(crate) const MAX_LINES: usize = 2_000;

/// The parent links of a report's envelopes (also drawn by [`crate::graph`]).
pub(crate) struct Forest {
    /// Children of each entry, in input order.
    pub(crate) children: Vec<Vec<usize>>,
    /// Genesis envelopes (`parent: null`), in input order.
    roots: Vec<usize>,
    /// Envelopes whose parent is not in the set.
    pub(crate) orphans: Vec<usize>,
    /// Later entries carrying an id seen before.
    repeat: Vec<bool>,
}

/// Who is whose parent: by id, an id owned by its first envelope whose
/// carried id is its own.
pub(crate) fn forest(report: &Audited<'_>) -> Forest {
    let n = report.len();
    // Only decoded envelopes have links; the first of an id owns it. An
    // envelope whose carried id is not its own (`id_mismatch`) is nobody's
    // parent, as in the audit (P13 revision 2): drawn, but owning no id.
    let mut by_id: HashMap<&[u8; 32], usize> = HashMap::new();
    let mut repeat = vec![false; n];
    for (i, repeated) in repeat.iter_mut().enumerate() {
        if report.has(i, ReasonCode::IdMismatch) {
            continue;
        }
        if let Some(id) = report.links(i).map(|l| l.id) {
            if by_id.contains_key(id) {
                *repeated = true;
            } else {
                by_id.insert(id, i);
            }
        }
    }
    let mut f = Forest {
        children: vec![Vec::new(); n],
        roots: Vec::new(),
        orphans: Vec::new(),
        repeat,
    };
    for i in 0..n {
        let Some(links) = report.links(i) else {
            continue;
        };
        match links.parent {
            None => f.roots.push(i),
            Some(p) => match by_id.get(p) {
                Some(&j) => f.children[j].push(i),
                None => f.orphans.push(i),
            },
        }
    }
    f
}

struct Drawing<'a> {
    out: &'a mut dyn Write,
    report: &'a Audited<'a>,
    forest: &'a Forest,
    style: &'a Style,
    keyring: &'a Keyring,
    visited: Vec<bool>,
    lines: usize,
}

impl Drawing<'_> {
    fn label(&self, i: usize) -> String {
        let Some(e) = self.report.envelope(i) else {
            return String::new();
        };
        let mut label = format!(
            "{}  {}  {}",
            short(e.id.as_deref()),
            self.style.status(e.status()),
            signer(e.from.as_deref(), self.keyring)
        );
        if self.forest.repeat[i] {
            label.push_str("  (repeat)");
        }
        label
    }

    /// Draw the subtree of `root`; `note` follows the root's label.
    /// Returns false once [`MAX_LINES`] is reached.
    fn subtree(&mut self, root: usize, note: &str) -> io::Result<bool> {
        // (entry, depth, prefix of its line, whether it is the last child)
        let mut stack: Vec<(usize, usize, String, bool)> = vec![(root, 0, String::new(), true)];
        while let Some((node, depth, prefix, last)) = stack.pop() {
            if self.lines >= MAX_LINES {
                return Ok(false);
            }
            self.visited[node] = true;
            self.lines += 1;
            let (line, child_prefix) = if depth == 0 {
                (format!("{}{note}", self.label(node)), String::new())
            } else {
                let (branch, more) = if last {
                    ("└─ ", "   ")
                } else {
                    ("├─ ", "│  ")
                };
                (
                    format!("{prefix}{branch}{}", self.label(node)),
                    format!("{prefix}{more}"),
                )
            };
            writeln!(self.out, "{}", line.trim_end())?;
            let kids = &self.forest.children[node];
            if kids.is_empty() {
                continue;
            }
            if depth + 1 > MAX_DEPTH {
                let hidden = self.hide_below(node);
                writeln!(
                    self.out,
                    "{child_prefix}└─ … {hidden} more envelope{} below (drawn to depth {MAX_DEPTH})",
                    if hidden == 1 { "" } else { "s" }
                )?;
                continue;
            }
            for (k, &kid) in kids.iter().enumerate().rev() {
                if !self.visited[kid] {
                    stack.push((kid, depth + 1, child_prefix.clone(), k + 1 == kids.len()));
                }
            }
        }
        Ok(true)
    }

    /// Mark every descendant of `node` visited; how many there were.
    fn hide_below(&mut self, node: usize) -> usize {
        let mut count = 0;
        let mut stack: Vec<usize> = self.forest.children[node].clone();
        while let Some(i) = stack.pop() {
            if self.visited[i] {
                continue;
            }
            self.visited[i] = true;
            count += 1;
            stack.extend(self.forest.children[i].iter().copied());
        }
        count
    }
}

/// Draw the forest of `report`.
pub(crate) fn write(
    out: &mut dyn Write,
    report: &Audited<'_>,
    style: &Style,
    keyring: &Keyring,
) -> io::Result<()> {
    let forest = forest(report);
    let counts: HashMap<&[u8; 32], TraceCounts> = report.trace_counts().collect();
    let mut d = Drawing {
        out,
        report,
        forest: &forest,
        style,
        keyring,
        visited: vec![false; report.len()],
        lines: 0,
    };
    let mut headed: HashSet<&[u8; 32]> = HashSet::new();
    let mut complete = true;
    for &root in &forest.roots {
        if let Some(trace) = report.links(root).map(|l| l.trace)
            && headed.insert(trace)
            && let Some(t) = counts.get(trace)
        {
            writeln!(
                d.out,
                "trace {}: {} valid, {} partial, {} invalid, {} lea{}",
                short(Some(&hex(trace))),
                t.valid,
                t.partial,
                t.invalid,
                t.leaves,
                if t.leaves == 1 { "f" } else { "ves" }
            )?;
        }
        complete = d.subtree(root, "")?;
        if !complete {
            break;
        }
    }
    if complete && !forest.orphans.is_empty() {
        writeln!(
            d.out,
            "not connected to a genesis in the set ({} subtree{}):",
            forest.orphans.len(),
            if forest.orphans.len() == 1 { "" } else { "s" }
        )?;
        for &orphan in &forest.orphans {
            let parent = report.links(orphan).and_then(|l| l.parent).map(|p| hex(p));
            let parent = short(parent.as_deref()).to_owned();
            complete = d.subtree(orphan, &format!("  (parent {parent} not in the set)"))?;
            if !complete {
                break;
            }
        }
    }
    if !complete {
        writeln!(
            d.out,
            "… tree cut after {MAX_LINES} envelopes (the lines above list every envelope)"
        )?;
        return Ok(());
    }
    Ok(())
}
