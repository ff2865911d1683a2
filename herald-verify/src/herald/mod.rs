//! Heralds (PROFILE P14, spec §8.2): identities that certify claims about
//! other sigils and publish every certification in their own C2SP
//! transparency log; a verifier trusts a quorum of the Heralds it lists.
//!
//! - [`item`]: the wire item `{certification, proof}` a Herald serves
//!   (CONDUIT.md `herald heraldry serve`);
//! - [`list`]: the Herald list file;
//! - [`count`]: when one certification counts;
//! - [`quorum`]: which claims a quorum certifies ([`quorum::Heralds::judge`]);
//! - [`effects`]: what certified claims do to a trace audit: a certified
//!   `deprecated` is a deprecation the verifier witnessed (P8), a
//!   `lineage_proof` not backed by a certified `lineage` claim is
//!   `lineage_unproven`, and each envelope's report lists what is
//!   certified about its sender. Nothing a Herald says changes a
//!   signature's verdict.

pub(crate) mod count;
pub(crate) mod effects;
pub(crate) mod item;
pub(crate) mod list;
pub(crate) mod quorum;
