"""HERALD v0.2 signed envelopes for Python, over herald-rs.

The same encoder, decoder and verifier as the ``herald`` command (one
implementation, in Rust); ``herald.verify(...).to_json()`` is the document
``herald verify --json`` prints for the same input.

    key = herald.SigningKey.generate()
    env = herald.genesis(key, {"hello": "world"})
    assert herald.verify(env, keyring=herald.Keyring()).envelopes[0].status == "valid"
"""

from ._native import (
    PROTOCOL,
    BundleError,
    DecodeError,
    EncodeError,
    Envelope,
    EnvelopeError,
    EnvelopeVerdict,
    HeraldError,
    KeyFileError,
    Keyring,
    KeyringError,
    Log,
    LogError,
    ProofError,
    ProofVerdict,
    Reason,
    Report,
    SigningKey,
    Summary,
    TraceVerdict,
    bundle,
    decode,
    encode,
    genesis,
    reply,
    unbundle,
    verify,
    verify_proof,
)
from .sink import ConduitError, ConduitSink, FileSink, Sink, open_sink, read_trace

__all__ = [
    "PROTOCOL",
    "BundleError",
    "ConduitError",
    "ConduitSink",
    "DecodeError",
    "EncodeError",
    "Envelope",
    "EnvelopeError",
    "EnvelopeVerdict",
    "FileSink",
    "HeraldError",
    "KeyFileError",
    "Keyring",
    "KeyringError",
    "Log",
    "LogError",
    "ProofError",
    "ProofVerdict",
    "Reason",
    "Report",
    "SigningKey",
    "Sink",
    "Summary",
    "TraceVerdict",
    "bundle",
    "decode",
    "encode",
    "genesis",
    "open_sink",
    "read_trace",
    "reply",
    "unbundle",
    "verify",
    "verify_proof",
]
