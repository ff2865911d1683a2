//! What docs/embedded.md reports: the peak stack (the stack painted at
//! boot, the high-water mark read at the end) and the cost of one verify
//! and one sign in instructions, counted with SysTick under QEMU's
//! `-icount shift=0` (one instruction = 1 ns of virtual time) and
//! calibrated against a loop of known length. These are emulator figures,
//! not real-board timings.

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::exception;

/// The paint pattern.
const PAINT: u32 = 0xa5a5_a5a5;
/// Bytes left unpainted below the stack pointer when painting.
const MARGIN: usize = 256;

unsafe extern "C" {
    /// First byte after `.bss`/`.uninit` (cortex-m-rt): the stack's floor.
    static mut __sheap: u32;
    /// The initial stack pointer (cortex-m-rt): the top of RAM.
    static _stack_start: u32;
}

fn floor() -> usize {
    // Only the address is taken.
    core::ptr::addr_of!(__sheap) as usize
}

fn top() -> usize {
    core::ptr::addr_of!(_stack_start) as usize
}

/// Fill the free stack, from the floor to just below the current stack pointer.
pub fn paint_stack() {
    let sp = cortex_m::register::msp::read() as usize;
    let mut at = floor();
    while at + 4 <= sp.saturating_sub(MARGIN) {
        // SAFETY: [floor, sp − MARGIN) is RAM no one uses yet: above every
        // static, below the live stack.
        unsafe { core::ptr::write_volatile(at as *mut u32, PAINT) };
        at += 4;
    }
}

/// The deepest the stack has been since [`paint_stack`], in bytes.
pub fn stack_peak() -> usize {
    let mut at = floor();
    // SAFETY: reads of RAM between the statics and the stack top.
    while at < top() && unsafe { core::ptr::read_volatile(at as *const u32) } == PAINT {
        at += 4;
    }
    top() - at
}

/// SysTick wraps (24-bit counter).
static WRAPS: AtomicU32 = AtomicU32::new(0);
/// The SysTick reload value.
const RELOAD: u32 = 0x00ff_ffff;

#[exception]
fn SysTick() {
    WRAPS.fetch_add(1, Ordering::Relaxed);
}

/// Start SysTick on the core clock, wrapping with an interrupt.
pub fn start_clock() {
    let Some(mut p) = cortex_m::Peripherals::take() else {
        return;
    };
    p.SYST.set_clock_source(SystClkSource::Core);
    p.SYST.set_reload(RELOAD);
    p.SYST.clear_current();
    p.SYST.enable_interrupt();
    p.SYST.enable_counter();
}

/// SysTick ticks since [`start_clock`].
pub fn ticks() -> u64 {
    loop {
        let w = WRAPS.load(Ordering::Relaxed);
        let cvr = cortex_m::peripheral::SYST::get_current();
        if WRAPS.load(Ordering::Relaxed) == w {
            return u64::from(w) * u64::from(RELOAD + 1) + u64::from(RELOAD - cvr);
        }
    }
}

/// Iterations of the calibration loop: two instructions each (`subs`, `bne`).
const CALIBRATION_LOOPS: u32 = 1_000_000;

/// Ticks of a loop of exactly `2 * CALIBRATION_LOOPS` instructions.
fn calibration_ticks() -> u64 {
    let start = ticks();
    // SAFETY: a register-only countdown loop.
    unsafe {
        core::arch::asm!(
            "2:",
            "subs {n}, #1",
            "bne 2b",
            n = inout(reg) CALIBRATION_LOOPS => _,
            options(nomem, nostack),
        );
    }
    ticks() - start
}

/// Instructions `f` took, from SysTick ticks and the calibration loop.
pub fn cost<T>(f: impl FnOnce() -> T) -> u64 {
    let calib = calibration_ticks().max(1);
    let start = ticks();
    let _ = core::hint::black_box(f());
    let spent = ticks() - start;
    spent * 2 * u64::from(CALIBRATION_LOOPS) / calib
}
