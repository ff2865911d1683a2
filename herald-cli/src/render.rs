//! The human form of a verification: one line per envelope (short id,
//! from, status, reasons as `code[index]`), a summary line, then the trace
//! tree. Colour only on a terminal without `NO_COLOR` (no-color.org).

use std::io::{self, IsTerminal, Write};

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
        let name = status.name();
        let pad = " ".repeat(7usize.saturating_sub(name.len()));
        if !self.colour {
            return format!("{name}{pad}");
        }
        let colour = match status {
            Status::Valid => "32",
            Status::Partial => "33",
            Status::Invalid => "31",
        };
        format!("\x1b[{colour}m{name}\x1b[0m{pad}")
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

/// Envelopes whose lines one thread renders at a time (a chunk). The
/// chunks are rendered in rounds of one per core and written in order, so
/// the output is the serial rendering's, byte for byte, and what is held
/// at once is a round of chunks, whatever the report's length.
const CHUNK: usize = 512;

/// What Heralds certify about a sender (PROFILE P14), as its first
/// envelope with claims reports them.
type Certified = (String, Vec<herald_verify::ReportedClaim>);

/// Write the whole human report, each envelope's formed as it is written.
/// A report of more than one [`CHUNK`] is rendered on every core: its
/// lines in chunks, and the trace tree beside them.
pub(crate) fn write_report(
    out: &mut dyn Write,
    report: &CompactReport<'_>,
    opts: &Options,
) -> io::Result<()> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(report.len().div_ceil(CHUNK));
    let lines = Lines::of(report, opts);
    std::thread::scope(|scope| {
        // The tree beside the lines when there is a core to spare.
        let tree = (opts.tree && threads > 1).then(|| scope.spawn(|| draw_tree(report, opts)));
        let mut certified = Vec::new();
        if threads <= 1 {
            lines.write(out, 0..report.len(), &mut certified)?;
        } else {
            let mut start = 0;
            while start < report.len() {
                let round: Vec<_> = (0..threads)
                    .map(|t| start + t * CHUNK..(start + (t + 1) * CHUNK).min(report.len()))
                    .filter(|chunk| !chunk.is_empty())
                    .collect();
                start = round.last().map_or(report.len(), |chunk| chunk.end);
                let lines = &lines;
                let helpers: Vec<_> = round
                    .iter()
                    .skip(1)
                    .map(|chunk| {
                        let part = chunk.clone();
                        (chunk.clone(), scope.spawn(move || lines.render(part)))
                    })
                    .collect();
                if let Some(first) = round.first() {
                    let (text, claims) = lines.render(first.clone())?;
                    out.write_all(&text)?;
                    merge_certified(&mut certified, claims);
                }
                for (chunk, handle) in helpers {
                    // A thread that failed is rendered again here.
                    let (text, claims) = match handle.join() {
                        Ok(rendered) => rendered?,
                        Err(_) => lines.render(chunk)?,
                    };
                    out.write_all(&text)?;
                    merge_certified(&mut certified, claims);
                }
            }
        }
        let drawn = match tree.map(|t| t.join()) {
            None if !opts.tree => Vec::new(),
            Some(Ok(drawn)) => drawn?,
            // Drawn here: on one core, or after its thread failed.
            None | Some(Err(_)) => draw_tree(report, opts)?,
        };
        write_rest(out, report, opts, &certified, &drawn)
    })
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
    fn render(&self, range: core::ops::Range<usize>) -> io::Result<(Vec<u8>, Vec<Certified>)> {
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
        for k in range {
            let Some(e) = self.report.envelope(k) else {
                continue;
            };
            write_envelope(out, &e, self.width, self.opts, &mut names)?;
            if let Some(from) = &e.from
                && !e.certified.is_empty()
                && !certified.iter().any(|(f, _)| f == from)
            {
                certified.push((from.clone(), e.certified.clone()));
            }
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

fn write_envelope(
    out: &mut dyn Write,
    e: &EnvelopeReport,
    width: usize,
    opts: &Options,
    names: &mut SignerMemo<'_>,
) -> io::Result<()> {
    let mut reasons = labels(&e.reasons);
    for u in &e.unlisted_reasons {
        reasons.push(format!("+{} more {}", u.count, u.code.name()));
    }
    let mut line = format!(
        "{:<SHORT_ID$}  {:<width$}  {}  {}",
        short(e.id.as_deref()),
        names.signer(e.from.as_deref()),
        opts.style.status(e.status()),
        reasons.join(", ")
    );
    if e.id.is_none() {
        // Nothing else identifies it: say where it is and what is wrong.
        match e.reasons.first().filter(|r| !r.detail.is_empty()) {
            Some(r) if !opts.verbose => line.push_str(&format!("  ({})", r.detail)),
            _ => line.push_str(&format!("  ({}, byte {})", e.source.input, e.source.offset)),
        }
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
