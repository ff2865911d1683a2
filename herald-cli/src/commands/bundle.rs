//! `herald bundle FILE… [--proof PROOF]… [--key PATH]… [--checkpoint CP]… -o OUT`: one proof
//! bundle (`herald_verify::Bundle`, docs/audit-log.md "Proof bundles")
//! holding the envelopes of every FILE, the inclusion proofs given, and the
//! public keys of the keyrings given. `herald verify OUT` then verifies
//! them as a unit.
//!
//! Everything is checked before anything is written: every item of a FILE
//! must be an envelope (P1, P3), every PROOF an inclusion proof (P9) of one
//! of those envelopes, every key line a key its sigil names. A FILE that
//! is itself a bundle contributes its envelopes, proofs and keys, so a
//! bundle can be extended. Exit 0, or 2 naming the first bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use herald_core::{EnvelopeRef, PublicKey};
use herald_verify::{Bundle, InclusionProof, encode_bundle_with_certifications, is_bundle};

use crate::commands::verify::load_keyrings;
use crate::error::CliError;
use crate::input::{self, Item};
use crate::output::OutputArgs;

/// What `bundle` was asked.
#[derive(Debug)]
pub(crate) struct Options {
    /// Envelope, trace or bundle files (`-` is standard input).
    pub(crate) files: Vec<PathBuf>,
    /// Inclusion proof files (`herald log prove` output).
    pub(crate) proofs: Vec<PathBuf>,
    /// Keyring files or directories whose keys the bundle carries.
    pub(crate) keys: Vec<PathBuf>,
    /// C2SP checkpoint files (with cosignatures) the bundle carries.
    pub(crate) checkpoints: Vec<PathBuf>,
    /// Files of Herald certification items the bundle carries (PROFILE P14).
    pub(crate) certifications: Vec<PathBuf>,
    /// Where to write the bundle (`-` for standard output), and whether to
    /// replace it.
    pub(crate) output: OutputArgs,
}

/// Run `bundle`.
pub(crate) fn run(opts: &Options) -> Result<ExitCode, CliError> {
    let stdin_uses = opts
        .files
        .iter()
        .chain(&opts.proofs)
        .filter(|f| input::is_stdin(f))
        .count();
    if stdin_uses > 1 {
        return Err(CliError::new("standard input (-) can be given only once"));
    }
    let mut envelopes: Vec<Vec<u8>> = Vec::new();
    let mut proofs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut keys: Vec<PublicKey> = Vec::new();
    let mut checkpoints: Vec<Vec<u8>> = Vec::new();
    let mut certifications: Vec<Vec<u8>> = Vec::new();
    for path in &opts.files {
        let bytes = input::read_envelopes(path)?;
        let name = input::display_name(path);
        if is_bundle(&bytes) {
            let b = Bundle::decode(&bytes).map_err(|e| CliError::new(format!("{name}: {e}")))?;
            for &(offset, env) in b.envelopes() {
                EnvelopeRef::decode(env)
                    .map_err(|e| CliError::new(format!("{name}: byte {offset}: {e}")))?;
                envelopes.push(env.to_vec());
            }
            for &(offset, p) in b.proofs() {
                proofs.push((format!("{name}: byte {offset}"), p.to_vec()));
            }
            keys.extend_from_slice(b.keys());
            checkpoints.extend(b.checkpoints().iter().map(|c| c.1.to_vec()));
            certifications.extend(b.certifications().iter().map(|c| c.1.to_vec()));
            continue;
        }
        for item in input::items(&bytes) {
            match item {
                Item::Envelope(_, env) => envelopes.push(env.as_bytes().to_vec()),
                Item::Bad(offset, why) => {
                    return Err(CliError::new(format!("{name}: byte {offset}: {why}")));
                }
            }
        }
    }
    for path in &opts.proofs {
        proofs.push((input::display_name(path), input::read_proof(path)?));
    }
    // Each proof must be an inclusion proof of an envelope of the bundle.
    let views: Vec<EnvelopeRef<'_>> = envelopes
        .iter()
        .filter_map(|e| EnvelopeRef::decode(e).ok())
        .collect();
    for (name, bytes) in &proofs {
        let proof = InclusionProof::decode(bytes)
            .map_err(|e| CliError::new(format!("--proof {name}: {e}")))?;
        let Some(env) = views.iter().find(|v| v.id() == proof.leaf().id()) else {
            return Err(CliError::new(format!(
                "--proof {name}: proves {}, which is not one of the bundle's envelopes",
                herald_verify::hex(proof.leaf().id())
            )));
        };
        proof
            .matches(env)
            .map_err(|e| CliError::new(format!("--proof {name}: {e}")))?;
    }
    for path in &opts.checkpoints {
        let bytes = std::fs::read(path).map_err(|e| CliError::io(path, &e))?;
        herald_tlog::checkpoint::SignedCheckpoint::parse_unverified(&bytes)
            .map_err(|e| CliError::new(format!("--checkpoint {}: {e}", path.display())))?;
        checkpoints.push(bytes);
    }
    checkpoints.sort();
    checkpoints.dedup();
    for path in &opts.certifications {
        let bytes = std::fs::read(path).map_err(|e| CliError::io(path, &e))?;
        let items = herald_verify::CertificationItem::decode_sequence(&bytes, 65_536)
            .map_err(|e| CliError::new(format!("--certification {}: {e}", path.display())))?;
        certifications.extend(items.iter().map(herald_verify::CertificationItem::encode));
    }
    certifications.sort();
    certifications.dedup();
    keys.extend(load_keyrings(&opts.keys)?.keys());
    keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    keys.dedup();
    if envelopes.is_empty() {
        return Err(CliError::new("no envelopes to bundle"));
    }
    let envelope_refs: Vec<&[u8]> = envelopes.iter().map(Vec::as_slice).collect();
    let proof_refs: Vec<&[u8]> = proofs.iter().map(|(_, b)| b.as_slice()).collect();
    let checkpoint_refs: Vec<&[u8]> = checkpoints.iter().map(Vec::as_slice).collect();
    let certification_refs: Vec<&[u8]> = certifications.iter().map(Vec::as_slice).collect();
    let bytes = encode_bundle_with_certifications(
        &envelope_refs,
        &proof_refs,
        &keys,
        &checkpoint_refs,
        &certification_refs,
    );
    opts.output.write(&bytes)?;
    Ok(ExitCode::SUCCESS)
}

/// `herald bundle`.
#[derive(Args, Debug)]
#[command(
    after_help = "Every item of every FILE must be an envelope, every PROOF an inclusion proof \
                  (herald log prove) of one of them. A FILE may itself be a bundle, to extend it. \
                  Verify the result with `herald verify OUT --keyring LOGS`: a proof counts only \
                  when its log's key is in the keyring."
)]
pub(crate) struct BundleArgs {
    /// Envelope, trace or bundle files (- for standard input)
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// An inclusion proof to carry (repeatable)
    #[arg(long, value_name = "PROOF")]
    pub(crate) proof: Vec<PathBuf>,
    /// A keyring file, or directory of *.pub files, whose public keys to carry (repeatable)
    #[arg(long, value_name = "PATH")]
    pub(crate) key: Vec<PathBuf>,
    /// A C2SP checkpoint with its cosignatures (e.g. the conduit's GET /checkpoint), for
    /// `herald verify --log-policy` (repeatable)
    #[arg(long, value_name = "CHECKPOINT")]
    pub(crate) checkpoint: Vec<PathBuf>,
    /// A file of Herald certifications, {certification, proof} items as a Herald serves them
    /// (PROFILE P14), carried for `herald verify --heralds` (repeatable)
    #[arg(long, value_name = "FILE")]
    pub(crate) certification: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}
