//! What a backend keeps of an accepted envelope ([`Stored`]) and the key of
//! its recipient's inbox ([`recipient`]), the same in every backend
//! (CONDUIT.md *Endpoints*: inboxes by sigil, any of its three forms).

/// Bytes of the key hash that name a recipient (the short sigil form's).
pub(crate) const RECIPIENT_LEN: usize = 10;

/// A recipient's inbox key: the first [`RECIPIENT_LEN`] bytes of its key
/// hash, the same for every form of the sigil (P2).
pub(crate) fn recipient(sigil: &herald_core::Sigil) -> Option<[u8; RECIPIENT_LEN]> {
    sigil.hash_prefix().get(..RECIPIENT_LEN)?.try_into().ok()
}

/// One stored envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stored {
    /// Its arrival number (its leaf index, notary).
    pub(crate) arrival: u64,
    /// The envelope as forwarded.
    pub(crate) bytes: Vec<u8>,
}
