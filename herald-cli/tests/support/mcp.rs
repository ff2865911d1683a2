//! The real MCP server the MCP tests run (issue 19), nobody here wrote:
//! `@modelcontextprotocol/server-everything` from the npm registry.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::{Run, herald};

/// `herald mcp proxy` with the keys `agent.key` and `tool.key` of the
/// directory it runs in (`keygen`), before its `--trace`.
pub(crate) const PROXY: [&str; 6] = [
    "mcp",
    "proxy",
    "--key",
    "agent.key",
    "--sandbox-key",
    "tool.key",
];

/// `herald verify --json` of `trace` in `dir`, with `agent.pub`,
/// `tool.pub` and the public key files `more` (a conduit's) pinned.
pub(crate) fn verify(dir: &Path, trace: &Path, more: &[&str]) -> Run {
    let mut args = vec![
        "verify",
        "--json",
        "--keyring",
        "agent.pub",
        "--keyring",
        "tool.pub",
    ];
    for k in more {
        args.extend(["--keyring", k]);
    }
    args.push(trace.to_str().unwrap());
    herald(dir, &args)
}

/// The pinned release of the server (as in `.ci/run`).
const EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// The server's entry point: `$HERALD_MCP_EVERYTHING` (set by `.ci/run`,
/// which installs it), or installed once with npm into this target's
/// scratch dir.
pub(crate) fn everything() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(p) = std::env::var_os("HERALD_MCP_EVERYTHING") {
            return PathBuf::from(p);
        }
        let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm");
        let bin = prefix.join("node_modules/.bin/mcp-server-everything");
        if !bin.exists() {
            let status = Command::new("timeout")
                .args([
                    "300",
                    "npm",
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--prefix",
                ])
                .arg(&prefix)
                .arg(EVERYTHING)
                .status()
                .expect("npm (install Node.js, or set HERALD_MCP_EVERYTHING)");
            assert!(
                status.success(),
                "npm install {EVERYTHING} failed: {status}"
            );
        }
        bin
    })
    .clone()
}

/// The official TypeScript SDK (`@modelcontextprotocol/sdk`), installed
/// beside the server as its dependency.
pub(crate) fn typescript_sdk() -> PathBuf {
    let bin = everything();
    let modules = bin
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .unwrap_or_else(|| panic!("{} is not under a node_modules", bin.display()));
    let sdk = modules.join("@modelcontextprotocol/sdk");
    assert!(sdk.is_dir(), "no {}", sdk.display());
    sdk
}
