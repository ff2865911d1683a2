//! Peak resident memory of one run of the real binary: `/usr/bin/time -f
//! %M` (the kernel's `ru_maxrss` of the child), or, where that tool is
//! missing, `VmHWM` of `/proc/<pid>/status` polled while it runs.

use std::io::Read;
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};

/// What one measured run did.
pub(crate) struct Measured {
    pub(crate) code: i32,
    /// Bytes written to standard output.
    pub(crate) written: usize,
    pub(crate) stderr: String,
    /// Peak resident set size, bytes.
    pub(crate) peak: u64,
    /// What `feed` returned (e.g. the bytes it managed to send).
    pub(crate) fed: u64,
}

/// Run `herald args…` in `dir`, standard input given to `feed` (on its own
/// thread) or empty.
pub(crate) fn peak_rss(
    dir: &Path,
    args: &[&str],
    feed: Option<Box<dyn FnOnce(ChildStdin) -> u64 + Send>>,
) -> Measured {
    let herald = env!("CARGO_BIN_EXE_herald");
    let time = Path::new("/usr/bin/time");
    let report = dir.join("time.out");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.arg("-f").arg("%M").arg("-o").arg(&report).arg(herald);
        c
    } else {
        Command::new(herald)
    };
    let mut child = cmd
        .args(args)
        .current_dir(dir)
        .stdin(if feed.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let feeder = feed.map(|f| {
        let stdin = child.stdin.take().unwrap();
        std::thread::spawn(move || f(stdin))
    });
    let mut stdout = child.stdout.take().unwrap();
    let drain = std::thread::spawn(move || {
        let mut n = 0usize;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => return n,
                Ok(k) => n += k,
            }
        }
    });
    let mut stderr_pipe = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr_pipe.read_to_string(&mut s);
        s
    });
    // VmHWM (the kernel's high-water mark of the resident set) only grows,
    // so its last value before exit is the peak.
    let status_path = format!("/proc/{}/status", child.id());
    let mut hwm_kib = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_path)
            && let Some(kib) = vm_hwm_kib(&text)
        {
            hwm_kib = hwm_kib.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let written = drain.join().unwrap();
    let stderr = stderr.join().unwrap();
    let fed = feeder.map_or(0, |f| f.join().unwrap());
    let kib = if time.exists() {
        // GNU time writes the figure on the last line (after a note when
        // the command exits non-zero).
        let text = std::fs::read_to_string(&report).unwrap();
        text.lines()
            .rfind(|l| !l.trim().is_empty())
            .and_then(|l| l.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no figure from /usr/bin/time: {text:?}"))
    } else {
        hwm_kib
    };
    assert!(kib > 0, "no peak RSS measured");
    Measured {
        code: status.code().unwrap(),
        written,
        stderr,
        peak: kib * 1024,
        fed,
    }
}

fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
