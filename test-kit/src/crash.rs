//! The SIGKILL harness of the crash tests (herald-verify's `replay_crash`,
//! `auditlog_crash`, `lifecycle_crash`): a writer process acknowledges each durable step with
//! a line on standard output; the test kills it at a random moment and
//! accounts for every whole line it printed.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::Duration;

/// xorshift64*, seeded from the OS (or `HERALD_CRASH_SEED` to replay a run).
pub struct Rng(u64);

impl Rng {
    /// A generator and its seed (print it: it replays the run).
    pub fn new() -> (Self, u64) {
        let seed = std::env::var("HERALD_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                let n = herald_core::Nonce::generate().expect("the OS RNG");
                u64::from_le_bytes(n.0[..8].try_into().expect("8 of 16 bytes"))
            })
            | 1;
        (Self(seed), seed)
    }

    /// Uniform enough in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        lo + self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % (hi - lo + 1)
    }
}

/// Start `bin args…`, hand each whole line it prints to `account` (which
/// answers whether the line counts toward `target`) until `target` lines
/// counted, wait a random 0 to `max_sleep_us` µs (the writer is somewhere in
/// its next steps), kill it with SIGKILL and check that the signal killed
/// it, then hand `account` the whole lines printed before it died: those
/// are acknowledgements too, a line cut short by the kill is not.
pub fn run_and_kill(
    bin: &str,
    args: &[&OsStr],
    rng: &mut Rng,
    target: u64,
    max_sleep_us: u64,
    mut account: impl FnMut(&str) -> bool,
) {
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut counted = 0u64;
    let mut line = String::new();
    while counted < target {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("the writer stopped: {:?}: {err}", child.wait().unwrap());
        }
        if account(&line) {
            counted += 1;
        }
    }
    std::thread::sleep(Duration::from_micros(rng.range(0, max_sleep_us)));
    child.kill().unwrap(); // SIGKILL on Unix
    let status = child.wait().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "killed by SIGKILL: {status:?}");
    }
    #[cfg(not(unix))]
    assert!(!status.success());
    loop {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if line.ends_with('\n') {
            account(&line);
        }
    }
}
