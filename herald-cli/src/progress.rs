//! A progress indicator on standard error for long verifications: only
//! when standard error is a terminal and there are many envelopes.
//!
//! `herald_verify::audit` reports no progress while it runs, so this shows
//! what is known — how many envelopes, how long so far — redrawn in place
//! with `\r` by a helper thread, and erased when the audit returns.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Fewer envelopes than this verify too fast to need an indicator.
pub(crate) const THRESHOLD: usize = 5_000;

/// A running indicator; dropping it stops and erases it.
pub(crate) struct Indicator {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Start an indicator for `count` envelopes, if it is worth one.
pub(crate) fn start(count: usize) -> Option<Indicator> {
    if count <= THRESHOLD || !std::io::stderr().is_terminal() {
        return None;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        let started = Instant::now();
        let mut drawn = false;
        while !flag.load(Ordering::Relaxed) {
            // Nothing for a short audit: no flash of text that is erased at once.
            if started.elapsed() < Duration::from_millis(300) {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            drawn = true;
            let mut stderr = std::io::stderr().lock();
            let _ = write!(
                stderr,
                "\rherald: verifying {count} envelopes… {:.1}s",
                started.elapsed().as_secs_f64()
            );
            let _ = stderr.flush();
            drop(stderr);
            std::thread::sleep(Duration::from_millis(100));
        }
        if drawn {
            // Erase the line.
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    });
    Some(Indicator {
        stop,
        thread: Some(thread),
    })
}

impl Drop for Indicator {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
