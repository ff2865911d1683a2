//! The signatures of concurrent signed reads verified together
//! (CONDUIT.md *Who may read what*; PROFILE.md P5 revision 2).
//!
//! A read whose signature is prepared ([`herald_core::PublicKey::prepare`]:
//! the byte checks passed, the challenge hashed) joins a queue. When no
//! batch is being verified, it starts a task that takes the queue as one
//! batch: one batch equation ([`herald_core::verify_batch`], coefficients
//! from the operating system's CSPRNG), and when the equation fails, each
//! signature of the batch on its own ([`Prepared::verify`]), so a bad
//! signature gets its own verdict and never makes a good one fail. Batch
//! and single verification evaluate the same cofactored equation, so every
//! verdict is that of [`Prepared::verify`] (herald-core `key/batch.rs`).
//! The task then takes what queued meanwhile, until the queue is empty.
//!
//! No read waits for others to arrive: a batch is what queued while the
//! one before it was verified, so a lone read is verified at once (alone,
//! by [`Prepared::verify`]), and batches grow only when reads arrive faster
//! than they are verified. The queue holds at most [`MAX_BATCH`]; a read
//! finding it full verifies its own signature where it is. A read
//! therefore waits for at most two batches of at most [`MAX_BATCH`]
//! signatures: the one being verified and its own.
//!
//! Signatures by one key share one point of the batch's multiplication
//! (herald-core), so the concurrent reads of one reader cost much less
//! than as many single verifications.

use std::sync::{Arc, Mutex, PoisonError};

use herald_core::SysRng;
use herald_core::{Prepared, verify_batch};
use tokio::sync::oneshot;

/// Signatures queued, hence verified in one batch, at most.
pub(crate) const MAX_BATCH: usize = 32;

/// The queue of prepared signatures and whether a task verifies it.
#[derive(Default)]
pub(crate) struct Batcher {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    queue: Vec<(Prepared, oneshot::Sender<bool>)>,
    running: bool,
}

/// What [`Batcher::verify`] did with a signature (for tests).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Batch equations computed.
    pub(crate) batches: usize,
    /// Of them, those that failed.
    pub(crate) failed: usize,
}

impl Batcher {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `item` verifies (P5 revision 2), in a batch with the
    /// signatures of concurrent reads when there are any.
    pub(crate) async fn verify(self: &Arc<Self>, item: Prepared) -> bool {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut state = self.lock();
            if state.queue.len() >= MAX_BATCH {
                None
            } else {
                state.queue.push((item, tx));
                Some(!std::mem::replace(&mut state.running, true))
            }
        };
        match start {
            // The queue is full: no waiting behind it.
            None => item.verify().is_ok(),
            Some(start) => {
                if start {
                    let me = Arc::clone(self);
                    tokio::spawn(async move { me.run().await });
                }
                // A verifier that died answers nothing: refused, never
                // guessed.
                rx.await.unwrap_or(false)
            }
        }
    }

    /// Verify what is queued, a batch at a time, until nothing is.
    async fn run(&self) {
        /// Should this task end before the queue is empty (the runtime
        /// shutting down, a panic), a later read starts another.
        struct Running<'a>(&'a Batcher, bool);
        impl Drop for Running<'_> {
            fn drop(&mut self) {
                if self.1 {
                    self.0.lock().running = false;
                }
            }
        }
        let mut running = Running(self, true);
        loop {
            let batch = {
                let mut state = self.lock();
                if state.queue.is_empty() {
                    // Under the lock a read queues under: the next read
                    // starts a task.
                    state.running = false;
                    running.1 = false;
                    return;
                }
                std::mem::take(&mut state.queue)
            };
            let items: Vec<Prepared> = batch.iter().map(|(p, _)| *p).collect();
            let (verdicts, _) = verdicts(&items);
            for ((_, reply), ok) in batch.into_iter().zip(verdicts) {
                // The read may be gone (its connection closed).
                let _ = reply.send(ok);
            }
            // Let the reads on this worker queue the next batch.
            tokio::task::yield_now().await;
        }
    }
}

/// The verdict of each of `items` (those of [`Prepared::verify`]): one
/// alone, several in one batch equation and, when it fails, one by one.
pub(crate) fn verdicts(items: &[Prepared]) -> (Vec<bool>, Tally) {
    let mut tally = Tally::default();
    if let [one] = items {
        return (vec![one.verify().is_ok()], tally);
    }
    tally.batches = 1;
    if verify_batch(items, &mut SysRng) {
        return (vec![true; items.len()], tally);
    }
    tally.failed = 1;
    (items.iter().map(|p| p.verify().is_ok()).collect(), tally)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use herald_core::SigningKey;

    fn prepared(seed: u8, message: &[u8], good: bool) -> Prepared {
        let key = SigningKey::from_seed(&[seed; 32]);
        let mut signature = key.sign(message);
        if !good {
            signature[40] ^= 1;
        }
        key.public_key()
            .prepare(&signature, |feed| feed(message))
            .unwrap()
    }

    /// A bad signature in a batch gets its own `false`, and the good ones
    /// around it still verify.
    #[test]
    fn a_bad_signature_fails_alone() {
        let mut items: Vec<Prepared> = (0..8u8)
            .map(|n| prepared(1 + n % 2, &[n; 40], true))
            .collect();
        let (v, tally) = verdicts(&items);
        assert_eq!(v, vec![true; 8]);
        assert_eq!(
            tally,
            Tally {
                batches: 1,
                failed: 0
            }
        );
        items[5] = prepared(2, b"another", false);
        let (v, tally) = verdicts(&items);
        let expected: Vec<bool> = (0..8).map(|i| i != 5).collect();
        assert_eq!(v, expected);
        assert_eq!(
            tally,
            Tally {
                batches: 1,
                failed: 1
            }
        );
        let (v, _) = verdicts(&[prepared(3, b"alone", false)]);
        assert_eq!(v, [false]);
    }

    /// Concurrent reads through the queue: every verdict is its own, and
    /// batches of more than one happen.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_reads_get_their_own_verdicts() {
        let batcher = Arc::new(Batcher::default());
        let mut tasks = Vec::new();
        for n in 0..200u8 {
            let b = Arc::clone(&batcher);
            let good = n % 7 != 3;
            tasks.push(tokio::spawn(async move {
                let item = prepared(1 + n % 3, &[n; 50], good);
                (good, b.verify(item).await)
            }));
        }
        for t in tasks {
            let (good, verdict) = t.await.unwrap();
            assert_eq!(good, verdict);
        }
        // The verifier task ends when it next finds the queue empty, which
        // may be after the last verdict it sent was received.
        let ended = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while batcher.lock().running {
                tokio::task::yield_now().await;
            }
        })
        .await;
        assert!(ended.is_ok(), "the verifier task did not end");
        assert!(batcher.lock().queue.is_empty());
    }
}
