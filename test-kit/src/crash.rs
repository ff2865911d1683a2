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

/// The `main` of a crash-test writer process `name`, run as
/// `name <path> <start index>`: `open(path)` makes the step function, and
/// `step(i)` makes durable the steps from index `i`, returning the lines
/// that acknowledge them and the next index. Each step's lines go out in
/// one write, flushed before the next step, so the test sees whole lines
/// only. Runs until killed or until standard output closes; an error is one
/// line on standard error and exit 1, bad arguments exit 2.
pub fn writer<S>(
    name: &str,
    path: &str,
    open: impl FnOnce(&str) -> Result<S, String>,
) -> std::process::ExitCode
where
    S: FnMut(u64) -> Result<(String, u64), String>,
{
    use std::io::Write;
    use std::process::ExitCode;

    let mut args = std::env::args().skip(1);
    let (Some(at), Some(start), None) = (args.next(), args.next(), args.next()) else {
        eprintln!("usage: {name} <{path}> <start index>");
        return ExitCode::from(2);
    };
    let Ok(mut index) = start.parse::<u64>() else {
        eprintln!("{name}: {start}: not an index");
        return ExitCode::from(2);
    };
    let mut step = match open(&at) {
        Ok(step) => step,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    loop {
        let (lines, next) = match step(index) {
            Ok(done) => done,
            Err(e) => {
                eprintln!("{name}: {e}");
                return ExitCode::from(1);
            }
        };
        if out
            .write_all(lines.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::from(1);
        }
        index = next;
    }
}
