//! The human form of a verification: one line per envelope (short id,
//! from, status, reasons as `code[index]`), a summary line, then the trace
//! tree. Colour only on a terminal without `NO_COLOR` (no-color.org).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};
use std::sync::mpsc::{Receiver, sync_channel};

use herald_core::{ReasonCode, Status};
use herald_verify::{CompactReport, EnvelopeReport, KeyOrigin, ProofReport, ReportReason};

use crate::names::{Names, SignerMemo};

use crate::tree;

/// Characters of an id shown in the human form.
pub(crate) const SHORT_ID: usize = 12;

/// Whether to colour statuses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Style {
    colour: bool,
}

impl Style {
    /// Colour when standard output is a terminal and `NO_COLOR` is unset or empty.
    pub(crate) fn for_stdout() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            colour: !no_color && io::stdout().is_terminal(),
        }
    }

    /// `status`, padded to the longest name, coloured green / yellow / red.
    pub(crate) fn status(&self, status: Status) -> String {
        let mut s = String::new();
        self.push_status(&mut s, status);
        s
    }

    /// [`Self::status`], written at the end of `line`.
    fn push_status(&self, line: &mut String, status: Status) {
        let name = status.name();
        let colour = match status {
            Status::Valid => "32",
            Status::Partial => "33",
            Status::Invalid => "31",
        };
        if self.colour {
            line.push_str("\x1b[");
            line.push_str(colour);
            line.push('m');
        }
        line.push_str(name);
        if self.colour {
            line.push_str("\x1b[0m");
        }
        for _ in name.len()..7 {
            line.push(' ');
        }
    }
}

/// How to render.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Options<'a> {
    /// Senders' names: keyring labels beside their short sigils, births'
    /// self-descriptions (crate::names).
    pub(crate) names: &'a Names<'a>,
    /// Colour.
    pub(crate) style: Style,
    /// A line per reason with its detail.
    pub(crate) verbose: bool,
    /// Draw the trace tree.
    pub(crate) tree: bool,
    /// Whether any `--keyring` was given (else a note explains `unknown_signer`).
    pub(crate) keyring_given: bool,
}

/// The first [`SHORT_ID`] hex digits of an id, or `-`.
pub(crate) fn short(id: Option<&str>) -> &str {
    id.map_or("-", |id| id.get(..SHORT_ID).unwrap_or(id))
}

/// `code[index]` (or `code`).
pub(crate) fn reason_label(r: &ReportReason) -> String {
    match r.index {
        Some(i) => format!("{}[{i}]", r.code.name()),
        None => r.code.name().to_owned(),
    }
}

/// The reasons' labels, a run of one label written once with its count
/// (`malformed ×16`: of a code that names no signature), and a run of one
/// code about consecutive signatures written as their range
/// (`bad_signature[1-4]`: every index stated, PROFILE P11 revision 3).
fn labels(reasons: &[ReportReason]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = reasons.iter().peekable();
    while let Some(r) = rest.next() {
        let label = reason_label(r);
        match r.index {
            Some(first) => {
                let mut last = first;
                while rest
                    .next_if(|n| n.code == r.code && n.index == last.checked_add(1))
                    .is_some()
                {
                    last += 1;
                }
                out.push(if last == first {
                    label
                } else {
                    format!("{}[{first}-{last}]", r.code.name())
                });
            }
            None => {
                let mut n = 1usize;
                while rest.next_if(|x| reason_label(x) == label).is_some() {
                    n += 1;
                }
                out.push(if n == 1 {
                    label
                } else {
                    format!("{label} ×{n}")
                });
            }
        }
    }
    out
}

/// Envelopes whose lines one thread renders at a time (a chunk). Every
/// core renders every so many chunks and hands each over in order, so the
/// output is the serial rendering's, byte for byte, and what is held at
/// once is at most two chunks a core, whatever the report's length.
const CHUNK: usize = 512;

/// What Heralds certify about a sender (PROFILE P14), as its first
/// envelope with claims reports them.
type Certified = (String, Vec<herald_verify::ReportedClaim>);

/// A chunk's lines, and the claims of its senders.
type Rendered = io::Result<(Vec<u8>, Vec<Certified>)>;

/// Write the whole human report, each envelope's formed as it is written.
/// A report of more than one [`CHUNK`] is rendered on every core: its
/// lines in chunks (one thread a core, started once), and the trace tree
/// beside them.
pub(crate) fn write_report(
    out: &mut dyn Write,
    report: &CompactReport<'_>,
    opts: &Options,
) -> io::Result<()> {
    let chunks = report.len().div_ceil(CHUNK);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(chunks)
        .max(1);
    let lines = Lines::of(report, opts);
    let chunks = Chunks {
        count: chunks,
        threads,
        len: report.len(),
    };
    std::thread::scope(|scope| {
        // The tree beside the lines when there is a core to spare.
        let tree = (opts.tree && threads > 1).then(|| scope.spawn(|| draw_tree(report, opts)));
        // Helper `t` renders chunks t, t + threads, …: each waits in its
        // channel until this thread has written the ones before it.
        let (mut helpers, handles): (Vec<_>, Vec<_>) = (1..threads)
            .map(|t| {
                let (send, receive) = sync_channel(1);
                let lines = &lines;
                let handle = scope.spawn(move || {
                    for c in (t..chunks.count).step_by(threads) {
                        if send.send(lines.render(chunks.range(c))).is_err() {
                            break;
                        }
                    }
                });
                (Some(receive), handle)
            })
            .unzip();
        let written = write_lines(out, &lines, chunks, &mut helpers);
        // Joined here, so that a helper that failed is not the scope's
        // panic (its chunks were rendered on this thread). Their channels
        // are closed first, so none waits to hand a chunk over.
        drop(helpers);
        for handle in handles {
            let _ = handle.join();
        }
        let certified = written?;
        let drawn = match tree.map(|t| t.join()) {
            None if !opts.tree => Vec::new(),
            Some(Ok(drawn)) => drawn?,
            // Drawn here: on one core, or after its thread failed.
            None | Some(Err(_)) => draw_tree(report, opts)?,
        };
        write_rest(out, report, opts, &certified, &drawn)
    })
}

/// How a report's lines are cut into chunks and dealt to the cores.
#[derive(Clone, Copy, Debug)]
struct Chunks {
    count: usize,
    threads: usize,
    /// Envelopes in the report.
    len: usize,
}

impl Chunks {
    /// The envelopes of chunk `c`.
    fn range(self, c: usize) -> core::ops::Range<usize> {
        c * CHUNK..((c + 1) * CHUNK).min(self.len)
    }
}

/// Every chunk's lines written in order: this thread's own, and the
/// helpers' as they hand them over (a helper that failed has its chunks
/// rendered here). The claims of the senders, each sender once.
fn write_lines(
    out: &mut dyn Write,
    lines: &Lines<'_, '_>,
    chunks: Chunks,
    helpers: &mut [Option<Receiver<Rendered>>],
) -> io::Result<Vec<Certified>> {
    let mut certified = Vec::new();
    for c in 0..chunks.count {
        let helper = (c % chunks.threads)
            .checked_sub(1)
            .and_then(|t| helpers.get_mut(t));
        let rendered = match helper {
            None => lines.render(chunks.range(c)),
            Some(slot) => match slot.as_ref().map(Receiver::recv) {
                Some(Ok(rendered)) => rendered,
                _ => {
                    *slot = None;
                    lines.render(chunks.range(c))
                }
            },
        };
        let (text, claims) = rendered?;
        out.write_all(&text)?;
        merge_certified(&mut certified, claims);
    }
    Ok(certified)
}

/// The trace tree, drawn into a buffer (written after the summary, when
/// not empty).
fn draw_tree(report: &CompactReport<'_>, opts: &Options) -> io::Result<Vec<u8>> {
    let mut drawn = Vec::new();
    tree::write(&mut drawn, report, &opts.style, opts.names)?;
    Ok(drawn)
}

/// `claims` (one chunk's, in order) added to `certified`, each sender once.
fn merge_certified(certified: &mut Vec<Certified>, claims: Vec<Certified>) {
    for (from, c) in claims {
        if !certified.iter().any(|(f, _)| *f == from) {
            certified.push((from, c));
        }
    }
}

/// The envelope lines of a report.
struct Lines<'r, 'a> {
    report: &'r CompactReport<'a>,
    opts: &'r Options<'r>,
    /// The senders' column.
    width: usize,
}

impl<'r, 'a> Lines<'r, 'a> {
    fn of(report: &'r CompactReport<'a>, opts: &'r Options<'r>) -> Self {
        let mut names = SignerMemo::new(opts.names);
        let width = (0..report.len())
            .map(|k| names.signer(report.from(k)).len())
            .max()
            .unwrap_or(1)
            .min(64);
        Self {
            report,
            opts,
            width,
        }
    }

    /// The lines of the envelopes in `range`, and what Heralds certify
    /// about their senders, each sender once.
    fn render(&self, range: core::ops::Range<usize>) -> Rendered {
        let mut text = Vec::new();
        let mut certified = Vec::new();
        self.write(&mut text, range, &mut certified)?;
        Ok((text, certified))
    }

    fn write(
        &self,
        out: &mut dyn Write,
        range: core::ops::Range<usize>,
        certified: &mut Vec<Certified>,
    ) -> io::Result<()> {
        let mut names = SignerMemo::new(self.opts.names);
        let mut line = String::new();
        // Senders of reasonless envelopes whose claims this range has
        // asked for (they are a sender's, whichever envelope reports them).
        let mut asked: HashSet<&str> = HashSet::new();
        for k in range {
            // Most envelopes of a good set: the line from the ids and the
            // sender, the report formed only for a sender's claims.
            if self.report.no_reasons(k)
                && let Some(links) = self.report.links(k)
            {
                let from = self.report.from(k);
                let plain = Plain {
                    id: links.id,
                    signer: names.signer(from),
                };
                plain.write(out, &mut line, self.width, &self.opts.style)?;
                if let Some(from) = from
                    && asked.insert(from)
                    && let Some(e) = self.report.envelope(k)
                {
                    keep_certified(certified, &e);
                }
                continue;
            }
            let Some(e) = self.report.envelope(k) else {
                continue;
            };
            write_envelope(out, &mut line, &e, self.width, self.opts, &mut names)?;
            keep_certified(certified, &e);
        }
        Ok(())
    }
}

/// What follows the envelope lines: the count of items not listed, the
/// summary, the certified claims, the proofs, the notes and the tree.
fn write_rest(
    out: &mut dyn Write,
    report: &CompactReport<'_>,
    opts: &Options,
    certified: &[Certified],
    drawn: &[u8],
) -> io::Result<()> {
    let unlisted = report.unlisted();
    if unlisted > 0 {
        writeln!(
            out,
            "… {} more item{} that {} not envelopes (invalid, malformed), not listed",
            unlisted,
            if unlisted == 1 { "" } else { "s" },
            if unlisted == 1 { "is" } else { "are" }
        )?;
    }
    let s = report.summary();
    let n = report.len() + unlisted;
    writeln!(
        out,
        "{n} envelope{}: {} valid, {} partial, {} invalid",
        if n == 1 { "" } else { "s" },
        s.valid,
        s.partial,
        s.invalid
    )?;
    for (from, claims) in certified {
        let name = opts.names.signer(Some(from.as_str()));
        for c in claims {
            writeln!(
                out,
                "certified: {name} {} {} by {} Herald{}",
                c.claim,
                c.value,
                c.heralds.len(),
                if c.heralds.len() == 1 { "" } else { "s" }
            )?;
        }
    }
    write_proofs(out, report.proofs(), opts)?;
    let from_bundle = (0..report.len())
        .filter(|&k| report.key_source(k) == Some(KeyOrigin::Bundle))
        .count();
    if from_bundle > 0 {
        // Why a bundle's envelopes can be valid where the loose files are
        // unknown_signer (names instead of hashes).
        writeln!(
            out,
            "note: {from_bundle} envelope{} verified under a key the bundle itself carries (it \
             hashes to the sender's sigil, so it is that sigil's key, but no --keyring vouches \
             for who holds it)",
            if from_bundle == 1 { "" } else { "s" }
        )?;
    }
    if !opts.keyring_given && (0..report.len()).any(|k| report.has(k, ReasonCode::UnknownSigner)) {
        writeln!(
            out,
            "note: no --keyring given: only keys of birth envelopes are known"
        )?;
    }
    if !drawn.is_empty() {
        writeln!(out)?;
        out.write_all(drawn)?;
    }
    Ok(())
}

/// One line per bundled inclusion proof, then a count; nothing without proofs.
fn write_proofs(out: &mut dyn Write, proofs: &[ProofReport], opts: &Options) -> io::Result<()> {
    if proofs.is_empty() {
        return Ok(());
    }
    let mut valid = 0;
    for p in proofs {
        if p.status == Status::Valid {
            valid += 1;
        }
        let at = match (p.index, p.size) {
            (Some(i), Some(n)) => format!("leaf {i} of {n}"),
            _ => String::from("-"),
        };
        let mut line = format!(
            "proof {:<SHORT_ID$}  {}  {at}  {}",
            short(p.id.as_deref()),
            p.log.as_deref().unwrap_or("-"),
            opts.style.status(p.status),
        );
        if !p.detail.is_empty() {
            line.push_str(&format!("  ({})", p.detail));
        }
        if let Some(by) = &p.witnessed {
            line.push_str(&format!("  ({by})"));
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    let n = proofs.len();
    writeln!(
        out,
        "{n} inclusion proof{}: {valid} valid, {} invalid",
        if n == 1 { "" } else { "s" },
        n - valid
    )
}

/// `e`'s claims added to `certified` when its sender has none there yet.
fn keep_certified(certified: &mut Vec<Certified>, e: &EnvelopeReport) {
    if let Some(from) = &e.from
        && !e.certified.is_empty()
        && !certified.iter().any(|(f, _)| f == from)
    {
        certified.push((from.clone(), e.certified.clone()));
    }
}

/// The line of an envelope whose report has no reason: its short id, its
/// sender and `valid`, as [`write_envelope`] writes the formed report.
struct Plain<'a> {
    id: &'a [u8; 32],
    signer: &'a str,
}

impl Plain<'_> {
    fn write(
        &self,
        out: &mut dyn Write,
        line: &mut String,
        width: usize,
        style: &Style,
    ) -> io::Result<()> {
        let mut hex = [0u8; SHORT_ID];
        let (shown, _) = self.id.split_at(SHORT_ID / 2);
        data_encoding::HEXLOWER.encode_mut(shown, &mut hex);
        let id = core::str::from_utf8(&hex).unwrap_or("-");
        line_head(line, id, self.signer, width, style, Status::Valid);
        writeln!(out, "{}", line.trim_end())
    }
}

/// What every envelope line opens with, in `line` (cleared first): the
/// short id, the sender padded to `width`, the status.
fn line_head(
    line: &mut String,
    id: &str,
    signer: &str,
    width: usize,
    style: &Style,
    status: Status,
) {
    line.clear();
    let _ = write!(line, "{id:<SHORT_ID$}  {signer:<width$}  ");
    style.push_status(line, status);
}

fn write_envelope(
    out: &mut dyn Write,
    line: &mut String,
    e: &EnvelopeReport,
    width: usize,
    opts: &Options,
    names: &mut SignerMemo<'_>,
) -> io::Result<()> {
    let mut reasons = labels(&e.reasons);
    for u in &e.unlisted_reasons {
        reasons.push(format!("+{} more {}", u.count, u.code.name()));
    }
    line_head(
        line,
        short(e.id.as_deref()),
        names.signer(e.from.as_deref()),
        width,
        &opts.style,
        e.status(),
    );
    line.push_str("  ");
    line.push_str(&reasons.join(", "));
    if e.id.is_none() {
        // Nothing else identifies it: say where it is and what is wrong.
        let _ = match e.reasons.first().filter(|r| !r.detail.is_empty()) {
            Some(r) if !opts.verbose => write!(line, "  ({})", r.detail),
            _ => write!(line, "  ({}, byte {})", e.source.input, e.source.offset),
        };
    }
    writeln!(out, "{}", line.trim_end())?;
    if opts.verbose {
        for r in &e.reasons {
            if r.detail.is_empty() {
                writeln!(out, "    {}", reason_label(r))?;
            } else {
                writeln!(out, "    {}: {}", reason_label(r), r.detail)?;
            }
        }
        for u in &e.unlisted_reasons {
            writeln!(
                out,
                "    … and {} more {}, not listed",
                u.count,
                u.code.name()
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Lines, Options, Plain, Style, write_envelope};
    use crate::names::{Names, SignerMemo};
    use herald_core::{SigningKey, Status};
    use herald_testkit::{T0, genesis, key, reply};
    use herald_verify::{AuditOptions, Input, Keyring, audit_compact, key_line};

    #[test]
    fn statuses_are_padded_and_coloured_as_before() {
        let plain = Style { colour: false };
        let colour = Style { colour: true };
        assert_eq!(plain.status(Status::Valid), "valid  ");
        assert_eq!(plain.status(Status::Partial), "partial");
        assert_eq!(colour.status(Status::Valid), "\x1b[32mvalid\x1b[0m  ");
        assert_eq!(colour.status(Status::Partial), "\x1b[33mpartial\x1b[0m");
        assert_eq!(colour.status(Status::Invalid), "\x1b[31minvalid\x1b[0m");
    }

    /// An envelope whose report has no reason gets the line its formed
    /// report would get, coloured or not; one with reasons is formed.
    #[test]
    fn a_reasonless_line_is_the_formed_reports_line() {
        let (a, b, stranger) = (key(1), key(2), SigningKey::from_seed(&[9; 32]));
        let g = genesis(&a, 1);
        let r = reply(&g, &b, 2);
        let unknown = reply(&g, &stranger, 3);
        let bytes: Vec<u8> = [&g, &r, &unknown]
            .iter()
            .flat_map(|e| e.as_bytes().to_vec())
            .collect();
        let inputs = [Input {
            name: "set.cbor".into(),
            bytes,
        }];
        let mut keyring = Keyring::new();
        let lines = format!(
            "{}\n{}\n",
            key_line(&a.public_key()),
            key_line(&b.public_key())
        );
        keyring.parse(&lines, "test").unwrap();
        let opts = AuditOptions {
            now: Some(T0 + 10),
            ..AuditOptions::default()
        };
        let report = audit_compact(&inputs, &keyring, &opts);
        assert!(report.no_reasons(0) && report.no_reasons(1));
        assert!(!report.no_reasons(2), "the stranger's key is unknown");
        let names = Names::of(&report, &keyring);
        for colour in [false, true] {
            let opts = Options {
                names: &names,
                style: Style { colour },
                verbose: false,
                tree: false,
                keyring_given: true,
            };
            let lines = Lines::of(&report, &opts);
            for k in 0..2 {
                let e = report.envelope(k).unwrap();
                let mut memo = SignerMemo::new(&names);
                let (mut formed, mut line) = (Vec::new(), String::new());
                write_envelope(&mut formed, &mut line, &e, lines.width, &opts, &mut memo).unwrap();
                let links = report.links(k).unwrap();
                let plain = Plain {
                    id: links.id,
                    signer: memo.signer(report.from(k)),
                };
                let mut fast = Vec::new();
                plain
                    .write(&mut fast, &mut line, lines.width, &opts.style)
                    .unwrap();
                assert_eq!(
                    String::from_utf8(fast).unwrap(),
                    String::from_utf8(formed).unwrap()
                );
            }
            // The whole chunk: the stranger's line is formed, with its reason.
            let (text, _) = lines.render(0..report.len()).unwrap();
            let text = String::from_utf8(text).unwrap();
            assert_eq!(text.lines().count(), 3);
            assert!(
                text.lines().nth(2).unwrap().contains("unknown_signer"),
                "{text}"
            );
        }
    }
}
