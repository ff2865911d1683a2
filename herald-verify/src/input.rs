//! [`Input`]: one input of a trace audit, named for its reports (CLI.md
//! *verify*: a FILE, or `-` for standard input).

use alloc::{string::String, vec::Vec};

/// One input: a name for reports and its bytes.
#[derive(Clone, Debug)]
pub struct Input {
    /// A path, or `-` for standard input.
    pub name: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}
