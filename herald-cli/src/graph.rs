//! The trace DAG of a verification as a picture (docs/inspector.md): `herald
//! verify --format dot|mermaid|svg`. The same graph as the inspector's: one
//! node per envelope, coloured by status and labelled by keyring label, a
//! birth's quoted self-description (crate::names) or sigil; an edge from each
//! parent to each reply (fan-out and several traces alike); lifecycle kinds
//! (P7) drawn rounded and marked `◆`; a reply whose parent is not in the set
//! hangs from a dashed "missing parent" node, and an edge into a
//! `trace_mismatch` is dashed red.
//!
//! SVG is laid out by layout-rs from the DOT text (a Graphviz-style layered
//! layout in pure Rust): no layout engine is written here.

use std::io::{self, Write};

use herald_core::{Kind, ReasonCode, Status};
use herald_verify::CompactReport;

use crate::error::CliError;
use crate::names::Names;
use crate::render::short;
use crate::tree::{Forest, forest};
use herald_verify::hex;

/// Most envelopes laid out as SVG: the layered layout grows about as the
/// cube of the node count (300 in 1 s, 2 000 in over 3 minutes here); DOT
/// and Mermaid have no cap.
pub(crate) const MAX_SVG_NODES: usize = 500;

/// A picture format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    // Plain comments: doc comments would turn `verify --help` into the long form.
    // Graphviz DOT (render with `dot -Tsvg`).
    Dot,
    // A Mermaid flowchart (Markdown renderers draw it).
    Mermaid,
    // SVG, laid out by layout-rs.
    Svg,
}

/// One node or edge of the picture, format-neutral.
enum Part {
    Node {
        key: String,
        lines: [String; 2],
        status: Option<Status>,
        lifecycle: bool,
    },
    Ghost {
        key: String,
        parent: String,
    },
    Edge {
        from: String,
        to: String,
        broken: bool,
    },
}

/// Every node, then every edge, each formed as it is reached (a picture
/// of a million envelopes holds one envelope's report at a time: the
/// memory bound).
fn parts<'r>(
    report: &'r CompactReport<'_>,
    names: &'r Names<'r>,
    links: &'r Forest,
) -> impl Iterator<Item = Part> + 'r {
    let nodes = report.envelopes().enumerate().map(|(i, e)| {
        let kind = e.kind.filter(|k| *k != Kind::Message);
        let who = names.node(e.from.as_deref());
        let first = match kind {
            Some(k) => format!("◆ {who} · {}", k.name()),
            None => who,
        };
        let second = match e.id.as_deref() {
            Some(id) => format!("{} · {}", short(Some(id)), e.status().name()),
            None => format!("not an envelope · {}", e.status().name()),
        };
        Part::Node {
            key: format!("n{i}"),
            lines: [first, second],
            status: Some(e.status()),
            lifecycle: kind.is_some(),
        }
    });
    let ghosts = links.orphans.iter().flat_map(move |&i| {
        let parent = report
            .links(i as usize)
            .and_then(|l| l.parent)
            .map(|p| hex(p))
            .unwrap_or_default();
        [
            Part::Ghost {
                key: format!("m{i}"),
                parent: short(Some(&parent)).to_owned(),
            },
            Part::Edge {
                from: format!("m{i}"),
                to: format!("n{i}"),
                broken: true,
            },
        ]
    });
    let edges = (0..report.len()).flat_map(move |parent| {
        links.children(parent).iter().map(move |&child| Part::Edge {
            from: format!("n{parent}"),
            to: format!("n{child}"),
            broken: report.has(child as usize, ReasonCode::TraceMismatch),
        })
    });
    nodes.chain(ghosts).chain(edges)
}

/// Fill colours by status, as the inspector's.
fn fill(status: Option<Status>) -> &'static str {
    match status {
        Some(Status::Valid) => "#1a7f37",
        Some(Status::Partial) => "#b35900",
        Some(Status::Invalid) | None => "#c62828",
    }
}

/// The DOT text of the picture, written to `out`.
fn dot(out: &mut dyn Write, report: &CompactReport<'_>, names: &Names<'_>) -> io::Result<()> {
    out.write_all(
        b"digraph trace {\n  rankdir=TB;\n  node [shape=box, style=filled, fontcolor=white, fontsize=11];\n",
    )?;
    let links = forest(report);
    for part in parts(report, names, &links) {
        out.write_all(match part {
            Part::Node {
                key,
                lines,
                status,
                lifecycle,
            } => format!(
                "  {key} [label=\"{}\\n{}\", fillcolor=\"{}\"{}];\n",
                dot_escape(&lines[0]),
                dot_escape(&lines[1]),
                fill(status),
                if lifecycle { ", shape=Mrecord" } else { "" }
            ),
            Part::Ghost { key, parent } => format!(
                "  {key} [label=\"missing parent\\n{parent}\", style=dashed, color=\"#c62828\", fontcolor=\"#c62828\", fillcolor=white];\n"
            ),
            Part::Edge { from, to, broken } => format!(
                "  {from} -> {to}{};\n",
                if broken {
                    " [style=dashed, color=\"#c62828\"]"
                } else {
                    ""
                }
            ),
        }
        .as_bytes())?;
    }
    out.write_all(b"}\n")
}

/// A DOT string's content: quotes and backslashes escaped, and (for record
/// shapes) the record delimiters.
fn dot_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '"' | '\\' | '{' | '}' | '|' | '<' | '>') {
            out.push('\\');
        }
        if !c.is_control() {
            out.push(c);
        }
    }
    out
}

/// The Mermaid flowchart of the picture, written to `out`.
fn mermaid(out: &mut dyn Write, report: &CompactReport<'_>, names: &Names<'_>) -> io::Result<()> {
    out.write_all(b"flowchart TD\n")?;
    let links = forest(report);
    for part in parts(report, names, &links) {
        out.write_all(
            match part {
                Part::Node {
                    key,
                    lines,
                    status,
                    lifecycle,
                } => {
                    let (open, close) = if lifecycle { ("([", "])") } else { ("[", "]") };
                    let class = status.map_or("invalid", Status::name);
                    format!(
                        "  {key}{open}\"{}<br/>{}\"{close}:::{class}\n",
                        mermaid_escape(&lines[0]),
                        mermaid_escape(&lines[1])
                    )
                }
                Part::Ghost { key, parent } => {
                    format!("  {key}[\"missing parent<br/>{parent}\"]:::ghost\n")
                }
                Part::Edge { from, to, broken } => {
                    format!("  {from} {} {to}\n", if broken { "-.->" } else { "-->" })
                }
            }
            .as_bytes(),
        )?;
    }
    for (class, style) in [
        ("valid", "fill:#1a7f37,color:#fff"),
        ("partial", "fill:#b35900,color:#fff"),
        ("invalid", "fill:#c62828,color:#fff"),
        (
            "ghost",
            "fill:#fff,color:#c62828,stroke:#c62828,stroke-dasharray:4 3",
        ),
    ] {
        writeln!(out, "  classDef {class} {style}")?;
    }
    Ok(())
}

/// Mermaid label text: quotes and markup as entities.
fn mermaid_escape(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .map(|c| match c {
            '"' => "#quot;".to_owned(),
            '<' => "#lt;".to_owned(),
            '>' => "#gt;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

/// Whether `report` can be drawn in `format` (SVG has a size cap).
pub(crate) fn check(report: &CompactReport<'_>, format: Format) -> Result<(), CliError> {
    if format == Format::Svg && report.len() > MAX_SVG_NODES {
        return Err(CliError::new(format!(
            "--format svg lays out at most {MAX_SVG_NODES} envelopes ({} here): use --format dot \
             with Graphviz, or the inspector (herald inspect --serve)",
            report.len()
        )));
    }
    Ok(())
}

/// The SVG of the picture, laid out by layout-rs from [`dot`].
fn svg(report: &CompactReport<'_>, names: &Names<'_>) -> Result<String, String> {
    let mut text = Vec::new();
    dot(&mut text, report, names).map_err(|e| e.to_string())?;
    let text = String::from_utf8(text).map_err(|e| e.to_string())?;
    let mut parser = layout::gv::DotParser::new(&text);
    let graph = parser
        .process()
        .map_err(|e| format!("laying out the graph: {e}"))?;
    let mut builder = layout::gv::GraphBuilder::new();
    builder.visit_graph(&graph);
    let mut visual = builder.get();
    let mut writer = layout::backends::svg::SVGWriter::new();
    visual.do_it(false, false, false, &mut writer);
    Ok(writer.finalize())
}

/// Write the picture of `report` in `format`.
pub(crate) fn write(
    out: &mut dyn Write,
    report: &CompactReport<'_>,
    names: &Names<'_>,
    format: Format,
) -> io::Result<()> {
    match format {
        Format::Dot => dot(out, report, names),
        Format::Mermaid => mermaid(out, report, names),
        Format::Svg => out.write_all(svg(report, names).map_err(io::Error::other)?.as_bytes()),
    }
}
