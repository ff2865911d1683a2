"""Where a middleware's envelopes go: a trace file (CLI.md: a CBOR
sequence, envelopes back to back) or a conduit (CONDUIT.md:
``POST /v1/envelopes``). Sinks only ever see envelope bytes: no key."""

from __future__ import annotations

import os
import threading
from typing import Protocol, Union

from ._native import Envelope, decode


class Sink(Protocol):
    """Anything that takes signed envelopes, in order."""

    def emit(self, envelope: Envelope) -> Envelope:
        """Store or send one envelope; return it as stored (a relay may add
        its ``conduit_receipt``)."""
        ...


class FileSink:
    """Append envelopes to a trace file (a CBOR sequence) that
    ``herald verify FILE`` reads; each one is flushed and synced before
    ``emit`` returns, so nothing emitted is lost with the process."""

    def __init__(self, path: Union[str, os.PathLike]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()

    def emit(self, envelope: Envelope) -> Envelope:
        data = bytes(envelope)
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
        return envelope

    def __repr__(self) -> str:
        return f"FileSink({self.path!r})"


class ConduitError(Exception):
    """A conduit refused an envelope (CONDUIT.md: a signed refusal) or
    gave no usable answer. ``status`` is the HTTP status, ``reason`` the
    refusal's reason (a P11 code, ``too_large``, ``rate_limited``, ...)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class ConduitSink:
    """POST each envelope to a conduit (CONDUIT.md ``POST /v1/envelopes``);
    ``emit`` returns the envelope as the conduit forwarded it (with a relay's
    receipt). Refusals raise ``ConduitError`` with the refusal's reason."""

    def __init__(self, url: str, *, timeout: float = 10.0) -> None:
        import urllib.parse

        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(f"conduit URL must be http://HOST:PORT, not {url!r}")
        self.url = url.rstrip("/")
        self._host = parsed.hostname
        self._port = parsed.port or 80
        self._prefix = parsed.path.rstrip("/")
        self._timeout = timeout
        self.indices: list[int] = []

    def _request(self, method: str, path: str, body: bytes | None = None):
        import http.client  # here, not at import: it costs ~50 ms to import

        conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        try:
            headers = {"Content-Type": "application/cbor"} if body is not None else {}
            conn.request(method, self._prefix + path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, dict(resp.getheaders()), resp.read()
        finally:
            conn.close()

    def emit(self, envelope: Envelope) -> Envelope:
        status, headers, body = self._request("POST", "/v1/envelopes", bytes(envelope))
        if status == 201:
            answer = decode(body)
            if "index" in answer:
                self.indices.append(answer["index"])
            return Envelope(answer["envelope"])
        reason = ""
        try:
            refusal = Envelope(body)
            reason = refusal.payload.get("reason", "")
        except Exception:  # noqa: BLE001 - a 400 problem+json is no envelope
            reason = body[:200].decode("utf-8", "replace")
        raise ConduitError(
            status, reason, f"conduit {self.url} refused envelope {envelope.id_hex}: {status} {reason}"
        )

    def trace(self, trace: bytes) -> bytes:
        """Every envelope of ``trace`` the conduit holds, as a CBOR sequence
        (``GET /v1/traces/{trace}``), following ``Herald-Cursor`` from page
        to page until one is empty (CONDUIT.md revision 3, *Bounded
        answers*)."""
        out = bytearray()
        cursor = 0
        while True:
            path = f"/v1/traces/{trace.hex()}?after={cursor}"
            status, headers, body = self._request("GET", path)
            if status != 200:
                raise ConduitError(status, "", f"GET /v1/traces/{trace.hex()}: {status}")
            lowered = {k.lower(): v for k, v in headers.items()}
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
