//! Running the real `herald` binary from integration tests.
// Test helpers: a failed unwrap is the test failing, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]

pub(crate) mod conduit;
pub(crate) mod heraldry;
pub(crate) mod knot;
pub(crate) mod mcp;
pub(crate) mod probe;
pub(crate) mod rss;
pub(crate) mod witness;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// What one run of `herald` did.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: String,
}

impl Run {
    /// Standard output as text.
    pub(crate) fn out(&self) -> String {
        String::from_utf8(self.stdout.clone()).expect("stdout is UTF-8")
    }

    /// Standard output parsed as one JSON value.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.out()))
    }

    /// Assert the exit status, showing both streams otherwise.
    pub(crate) fn expect(&self, code: i32) -> &Self {
        assert_eq!(
            self.code,
            code,
            "exit status\n--- stdout\n{}\n--- stderr\n{}",
            String::from_utf8_lossy(&self.stdout),
            self.stderr
        );
        self
    }
}

/// The rest of the first line `child` prints on standard output after
/// `prefix` (a server's `listening on …` line).
pub(crate) fn listening(child: &mut std::process::Child, prefix: &str) -> String {
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    line.trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned()
}

/// Run `herald args…` in `dir`, with `stdin` (or nothing) on standard input.
pub(crate) fn herald_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run herald");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        // Write from a thread: a large input must not deadlock on a full stdout pipe.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let out = child.wait_with_output().expect("wait for herald");
    Run {
        code: out.status.code().expect("herald exited (no signal)"),
        stdout: out.stdout,
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// Run `herald args…` in `dir`.
pub(crate) fn herald(dir: &Path, args: &[&str]) -> Run {
    herald_in(dir, args, None)
}

/// `herald keygen -o NAME` in `dir`; the sigil.
pub(crate) fn keygen(dir: &Path, name: &str) -> String {
    let run = herald(dir, &["keygen", "-o", name]);
    run.expect(0);
    let sigil = run.out().trim().to_owned();
    assert!(sigil.starts_with("sigil:"), "{sigil}");
    sigil
}

/// Concatenate files of `dir` into `out` (a trace file).
pub(crate) fn cat(dir: &Path, parts: &[&str], out: &str) {
    let mut bytes = Vec::new();
    for p in parts {
        bytes.extend(std::fs::read(dir.join(p)).unwrap());
    }
    std::fs::write(dir.join(out), bytes).unwrap();
}

/// The reason codes of one `verify --json` envelope entry, as `code` or `code[i]`.
pub(crate) fn codes(entry: &serde_json::Value) -> Vec<String> {
    entry["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| match r["index"].as_u64() {
            Some(i) => format!("{}[{i}]", r["code"].as_str().unwrap()),
            None => r["code"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// The first `sh` block after "## Worked example" in `docs/NAME`.
pub(crate) fn doc_example(name: &str) -> String {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs")
            .join(name),
    )
    .unwrap();
    let example = doc.split("## Worked example").nth(1).unwrap();
    example
        .split("```sh\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap()
        .to_owned()
}

/// Run `script` with `set -eu`, `herald` on `PATH`, in a fresh directory,
/// killed after `limit`. The directory (kept alive by the handle), the
/// exit status (`None`: killed at the limit) and standard output and error.
pub(crate) fn run_script(
    script: &str,
    limit: std::time::Duration,
) -> (tempfile::TempDir, Option<i32>, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("example.sh"), format!("set -eu\n{script}")).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_herald")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("sh")
        .arg("example.sh")
        .current_dir(d)
        .env("PATH", path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            r.read_to_end(&mut s).unwrap();
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    (tmp, status, out.join().unwrap(), err.join().unwrap())
}

/// Run the worked example of `docs/NAME` ([`doc_example`], [`run_script`]);
/// assert it succeeds. The directory and standard output.
pub(crate) fn run_doc_example(name: &str) -> (tempfile::TempDir, String) {
    let script = doc_example(name);
    let (tmp, status, stdout, stderr) = run_script(&script, std::time::Duration::from_secs(120));
    assert_eq!(
        status,
        Some(0),
        "--- script\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    (tmp, stdout)
}

/// `herald demo FLAG --dir DIR` in a fresh directory: it succeeds within a
/// minute. The directory (kept alive by the handle) and standard output.
pub(crate) fn run_demo(flag: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(["demo", flag, "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    (dir, text)
}
