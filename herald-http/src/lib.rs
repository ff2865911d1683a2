//! HERALD's HTTP plumbing, in one place for every crate that speaks HTTP.
//!
//! `server` (feature `server`): how every HERALD server (`herald conduit serve`, `herald
//! witness serve`, `herald inspect --serve`, `herald mcp proxy --listen`)
//! listens and serves, hardened against slow and idle clients (CONDUIT.md
//! *Operation*: stop accepting, answer what is in flight, exit).
//!
//! [`client`]: how every HERALD crate reaches another HERALD service
//! (a conduit, a witness, an MCP server), bounded as the servers are.
//!
//! `front` (feature `server`): how the conduit and a Herald read a
//! `POST`ed envelope, bounded in bytes and time, and answer one with no
//! head (RFC 9457 problems).
//!
//! [`head`]: the head of a POSTed envelope (`id`, `from`, `trace`, …)
//! read from a prefix of its bytes, so that even an oversize or late
//! request is refused by an envelope addressed to its sender.
//!
//! [`signature`]: signed requests (RFC 9421, Ed25519; CONDUIT.md *Who may
//! read what*): the client signs, the server verifies, by one rule.
//!
//! [`rate`]: the token buckets behind every server's `429 rate_limited`.
#![forbid(unsafe_code)]

pub mod client;
#[cfg(feature = "server")]
pub mod front;
pub mod head;
#[cfg(feature = "server")]
mod linger;
pub mod rate;
#[cfg(feature = "server")]
pub mod server;
pub mod signature;
