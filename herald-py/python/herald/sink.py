"""Where a middleware's envelopes go: a trace file (CLI.md: a CBOR
sequence, envelopes back to back) or a conduit (CONDUIT.md:
``POST /v1/envelopes``). Sinks only ever see envelope bytes: no key (a
conduit sink's ``trace`` read is signed with a key its caller passes)."""

from __future__ import annotations

import os
import threading
from typing import Optional, Protocol, Union

from ._native import ConduitSender, Envelope, SigningKey, TraceFile


class Sink(Protocol):
    """Anything that takes signed envelopes, in order."""

    def emit(self, envelope: Envelope) -> Envelope:
        """Store or send one envelope; return it as stored (a relay may add
        its ``conduit_receipt``)."""
        ...


class FileSink:
    """Append envelopes to a trace file (a CBOR sequence) that
    ``herald verify FILE`` reads, through the same trace file as ``herald
    mcp proxy --trace`` (herald-agent's ``TraceFile``): created 0600 (an
    existing file keeps its mode), a torn last item left by a crash cut
    when it is opened, a file that is not a trace refused, each envelope
    written and synced before ``emit`` returns, a failed append rolled
    back. The file is opened on the first ``emit``."""

    def __init__(self, path: Union[str, os.PathLike]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._file: Optional[TraceFile] = None

    def emit(self, envelope: Envelope) -> Envelope:
        with self._lock:
            if self._file is None:
                self._file = TraceFile(self.path)
            self._file.append(bytes(envelope))
        return envelope

    def __repr__(self) -> str:
        return f"FileSink({self.path!r})"


class ConduitError(Exception):
    """An envelope the conduit did not take: a refusal it signed
    (CONDUIT.md; ``signed`` is True), or an answer that proves nothing
    (``signed`` is False: no answer, a 201 without a receipt that verifies
    under the conduit's key, a refusal it did not sign). ``status`` is the
    HTTP status (0 without one), ``reason`` the signed refusal's reason (a
    P11 code, ``too_large``, ``rate_limited``, ...), else empty."""

    def __init__(self, status: int, reason: str, message: str, *, signed: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.signed = signed


class ConduitSink:
    """POST each envelope to a conduit (CONDUIT.md ``POST /v1/envelopes``);
    ``emit`` returns the envelope as the conduit forwarded it.

    Delivered means what spec §5.2 asks of a sender that needs proof of
    hand-off: the 201 returns the envelope sent, unaltered, with a
    ``conduit_receipt`` that verifies under the conduit's key, so the
    conduit must be a relay. That key is ``conduit_key`` (32 bytes) when
    given, else the one the conduit's ``/.well-known/herald-conduit``
    names, fetched on first use and pinned for the life of the sink. A
    refusal counts only when the conduit signed it for this envelope.
    Anything else raises ``ConduitError`` (the same check as ``herald
    agent`` and the MCP proxy: ``herald.check_receipt`` and
    ``herald.check_refusal``)."""

    def __init__(self, url: str, *, timeout: float = 10.0, conduit_key: bytes | None = None) -> None:
        import urllib.parse

        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(f"conduit URL must be http://HOST:PORT, not {url!r}")
        if conduit_key is not None and len(conduit_key) != 32:
            raise ValueError("conduit_key must be the conduit's 32-byte public key")
        self.url = url.rstrip("/")
        # herald-agent's sender: the MCP proxy's --conduit, receipts and
        # refusals checked by herald-verify, on herald-http's client (which
        # also reads the pages of trace()).
        self._sender = ConduitSender(self.url, timeout=timeout, conduit_key=conduit_key)
        self.indices: list[int] = []

    @property
    def conduit_key(self) -> bytes:
        """The conduit's key its answers are checked under (given, or pinned
        from its well-known document on first use)."""
        try:
            return self._sender.key()
        except OSError as e:
            path = "/.well-known/herald-conduit"
            raise ConduitError(0, "", f"conduit {self.url}{path}: no usable key: {e}") from e

    def emit(self, envelope: Envelope) -> Envelope:
        status, forwarded, index, reason, signed, message = self._sender.deliver(bytes(envelope))
        where = f"conduit {self.url}: envelope {envelope.id_hex}"
        if forwarded is not None:
            if index is not None:
                self.indices.append(index)
            return Envelope(forwarded)
        if signed:
            raise ConduitError(status, reason, f"{where} {message}", signed=True)
        raise ConduitError(status, "", f"{where} not delivered: {message}")

    def trace(self, trace: bytes, *, key: Optional[SigningKey] = None) -> bytes:
        """Every envelope of ``trace`` the conduit holds, as a CBOR sequence
        (``GET /v1/traces/{trace}``), following ``Herald-Cursor`` from page
        to page until one is empty (CONDUIT.md revision 3, *Bounded
        answers*). A conduit answers only a participant of the trace (a
        sigil that is ``from`` or ``to`` of one of its envelopes): each
        page is signed with ``key``, that participant's key (CONDUIT.md
        *Who may read what*), unless the conduit runs with ``--public``;
        otherwise it answers 401. The key signs the requests only; it is
        never sent."""
        out = bytearray()
        cursor = 0
        while True:
            path = f"/v1/traces/{trace.hex()}?after={cursor}"
            try:
                status, headers, body = self._sender.get(path, key)
            except OSError as e:
                raise ConduitError(0, "", f"conduit {self.url}: GET {path}: {e}") from e
            if status != 200:
                raise ConduitError(status, "", f"GET /v1/traces/{trace.hex()}: {status}")
            lowered = dict(headers)
            try:
                following = int(lowered.get("herald-cursor", ""))
            except ValueError:
                raise ConduitError(status, "", f"GET {path}: no Herald-Cursor") from None
            if not body or following <= cursor:
                return bytes(out)
            out += body
            cursor = following

    def __repr__(self) -> str:
        return f"ConduitSink({self.url!r})"


def open_sink(target: Union[str, os.PathLike, Sink]) -> Sink:
    """A sink for ``target``: an ``http://`` URL is a conduit, any other
    string or path a trace file, an object with ``emit`` itself."""
    if hasattr(target, "emit"):
        return target  # type: ignore[return-value]
    text = os.fspath(target)  # type: ignore[arg-type]
    if isinstance(text, str) and text.startswith(("http://", "https://")):
        return ConduitSink(text)
    return FileSink(text)


def read_trace(path: Union[str, os.PathLike]) -> list[Envelope]:
    """The envelopes of a trace file, in order (each decoded strictly)."""
    from ._native import split_sequence

    with open(path, "rb") as f:
        data = f.read()
    return [Envelope(item) for item in split_sequence(data)]
