//! What the libraries log (through `tracing`) goes to standard error,
//! filtered by `RUST_LOG` when it is set (directives `target=level`,
//! comma-separated, as `tracing_subscriber::filter::Targets` reads them),
//! else by the command: the servers and long-running commands log from
//! `info`, the one-shot commands from `warn`; the MCP wrapper, whose
//! standard error an MCP client shows as its server's log, writes each event
//! as its message alone, one line. `--quiet` keeps errors only,
//! as it keeps only errors of the CLI's own notices (CLI.md: every command
//! takes `-q/--quiet`). Standard output is never written here: it keeps the
//! command's own output (a report, a `listening on` line).

use std::str::FromStr;

use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How much a command logs unless `RUST_LOG` says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verbosity {
    /// A server or a long-running client: what it starts, repairs and drops.
    Service,
    /// A one-shot command: warnings and errors only.
    OneShot,
    /// `herald mcp`: from `info`, each event its message alone.
    Wrapper,
}

/// The resolver's libraries say nothing by default: what a resolution
/// channel failed on is reported by the command itself (`herald:
/// warning: dns: …`), and hickory's own warnings dump whole DNS messages.
/// `RUST_LOG=hickory_net=debug` (or `mainline=debug`) still shows them.
fn resolution_quiet(targets: Targets) -> Targets {
    targets
        .with_target("hickory_net", LevelFilter::OFF)
        .with_target("hickory_proto", LevelFilter::OFF)
        .with_target("hickory_resolver", LevelFilter::OFF)
        // The Mainline DHT node's own (a bootstrap failure is an ERROR there).
        .with_target("mainline", LevelFilter::OFF)
        .with_target("herald_resolve", LevelFilter::ERROR)
}

/// Install the subscriber. A `RUST_LOG` that does not parse is reported
/// once and the default is used.
pub(crate) fn init(verbosity: Verbosity, quiet: bool) {
    let default = match (quiet, verbosity) {
        (true, _) => LevelFilter::ERROR,
        (false, Verbosity::Service | Verbosity::Wrapper) => LevelFilter::INFO,
        (false, Verbosity::OneShot) => LevelFilter::WARN,
    };
    let mut bad = None;
    let filter = match std::env::var("RUST_LOG") {
        Ok(text) if !text.trim().is_empty() && !quiet => match Targets::from_str(&text) {
            Ok(targets) => targets,
            Err(e) => {
                bad = Some(format!("RUST_LOG={text:?} is ignored: {e}"));
                resolution_quiet(Targets::new().with_default(default))
            }
        },
        _ => resolution_quiet(Targets::new().with_default(default)),
    };
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let layer = match verbosity {
        Verbosity::Wrapper => layer
            .without_time()
            .with_target(false)
            .with_level(false)
            .with_filter(filter)
            .boxed(),
        _ => layer.with_filter(filter).boxed(),
    };
    let _ = tracing_subscriber::registry().with(layer).try_init();
    if let Some(text) = bad {
        crate::notice::warning(&text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_log_directives_parse_as_targets() {
        let t = Targets::from_str("herald_conduit=debug,warn").expect("parses");
        assert!(t.would_enable("herald_conduit::storage", &tracing::Level::DEBUG));
        assert!(!t.would_enable("herald_http::server", &tracing::Level::INFO));
        assert!(Targets::from_str("herald_conduit=loud").is_err());
    }
}
