//! Heralds from the command line (PROFILE P14, CLI.md *Resolution and
//! Heralds*): `--heralds FILE` (the Herald list) with `--log-policy FILE`
//! (the tlog-policy each Herald's log is checked under), and the
//! certifications judged: those given as inputs (files of `{certification,
//! proof}` items, as a Herald serves them) and those fetched from each
//! listed Herald's URL (`GET /v1/certifications/{sigil}`) for the signers
//! of the set.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use herald_core::Sigil;
use herald_core::cbor::Limits;
use herald_resolve::HeraldChannel;
use herald_verify::{
    CertificationItem, Certified, HeraldList, Heralds, Input, Piece, sequence_pieces,
};

use crate::error::CliError;

/// Most signers of one set whose certifications are fetched.
const MAX_SIGNERS: usize = 256;

/// Most certification items read from the inputs.
const MAX_ITEMS: usize = 65_536;

/// The Heralds of `--heralds FILE`, their logs under `policy` (the parsed
/// `--log-policy FILE`, which must be given).
pub(crate) fn load(
    list: &Path,
    policy: Option<&herald_tlog::Policy>,
) -> Result<Arc<Heralds>, CliError> {
    let Some(policy) = policy else {
        return Err(CliError::new(
            "--heralds needs --log-policy FILE: a certification counts only with its proof in a \
             checkpoint of its Herald's log that meets that policy (PROFILE P14)",
        ));
    };
    let list = HeraldList::load(list).map_err(|e| CliError::new(e.to_string()))?;
    Heralds::new(list, policy.clone())
        .map(Arc::new)
        .map_err(|e| CliError::new(e.to_string()))
}

/// Whether `bytes` holds certification items (`{certification, proof}`
/// maps) rather than envelopes: its first item is a map with exactly
/// those keys.
pub(crate) fn is_certifications(bytes: &[u8]) -> bool {
    let limits = Limits {
        max_size: herald_verify::MAX_ITEM_BYTES,
        ..Limits::DEFAULT
    };
    match herald_core::cbor::decode_prefix(bytes, &limits) {
        Ok((value, _)) => value.as_map().is_some_and(|m| {
            m.len() == 2 && m.get("certification").is_some() && m.get("proof").is_some()
        }),
        Err(_) => false,
    }
}

/// Take the inputs that are certification items out of `inputs`; their
/// items, read, with those the bundles among the inputs carry (the
/// bundles stay inputs). An input that starts as items but does not read
/// as items throughout is an error naming it.
pub(crate) fn take_items(inputs: &mut Vec<Input>) -> Result<Vec<CertificationItem>, CliError> {
    let mut items = Vec::new();
    let mut kept = Vec::with_capacity(inputs.len());
    for input in inputs.drain(..) {
        if herald_verify::is_bundle(&input.bytes)
            && let Ok(b) = herald_verify::Bundle::decode(&input.bytes)
        {
            for &(offset, c) in b.certifications() {
                let item = CertificationItem::decode(c)
                    .map_err(|e| CliError::new(format!("{}: byte {offset}: {e}", input.name)))?;
                items.push(item);
            }
        }
        if !is_certifications(&input.bytes) {
            kept.push(input);
            continue;
        }
        let read = CertificationItem::decode_sequence(&input.bytes, MAX_ITEMS - items.len())
            .map_err(|e| CliError::new(format!("{}: {e}", input.name)))?;
        items.extend(read);
    }
    *inputs = kept;
    Ok(items)
}

/// The senders of `inputs` (their `from`, at most [`MAX_SIGNERS`]), in
/// first-seen order.
fn senders(inputs: &[Input]) -> Vec<Sigil> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for input in inputs {
        for piece in sequence_pieces(
            &input.bytes,
            Limits::DEFAULT.max_size,
            crate::input::SPLIT_DEPTH,
        ) {
            let Piece::Item { bytes, .. } = piece else {
                continue;
            };
            let Ok(v) = herald_core::EnvelopeRef::decode(bytes) else {
                continue;
            };
            let from = v.from_sigil();
            let Some(identity) = from.to_form(herald_core::SigilForm::Short) else {
                continue;
            };
            if seen.insert(identity.to_string()) {
                if out.len() == MAX_SIGNERS {
                    crate::notice::warning(&format!(
                        "more than {MAX_SIGNERS} signers: certifications fetched for the first \
                         {MAX_SIGNERS} only"
                    ));
                    return out;
                }
                out.push(from);
            }
        }
    }
    out
}

/// What the Heralds certify about the senders of `inputs` at `now`, from
/// `given` (certifications the caller holds) and what each listed
/// Herald with a URL answers about each sender. A Herald that does not
/// answer is a warning.
pub(crate) fn certified(
    heralds: &Arc<Heralds>,
    inputs: &[Input],
    given: Vec<CertificationItem>,
    now: u64,
) -> Result<Certified, CliError> {
    let mut items = given;
    let fetching = heralds.list().heralds().iter().any(|h| h.url.is_some());
    if fetching {
        let channel = HeraldChannel::new(heralds.clone(), now);
        let senders = senders(inputs);
        let runtime = crate::resolution::runtime()?;
        let fetched = runtime.block_on(async {
            let mut tasks = tokio::task::JoinSet::new();
            for (n, sigil) in senders.into_iter().enumerate() {
                let channel = channel.clone();
                tasks.spawn(async move { (n, sigil, channel.fetch(&sigil).await) });
            }
            let mut all = Vec::new();
            while let Some(done) = tasks.join_next().await {
                if let Ok(one) = done {
                    all.push(one);
                }
            }
            all.sort_by_key(|(n, _, _)| *n);
            all
        });
        for (_, sigil, f) in fetched {
            for (url, e) in &f.failures {
                crate::notice::warning(&format!("Herald {url}, certifications of {sigil}: {e}"));
            }
            items.extend(f.items);
        }
    }
    let certified = heralds.judge(&items, now);
    for j in certified.judgements() {
        if let Err(why) = &j.verdict {
            let id = j.id.map_or_else(
                || "(undecodable)".to_owned(),
                |id| herald_verify::hex(&id[..8]),
            );
            crate::notice::note(&format!("certification {id} does not count: {why}"));
        }
    }
    Ok(certified)
}
