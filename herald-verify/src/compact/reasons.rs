//! An envelope's reasons as a compact report keeps them
//! ([`CompactReasons`]): up to three in place, more on the heap.

use alloc::vec::Vec;

use herald_core::Reason;

use super::details::DetailTable;
use super::reason::CompactReason;
use crate::reasons::{Item, ReasonList, Unlisted};

/// An envelope's reasons as kept: up to three in place, more on the heap
/// (most envelopes have a few; a heap block for them would cost more than
/// the reasons: the memory bound).
#[derive(Clone, Debug)]
pub(crate) enum CompactReasons {
    /// `items[..len]`.
    InPlace {
        len: InPlaceLen,
        items: [CompactReason; 3],
    },
    /// More than three.
    Many(Vec<CompactReason>),
}

/// How many of [`CompactReasons::InPlace`]'s items are set (an enum, so that [`CompactReasons`]
/// needs no tag beside it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InPlaceLen {
    None,
    One,
    Two,
    Three,
}

impl InPlaceLen {
    pub(super) fn get(self) -> usize {
        self as usize
    }

    pub(super) fn next(self) -> Option<Self> {
        match self {
            Self::None => Some(Self::One),
            Self::One => Some(Self::Two),
            Self::Two => Some(Self::Three),
            Self::Three => None,
        }
    }
}

impl Default for CompactReasons {
    fn default() -> Self {
        Self::InPlace {
            len: InPlaceLen::None,
            items: [CompactReason::MissingParent; 3],
        }
    }
}

impl CompactReasons {
    pub(crate) fn push(&mut self, why: CompactReason) {
        match self {
            Self::InPlace { len, items } => match (len.next(), items.get_mut(len.get())) {
                (Some(next), Some(slot)) => {
                    *slot = why;
                    *len = next;
                }
                _ => {
                    let mut list = spilled(items.len() + 1);
                    list.extend_from_slice(items);
                    list.push(why);
                    *self = Self::Many(list);
                }
            },
            Self::Many(list) => list.push(why),
        }
    }

    /// The reasons, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &CompactReason> + '_ {
        self.all()
            .iter()
            .filter(|w| !matches!(w, CompactReason::Unlisted { .. }))
    }

    /// The reasons given beyond those listed, by code.
    pub(crate) fn unlisted(&self) -> impl Iterator<Item = Unlisted> + '_ {
        self.all().iter().filter_map(|w| match *w {
            CompactReason::Unlisted { code, count } => Some(Unlisted { code, count }),
            _ => None,
        })
    }

    /// The reasons and the counts of those unlisted.
    pub(super) fn all(&self) -> &[CompactReason] {
        match self {
            Self::InPlace { len, items } => items.get(..len.get()).unwrap_or_default(),
            Self::Many(list) => list,
        }
    }

    /// The reasons of `list` about listed entry `entry` (each kept by
    /// `details`, a run as one [`CompactReason::Run`]), then the counts of those
    /// unlisted.
    pub(crate) fn of(list: &ReasonList, details: &mut DetailTable, entry: u32) -> Self {
        let mut whys = Vec::with_capacity(list.items().len() + list.unlisted().len());
        for item in list.items() {
            match item {
                Item::One(r) => whys.push(details.why(r)),
                Item::Run {
                    code,
                    first,
                    details: ids,
                } => match details.keep_run(list, entry, *first, ids) {
                    Some(count) => whys.push(CompactReason::Run {
                        code: *code,
                        first: *first,
                        count,
                    }),
                    // No room for its details: reason by reason.
                    None => {
                        for (&d, k) in ids.iter().zip(*first..) {
                            let reason = Reason {
                                code: *code,
                                index: Some(k),
                                detail: list.detail(d),
                            };
                            whys.push(details.why(&reason));
                        }
                    }
                },
            }
        }
        whys.extend(list.unlisted().iter().map(|u| CompactReason::Unlisted {
            code: u.code,
            count: u.count,
        }));
        whys.into_iter().collect()
    }

    /// Forget the details of the runs kept for listed entry `entry`.
    pub(crate) fn forget_runs(&self, details: &mut DetailTable, entry: u32) {
        for w in self.all() {
            if let CompactReason::Run { first, .. } = w {
                details.runs.remove(&(entry, *first));
            }
        }
    }
}

/// A heap block for `n` reasons that spill out of [`CompactReasons::InPlace`], with room
/// for one more (a later step's: a lifecycle text, a parent link).
fn spilled(n: usize) -> Vec<CompactReason> {
    Vec::with_capacity(n + 1)
}

impl FromIterator<CompactReason> for CompactReasons {
    fn from_iter<I: IntoIterator<Item = CompactReason>>(iter: I) -> Self {
        let iter = iter.into_iter();
        // More than fit in place: one heap block for them at once.
        let known = iter.size_hint().0;
        if known > 3 {
            let mut list = spilled(known);
            list.extend(iter);
            return Self::Many(list);
        }
        let mut whys = Self::default();
        for why in iter {
            whys.push(why);
        }
        whys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reasons kept in place and past three on the heap keep their order.
    #[test]
    fn reasons_keep_their_order_in_place_and_on_the_heap() {
        for n in 0..6u32 {
            let whys: CompactReasons = (0..n)
                .map(|first| CompactReason::Replayed { first })
                .collect();
            let firsts: Vec<u32> = whys
                .iter()
                .map(|w| match w {
                    CompactReason::Replayed { first } => *first,
                    _ => u32::MAX,
                })
                .collect();
            assert_eq!(firsts, (0..n).collect::<Vec<_>>());
        }
    }
}
