//! The `herald` command line (CLI.md).
fn main() {}
