//! The README shows nothing the test suite does not run or check: its
//! console examples are the walk-through that
//! `tests/cmd/walkthrough.trycmd` runs (tests/cli.rs), each ```console
//! block verbatim; the quick starts of *Run it* and *The inspector* run
//! here, as written, in an empty directory; and the *Test* section's
//! command is the one `.ci/run` runs.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn console_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```console\n") {
        let body = &rest[start..];
        let end = body["```console\n".len()..].find("```\n").unwrap() + "```console\n".len();
        blocks.push(body[..end + "```\n".len()].to_owned());
        rest = &body[end + "```\n".len()..];
    }
    blocks
}

#[test]
fn readme_console_examples_are_run_by_the_walkthrough() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../README.md")).unwrap();
    let walkthrough = std::fs::read_to_string(root.join("tests/cmd/walkthrough.trycmd")).unwrap();
    let blocks = console_blocks(&readme);
    assert!(
        blocks.len() >= 3,
        "README has {} console blocks",
        blocks.len()
    );
    for block in blocks {
        assert!(
            walkthrough.contains(&block),
            "README block not in walkthrough.trycmd:\n{block}"
        );
    }
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap()
}

/// The body of `## heading` (up to the next `## `).
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README has no section {heading:?}"));
    let body = &text[start + heading.len() + 5..];
    &body[..body.find("\n## ").unwrap_or(body.len())]
}

/// The commands of the ```sh blocks of `text`: continuation lines joined,
/// comments and blank lines dropped.
fn sh_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```sh\n") {
        let body = &rest[start + "```sh\n".len()..];
        let end = body.find("```").unwrap();
        let mut pending = String::new();
        for line in body[..end].lines() {
            let line = line.split(" #").next().unwrap().trim();
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            match line.strip_suffix('\\') {
                Some(head) => pending.push_str(head),
                None => {
                    pending.push_str(line);
                    commands.push(std::mem::take(&mut pending));
                }
            }
        }
        rest = &body[end + 3..];
    }
    commands
}

#[test]
fn readme_test_command_is_the_one_ci_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    let text = readme();
    let test = section(&text, "Test");
    let commands = sh_commands(test);
    assert_eq!(commands, ["cargo test --workspace", "bash .ci/run"]);
    assert!(
        ci.contains(&format!("run {}", commands[0])),
        ".ci/run does not run `{}`",
        commands[0]
    );
    // CI may never skip (herald_testkit::external), and the README says so.
    assert!(ci.contains("export HERALD_TEST_ALL=1"));
    assert!(test.contains("HERALD_TEST_ALL=1"));
    // The fresh-clone step checks the README's command itself.
    assert!(ci.contains("readme_test=$(awk '/^## Test/"));
}

/// One README command, with `herald` (or `cargo run … -p herald-cli --`)
/// the binary under test; `npx` is found first in `shims`.
fn command(line: &str, dir: &Path, shims: &Path) -> Command {
    let line = line
        .strip_prefix("cargo run --release -p herald-cli -- ")
        .map(|rest| format!("herald {rest}"))
        .unwrap_or_else(|| line.to_owned());
    let mut words = line.split_whitespace();
    assert_eq!(words.next(), Some("herald"), "README runs {line:?}");
    let mut c = Command::new(env!("CARGO_BIN_EXE_herald"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![shims.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    c.args(words)
        .current_dir(dir)
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// The quick starts run as written, in order, in an empty directory: the
/// demos, the keys before `herald mcp proxy` (its server started by an
/// `npx` stand-in that records its arguments and serves nothing), and the
/// inspector (until it says where it listens).
#[test]
fn readme_quick_starts_run_as_written() {
    let text = readme();
    let mut lines = sh_commands(section(&text, "Run it"));
    lines.extend(sh_commands(section(&text, "The inspector")));
    assert!(lines.len() >= 7, "{lines:?}");
    let dir = tempfile::tempdir().unwrap();
    let shims = tempfile::tempdir().unwrap();
    let npx = shims.path().join("npx");
    std::fs::write(&npx, "#!/bin/sh\necho \"$@\" > npx.args\nexec cat\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for line in &lines {
        let mut c = command(line, dir.path(), shims.path());
        if line.contains("inspect --serve") {
            let mut child = c.spawn().unwrap();
            let url = support::listening(&mut child, "listening on ");
            assert!(url.starts_with("http://127.0.0.1:"), "{line}: {url}");
            child.kill().unwrap();
            child.wait().unwrap();
            continue;
        }
        if line.contains("mcp proxy") {
            c.stdin(Stdio::piped());
            let mut child = c.spawn().unwrap();
            // The client leaves at once: the proxy ends with it.
            child.stdin.take().unwrap().flush().unwrap();
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{line}: {}: {stderr}", out.status);
            let args = std::fs::read_to_string(dir.path().join("npx.args")).unwrap();
            assert_eq!(args.trim(), "-y @modelcontextprotocol/server-everything");
            continue;
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{line}: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
