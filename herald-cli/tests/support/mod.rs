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

/// Run the first `sh` block after "## Worked example" in `docs/NAME` with
/// `set -eu`, `herald` on `PATH`, in a fresh directory; assert it succeeds.
/// The directory (kept alive by the handle) and standard output.
pub(crate) fn run_doc_example(name: &str) -> (tempfile::TempDir, String) {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs")
            .join(name),
    )
    .unwrap();
    let example = doc.split("## Worked example").nth(1).unwrap();
    let script = example
        .split("```sh\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("example.sh"), format!("set -eu\n{script}")).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_herald")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("example.sh")
        .current_dir(d)
        .env("PATH", path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{:?}\n--- script\n{script}\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (tmp, stdout)
}
