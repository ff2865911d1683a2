//! Hooks for this workspace's fuzz targets, benchmarks and tests, fenced
//! off the API as rustls fences its own: hidden from the documentation, no
//! stability promise, and reached only through this module's path.
//!
//! - [`audit_sequential`]: the one-envelope-after-the-other audit, the
//!   reference the parallel one is tested and benchmarked against;
//! - [`audit_counted`]: either audit, also counting the signature
//!   equations it computed (tests/verified_once.rs);
//! - [`verify_all_counted`], [`BatchCounts`]: batch verification that also
//!   counts the equations computed, those that failed, and the signatures
//!   verified one by one;
//! - [`scan_leaf_file`], [`LeafScan`], [`HEADER_LEN`]: the audit log's leaf
//!   file reader without the repair, for the `log_file` fuzz target.

pub use crate::auditlog::file::{HEADER_LEN, LeafScan, scan_leaf_file};
pub use crate::batch::{BatchCounts, verify_all_counted};
pub use crate::trace::{audit_counted, audit_sequential};
