//! HERALD's HTTP plumbing, in one place for every crate that speaks HTTP.
//!
//! `server` (feature `server`): how every HERALD server (`herald conduit serve`, `herald
//! witness serve`, `herald inspect --serve`, `herald mcp proxy --listen`)
//! listens and serves, hardened against slow and idle clients (CONDUIT.md
//! *Operation*: stop accepting, answer what is in flight, exit).
//!
//! [`client`]: how every HERALD crate reaches another HERALD service
//! (a conduit, a witness, an MCP server), bounded as the servers are.
#![forbid(unsafe_code)]

pub mod client;
#[cfg(feature = "server")]
mod linger;
#[cfg(feature = "server")]
pub mod server;
