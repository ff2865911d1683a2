//! Blocking work inside the conduit's asynchronous code: the batch writer
//! ([`crate::writer`]) is a task of the runtime that serves HTTP, and its
//! CPU-bound parts (signature checks in batch equations, the relay's
//! receipts, the P8/P10 rules) and the redb store's commits and the
//! notary log's syncs (CONDUIT.md *Operation*: nothing is acknowledged
//! before it is durable) run here, off the runtime's workers, so that the
//! requests and a fleet's database work go on meanwhile.

/// Run `f`, which blocks (CPU or disk), without holding up the runtime's
/// other tasks: on a multi-thread runtime its worker is handed to a thread
/// of the blocking pool for the time of `f` (`block_in_place`: `f` may
/// borrow, as a batch's prechecked posts borrow the batch); elsewhere (a
/// current-thread runtime an embedder chose, or no runtime) `f` runs here.
///
/// Every task that calls this is spawned on its own (the writer's stages,
/// [`crate::writer`]): what else a task runs concurrently would wait.
pub(crate) fn off_runtime<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// `f` over `items` in parts, one per core, the parts' results in order
/// (signature checks and receipts of a batch); on this thread when there is
/// one core or few items. A part whose thread panicked is done again here,
/// where the panic surfaces. Called inside [`off_runtime`].
pub(crate) fn on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
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
