//! The notary role (spec §5.3, P9): the audit log of every accepted
//! envelope's leaf, the latest signed tree head, and inclusion and
//! consistency proofs against it. The log is herald-verify's [`Log`];
//! leaf indices are the conduit's arrival numbers. The same log is also
//! published in C2SP form (`GET /checkpoint`, `GET /tile/...`) through
//! herald-tlog's [`herald_tlog::log`], the code `herald log checkpoint` and
//! `herald log tiles` use.

use std::sync::{Arc, Mutex};

use herald_core::{EnvelopeRef, SigningKey};
use herald_verify::{ConsistencyProof, InclusionProof, Leaf, Log, LogError, SignedTreeHead};

use herald_tlog::log::PublishError;

use super::tables::Reader;
use crate::backend::{AuditLog, Between, Failure, Inclusion, Pending};

/// The log and the latest tree head signed over it.
#[derive(Debug)]
pub(crate) struct Notary {
    log: Log,
    sth: Option<SignedTreeHead>,
    /// The signed-note text of the latest checkpoint and its tree size.
    checkpoint: Option<(u64, String)>,
}

impl Notary {
    /// Open the log in `dir` (created for `key` if absent), then append the
    /// leaves of envelopes stored before a crash cut their batch short (the
    /// store commits before the log), and sign a tree head at `now`.
    pub(crate) fn open(
        dir: &std::path::Path,
        key: &SigningKey,
        stored: &Reader<'_>,
        now: u64,
    ) -> Result<Self, String> {
        let mut log = if dir.join(herald_verify::LOG_KEY_FILE).exists() {
            Log::open(dir)
        } else {
            Log::create(dir, &key.public_key(), None)
        }
        .map_err(|e| format!("audit log {}: {e}", dir.display()))?;
        if log.public_key() != &key.public_key() {
            return Err(format!(
                "audit log {}: signed by another key than the conduit's",
                dir.display()
            ));
        }
        let arrivals = stored.arrivals().map_err(|e| e.to_string())?;
        if log.len() > arrivals {
            return Err(format!(
                "audit log {} holds {} leaves but the store only {arrivals} envelopes: \
                 not this conduit's log",
                dir.display(),
                log.len()
            ));
        }
        for arrival in log.len()..arrivals {
            let s = stored
                .arrival(arrival)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("store: arrival {arrival} missing"))?;
            let env = EnvelopeRef::decode(&s.bytes)
                .map_err(|e| format!("store: arrival {arrival}: {e}"))?;
            log.append(&env).map_err(|e| format!("audit log: {e}"))?;
        }
        let mut notary = Self {
            log,
            sth: None,
            checkpoint: None,
        };
        notary
            .sign(key, now)
            .map_err(|e| format!("audit log: {e}"))?;
        Ok(notary)
    }

    /// The log.
    pub(crate) fn log(&self) -> &Log {
        &self.log
    }

    /// The latest signed tree head.
    pub(crate) fn sth(&self) -> Option<&SignedTreeHead> {
        self.sth.as_ref()
    }

    /// Append the leaves of `envelopes` (one sync); their indices.
    pub(crate) fn append(&mut self, envelopes: &[EnvelopeRef<'_>]) -> Result<Vec<u64>, LogError> {
        Ok(self
            .log
            .append_envelopes(envelopes)?
            .into_iter()
            .map(|a| a.index)
            .collect())
    }

    /// Sign the head of the whole log at `now` (empty logs have none).
    pub(crate) fn sign(&mut self, key: &SigningKey, now: u64) -> Result<(), LogError> {
        if !self.log.is_empty() {
            self.sth = Some(self.log.signed_tree_head(key, None, now)?);
        }
        Ok(())
    }

    /// The C2SP tlog-checkpoint of the log as it is now (the tree of the
    /// latest tree head: leaves are appended and the head signed under one
    /// lock), a signed note by the conduit key named `origin`; signed once
    /// per tree size.
    pub(crate) fn checkpoint(
        &mut self,
        key: &SigningKey,
        origin: &str,
    ) -> Result<String, PublishError> {
        let size = self.log.len();
        if let Some((at, text)) = &self.checkpoint
            && *at == size
        {
            return Ok(text.clone());
        }
        let text = herald_tlog::log::checkpoint(&self.log, origin, key)?
            .note()
            .to_text();
        self.checkpoint = Some((size, text.clone()));
        Ok(text)
    }

    /// The C2SP tlog-tiles resource at `path` (`tile/...`): a hash tile or
    /// an entry bundle, full or partial; `None` when there is none (a
    /// malformed path, a tile beyond the tree).
    pub(crate) fn tile(&self, path: &str) -> Result<Option<Vec<u8>>, PublishError> {
        herald_tlog::log::tile(&self.log, path)
    }

    /// The inclusion proof of leaf `index` against the latest tree head;
    /// `leaf`, when the caller has it (the leaf of the envelope it just
    /// logged), saves reading it back from the log file.
    pub(crate) fn inclusion(
        &self,
        index: u64,
        leaf: Option<Leaf>,
    ) -> Result<Option<InclusionProof>, LogError> {
        match &self.sth {
            Some(sth) => self.inclusion_under(index, leaf, sth),
            None => Ok(None),
        }
    }

    /// The inclusion proof of leaf `index` against `sth`, a head this log
    /// signed (the one a 201 body was first answered with); `None` when the
    /// leaf is not under it.
    pub(crate) fn inclusion_under(
        &self,
        index: u64,
        leaf: Option<Leaf>,
        sth: &SignedTreeHead,
    ) -> Result<Option<InclusionProof>, LogError> {
        if index >= sth.size() || sth.size() > self.log.len() {
            return Ok(None);
        }
        let path = self
            .log
            .tree()
            .inclusion_proof(index, sth.size())
            .map_err(LogError::Proof)?;
        let leaf = match leaf {
            Some(l) => l,
            None => self.log.leaf(index)?,
        };
        Ok(Some(InclusionProof::new(index, leaf, path, sth.clone())))
    }

    /// The consistency proof from `size1` to `size2` (default: the latest
    /// tree head's size), heads signed at `now`.
    pub(crate) fn consistency(
        &self,
        key: &SigningKey,
        size1: u64,
        size2: Option<u64>,
        now: u64,
    ) -> Result<ConsistencyProof, LogError> {
        let size2 = size2.or(self.sth.as_ref().map(|s| s.size()));
        self.log.consistency_proof(key, size1, size2, now)
    }
}

/// The notary's log, shared with the witness rounds.
pub(crate) type SharedNotary = Arc<Mutex<Notary>>;

/// The local audit log as its endpoints read it.
pub(super) struct NotaryLog(pub(super) SharedNotary);

impl NotaryLog {
    fn with<T>(&self, f: impl FnOnce(&mut Notary) -> Result<T, Failure>) -> Result<T, Failure> {
        match self.0.lock() {
            Ok(mut n) => f(&mut n),
            Err(_) => Err("the notary lock is poisoned".into()),
        }
    }
}

impl AuditLog for NotaryLog {
    fn sth(&self) -> Pending<'_, Result<Option<SignedTreeHead>, Failure>> {
        // A poisoned lock reads as no head, as before.
        let sth = self.0.lock().ok().and_then(|n| n.sth().cloned());
        Box::pin(std::future::ready(Ok(sth)))
    }

    fn inclusion(&self, id: [u8; 32]) -> Pending<'_, Result<Inclusion, Failure>> {
        let found = self.with(|n| {
            let Some(index) = n.log().index_of(&id) else {
                return Ok(Inclusion::Unknown);
            };
            match n.inclusion(index, None).map_err(|e| e.to_string())? {
                Some(p) => Ok(Inclusion::Proof(Box::new(p))),
                None => Ok(Inclusion::NotCovered),
            }
        });
        Box::pin(std::future::ready(found))
    }

    fn consistency<'a>(
        &'a self,
        key: &'a SigningKey,
        b: Between,
    ) -> Pending<'a, Result<Result<ConsistencyProof, String>, Failure>> {
        let proof = self.with(|n| {
            Ok(n.consistency(key, b.size1, b.size2, b.now)
                .map_err(|e| e.to_string()))
        });
        Box::pin(std::future::ready(proof))
    }

    fn checkpoint<'a>(
        &'a self,
        key: &'a SigningKey,
        origin: &'a str,
    ) -> Pending<'a, Result<String, Failure>> {
        let text = self.with(|n| n.checkpoint(key, origin).map_err(|e| e.to_string()));
        Box::pin(std::future::ready(text))
    }

    fn tile(&self, path: String) -> Pending<'_, Result<Option<Vec<u8>>, Failure>> {
        let tile = self.with(|n| n.tile(&path).map_err(|e| e.to_string()));
        Box::pin(std::future::ready(tile))
    }

    fn size(&self) -> Pending<'_, Option<u64>> {
        let size = self.0.lock().ok().map(|n| n.log().len());
        Box::pin(std::future::ready(size))
    }
}
