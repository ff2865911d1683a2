//! A per-thread counting allocator for the memory tests: install
//! [`Counting`] as the test binary's `#[global_allocator]`, then
//! [`measure`] a call. Only the calling thread's allocations count, so
//! parallel tests do not disturb one another.
// The one unsafe code of the workspace's tests: forwarding to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::{Duration, Instant};

/// `System`, with per-thread counts of what is asked of it.
#[derive(Debug, Clone, Copy)]
pub struct Counting;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
    static CALLS: Cell<usize> = const { Cell::new(0) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note_alloc(size: usize) {
    let _ = ALLOCATED.try_with(|a| a.set(a.get() + size));
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
    let _ = LIVE.try_with(|l| {
        l.set(l.get() + size as isize);
        let _ = PEAK.try_with(|p| p.set(p.get().max(l.get())));
    });
}

fn note_free(size: usize) {
    let _ = LIVE.try_with(|l| l.set(l.get() - size as isize));
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees carry over; the bookkeeping touches
// only const-initialised thread-locals without destructors, which never
// allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_alloc(layout.size());
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_alloc(layout.size());
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note_free(layout.size());
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_free(layout.size());
        note_alloc(new_size);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// What one call cost the calling thread.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// Bytes requested from the allocator.
    pub allocated: usize,
    /// Allocation calls (`alloc`, `alloc_zeroed`, `realloc`).
    pub calls: usize,
    /// Highest live heap above the level at the start of the call.
    pub peak: isize,
    /// Wall time.
    pub time: Duration,
}

impl Usage {
    /// One line for the test's output.
    pub fn report(&self, what: &str, input_len: usize) {
        eprintln!(
            "{what}: input {input_len} B, {} B allocated in {} calls, peak {} B, {:?}",
            self.allocated, self.calls, self.peak, self.time
        );
    }
}

/// Run `f` on this thread and say what it allocated (meaningful only with
/// [`Counting`] as the global allocator).
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, Usage) {
    ALLOCATED.with(|a| a.set(0));
    CALLS.with(|c| c.set(0));
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let start = Instant::now();
    let r = f();
    let time = start.elapsed();
    let usage = Usage {
        allocated: ALLOCATED.with(Cell::get),
        calls: CALLS.with(Cell::get),
        peak: PEAK.with(Cell::get) - base,
        time,
    };
    (r, usage)
}
