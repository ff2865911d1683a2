//! The real MCP server the MCP tests run (docs/mcp.md *How it is
//! tested*), nobody here wrote:
//! `@modelcontextprotocol/server-everything` from the npm registry.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use herald_testkit::external;

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

/// How to get Node and npm, in a skip line.
const NODE_INSTALL: &str = "apt-get install nodejs npm";

/// The server's entry point: `$HERALD_MCP_EVERYTHING` (set by `.ci/run`,
/// which installs it), or installed once with npm into this target's
/// scratch dir. `None`, the calling test skipped with one line
/// (`herald_testkit::external`), without Node, npm or a successful install.
pub(crate) fn server_everything() -> Option<PathBuf> {
    external::require("node", NODE_INSTALL)?;
    /// The entry point, or what is missing.
    static PATH: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = PATH.get_or_init(|| {
        if let Some(p) = std::env::var_os("HERALD_MCP_EVERYTHING") {
            return Ok(PathBuf::from(p));
        }
        let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm");
        let bin = prefix.join("node_modules/.bin/mcp-server-everything");
        if bin.exists() {
            return Ok(bin);
        }
        let Some(npm) = external::on_path("npm") else {
            return Err("npm".to_owned());
        };
        let status = Command::new("timeout")
            .arg("300")
            .arg(npm)
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(EVERYTHING)
            .status();
        match status {
            Ok(s) if s.success() && bin.exists() => Ok(bin),
            Ok(s) => Err(format!("{EVERYTHING} (npm install: {s})")),
            Err(e) => Err(format!("{EVERYTHING} (npm install: {e})")),
        }
    });
    match found {
        Ok(bin) => Some(bin.clone()),
        Err(what) => external::missing(
            what,
            "apt-get install nodejs npm and registry access, or set HERALD_MCP_EVERYTHING",
        ),
    }
}

/// The server's entry point, for a test that [`server_everything`] let run.
pub(crate) fn everything() -> PathBuf {
    server_everything().expect("a test that runs the server checks server_everything() first")
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
