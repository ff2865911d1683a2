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

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

use herald_core::ReasonCode;
use herald_verify::{CompactReport, TraceCounts};

use herald_verify::hex;

use crate::names::{Names, SignerMemo};
use crate::render::{Style, short};

/// Deepest level drawn; below it a subtree is one "… N more" line.
pub(crate) const MAX_DEPTH: usize = 32;

/// Most envelopes drawn in one tree.
pub(crate) const MAX_LINES: usize = 2_000;

/// The parent links of a report's envelopes (also drawn by [`crate::graph`]),
/// in a few bytes per envelope (the memory bound: a million envelopes are drawn
/// 2 000 lines deep, and what the drawing holds must not outweigh them).
pub(crate) struct Forest {
    /// Entry `i`'s children, in input order: `kids[first[i]..first[i + 1]]`.
    first: Vec<u32>,
    kids: Vec<u32>,
    /// Genesis envelopes (`parent: null`), in input order.
    roots: Vec<u32>,
    /// Envelopes whose parent is not in the set.
    pub(crate) orphans: Vec<u32>,
    /// Later entries carrying an id seen before.
    repeat: Vec<bool>,
}

impl Forest {
    /// Entry `i`'s children, in input order.
    pub(crate) fn children(&self, i: usize) -> &[u32] {
        match (self.first.get(i), self.first.get(i + 1)) {
            (Some(&a), Some(&b)) => self.kids.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        }
    }
}

/// Entry `i` as the forest holds it (at most `AuditOptions::max_envelopes`
/// plus the items listed that are not envelopes).
fn at(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// Who is whose parent: by id, an id owned by its first envelope whose
/// carried id is its own.
pub(crate) fn forest(report: &CompactReport<'_>) -> Forest {
    let n = report.len();
    // Only decoded envelopes have links; the first of an id owns it. An
    // envelope whose carried id is not its own (`id_mismatch`) is nobody's
    // parent, as in the audit (P13 revision 2): drawn, but owning no id.
    let owns = |i: usize| !report.has(i, ReasonCode::IdMismatch) && report.links(i).is_some();
    let id = |i: u32| report.links(i as usize).map(|l| l.id);
    // The owners of ids, sorted by id (4 bytes an envelope where a hash
    // map took about 20): of entries carrying one id, the first owns it
    // and the later ones are repeats. Until the children are counted,
    // `first` holds each owner's first four id bytes, read in one pass in
    // input order: the sort and the searches compare those, and go to the
    // report (three reads far apart) only where they tie.
    let mut first = vec![0u32; n + 1];
    let mut owners: Vec<u32> = Vec::new();
    for (i, prefix) in first.iter_mut().take(n).enumerate() {
        if let Some(links) = report.links(i).filter(|_| owns(i)) {
            *prefix = head(links.id);
            owners.push(at(i));
        }
    }
    let by_owner = |a: u32, b: u32| {
        first[a as usize]
            .cmp(&first[b as usize])
            .then_with(|| by_id(id(a), id(b)))
            .then(a.cmp(&b))
    };
    owners.sort_unstable_by(|&a, &b| by_owner(a, b));
    let mut repeat = vec![false; n];
    owners.dedup_by(|later, earlier| {
        let same = first[*later as usize] == first[*earlier as usize] && id(*later) == id(*earlier);
        if same {
            repeat[*later as usize] = true;
        }
        same
    });
    let owner = |parent: &[u8; 32]| {
        let target = head(parent);
        owners
            .binary_search_by(|&j| {
                first[j as usize]
                    .cmp(&target)
                    .then_with(|| by_id(id(j), Some(parent)))
            })
            .ok()
            .map(|k| owners[k])
    };
    // Each entry's parent entry (u32::MAX: none in the set), then the
    // children counted and placed.
    let mut parent = vec![u32::MAX; n];
    let (mut roots, mut orphans) = (Vec::new(), Vec::new());
    for (i, p) in parent.iter_mut().enumerate() {
        let Some(links) = report.links(i) else {
            continue;
        };
        match links.parent {
            None => roots.push(at(i)),
            Some(pid) => match owner(pid) {
                Some(j) => *p = j,
                None => orphans.push(at(i)),
            },
        }
    }
    drop(owners);
    first.fill(0);
    for &p in &parent {
        if let Some(count) = first.get_mut((p as usize).saturating_add(1)) {
            *count += 1;
        }
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    // Placed from the last entry back, each at the end of its parent's
    // range, so children keep input order and `first[p + 1]` ends at the
    // start of `p`'s range; shifted back by one, `first` is the index again
    // (no second array of n counters).
    let mut kids = vec![0u32; first[n] as usize];
    for (i, &p) in parent.iter().enumerate().rev() {
        if let Some(end) = first.get_mut(p as usize + 1) {
            *end -= 1;
            kids[*end as usize] = at(i);
        }
    }
    drop(parent);
    first.rotate_left(1);
    first[n] = at(kids.len());
    Forest {
        first,
        kids,
        roots,
        orphans,
        repeat,
    }
}

/// An id's first four bytes as one number, in their byte order.
fn head(id: &[u8; 32]) -> u32 {
    u32::from_be_bytes([id[0], id[1], id[2], id[3]])
}

/// Ids in their byte order (`None` first), the first eight bytes compared
/// as one number: the forest asks only where the first four tie, and for
/// hashes the next four then decide all but the match itself.
fn by_id(a: Option<&[u8; 32]>, b: Option<&[u8; 32]>) -> Ordering {
    let head = |id: &[u8; 32]| {
        let mut h = [0u8; 8];
        h.copy_from_slice(&id[..8]);
        u64::from_be_bytes(h)
    };
    match (a, b) {
        (Some(a), Some(b)) => head(a).cmp(&head(b)).then_with(|| a.cmp(b)),
        _ => a.cmp(&b),
    }
}

struct Drawing<'a> {
    out: &'a mut dyn Write,
    report: &'a CompactReport<'a>,
    forest: &'a Forest,
    style: &'a Style,
    names: SignerMemo<'a>,
    visited: Vec<bool>,
    lines: usize,
}

impl Drawing<'_> {
    fn label(&mut self, i: usize) -> String {
        let Some(e) = self.report.envelope(i) else {
            return String::new();
        };
        let mut label = format!(
            "{}  {}  {}",
            short(e.id.as_deref()),
            self.style.status(e.status()),
            self.names.signer(e.from.as_deref())
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
            let kids = self.forest.children(node);
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
            // Only the kids that can still be drawn, and one more to say
            // the tree goes on: a node with a million replies is drawn
            // without a million entries on the stack.
            let room = MAX_LINES.saturating_sub(self.lines).saturating_add(1);
            let next: Vec<(usize, bool)> = kids
                .iter()
                .enumerate()
                .filter(|&(_, &kid)| !self.visited[kid as usize])
                .take(room)
                .map(|(k, &kid)| (kid as usize, k + 1 == kids.len()))
                .collect();
            for (kid, last) in next.into_iter().rev() {
                stack.push((kid, depth + 1, child_prefix.clone(), last));
            }
        }
        Ok(true)
    }

    /// Mark every descendant of `node` visited; how many there were.
    fn hide_below(&mut self, node: usize) -> usize {
        let mut count = 0;
        let mut stack: Vec<u32> = self.forest.children(node).to_vec();
        while let Some(i) = stack.pop() {
            let i = i as usize;
            if self.visited[i] {
                continue;
            }
            self.visited[i] = true;
            count += 1;
            stack.extend_from_slice(self.forest.children(i));
        }
        count
    }
}

/// Draw the forest of `report`.
pub(crate) fn write(
    out: &mut dyn Write,
    report: &CompactReport<'_>,
    style: &Style,
    names: &Names<'_>,
) -> io::Result<()> {
    let forest = forest(report);
    // The counts of the traces that can be headed: each root drawn takes a
    // line, so no more than the first MAX_LINES + 1 roots are reached.
    let wanted: HashSet<&[u8; 32]> = forest
        .roots
        .iter()
        .take(MAX_LINES + 1)
        .filter_map(|&root| report.links(root as usize).map(|l| l.trace))
        .collect();
    let counts: HashMap<&[u8; 32], TraceCounts> = report
        .trace_counts()
        .filter(|(trace, _)| wanted.contains(trace))
        .collect();
    let mut d = Drawing {
        out,
        report,
        forest: &forest,
        style,
        names: SignerMemo::new(names),
        visited: vec![false; report.len()],
        lines: 0,
    };
    let mut headed: HashSet<&[u8; 32]> = HashSet::new();
    let mut complete = true;
    for root in forest.roots.iter().map(|&r| r as usize) {
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
        for orphan in forest.orphans.iter().map(|&o| o as usize) {
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

#[cfg(test)]
mod tests {
    use super::by_id;

    /// `by_id` is the byte order of `Option<&[u8; 32]>`, also when the
    /// first eight bytes tie and the difference is past them, or in the
    /// eighth byte's high bit.
    #[test]
    fn by_id_is_the_byte_order() {
        let mut ids = vec![[0u8; 32], [0xff; 32]];
        for at in [0, 7, 8, 31] {
            for byte in [0x01, 0x7f, 0x80, 0xfe] {
                let mut low = [0u8; 32];
                low[at] = byte;
                let mut high = [0xffu8; 32];
                high[at] = byte;
                ids.extend([low, high]);
            }
        }
        let mut all: Vec<Option<&[u8; 32]>> = ids.iter().map(Some).collect();
        all.push(None);
        for a in &all {
            for b in &all {
                assert_eq!(by_id(*a, *b), a.cmp(b), "{a:02x?} {b:02x?}");
            }
        }
    }
}
