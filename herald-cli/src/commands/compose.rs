//! Building and signing an envelope from the options `new` and `reply`
//! share (CLI.md): key, `to`, kind, payload, attestations, times, output.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use herald_core::attestation::birth_attestation;
use herald_core::cbor::Value;
use herald_core::{CheckOptions, EnvelopeBuilder, Kind, Sigil, SigningKey, Status, check};

use crate::commands::verify::load_keyrings;
use crate::commands::{parse_kind, parse_sigil, resolve_sigil};
use crate::error::CliError;
use crate::output::OutputArgs;
use crate::{clock, input, json, keyfile};

/// The `birth` options of `new` (`reply` has none).
pub(crate) struct BirthArgs<'a> {
    /// `--description`.
    pub(crate) description: Option<&'a str>,
    /// `--lineage`, repeatable.
    pub(crate) lineage: &'a [String],
}

/// What the builder is: a genesis, or a reply (given the parent).
pub(crate) enum Start<'p> {
    /// `herald new`.
    Genesis(BirthArgs<'p>),
    /// `herald reply`.
    Reply {
        /// The parent envelope.
        parent: &'p herald_core::EnvelopeRef<'p>,
        /// Without `--to`, address the parent's sender (or, replying to
        /// oneself, the parent's recipient).
        auto_to: bool,
    },
}

/// Build, sign and write the envelope; exit 0.
pub(crate) fn run(args: &ComposeArgs, start: Start<'_>) -> Result<ExitCode, CliError> {
    // Every option is checked before the key file is opened.
    let kind = args
        .kind
        .as_deref()
        .map(parse_kind)
        .transpose()?
        .unwrap_or_default();
    let keyring = load_keyrings(&args.keyring)?;
    let to = args
        .to
        .as_deref()
        .map(|t| resolve_sigil("--to", t, &keyring))
        .transpose()?;
    let from = args
        .from
        .as_deref()
        .map(|f| resolve_sigil("--from", f, &keyring))
        .transpose()?;
    let payload = match molt_payload(kind, args)? {
        Some(molt) => molt,
        None => payload(args)?,
    };
    let mut attestations = args
        .attest
        .iter()
        .map(|a| attestation("--attest", a, false))
        .chain(
            args.attest_json
                .iter()
                .map(|a| attestation("--attest-json", a, true)),
        )
        .collect::<Result<Vec<_>, _>>()?;
    let ts = match args.ts {
        Some(ts) => ts,
        None => clock::now()?,
    };
    let expires = args
        .expires
        .as_deref()
        .map(|e| expires(e, ts))
        .transpose()?;
    if kind == Kind::Birth && matches!(start, Start::Reply { .. }) {
        return Err(CliError::new(
            "--kind birth: a birth is the genesis of its own trace; use `herald new --kind birth`",
        ));
    }
    let birth = match &start {
        Start::Genesis(birth) => birth_plan(kind, birth, &attestations)?,
        Start::Reply { .. } => None,
    };
    let key = keyfile::load(&args.key)?;
    if let Some((description, lineage)) = birth {
        let value = birth_attestation(&key.public_key(), description, &lineage);
        attestations.insert(0, ("birth".into(), value));
    }

    let mut builder = match start {
        Start::Genesis(_) => EnvelopeBuilder::genesis(ts),
        Start::Reply { parent, auto_to } => {
            let builder = EnvelopeBuilder::reply(parent, ts);
            let default_to = (auto_to && to.is_none())
                .then(|| default_recipient(parent, &key, from))
                .flatten();
            match default_to {
                Some(to) => builder.to(to),
                None => builder,
            }
        }
    }
    .kind(kind)
    .payload(payload);
    if let Some(to) = to {
        builder = builder.to(to);
    }
    if let Some(from) = from {
        builder = builder.from_sigil(from);
    }
    if let Some(expires) = expires {
        builder = builder.expires(expires);
    }
    for (ty, value) in attestations {
        builder = builder.attest(&ty, value);
    }
    let envelope = builder
        .sign(&key)
        .map_err(|e| CliError::new(format!("cannot build the envelope: {e}")))?;
    warn_if_invalid(envelope.as_bytes(), &key, from);
    args.output.write(envelope.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The parent's sender, or its recipient when the parent is our own (sent
/// by this key, or by the `--from` identity).
fn default_recipient(
    parent: &herald_core::EnvelopeRef<'_>,
    key: &SigningKey,
    from: Option<Sigil>,
) -> Option<Sigil> {
    let sender = parent.from_sigil();
    let own = sender.names_key(key.public_key().as_bytes())
        || from.is_some_and(|f| f.same_key_as(&sender));
    if own {
        parent.to().map(|(_, s)| s)
    } else {
        Some(parent.from_sigil())
    }
}

/// `--payload-json` (or `@FILE`), `--payload-text`, `--payload-file`, or
/// `null`.
fn payload(args: &ComposeArgs) -> Result<Value, CliError> {
    if let Some(text) = &args.payload_text {
        return Ok(Value::text(text.as_str()));
    }
    if let Some(text) = &args.payload_json {
        let text = json_text("--payload-json", text)?;
        return json::to_cbor(&text).map_err(|e| CliError::new(format!("--payload-json: {e}")));
    }
    if let Some(path) = &args.payload_file {
        let bytes = input::read(path)?;
        if keyfile::is_key_file(&bytes) {
            return Err(CliError::new(format!(
                "--payload-file {}: refusing to send a secret key file",
                input::display_name(path)
            )));
        }
        return Ok(Value::Bytes(bytes));
    }
    Ok(Value::Null)
}

/// With `--kind molt`, the P7 payload `{new_key, not_before}` from
/// `--new-key NAME.pub` and `--not-before SECS` (clap makes each require the
/// other); the two flags are refused with any other kind.
fn molt_payload(kind: Kind, args: &ComposeArgs) -> Result<Option<Value>, CliError> {
    let (Some(path), Some(not_before)) = (&args.new_key, args.not_before) else {
        if kind == Kind::Molt
            && args.payload_json.is_none()
            && args.payload_text.is_none()
            && args.payload_file.is_none()
        {
            return Err(CliError::new(
                "--kind molt needs --new-key NAME.pub and --not-before SECS (P7)",
            ));
        }
        return Ok(None);
    };
    if kind != Kind::Molt {
        return Err(CliError::new(
            "--new-key and --not-before are for --kind molt",
        ));
    }
    let mut ring = herald_verify::Keyring::new();
    let name = input::display_name(path);
    let added = ring
        .load(path)
        .map_err(|e| CliError::new(format!("--new-key: {e}")))?
        .keys;
    let mut keys = ring.keys();
    let (Some(key), None, 1) = (keys.next(), keys.next(), added) else {
        return Err(CliError::new(format!(
            "--new-key {name}: expected exactly one public key line"
        )));
    };
    let mut map = herald_core::cbor::Map::new();
    map.insert("new_key", Value::Bytes(key.as_bytes().to_vec()));
    map.insert("not_before", Value::Unsigned(not_before));
    Ok(Some(Value::Map(map)))
}

/// JSON given inline, or `@FILE` / `@-` to read it.
fn json_text(flag: &str, text: &str) -> Result<String, CliError> {
    let Some(file) = text.strip_prefix('@') else {
        return Ok(text.to_owned());
    };
    let path = Path::new(file);
    let bytes = input::read(path)?;
    if keyfile::is_key_file(&bytes) {
        return Err(CliError::new(format!(
            "{flag}: refusing to send a secret key file ({})",
            input::display_name(path)
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        CliError::new(format!(
            "{flag}: {} is not UTF-8 text",
            input::display_name(path)
        ))
    })
}

/// `--attest TYPE=VALUE` (`json_only`: `--attest-json TYPE=JSON`).
///
/// VALUE is JSON when it parses as JSON (CLI.md: `--attest TYPE=JSON`), or
/// is `@FILE`; otherwise it is bare text (`--attest model=claude`,
/// bare-text attestations). A VALUE that starts like a JSON object, array
/// or string but does not parse is an error, never quietly text.
fn attestation(flag: &str, arg: &str, json_only: bool) -> Result<(String, Value), CliError> {
    let Some((ty, text)) = arg.split_once('=').filter(|(ty, _)| !ty.is_empty()) else {
        let form = if json_only { "TYPE=JSON" } else { "TYPE=VALUE" };
        return Err(CliError::new(format!(
            "{flag}: {arg:?} is not {form} (e.g. model=claude, or --attest-json temperature=0.2)"
        )));
    };
    let flag = format!("{flag} {ty}");
    let json_like = json_only || text.starts_with(['@', '{', '[', '"']);
    if !json_like && json::to_cbor(text).is_err() {
        return Ok((ty.to_owned(), Value::text(text)));
    }
    let text = json_text(&flag, text)?;
    let value = json::to_cbor(&text).map_err(|e| CliError::new(format!("{flag}: {e}")))?;
    Ok((ty.to_owned(), value))
}

/// `--expires TIME` or `+SECS` (after `ts`); never before `ts` (P3).
fn expires(text: &str, ts: u64) -> Result<u64, CliError> {
    let bad = || {
        CliError::new(format!(
            "--expires: {text:?} is not Unix seconds, RFC 3339 or +SECS"
        ))
    };
    let at = match text.strip_prefix('+') {
        Some(delta) => ts
            .checked_add(delta.parse().map_err(|_| bad())?)
            .ok_or_else(bad)?,
        None => clock::parse_time(text).map_err(|_| bad())?,
    };
    if at < ts {
        return Err(CliError::new(format!(
            "--expires: {at} is before the envelope's ts {ts} (P3)"
        )));
    }
    Ok(at)
}

/// What the `birth` attestation of `--kind birth` (P7) will hold — its
/// description and lineage — unless `--attest birth=…` gave one.
fn birth_plan<'a>(
    kind: Kind,
    birth: &BirthArgs<'a>,
    attestations: &[(String, Value)],
) -> Result<Option<(&'a str, Vec<Sigil>)>, CliError> {
    let own_options = birth.description.is_some() || !birth.lineage.is_empty();
    if kind != Kind::Birth {
        if own_options {
            return Err(CliError::new(
                "--description and --lineage are for --kind birth",
            ));
        }
        return Ok(None);
    }
    if attestations.iter().any(|(ty, _)| ty == "birth") {
        if own_options {
            return Err(CliError::new(
                "--description/--lineage cannot be combined with --attest birth=JSON",
            ));
        }
        return Ok(None);
    }
    let lineage = birth
        .lineage
        .iter()
        .map(|s| {
            let sigil = parse_sigil("--lineage", s)?;
            if sigil.is_reserved() || sigil.is_short() {
                return Err(CliError::new(format!(
                    "--lineage: {s:?}: a lineage parent is an agent's default or long sigil, \
                     not a reserved name or a short sigil (P2, P8)"
                )));
            }
            Ok(sigil)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some((birth.description.unwrap_or(""), lineage)))
}

/// Say so (without refusing: tests and tools build bad envelopes on
/// purpose) when what was just signed would be `invalid` on its own.
/// The signing key, also bound to `--from` as by a molt (P8), so that an
/// envelope a molted-in key signs for its identity is checked as it will be
/// once the molt is proven.
struct OwnKey {
    key: herald_core::PublicKey,
    from: Option<Sigil>,
}

impl herald_core::KeyResolver for OwnKey {
    fn resolve(&self, sigil: &Sigil) -> Option<herald_core::PublicKey> {
        sigil.names_key(self.key.as_bytes()).then_some(self.key)
    }
    fn resolve_molted(&self, sigil: &Sigil) -> Option<herald_core::PublicKey> {
        self.from.filter(|f| f.same_key_as(sigil)).map(|_| self.key)
    }
}

fn warn_if_invalid(bytes: &[u8], key: &SigningKey, from: Option<Sigil>) {
    let mut reasons = Vec::new();
    let signer = OwnKey {
        key: key.public_key(),
        from,
    };
    let checked = check(bytes, &signer, &CheckOptions::DEFAULT, &mut reasons);
    if checked.status == Status::Invalid {
        let why: Vec<String> = reasons
            .iter()
            .filter(|r| r.status() == Status::Invalid)
            .map(|r| format!("{} ({})", r.code, r.detail))
            .collect();
        crate::notice::warning(&format!(
            "this envelope will not verify: {}",
            why.join("; ")
        ));
    }
}

/// Options shared by `new` and `reply`.
#[derive(Args, Debug)]
pub(crate) struct ComposeArgs {
    /// Secret key file of the sender (from `herald keygen`)
    #[arg(long, value_name = "NAME.key")]
    pub(crate) key: PathBuf,
    /// Recipient (`to`): a sigil, a public key file (bob.pub) or a --keyring label
    #[arg(long, value_name = "SIGIL")]
    pub(crate) to: Option<String>,
    /// Sender (`from`), as --to [default: the key's own]; after a molt (P8), the identity
    /// whose new key --key is
    #[arg(long, value_name = "SIGIL")]
    pub(crate) from: Option<String>,
    /// Keyring file, or directory of *.pub files, whose labels --to and --from may name
    /// (repeatable)
    #[arg(long, value_name = "PATH")]
    pub(crate) keyring: Vec<PathBuf>,
    #[arg(long, value_name = "KIND", help = super::kinds_help())]
    pub(crate) kind: Option<String>,
    /// Payload as JSON (integers stay CBOR integers); @FILE reads the JSON from FILE, @- from stdin
    #[arg(long, value_name = "JSON", conflicts_with_all = ["payload_file", "new_key"])]
    pub(crate) payload_json: Option<String>,
    /// Payload as text (a CBOR text string), taken as it is: --payload-text 'hello' is
    /// --payload-json '"hello"'
    #[arg(
        long,
        value_name = "TEXT",
        conflicts_with_all = ["payload_json", "payload_file", "new_key"]
    )]
    pub(crate) payload_text: Option<String>,
    /// Payload: the bytes of FILE as a CBOR byte string (- for stdin). Default payload: null
    #[arg(long, value_name = "FILE", conflicts_with = "new_key")]
    pub(crate) payload_file: Option<PathBuf>,
    /// With --kind molt: the public key file (NAME.pub) of the key the sigil molts to (P7)
    #[arg(long, value_name = "NAME.pub", requires = "not_before")]
    pub(crate) new_key: Option<PathBuf>,
    /// With --kind molt: when the new key takes over, Unix seconds or RFC 3339 (P8: at least
    /// 24 h after the old key's last envelope unless a Herald endorsement waives it)
    #[arg(long, value_name = "TIME", requires = "new_key", value_parser = crate::clock::parse_time)]
    pub(crate) not_before: Option<u64>,
    /// Attestation {type: TYPE, value: VALUE}: JSON if VALUE parses as JSON (or is @FILE),
    /// else bare text, as in model=claude (repeatable)
    #[arg(long, value_name = "TYPE=VALUE")]
    pub(crate) attest: Vec<String>,
    /// Attestation whose value must be JSON (repeatable; JSON may be @FILE); added after
    /// every --attest
    #[arg(long, value_name = "TYPE=JSON")]
    pub(crate) attest_json: Vec<String>,
    /// Creation time, Unix seconds or RFC 3339 [default: the clock]
    #[arg(long, value_name = "TIME", value_parser = crate::clock::parse_time)]
    pub(crate) ts: Option<u64>,
    /// Expiry: Unix seconds, RFC 3339, or +SECS after --ts
    #[arg(long, value_name = "TIME")]
    pub(crate) expires: Option<String>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}
