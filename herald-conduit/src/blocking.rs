//! Blocking work inside the conduit's asynchronous code: the batch writer
//! ([`crate::writer`]) is tasks of the runtime that serves HTTP, and the
//! redb store's commits and the notary log's syncs (CONDUIT.md
//! *Operation*: nothing is acknowledged before it is durable) and the
//! CPU-bound parts (signature checks in batch equations, the relay's
//! receipts, the P8/P10 rules) must not hold up the requests and a fleet's
//! database work meanwhile.
//!
//! A redb writer stage runs on a thread of its own for its whole life
//! ([`own_thread`]), as the writer's threads did before it became a task:
//! a batch costs no hand-off of a worker. A fleet's stages are awaited on
//! the workers; their CPU-bound parts step off them ([`off_runtime`]).
//! Either spreads a batch's signature work over the cores ([`on_cores`]).

use std::future::Future;

use tokio::runtime::{Handle, RuntimeFlavor};

/// The runtime that drives the caller, if a multi-thread one (only there
/// may a worker be handed to another thread).
fn multi_thread() -> Option<Handle> {
    Handle::try_current()
        .ok()
        .filter(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread)
}

/// Run `f`, which blocks (CPU or disk), without holding up the runtime's
/// other tasks: on a multi-thread runtime its worker is handed to a thread
/// of the blocking pool for the time of `f` (`block_in_place`: `f` may
/// borrow, as a batch's prechecked posts borrow the batch); elsewhere (a
/// current-thread runtime an embedder chose, or no runtime, or inside
/// [`own_thread`], where nothing else waits) `f` runs here.
///
/// Every task that calls this is spawned on its own (the writer's stages,
/// [`crate::writer`]): what else a task runs concurrently would wait.
pub(crate) fn off_runtime<T>(f: impl FnOnce() -> T) -> T {
    match multi_thread() {
        Some(_) => tokio::task::block_in_place(f),
        None => f(),
    }
}

/// Drive `stage`, a writer stage whose work blocks (a redb backend's:
/// [`crate::backend::Backend::blocks`]), on a thread of its own until it
/// ends: on a multi-thread runtime the worker's core is handed to another
/// thread once (`block_in_place`) and `stage` is driven here
/// (`Handle::block_on`; the workers still drive the timers and sockets it
/// waits on), so that no batch pays a hand-off; elsewhere `stage` is
/// awaited, and what blocks in it holds up the runtime's other tasks.
pub(crate) async fn own_thread<F: Future>(stage: F) -> F::Output {
    match multi_thread() {
        Some(h) => tokio::task::block_in_place(|| h.block_on(stage)),
        None => stage.await,
    }
}

/// `f` over `items` in parts, one per core, the parts' results in order
/// (signature checks and receipts of a batch); on this thread when there is
/// one core or few items. A part whose thread panicked is done again here,
/// where the panic surfaces. Called off the runtime's workers.
pub(crate) fn on_cores<'a, T: Sync, R: Send>(
    items: &'a [T],
    f: impl Fn(&'a [T]) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 || items.len() < 4 {
        return vec![f(items)];
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || f(part)))
            .collect();
        handles
            .into_iter()
            .zip(items.chunks(chunk))
            .map(|(h, part)| h.join().unwrap_or_else(|_| f(part)))
            .collect()
    })
}
