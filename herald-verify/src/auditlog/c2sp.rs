//! The audit log (PROFILE P9) in the formats of the transparency-log
//! ecosystem (herald-tlog's C2SP signed notes, checkpoints, tiles and
//! policies), so existing witnesses and monitors can watch it and a
//! verifier can demand their cosignatures:
//!
//! - a file [`Log`] is a [`TiledLog`]: its checkpoint is signed by the log
//!   key, and its entries are its P9 leaf bytes (`herald log checkpoint`,
//!   `herald log tiles`, the conduit's `/checkpoint` and `/tile/...`);
//! - [`covers`]: the rule of `--log-policy` for a P9 proof, that a C2SP
//!   checkpoint is the proof's tree head, signed by the log and cosigned by
//!   the policy's quorum (C2SP tlog-policy); and through it, herald-tlog's
//!   [`Policy`] is the [`LogPolicy`] of `herald verify --log-policy`.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use data_encoding::HEXLOWER;
use herald_core::PublicKey;
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::log::TiledLog;
use herald_tlog::policy::Policy;

use super::{Log, LogError, TreeHead};
use crate::bundle::LogPolicy;
use herald_merkle::Tree;

impl TiledLog for Log {
    type Error = LogError;

    fn public_key(&self) -> PublicKey {
        *Log::public_key(self)
    }

    fn tree(&self) -> &Tree {
        Log::tree(self)
    }

    fn entry(&self, index: u64) -> Result<Vec<u8>, LogError> {
        self.leaf_bytes(index)
    }
}

/// The rule of `--log-policy` for a P9 proof (`herald log verify-proof`,
/// and `herald verify` through [`LogPolicy`]): `checkpoint` satisfies the
/// policy ([`Policy::verify_checkpoint`]), is signed by a policy log whose
/// key is the key of `head`'s log (its sigil names that key) under the
/// checkpoint's origin, and is `head`'s tree (same size and root). Returns
/// who vouches for it.
pub fn covers(policy: &Policy, checkpoint: &[u8], head: &TreeHead) -> Result<String, String> {
    let (cp, names) = policy
        .verify_checkpoint(checkpoint)
        .map_err(|e| e.to_string())?;
    let c = cp.checkpoint();
    let own = policy
        .logs()
        .iter()
        .filter(|l| {
            l.key.name() == c.origin() && head.log().names_key(l.key.public_key().as_bytes())
        })
        .any(|l| SignedCheckpoint::open(checkpoint, core::slice::from_ref(&l.key)).is_ok());
    if !own {
        return Err(format!(
            "checkpoint not signed by the key of log {} under the policy",
            head.log()
        ));
    }
    if c.size() != head.size() || c.root() != head.root() {
        return Err(format!(
            "checkpoint of size {} root {} is not the proof's tree head (size {} root {})",
            c.size(),
            HEXLOWER.encode(c.root()),
            head.size(),
            HEXLOWER.encode(head.root())
        ));
    }
    Ok(if names.is_empty() {
        "the policy needs no cosignature".to_owned()
    } else {
        format!("cosigned by {}", names.join(", "))
    })
}

/// `herald verify --log-policy`: a bundled proof counts only when one of
/// its bundle's checkpoints [`covers`] its tree head.
impl LogPolicy for Policy {
    fn covers(&self, head: &TreeHead, checkpoints: &[&[u8]]) -> Result<String, String> {
        let mut why = Vec::new();
        for (i, cp) in checkpoints.iter().enumerate() {
            match covers(self, cp, head) {
                Ok(by) => return Ok(by),
                Err(e) => why.push(format!("checkpoint {i}: {e}")),
            }
        }
        Err(if why.is_empty() {
            "the bundle carries no checkpoint (herald bundle --checkpoint)".to_owned()
        } else {
            why.join("; ")
        })
    }
}
