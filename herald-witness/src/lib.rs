//! A C2SP tlog-witness v1.0.0 witness (`herald witness serve`, CONDUIT.md)
//! and the client side of the protocol.
//!
//! - [`Witness`]: `add-checkpoint` as a function of the request body —
//!   verify the log's signature, check the consistency proof from the size
//!   last cosigned, persist the new checkpoint atomically, cosign it with a
//!   tlog-cosignature v1 line; every tlog-witness status code.
//! - [`state`]: the crash-safe record of the latest cosigned checkpoint of
//!   each origin.
//! - [`server`]: the axum router and `serve`.
//! - [`client`]: a small blocking HTTP/1.1 client for loopback `http://`
//!   URLs: `add-checkpoint` with the 409 retry, and plain GETs of
//!   checkpoints and tiles.
#![forbid(unsafe_code)]

pub mod client;
pub mod server;
pub mod state;
mod witness;

pub use witness::{Reply, SIZE_MEDIA_TYPE, Witness, WitnessError};
