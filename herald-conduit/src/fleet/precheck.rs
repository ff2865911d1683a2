//! The fleet's precheck (`Backend::prepare`): herald-verify's rules over
//! a [`Snapshot`] of the senders' lifecycle records as last committed,
//! read from the database without a lock.

use herald_verify::{Prechecked, StoreError};

use super::Fleet;
use super::state::{Fetched, Snapshot};

impl Fleet {
    /// Precheck `posts` (`Backend::prepare`) against the senders'
    /// lifecycle records as last committed: the rules run over a
    /// [`Snapshot`] (on every core, off the runtime's workers) and miss
    /// each record at first (no signature is verified for a post that
    /// missed), the records missed are read in one query, and the posts
    /// that missed are prechecked again.
    pub(crate) async fn precheck<'b>(
        &self,
        posts: &[&'b [u8]],
        now: u64,
    ) -> Vec<Result<Prechecked<'b>, StoreError>> {
        let name = self.name();
        let mut fetched = Fetched::default();
        let (mut out, mut missing) = self.precheck_over(&fetched, &name, posts, now);
        // A record read once holds for every post of its sender: one
        // more try reads no other.
        for _ in 0..2 {
            if missing.is_empty() {
                break;
            }
            let read = async {
                let c = self.reader().await?;
                fetched.records(&*c, missing, None).await
            };
            if let Err(e) = read.await {
                let detail = e.to_string();
                for slot in &mut out {
                    if slot.is_err() {
                        *slot = Err(StoreError::Backend {
                            name: name.clone(),
                            operation: "lifecycle read",
                            detail: detail.clone(),
                        });
                    }
                }
                return out;
            }
            let again: Vec<usize> = (0..out.len()).filter(|i| out[*i].is_err()).collect();
            let retried: Vec<&'b [u8]> = again
                .iter()
                .filter_map(|i| posts.get(*i).copied())
                .collect();
            let (redone, more) = self.precheck_over(&fetched, &name, &retried, now);
            missing = more;
            for (i, r) in again.into_iter().zip(redone) {
                if let Some(slot) = out.get_mut(i) {
                    *slot = r;
                }
            }
        }
        out
    }

    /// The rules' precheck of `posts` over what is `fetched`, on every
    /// core off the runtime's workers; the records they missed.
    fn precheck_over<'b>(
        &self,
        fetched: &Fetched,
        name: &str,
        posts: &[&'b [u8]],
        now: u64,
    ) -> (
        Vec<Result<Prechecked<'b>, StoreError>>,
        std::collections::BTreeSet<herald_verify::IdentityKey>,
    ) {
        let parts = crate::blocking::off_runtime(|| {
            crate::blocking::on_cores(posts, |part| {
                let mut snapshot = Snapshot::reading(fetched, name);
                let out = self.receiver.precheck_all(&mut snapshot, part, now);
                (out, snapshot.take_missing().records)
            })
        });
        let mut missing = std::collections::BTreeSet::new();
        let mut out = Vec::with_capacity(posts.len());
        for (part, missed) in parts {
            out.extend(part);
            missing.extend(missed);
        }
        (out, missing)
    }
}
