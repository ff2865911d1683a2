//! One module per subcommand, and the value parsers they share: each bad
//! value is one line naming its flag (`herald: --kind: …`).

pub(crate) mod agent;
pub(crate) mod bundle;
pub(crate) mod completions;
pub(crate) mod compose;
pub(crate) mod conduit;
pub(crate) mod conduit_demo;
pub(crate) mod conformance;
pub(crate) mod cosign;
pub(crate) mod demo;
#[cfg(feature = "dht")]
pub(crate) mod dht;
pub(crate) mod encode;
pub(crate) mod explain;
pub(crate) mod extract;
pub(crate) mod heraldry;
pub(crate) mod heralds_demo;
pub(crate) mod inspect;
pub(crate) mod keygen;
pub(crate) mod log;
pub(crate) mod man;
pub(crate) mod mcp;
pub(crate) mod new;
pub(crate) mod reply;
pub(crate) mod resolve;
pub(crate) mod tlog;
pub(crate) mod verify;
pub(crate) mod witness;

use std::path::Path;

use herald_core::{Kind, Scope, Sigil, SigilForm};
use herald_verify::Keyring;

use crate::commands::verify::load_keyrings;
use crate::error::CliError;

/// `--kind` help: every kind of P7.
pub(crate) fn kinds_help() -> String {
    let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
    format!("Kind (P7): {} [default: message]", names.join(", "))
}

/// Help listing the scopes (without `origin` unless `with_origin`).
pub(crate) fn scopes_help(what: &str, with_origin: bool) -> String {
    format!("{what}: {}", scope_names(with_origin))
}

fn scope_names(with_origin: bool) -> String {
    Scope::ALL
        .iter()
        .filter(|s| with_origin || **s != Scope::Origin)
        .map(|s| s.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A sigil given to `flag`.
pub(crate) fn parse_sigil(flag: &str, text: &str) -> Result<Sigil, CliError> {
    Sigil::parse(text).map_err(|e| CliError::new(format!("{flag}: {text:?}: {e}")))
}

/// A signer or recipient given to `flag`: a sigil, a public key file
/// (`bob.pub`, holding one key) or a label of a `keyring` line (keyring
/// labels). The key's default sigil stands for a file or a label.
pub(crate) fn resolve_sigil(flag: &str, text: &str, keyring: &Keyring) -> Result<Sigil, CliError> {
    if text.starts_with("sigil:") {
        return parse_sigil(flag, text);
    }
    let path = Path::new(text);
    if text.ends_with(".pub") || path.is_file() {
        let ring = load_keyrings(&[path.to_path_buf()])?;
        let keys: Vec<_> = ring.keys().collect();
        return match keys.as_slice() {
            [key] => Ok(key.sigil(SigilForm::Default)),
            _ => Err(CliError::new(format!(
                "{flag}: {text}: holds {} keys; name one by its sigil or label",
                keys.len()
            ))),
        };
    }
    match keyring.keys_labelled(text).as_slice() {
        [key] => Ok(key.sigil(SigilForm::Default)),
        [] => Err(CliError::new(format!(
            "{flag}: {text:?} is not a sigil, a .pub file or the label of a --keyring key"
        ))),
        many => Err(CliError::new(format!(
            "{flag}: label {text:?} names {} keys in the keyring: {}",
            many.len(),
            many.iter()
                .map(|k| k.sigil(SigilForm::Default).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A kind given to `--kind`.
pub(crate) fn parse_kind(text: &str) -> Result<Kind, CliError> {
    Kind::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        CliError::new(format!(
            "--kind: unknown kind {text:?} (one of: {})",
            names.join(", ")
        ))
    })
}

/// A scope given to `flag`; `origin` only when `with_origin`.
pub(crate) fn parse_scope(flag: &str, text: &str, with_origin: bool) -> Result<Scope, CliError> {
    match Scope::from_name(text) {
        Some(Scope::Origin) if !with_origin => Err(CliError::new(format!(
            "{flag}: origin is signature 0, made by `herald new`/`reply`; co-sign in one of: {}",
            scope_names(false)
        ))),
        Some(scope) => Ok(scope),
        None => Err(CliError::new(format!(
            "{flag}: unknown scope {text:?} (one of: {})",
            scope_names(with_origin)
        ))),
    }
}
