//! HERALD's HTTP plumbing, in one place for every crate that speaks HTTP.
//!
//! [`server`]: how every HERALD server (`herald conduit serve`, `herald
//! witness serve`, `herald inspect --serve`, `herald mcp proxy --listen`)
//! listens and serves, hardened against slow and idle clients (CONDUIT.md
//! *Operation*: stop accepting, answer what is in flight, exit).
#![forbid(unsafe_code)]

pub mod server;
