//! The Herald's log as C2SP publishes it (tlog-tiles, PROFILE P14): the
//! store seen as a [`TiledLog`], so `GET /tile/...` serves the same bytes
//! herald-tlog's writer makes for any log.

use herald_core::PublicKey;
use herald_merkle::Tree;
use herald_tlog::log::TiledLog;

use crate::store::{Store, StoreError};

/// A store and the key its checkpoints are signed with.
pub(crate) struct LogView<'a> {
    store: &'a Store,
    key: PublicKey,
}

impl<'a> LogView<'a> {
    pub(crate) fn new(store: &'a Store, key: PublicKey) -> Self {
        Self { store, key }
    }
}

impl TiledLog for LogView<'_> {
    type Error = StoreError;

    fn public_key(&self) -> PublicKey {
        self.key
    }

    fn tree(&self) -> &Tree {
        self.store.tree()
    }

    fn entry(&self, index: u64) -> Result<Vec<u8>, StoreError> {
        self.store.entry(index)
    }
}
