"""HERALD v0.2 signed envelopes for Python, over herald-rs.

The same encoder, decoder and verifier as the ``herald`` command (one
implementation, in Rust); ``herald.verify(...).to_json()`` is the document
``herald verify --json`` prints for the same input.

    key = herald.SigningKey.generate()
    env = herald.genesis(key, {"hello": "world"})
    assert herald.verify(env, keyring=herald.Keyring()).envelopes[0].status == "valid"
"""

from . import _native
from ._native import *  # noqa: F403 - the extension's names, listed in its __all__ (and _native.pyi)
from .sink import ConduitError, ConduitSink, FileSink, Sink, open_sink, read_trace

__all__ = [
    *_native.__all__,
    "ConduitError",
    "ConduitSink",
    "FileSink",
    "Sink",
    "open_sink",
    "read_trace",
]
