//! What the conduits of a fleet tell each other, through PostgreSQL's
//! `LISTEN`/`NOTIFY` (docs/conduit.md *Fleet*): an accepting transaction
//! notifies [`LEAVES`] as it commits (so the sequencer signs a head over
//! them and long polls read the inboxes again), the sequencer [`HEADS`]
//! once it stored a tree head (so the conduits waiting to answer their
//! batch look at it), a conduit [`ANSWERS`] once it recorded first 201
//! bodies (so a repeat posted elsewhere meanwhile gets the same answer).
//!
//! Each conduit listens on a connection of its own, driven on the fleet's
//! runtime; a lost connection is replaced after [`RETRY`], and every
//! signal is raised then, so that no waiter misses what happened while
//! nobody listened (each waiter looks at the database again). A
//! notification is a wake-up, never a fact: waiters always read the
//! database for what they wait for.

use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_postgres::{AsyncMessage, NoTls};

/// An accepting transaction committed new leaves (and inbox entries).
pub(crate) const LEAVES: &str = "herald_leaves";
/// A sequencer stored a tree head.
pub(crate) const HEADS: &str = "herald_heads";
/// A conduit recorded the first 201 bodies of envelopes.
pub(crate) const ANSWERS: &str = "herald_answers";

/// How long the listener waits before it connects again.
const RETRY: Duration = Duration::from_secs(1);

/// A count of notifications of one channel, waited for by tasks
/// ([`Signal::wait_past`], [`Signal::subscribe`]).
pub(crate) struct Signal {
    watch: watch::Sender<u64>,
}

impl Signal {
    fn new() -> Self {
        Self {
            watch: watch::Sender::new(0),
        }
    }

    fn raise(&self) {
        self.watch.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The count now: pass it to [`Signal::wait_past`] after looking at
    /// the database, so that a notification in between is not missed.
    pub(crate) fn seen(&self) -> u64 {
        *self.watch.borrow()
    }

    /// Wait until the count is past `seen` or `until` comes; whether it
    /// is past.
    pub(crate) async fn wait_past(&self, seen: u64, until: Instant) -> bool {
        let mut rx = self.watch.subscribe();
        let until = tokio::time::Instant::from_std(until);
        loop {
            if *rx.borrow_and_update() != seen {
                return true;
            }
            // The sender lives as long as `self`: `changed` only waits.
            if !matches!(
                tokio::time::timeout_at(until, rx.changed()).await,
                Ok(Ok(()))
            ) {
                return *rx.borrow() != seen;
            }
        }
    }

    /// A receiver that changes with every notification (a task waits on
    /// it).
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.watch.subscribe()
    }
}

/// The signals of the fleet's channels.
pub(crate) struct Signals {
    pub(crate) leaves: Signal,
    pub(crate) heads: Signal,
    pub(crate) answers: Signal,
}

impl Signals {
    pub(crate) fn new() -> Self {
        Self {
            leaves: Signal::new(),
            heads: Signal::new(),
            answers: Signal::new(),
        }
    }

    fn raise(&self, channel: &str) {
        match channel {
            LEAVES => self.leaves.raise(),
            HEADS => self.heads.raise(),
            ANSWERS => self.answers.raise(),
            _ => {}
        }
    }

    fn raise_all(&self) {
        for s in [&self.leaves, &self.heads, &self.answers] {
            s.raise();
        }
    }
}

/// Listen on the fleet's channels until the runtime that drives this
/// task shuts down (the fleet is dropped). A failure is logged once, not
/// at every retry while the database stays away.
pub(crate) async fn listen(config: tokio_postgres::Config, signals: std::sync::Arc<Signals>) {
    let mut failing = false;
    loop {
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                let drive = async {
                    loop {
                        match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                            Some(Ok(AsyncMessage::Notification(n))) => signals.raise(n.channel()),
                            Some(Ok(_)) => {}
                            Some(Err(_)) | None => return,
                        }
                    }
                };
                let subscribe = async {
                    let sql = format!("LISTEN {LEAVES}; LISTEN {HEADS}; LISTEN {ANSWERS}");
                    if let Err(e) = client.batch_execute(&sql).await {
                        if !failing {
                            tracing::warn!(error = %e, "fleet database: cannot listen");
                        }
                        failing = true;
                        return;
                    }
                    if failing {
                        tracing::info!("fleet database: listening again");
                    }
                    failing = false;
                    // Listening from now on: whatever came before is read
                    // again by the waiters.
                    signals.raise_all();
                    std::future::pending::<()>().await;
                };
                tokio::select! {
                    () = drive => {}
                    () = subscribe => {}
                }
            }
            Err(e) => {
                if !failing {
                    tracing::warn!(error = %e, "fleet database: cannot listen");
                }
                failing = true;
            }
        }
        signals.raise_all();
        tokio::time::sleep(RETRY).await;
    }
}
