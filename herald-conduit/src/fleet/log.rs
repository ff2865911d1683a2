//! The fleet's one audit log (P9; docs/conduit.md *Fleet*). Leaves are
//! appended by the accepting transactions (`log_leaves`, dense `seq`); one
//! conduit at a time is the **sequencer**: it holds the PostgreSQL session
//! advisory lock [`SEQUENCER_LOCK`] on a connection of its own, builds the
//! tree from the leaves, signs tree heads with the fleet key and stores
//! them in `tree_heads`. If it dies its connection closes, PostgreSQL
//! releases the lock, and another conduit takes it over: it rebuilds the
//! same tree from the same append-only leaves, so every head it signs
//! extends every head signed before (consistency proofs between every pair:
//! tested).
//!
//! Any conduit serves proofs, the checkpoint and the tiles: each keeps the
//! tree of the leaves read so far and extends it to the latest stored head
//! before answering.

use std::time::{Duration, Instant};

use herald_core::{SigilForm, SigningKey};
use herald_merkle::{Tree, leaf_hash};
use herald_tlog::TileKind;
use herald_verify::{ConsistencyProof, InclusionProof, Leaf, SignedTreeHead, TreeHead};
use tokio_postgres::Client;

use super::{Fleet, FleetError, big, unbig};

/// The advisory lock key of the log's sequencer.
pub(crate) const SEQUENCER_LOCK: i64 = 0x4845_5241_4c44_0002; // "HERALD" · 2

/// How often a conduit that is not the sequencer tries to become it.
pub(crate) const TAKEOVER_EVERY: Duration = Duration::from_millis(200);

/// Leaves read per query while extending a tree.
const LEAVES_PER_READ: i64 = 4096;

/// This conduit's view of the fleet log.
pub(crate) struct FleetLog {
    state: tokio::sync::Mutex<LogState>,
    sequencer: tokio::sync::Mutex<Sequencer>,
}

struct LogState {
    tree: Tree,
    /// The signed-note text of the checkpoint of a tree size.
    checkpoint: Option<(u64, String)>,
}

struct Sequencer {
    /// The connection that holds the advisory lock, or tries to take it
    /// every [`TAKEOVER_EVERY`].
    client: Option<Client>,
    /// Whether `client` holds the lock: this conduit is the sequencer.
    holds: bool,
    last_try: Option<Instant>,
    /// The size and time of the last head signed.
    signed: Option<(u64, Instant)>,
}

impl FleetLog {
    pub(crate) fn new() -> Self {
        Self {
            state: tokio::sync::Mutex::new(LogState {
                tree: Tree::new(),
                checkpoint: None,
            }),
            sequencer: tokio::sync::Mutex::new(Sequencer {
                client: None,
                holds: false,
                last_try: None,
                signed: None,
            }),
        }
    }
}

/// Extend `tree` with the committed leaves from its size up to `upto`
/// (or all); the leaves are dense, so it stops at the first one missing.
async fn extend(c: &Client, tree: &mut Tree, upto: Option<u64>) -> Result<(), FleetError> {
    loop {
        let from = tree.len();
        if upto.is_some_and(|u| from >= u) {
            return Ok(());
        }
        let rows = c
            .query(
                "SELECT seq, leaf FROM log_leaves WHERE seq >= $1 ORDER BY seq LIMIT $2",
                &[&big(from), &LEAVES_PER_READ],
            )
            .await
            .map_err(FleetError::db("read leaves"))?;
        let got = rows.len();
        for r in &rows {
            if unbig(r.get(0)) != tree.len() || upto.is_some_and(|u| tree.len() >= u) {
                return Ok(());
            }
            let leaf: Vec<u8> = r.get(1);
            tree.push(leaf_hash(&leaf));
        }
        if i64::try_from(got).unwrap_or(0) < LEAVES_PER_READ {
            return Ok(());
        }
    }
}

impl Fleet {
    /// Sequencer duty, called after each batch and whenever leaves are
    /// committed (`Backend::duty`): become the sequencer if nobody is (advisory lock),
    /// and as the sequencer sign a head over every committed leaf when the
    /// log grew, or re-sign the head when it is `refresh` old.
    pub(crate) async fn sequence(
        &self,
        key: &SigningKey,
        now: u64,
        refresh: Duration,
    ) -> Result<(), FleetError> {
        let mut seq = self.log.sequencer.lock().await;
        if seq.client.as_ref().is_some_and(Client::is_closed) {
            // The lock went with the connection.
            seq.client = None;
            seq.holds = false;
        }
        if !seq.holds {
            if seq.last_try.is_some_and(|t| t.elapsed() < TAKEOVER_EVERY) {
                return Ok(());
            }
            seq.last_try = Some(Instant::now());
            if seq.client.is_none() {
                seq.client = Some(self.connect().await?);
            }
            let Some(client) = seq.client.as_ref() else {
                return Ok(());
            };
            let got: bool = client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&SEQUENCER_LOCK])
                .await
                .map_err(FleetError::db("take the sequencer lock"))?
                .get(0);
            if !got {
                return Ok(());
            }
            seq.holds = true;
            seq.signed = None;
        }
        let Some(client) = seq.client.as_ref() else {
            return Ok(());
        };
        let result = async {
            let committed: i64 = client
                .query_one("SELECT next FROM arrivals", &[])
                .await
                .map_err(FleetError::db("read the arrival counter"))?
                .get(0);
            let committed = unbig(committed);
            let fresh = seq
                .signed
                .is_some_and(|(size, at)| size == committed && at.elapsed() < refresh);
            if committed == 0 || fresh {
                return Ok(None);
            }
            let mut st = self.log.state.lock().await;
            extend(client, &mut st.tree, Some(committed)).await?;
            let size = st.tree.len();
            let root = st
                .tree
                .root_at(size)
                .map_err(|e| FleetError::Corrupted(e.to_string()))?;
            let sth = TreeHead::new(key.public_key().sigil(SigilForm::Default), size, root, now)
                .sign(key)
                .map_err(|e| FleetError::Corrupted(e.to_string()))?;
            client
                .execute(
                    "INSERT INTO tree_heads (size, root, sth) VALUES ($1, $2, $3) \
                     ON CONFLICT (size) DO UPDATE SET sth = EXCLUDED.sth \
                     WHERE tree_heads.root = EXCLUDED.root",
                    &[&big(size), &root.as_slice(), &sth.encode()],
                )
                .await
                .map_err(FleetError::db("store a tree head"))?;
            client
                .batch_execute(&format!("NOTIFY {}", super::notify::HEADS))
                .await
                .map_err(FleetError::db("notify"))?;
            Ok(Some(size))
        }
        .await;
        match result {
            Ok(Some(size)) => {
                seq.signed = Some((size, Instant::now()));
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => {
                // Lost the connection (and with it the lock): step down.
                seq.client = None;
                seq.holds = false;
                Err(e)
            }
        }
    }

    /// The latest stored tree head, with this conduit's tree extended to it.
    pub(crate) async fn head(&self) -> Result<Option<SignedTreeHead>, FleetError> {
        let c = self.reader().await?;
        let Some(row) = c
            .query_opt("SELECT sth FROM tree_heads ORDER BY size DESC LIMIT 1", &[])
            .await
            .map_err(FleetError::db("read the latest tree head"))?
        else {
            return Ok(None);
        };
        let bytes: Vec<u8> = row.get(0);
        let sth = SignedTreeHead::decode(&bytes)
            .map_err(|e| FleetError::Corrupted(format!("a stored tree head: {e}")))?;
        let mut st = self.log.state.lock().await;
        extend(&c, &mut st.tree, Some(sth.size())).await?;
        if st.tree.len() < sth.size() {
            return Err(FleetError::Corrupted(format!(
                "the tree head of size {} covers leaves not in log_leaves",
                sth.size()
            )));
        }
        Ok(Some(sth))
    }

    /// The size of the latest stored tree head (0 when none), cheaply.
    pub(crate) async fn head_size(&self) -> Result<u64, FleetError> {
        let c = self.reader().await?;
        let size: Option<i64> = c
            .query_one("SELECT max(size) FROM tree_heads", &[])
            .await
            .map_err(FleetError::db("read the latest tree head"))?
            .get(0);
        Ok(size.map_or(0, unbig))
    }

    /// The leaf index of the envelope `id`, if logged.
    pub(crate) async fn leaf_index(&self, id: &[u8; 32]) -> Result<Option<u64>, FleetError> {
        let c = self.reader().await?;
        Ok(c.query_opt(
            "SELECT seq FROM log_leaves WHERE id = $1",
            &[&id.as_slice()],
        )
        .await
        .map_err(FleetError::db("read a leaf"))?
        .map(|r| unbig(r.get(0))))
    }

    /// The leaf bytes of indices `first..first + count`, in order.
    async fn leaves(&self, first: u64, count: u64) -> Result<Vec<Vec<u8>>, FleetError> {
        let c = self.reader().await?;
        let rows = c
            .query(
                "SELECT leaf FROM log_leaves WHERE seq >= $1 AND seq < $2 ORDER BY seq",
                &[&big(first), &big(first.saturating_add(count))],
            )
            .await
            .map_err(FleetError::db("read leaves"))?;
        if u64::try_from(rows.len()).unwrap_or(0) != count {
            return Err(FleetError::Corrupted(format!(
                "leaves {first}..{} are not all in log_leaves",
                first + count
            )));
        }
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// The inclusion proof of leaf `index` against the latest head; `None`
    /// when no head covers it yet.
    pub(crate) async fn inclusion(&self, index: u64) -> Result<Option<InclusionProof>, FleetError> {
        let Some(sth) = self.head().await? else {
            return Ok(None);
        };
        if index >= sth.size() {
            return Ok(None);
        }
        let bytes = self.leaves(index, 1).await?;
        let leaf = bytes
            .first()
            .and_then(|b| Leaf::decode(b).ok())
            .ok_or_else(|| FleetError::Corrupted(format!("leaf {index} does not decode")))?;
        let st = self.log.state.lock().await;
        let path = st
            .tree
            .inclusion_proof(index, sth.size())
            .map_err(|e| FleetError::Corrupted(e.to_string()))?;
        Ok(Some(InclusionProof::new(index, leaf, path, sth)))
    }

    /// The inclusion proof of leaf `index` (whose leaf the caller has)
    /// against `sth`, a stored head [`Fleet::head`] returned (so this
    /// conduit's tree covers it): no query.
    pub(crate) async fn inclusion_in(
        &self,
        sth: &SignedTreeHead,
        index: u64,
        leaf: Leaf,
    ) -> Result<Option<InclusionProof>, FleetError> {
        if index >= sth.size() {
            return Ok(None);
        }
        let st = self.log.state.lock().await;
        let path = st
            .tree
            .inclusion_proof(index, sth.size())
            .map_err(|e| FleetError::Corrupted(e.to_string()))?;
        Ok(Some(InclusionProof::new(index, leaf, path, sth.clone())))
    }

    /// The consistency proof from `size1` to `size2` (default: the latest
    /// head's size), both heads signed with `key` at `now` (as a file log
    /// does); `Err(message)` for sizes the log does not have.
    pub(crate) async fn consistency(
        &self,
        key: &SigningKey,
        size1: u64,
        size2: Option<u64>,
        now: u64,
    ) -> Result<Result<ConsistencyProof, String>, FleetError> {
        let latest = self.head().await?.map_or(0, |h| h.size());
        let size2 = size2.unwrap_or(latest);
        if size2 > latest {
            return Ok(Err(format!(
                "size {size2} is beyond the latest tree head ({latest})"
            )));
        }
        let st = self.log.state.lock().await;
        let sign = |size: u64| -> Result<SignedTreeHead, String> {
            let root = st.tree.root_at(size).map_err(|e| e.to_string())?;
            TreeHead::new(key.public_key().sigil(SigilForm::Default), size, root, now)
                .sign(key)
                .map_err(|e| e.to_string())
        };
        let proof = st
            .tree
            .consistency_proof(size1, size2)
            .map_err(|e| e.to_string())
            .and_then(|path| Ok(ConsistencyProof::new(path, sign(size1)?, sign(size2)?)));
        Ok(proof)
    }

    /// The C2SP checkpoint of the latest head (origin `origin`, signed by
    /// `key`), signed once per size.
    pub(crate) async fn checkpoint(
        &self,
        key: &SigningKey,
        origin: &str,
    ) -> Result<String, FleetError> {
        let head = self.head().await?;
        let mut st = self.log.state.lock().await;
        let size = head.as_ref().map_or(0, SignedTreeHead::size);
        if let Some((at, text)) = &st.checkpoint
            && *at == size
        {
            return Ok(text.clone());
        }
        let root = st
            .tree
            .root_at(size)
            .map_err(|e| FleetError::Corrupted(e.to_string()))?;
        let text = herald_tlog::log::sign_checkpoint(origin, size, root, key)
            .map_err(|e| FleetError::Corrupted(e.to_string()))?
            .note()
            .to_text();
        st.checkpoint = Some((size, text.clone()));
        Ok(text)
    }

    /// The tlog-tiles resource `path` of the tree of the latest head.
    pub(crate) async fn tile(&self, path: &str) -> Result<Option<Vec<u8>>, FleetError> {
        let size = self.head().await?.map_or(0, |h| h.size());
        let Some(id) = herald_tlog::log::tile_in_tree(path, size) else {
            return Ok(None);
        };
        match id.kind() {
            TileKind::Hash(_) => {
                let st = self.log.state.lock().await;
                Ok(herald_tlog::tiles::hash_tile(&st.tree, id))
            }
            TileKind::Entries => {
                let first = id.index() * u64::from(herald_tlog::tile::FULL_WIDTH);
                let leaves = self.leaves(first, u64::from(id.width())).await?;
                herald_tlog::tile::encode_bundle(leaves.iter().map(Vec::as_slice))
                    .map(Some)
                    .map_err(|e| FleetError::Corrupted(e.to_string()))
            }
        }
    }
}
