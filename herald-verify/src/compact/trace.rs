//! A trace as a compact report keeps it ([`CompactTrace`]): ids as
//! listed entries.

use super::TraceCounts;

/// A trace as an audit keeps it: ids as listed entries, 28 bytes.
#[derive(Clone, Debug)]
pub(crate) struct CompactTrace {
    /// Its first listed entry, whose facts name the trace.
    pub(crate) first: u32,
    /// The genesis's listed entry.
    pub(crate) genesis: Option<u32>,
    /// Its leaves: their listed entries are [`CompactReport`]'s `leaves[range]`.
    pub(crate) leaves: core::ops::Range<u32>,
    pub(crate) valid: u32,
    pub(crate) partial: u32,
    pub(crate) invalid: u32,
}

impl CompactTrace {
    /// The trace of listed entry `first`, nothing counted yet.
    pub(crate) fn new(first: u32) -> Self {
        Self {
            first,
            genesis: None,
            leaves: 0..0,
            valid: 0,
            partial: 0,
            invalid: 0,
        }
    }

    /// Its counts as reported.
    pub(super) fn counts(&self) -> TraceCounts {
        TraceCounts {
            valid: self.valid as usize,
            partial: self.partial as usize,
            invalid: self.invalid as usize,
            leaves: self.leaves.len(),
        }
    }
}
