//! The `tool_sandbox` co-signature (P6) of a tool's result: one rule for
//! every recorder (the MCP wrapper, the Python middlewares).
//!
//! The co-signature carries no `ts`. PROFILE P5: a signature map's fields
//! other than `sig` are covered only by later signatures, so a `ts` in the
//! last signature of an envelope is a claim nothing signs; the time the
//! result was made is the envelope's own `ts`, which the origin signature
//! and this co-signature both cover (`body(E, k)` holds it).

use herald_core::{BuildError, Envelope, Scope, SigningKey};

/// `envelope` co-signed `tool_sandbox` by `sandbox`, without a `ts`.
pub fn cosign(envelope: &Envelope, sandbox: &SigningKey) -> Result<Envelope, BuildError> {
    envelope.cosign(sandbox, Scope::ToolSandbox, None)
}
