//! C2SP tlog-policy: which logs and witnesses a verifier trusts, and the
//! quorum of cosignatures a checkpoint needs.
//!
//! ```text
//! log <vkey> [<url>]
//! witness <name> <vkey> [<url>]
//! group <name> all|any|<k> <name>...
//! quorum <name>|none
//! ```

use core::fmt;

use crate::checkpoint::{CheckpointError, SignedCheckpoint};
use crate::note::{NoteVerifier, TYPE_COSIGNATURE, TYPE_ED25519};

/// The predefined quorum name that needs no cosignature.
const NONE: &str = "none";

/// A policy file is malformed (tlog-policy). `line` counts from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    /// The line (0 for the whole file).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "policy: {}", self.reason)
        } else {
            write!(f, "policy line {}: {}", self.line, self.reason)
        }
    }
}

impl std::error::Error for PolicyError {}

/// A log of the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyLog {
    /// Its key (type 0x01; the key name is the origin).
    pub key: NoteVerifier,
    /// Its URL, if given.
    pub url: Option<String>,
}

/// A witness of the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyWitness {
    /// Its name in the policy.
    pub name: String,
    /// Its cosigning key (type 0x04).
    pub key: NoteVerifier,
    /// Its submission prefix URL, if given.
    pub url: Option<String>,
}

/// A witness or a group, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Member {
    Witness(usize),
    Group(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Group {
    name: String,
    threshold: usize,
    members: Vec<Member>,
}

/// A parsed policy (tlog-policy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    logs: Vec<PolicyLog>,
    witnesses: Vec<PolicyWitness>,
    groups: Vec<Group>,
    /// `None` for `quorum none`.
    quorum: Option<Member>,
}

/// Why a checkpoint does not satisfy a policy.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyVerifyError {
    /// The checkpoint is malformed or no log of the policy signed it (or a
    /// known key's signature failed).
    Checkpoint(CheckpointError),
    /// The key that signed it is not named for the checkpoint's origin.
    OriginMismatch {
        /// The origin line.
        origin: String,
    },
    /// Too few valid cosignatures for the quorum.
    Quorum {
        /// The witnesses whose cosignature verified.
        cosigned: Vec<String>,
    },
}

impl fmt::Display for PolicyVerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyVerifyError::Checkpoint(e) => e.fmt(f),
            PolicyVerifyError::OriginMismatch { origin } => write!(
                f,
                "checkpoint of origin {origin:?} is not signed by a policy log of that name"
            ),
            PolicyVerifyError::Quorum { cosigned } if cosigned.is_empty() => {
                f.write_str("policy quorum not met: no valid witness cosignature")
            }
            PolicyVerifyError::Quorum { cosigned } => write!(
                f,
                "policy quorum not met: only {} cosigned",
                cosigned.join(", ")
            ),
        }
    }
}

impl std::error::Error for PolicyVerifyError {}

impl Policy {
    /// Parse a policy file (tlog-policy "Policy file syntax"): whitespace is
    /// spaces and tabs, `#` comments, names defined before use, one quorum
    /// line, no duplicate keys or names.
    pub fn parse(bytes: &[u8]) -> Result<Self, PolicyError> {
        let err = |line, reason: &str| PolicyError {
            line,
            reason: reason.to_owned(),
        };
        if let Some(at) = bytes
            .iter()
            .position(|&b| (b < 0x20 && b != b'\t' && b != b'\n') || b == 0x7f)
        {
            return Err(err(0, &format!("byte {at} is a control character")));
        }
        let text = core::str::from_utf8(bytes)
            .map_err(|e| err(0, &format!("byte {} is not UTF-8", e.valid_up_to())))?;
        let mut policy = Policy {
            logs: Vec::new(),
            witnesses: Vec::new(),
            groups: Vec::new(),
            quorum: None,
        };
        let mut quorum_seen = false;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let words: Vec<&str> = raw.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
            let Some((&keyword, args)) = words.split_first() else {
                continue;
            };
            if keyword.starts_with('#') {
                continue;
            }
            match keyword {
                "log" => {
                    let (vkey, url) = match args {
                        [v] => (*v, None),
                        [v, u] => (*v, Some((*u).to_owned())),
                        _ => return Err(err(n, "expected: log <vkey> [<url>]")),
                    };
                    let key = parse_key(n, vkey, TYPE_ED25519)?;
                    policy.check_unique_key(n, &key)?;
                    policy.logs.push(PolicyLog { key, url });
                }
                "witness" => {
                    let (name, vkey, url) = match args {
                        [name, v] => (*name, *v, None),
                        [name, v, u] => (*name, *v, Some((*u).to_owned())),
                        _ => return Err(err(n, "expected: witness <name> <vkey> [<url>]")),
                    };
                    policy.check_new_name(n, name)?;
                    let key = parse_key(n, vkey, TYPE_COSIGNATURE)?;
                    policy.check_unique_key(n, &key)?;
                    policy.witnesses.push(PolicyWitness {
                        name: name.to_owned(),
                        key,
                        url,
                    });
                }
                "group" => {
                    let [name, k, members @ ..] = args else {
                        return Err(err(n, "expected: group <name> all|any|<k> <name>..."));
                    };
                    policy.check_new_name(n, name)?;
                    if members.is_empty() {
                        return Err(err(n, "a group needs at least one member"));
                    }
                    let mut resolved = Vec::new();
                    for m in members {
                        let member = policy
                            .lookup(m)
                            .ok_or_else(|| err(n, &format!("{m:?} is not defined above")))?;
                        if resolved.contains(&member) {
                            return Err(err(n, &format!("{m:?} is listed twice")));
                        }
                        resolved.push(member);
                    }
                    let threshold = match *k {
                        "all" => resolved.len(),
                        "any" => 1,
                        k => crate::checkpoint::parse_decimal(k)
                            .and_then(|k| usize::try_from(k).ok())
                            .filter(|k| (1..=resolved.len()).contains(k))
                            .ok_or_else(|| {
                                err(n, "threshold is not all, any or a decimal 1..=members")
                            })?,
                    };
                    policy.groups.push(Group {
                        name: (*name).to_owned(),
                        threshold,
                        members: resolved,
                    });
                }
                "quorum" => {
                    let [name] = args else {
                        return Err(err(n, "expected: quorum <name>"));
                    };
                    if quorum_seen {
                        return Err(err(n, "a second quorum line"));
                    }
                    quorum_seen = true;
                    policy.quorum = if *name == NONE {
                        None
                    } else {
                        Some(
                            policy
                                .lookup(name)
                                .ok_or_else(|| err(n, &format!("{name:?} is not defined above")))?,
                        )
                    };
                }
                other => return Err(err(n, &format!("unknown keyword {other:?}"))),
            }
        }
        if !quorum_seen {
            return Err(err(0, "no quorum line"));
        }
        Ok(policy)
    }

    fn lookup(&self, name: &str) -> Option<Member> {
        if let Some(i) = self.witnesses.iter().position(|w| w.name == name) {
            return Some(Member::Witness(i));
        }
        self.groups
            .iter()
            .position(|g| g.name == name)
            .map(Member::Group)
    }

    fn check_new_name(&self, line: usize, name: &str) -> Result<(), PolicyError> {
        if name == NONE || self.lookup(name).is_some() {
            return Err(PolicyError {
                line,
                reason: format!("name {name:?} is reserved or already defined"),
            });
        }
        Ok(())
    }

    fn check_unique_key(&self, line: usize, key: &NoteVerifier) -> Result<(), PolicyError> {
        let known = self
            .logs
            .iter()
            .map(|l| &l.key)
            .chain(self.witnesses.iter().map(|w| &w.key));
        for k in known {
            if k.public_key() == key.public_key() {
                return Err(PolicyError {
                    line,
                    reason: "the same public key is listed twice".to_owned(),
                });
            }
        }
        Ok(())
    }

    /// The logs.
    #[must_use]
    pub fn logs(&self) -> &[PolicyLog] {
        &self.logs
    }

    /// The witnesses.
    #[must_use]
    pub fn witnesses(&self) -> &[PolicyWitness] {
        &self.witnesses
    }

    /// Check a signed checkpoint against the policy: signed by one of its
    /// logs under a key named for the origin, and cosigned by a quorum of
    /// its witnesses (tlog-policy). Returns the checkpoint and the names of
    /// the witnesses whose cosignature verified.
    pub fn verify_checkpoint(
        &self,
        bytes: &[u8],
    ) -> Result<(SignedCheckpoint, Vec<String>), PolicyVerifyError> {
        let logs: Vec<NoteVerifier> = self.logs.iter().map(|l| l.key.clone()).collect();
        let (signed, verified) =
            SignedCheckpoint::open(bytes, &logs).map_err(PolicyVerifyError::Checkpoint)?;
        let origin = signed.checkpoint().origin();
        if !verified
            .iter()
            .any(|v| logs.get(v.verifier).is_some_and(|k| k.name() == origin))
        {
            return Err(PolicyVerifyError::OriginMismatch {
                origin: origin.to_owned(),
            });
        }
        let cosigners: Vec<NoteVerifier> = self.witnesses.iter().map(|w| w.key.clone()).collect();
        let mut cosigned = vec![false; cosigners.len()];
        match signed.note().verify(&cosigners) {
            Ok(found) => {
                for v in found {
                    if let Some(c) = cosigned.get_mut(v.verifier) {
                        *c = true;
                    }
                }
            }
            Err(crate::note::NoteError::NoKnownSignature) => {}
            Err(e) => return Err(PolicyVerifyError::Checkpoint(e.into())),
        }
        let names: Vec<String> = self
            .witnesses
            .iter()
            .zip(&cosigned)
            .filter(|(_, c)| **c)
            .map(|(w, _)| w.name.clone())
            .collect();
        if !self.quorum_met(&cosigned) {
            return Err(PolicyVerifyError::Quorum { cosigned: names });
        }
        Ok((signed, names))
    }

    /// Whether the quorum holds when `cosigned[i]` tells whether witness
    /// `i` cosigned. Groups only reference earlier groups, so one pass in
    /// definition order evaluates them all.
    fn quorum_met(&self, cosigned: &[bool]) -> bool {
        let mut groups: Vec<bool> = Vec::with_capacity(self.groups.len());
        let holds = |m: &Member, groups: &[bool]| match *m {
            Member::Witness(i) => cosigned.get(i).copied().unwrap_or(false),
            Member::Group(i) => groups.get(i).copied().unwrap_or(false),
        };
        for g in &self.groups {
            let count = g.members.iter().filter(|m| holds(m, &groups)).count();
            groups.push(count >= g.threshold);
        }
        self.quorum.as_ref().is_none_or(|q| holds(q, &groups))
    }
}

fn parse_key(line: usize, vkey: &str, signature_type: u8) -> Result<NoteVerifier, PolicyError> {
    let key = NoteVerifier::parse(vkey).map_err(|e| PolicyError {
        line,
        reason: e.to_string(),
    })?;
    if key.signature_type() != signature_type {
        return Err(PolicyError {
            line,
            reason: format!(
                "key has signature type 0x{:02x}, expected 0x{signature_type:02x}",
                key.signature_type()
            ),
        });
    }
    Ok(key)
}
