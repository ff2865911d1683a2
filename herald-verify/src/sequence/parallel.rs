//! [`super::pieces`] on two cores, with exactly its answer.
//!
//! A second thread splits the input's second half from a plausible item
//! start: the next place past the middle where the input's first item's
//! opening bytes occur again (every envelope of a sequence opens with the
//! same map head and first key, P1). Its boundaries count only from the
//! first one the first thread's own walk from offset 0 lands on: from
//! there both walks are the same walk (a walk's every step depends only on
//! the offset it starts at), so the pieces are those of the serial split.
//! Where the first walk lands on none of them (the start was inside an
//! item), it goes on alone to the end, as the serial split does.
//!
//! Bounded as the serial split: the second thread keeps the ends of at
//! most as many items as the caller can still use, and stops when the
//! first is done with the input.

use alloc::vec::Vec;
use core::ops::ControlFlow;
use core::sync::atomic::{AtomicBool, Ordering};

use super::{Open, Piece, Pieces, SplitError, item_end_in, pieces, pieces_from};

/// Inputs shorter than this are split on one thread: a second thread
/// costs more than half their walk.
const PARALLEL_MIN: usize = 256 << 10;

/// Opening bytes of the first item looked for past the middle.
const OPENING: usize = 8;

/// The second thread looks at the stop flag once per this many items.
const STOP_EVERY: usize = 64;

/// How the second thread's walk ended.
enum Tail {
    /// At the end of the input.
    End,
    /// At an item that cannot be split (the serial split's last piece).
    Unsplittable { offset: usize, error: SplitError },
    /// After as many items as the caller can use, or when told to stop:
    /// the rest is split from the last end on.
    Stopped,
}

/// The second thread's walk: the ends of consecutive items from `start`.
struct Walk {
    start: usize,
    ends: Vec<usize>,
    tail: Tail,
}

/// Call `each` with every piece [`pieces_from`] gives from `from` (the end
/// of an item, or 0), in order, until it breaks; `usable` is how many
/// items `each` can use at most (it breaks after them), which bounds what
/// the second thread keeps. From an offset past 0, on this thread.
pub(crate) fn for_each_piece<'a>(
    input: &'a [u8],
    from: usize,
    max_item: usize,
    max_depth: usize,
    usable: usize,
    mut each: impl FnMut(Piece<'a>) -> ControlFlow<()>,
) {
    if from > 0 {
        serial(pieces_from(input, from, max_item, max_depth), &mut each);
        return;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let start = if threads >= 2 && input.len() >= PARALLEL_MIN {
        second_start(input)
    } else {
        None
    };
    let Some(start) = start else {
        serial(pieces(input, max_item, max_depth), &mut each);
        return;
    };
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let second = scope.spawn(|| walk(input, start, max_item, max_depth, usable, &stop));
        let mut first = pieces(input, max_item, max_depth);
        // The first thread's walk up to where the second one began.
        while first.pos < start && !first.done {
            let Some(piece) = first.next() else { break };
            if each(piece).is_break() {
                stop.store(true, Ordering::Relaxed);
                return;
            }
        }
        if first.done || first.pos >= input.len() {
            stop.store(true, Ordering::Relaxed);
            serial(first, &mut each);
            return;
        }
        let Ok(walk) = second.join() else {
            serial(first, &mut each);
            return;
        };
        // Onwards until the first walk lands on one of the second's
        // boundaries, or passes them all.
        let last = walk.ends.last().copied().unwrap_or(walk.start);
        let joined = loop {
            if first.pos == walk.start {
                break Some(0);
            }
            match walk.ends.binary_search(&first.pos) {
                Ok(k) => break Some(k + 1),
                Err(_) if first.pos > last || first.done => break None,
                Err(_) => {}
            }
            let Some(piece) = first.next() else {
                break None;
            };
            if each(piece).is_break() {
                return;
            }
        };
        let Some(k) = joined else {
            serial(first, &mut each);
            return;
        };
        let mut at = first.pos;
        for &end in walk.ends.get(k..).unwrap_or_default() {
            let piece = Piece::Item {
                offset: at,
                bytes: input.get(at..end).unwrap_or_default(),
            };
            if each(piece).is_break() {
                return;
            }
            at = end;
        }
        match walk.tail {
            Tail::End => {}
            Tail::Unsplittable { offset, error } => {
                let _ = each(Piece::Unsplittable { offset, error });
            }
            Tail::Stopped => {
                first.pos = at;
                serial(first, &mut each);
            }
        }
    });
}

/// The rest of `pieces`, one after the other.
fn serial<'a>(pieces: Pieces<'a>, each: &mut impl FnMut(Piece<'a>) -> ControlFlow<()>) {
    for piece in pieces {
        if each(piece).is_break() {
            return;
        }
    }
}

/// Where the first item's opening bytes occur again past the middle.
fn second_start(input: &[u8]) -> Option<usize> {
    let opening = input.get(..OPENING)?;
    let middle = input.len() / 2;
    let found = memchr::memmem::find(input.get(middle..)?, opening)?;
    Some(middle + found).filter(|&at| at > 0)
}

/// The second thread: the ends of the items from `start`, at most
/// `usable` of them.
fn walk(
    input: &[u8],
    start: usize,
    max_item: usize,
    max_depth: usize,
    usable: usize,
    stop: &AtomicBool,
) -> Walk {
    let mut open = Open::default();
    let mut ends = Vec::new();
    let mut pos = start;
    let tail = loop {
        if pos >= input.len() {
            break Tail::End;
        }
        if ends.len() >= usable || (ends.len() % STOP_EVERY == 0 && stop.load(Ordering::Relaxed)) {
            break Tail::Stopped;
        }
        match item_end_in(input, pos, max_item, max_depth, &mut open) {
            Ok(end) => {
                ends.push(end);
                pos = end;
            }
            Err(error) => break Tail::Unsplittable { offset: pos, error },
        }
    };
    Walk { start, ends, tail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// An item like an envelope: a map opening with the same bytes as
    /// every other, and a byte-string payload.
    fn item(payload: &[u8]) -> Vec<u8> {
        let mut out = vec![0xa2, 0x61, b'v', 0x6a];
        out.extend_from_slice(b"herald/0.2");
        out.extend_from_slice(&[0x61, b'p', 0x59]);
        out.extend_from_slice(&u16::try_from(payload.len()).unwrap().to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// `count` items, the payload of item `n` made by `payload(n)`.
    fn sequence(count: usize, payload: impl Fn(usize) -> Vec<u8>) -> Vec<u8> {
        (0..count).flat_map(|n| item(&payload(n))).collect()
    }

    /// `piece` kept unless `usable` items are: then the walk stops.
    fn take<'a>(
        out: &mut Vec<Piece<'a>>,
        items: &mut usize,
        usable: usize,
        piece: Piece<'a>,
    ) -> ControlFlow<()> {
        if matches!(piece, Piece::Item { .. }) {
            if *items >= usable {
                return ControlFlow::Break(());
            }
            *items += 1;
        }
        out.push(piece);
        ControlFlow::Continue(())
    }

    /// The pieces both ways, each stopping after `usable` items as the
    /// audit does.
    fn both(input: &[u8], usable: usize) -> (Vec<Piece<'_>>, Vec<Piece<'_>>) {
        let (mut serial_out, mut n) = (Vec::new(), 0);
        for piece in pieces(input, 1 << 20, 64) {
            if take(&mut serial_out, &mut n, usable, piece).is_break() {
                break;
            }
        }
        let (mut parallel_out, mut n) = (Vec::new(), 0);
        for_each_piece(input, 0, 1 << 20, 64, usable, |piece| {
            take(&mut parallel_out, &mut n, usable, piece)
        });
        (serial_out, parallel_out)
    }

    fn same(input: &[u8], usable: usize) -> usize {
        let (serial_out, parallel_out) = both(input, usable);
        assert_eq!(serial_out.len(), parallel_out.len());
        assert!(serial_out == parallel_out);
        serial_out.len()
    }

    const PAYLOAD: usize = 300;

    fn plain(n: usize) -> Vec<u8> {
        vec![(n % 251) as u8; PAYLOAD]
    }

    #[test]
    fn a_sequence_splits_as_on_one_thread() {
        let input = sequence(2_000, plain);
        assert!(input.len() >= PARALLEL_MIN);
        assert!(second_start(&input).is_some());
        assert_eq!(same(&input, usize::MAX), 2_000);
        // Fewer items used than the input holds: in either half.
        assert_eq!(same(&input, 10), 10);
        assert_eq!(same(&input, 1_500), 1_500);
    }

    /// `plain`, with the items' opening bytes inside the payload of
    /// every item from 990 on (late in it, so that the middle of a
    /// 2 001-item input falls before one), followed by `next`.
    fn fake_opening(n: usize, next: Option<u8>) -> Vec<u8> {
        let mut p = plain(n);
        if n >= 990 {
            let at = 200 + n % 7;
            p[at..at + 4].copy_from_slice(&[0xa2, 0x61, b'v', 0x6a]);
            p[at + 4..at + 14].copy_from_slice(b"herald/0.2");
            if let Some(b) = next {
                p[at + 14] = b;
            }
        }
        p
    }

    #[test]
    fn an_opening_inside_an_item_past_the_middle_changes_nothing() {
        for next in [None, Some(0xff), Some(0x9f), Some(0x5a)] {
            let input = sequence(2_001, |n| fake_opening(n, next));
            let start = second_start(&input).unwrap();
            let at = input.len() / 2;
            assert!(input[start..].starts_with(&input[..OPENING]) && start > at);
            assert_eq!(same(&input, usize::MAX), 2_001, "{next:?}");
        }
    }

    #[test]
    fn the_tail_is_the_serial_split_s() {
        let mut input = sequence(2_000, plain);
        // Truncated at the end.
        input.truncate(input.len() - 5);
        assert_eq!(same(&input, usize::MAX), 2_000);
        // A stray break three quarters in: the input ends there.
        let mut broken = sequence(2_000, plain);
        let at = item(&plain(0)).len() * 1_500;
        broken[at] = 0xff;
        let n = same(&broken, usize::MAX);
        assert_eq!(n, 1_501);
        // Tiny items around the middle, more than can be used.
        let mut tiny = sequence(1_000, plain);
        tiny.extend(core::iter::repeat_n(0u8, 400_000));
        tiny.extend(sequence(1_000, plain));
        assert!(second_start(&tiny).is_some());
        assert_eq!(same(&tiny, 5_000), 5_000);
        assert_eq!(same(&tiny, usize::MAX), 402_000);
    }
}
