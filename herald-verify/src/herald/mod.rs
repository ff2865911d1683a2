//! Heralds (PROFILE P14, spec §8.2): identities that certify claims about
//! other sigils and publish every certification in their own C2SP
//! transparency log; a verifier trusts a quorum of the Heralds it lists.
//!
//! - [`item`]: the wire item `{certification, proof}` a Herald serves
//!   (CONDUIT.md `herald heraldry serve`).

pub(crate) mod item;
