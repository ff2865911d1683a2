//! A cbor.me-style annotated view of CBOR bytes (RFC 8949 §3): one line
//! per data item head, with its offset, nesting depth, the bytes in hex
//! and what they mean; a string's content on a line of its own.
//!
//! Display only, over any bytes: it reads heads without judging them (the
//! verifier does that) and stops at the first byte it cannot read, showing
//! the rest as one unread line. It never recurses: nesting is a counter
//! stack, so hostile depth costs a vector entry per level, bounded by the
//! input's length.

use herald_verify::hex;
use serde::Serialize;

/// One line of the view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Line {
    /// Byte offset of the first byte shown.
    pub offset: usize,
    /// Nesting depth (0 for the top-level item).
    pub depth: usize,
    /// The bytes, lowercase hex.
    pub hex: String,
    /// What they are: `map(9)`, `text(2) "id"`, `unsigned(1746518400)`, ….
    pub note: String,
}

/// Longest string content shown in a note, in characters.
const SHOWN: usize = 120;

/// The annotated lines of `bytes`.
pub fn annotate(bytes: &[u8]) -> Vec<Line> {
    let mut out = Vec::new();
    // Items still expected at each open level (arrays and maps).
    let mut open: Vec<u64> = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let depth = open.len();
        let Some((major, info, arg, head)) = read_head(&bytes[pos..]) else {
            break;
        };
        let head_hex = hex(&bytes[pos..pos + head]);
        let start = pos;
        pos += head;
        let mut line = |note: String| {
            out.push(Line {
                offset: start,
                depth,
                hex: head_hex.clone(),
                note,
            })
        };
        let mut children = 0u64;
        match (major, arg) {
            (0, Some(n)) => line(format!("unsigned({n})")),
            (1, Some(n)) => line(format!("negative({})", -1 - i128::from(n))),
            (2 | 3, Some(n)) => {
                let Some(content) = usize::try_from(n)
                    .ok()
                    .and_then(|n| bytes.get(pos..pos.checked_add(n)?))
                else {
                    line(format!("{}({n}), past the end", string_name(major)));
                    break;
                };
                line(format!("{}({n})", string_name(major)));
                if !content.is_empty() {
                    let note = if major == 3 {
                        quoted(&String::from_utf8_lossy(content))
                    } else {
                        format!("{n} bytes")
                    };
                    out.push(Line {
                        offset: pos,
                        depth: depth + 1,
                        hex: hex(content),
                        note,
                    });
                }
                pos += content.len();
            }
            (4, Some(n)) => {
                line(format!("array({n})"));
                children = n;
            }
            (5, Some(n)) => {
                line(format!("map({n})"));
                children = n.saturating_mul(2);
            }
            (6, Some(n)) => {
                line(format!("tag({n})"));
                children = 1;
            }
            (7, _) => line(simple(info, &bytes[start + 1..pos])),
            _ => {
                line("indefinite length (not canonical, P1)".into());
                break;
            }
        }
        if children > 0 {
            open.push(children);
            continue;
        }
        // One item done: close every level it completes.
        while let Some(left) = open.last_mut() {
            *left -= 1;
            if *left > 0 {
                break;
            }
            open.pop();
        }
    }
    if pos < bytes.len() {
        out.push(Line {
            offset: pos,
            depth: 0,
            hex: hex(&bytes[pos..bytes.len().min(pos + 64)]),
            note: format!("{} bytes not read", bytes.len() - pos),
        });
    }
    out
}

/// `(major type, additional info, argument, head length)`; the argument is
/// `None` for an indefinite length (info 31).
fn read_head(bytes: &[u8]) -> Option<(u8, u8, Option<u64>, usize)> {
    let first = *bytes.first()?;
    let (major, info) = (first >> 5, first & 0x1f);
    let extra = match info {
        0..=23 => return Some((major, info, Some(u64::from(info)), 1)),
        24 => 1,
        25 => 2,
        26 => 4,
        27 => 8,
        31 => return Some((major, info, None, 1)),
        _ => return None,
    };
    let arg = bytes
        .get(1..1 + extra)?
        .iter()
        .fold(0u64, |n, b| (n << 8) | u64::from(*b));
    Some((major, info, Some(arg), 1 + extra))
}

fn string_name(major: u8) -> &'static str {
    if major == 2 { "bytes" } else { "text" }
}

/// Major type 7: simple values and floats.
fn simple(info: u8, arg: &[u8]) -> String {
    let bits = arg.iter().fold(0u64, |n, b| (n << 8) | u64::from(*b));
    match info {
        20 => "false".into(),
        21 => "true".into(),
        22 => "null".into(),
        23 => "undefined".into(),
        25 => format!("float16(0x{bits:04x})"),
        26 => format!("float32({:?})", f32::from_bits(bits as u32)),
        27 => format!("float64({:?})", f64::from_bits(bits)),
        n => format!("simple({n})"),
    }
}

/// `text` as a JSON-style quoted string, cut at [`SHOWN`] characters.
fn quoted(text: &str) -> String {
    let cut: String = text.chars().take(SHOWN).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!("{cut:?}{more}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_of_text_bytes_and_numbers() {
        // {"a": h'0102', "b": [1, -2, null]}
        let bytes = [
            0xa2, 0x61, b'a', 0x42, 1, 2, 0x61, b'b', 0x83, 0x01, 0x21, 0xf6,
        ];
        let lines = annotate(&bytes);
        let notes: Vec<(usize, usize, &str)> = lines
            .iter()
            .map(|l| (l.offset, l.depth, l.note.as_str()))
            .collect();
        assert_eq!(
            notes,
            [
                (0, 0, "map(2)"),
                (1, 1, "text(1)"),
                (2, 2, "\"a\""),
                (3, 1, "bytes(2)"),
                (4, 2, "2 bytes"),
                (6, 1, "text(1)"),
                (7, 2, "\"b\""),
                (8, 1, "array(3)"),
                (9, 2, "unsigned(1)"),
                (10, 2, "negative(-2)"),
                (11, 2, "null"),
            ]
        );
        assert_eq!(lines[4].hex, "0102");
    }

    #[test]
    fn truncated_input_is_shown_as_unread_not_a_panic() {
        let lines = annotate(&[0x82, 0x01, 0x5a, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2].note, "bytes(4294967295), past the end");
        let lines = annotate(&[0x82, 0x01, 0x5a, 0xff]);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2].note, "2 bytes not read");
        assert_eq!(annotate(&[0x1c])[0].note, "1 bytes not read");
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let bytes = vec![0x81; 100_000];
        assert_eq!(annotate(&bytes).len(), 100_000);
    }
}
