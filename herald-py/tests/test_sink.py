"""ConduitSink checks what a conduit answers (spec §5.2): delivered only
with a receipt that verifies under the conduit's key, refused only with a
refusal the conduit signed; anything else raises ConduitError."""

from __future__ import annotations

import http.server
import json
import select
import subprocess
import threading

import pytest

import herald
from conftest import run_cli


class FakeConduit:
    """A loopback HTTP server that publishes `key`'s public key and answers
    every POST with what `answer(sent_bytes)` returns: (status, body)."""

    def __init__(self, key: herald.SigningKey, answer) -> None:
        published = key.public_key.hex()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                body = json.dumps({"key": published, "roles": ["relay"]}).encode()
                self._send(200, body, "application/json")

            def do_POST(self):  # noqa: N802
                sent = self.rfile.read(int(self.headers["Content-Length"]))
                status, body = answer(sent)
                self._send(status, body, "application/cbor")

            def _send(self, status, body, kind):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeConduit":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def acknowledged(envelope: herald.Envelope) -> bytes:
    return herald.encode({"envelope": bytes(envelope)})


def test_sink_refuses_a_201_without_a_valid_receipt(keys):
    conduit, impostor = herald.SigningKey.generate(), herald.SigningKey.generate()
    sent = herald.genesis(keys["agent"], "hello")
    answers = {
        "no receipt": lambda b: (201, acknowledged(herald.Envelope(b))),
        "receipt by another key": lambda b: (
            201,
            acknowledged(herald.Envelope(b).cosign(impostor, "conduit_receipt")),
        ),
        "not CBOR": lambda b: (201, b"created"),
    }
    for what, answer in answers.items():
        with FakeConduit(conduit, answer) as fake:
            sink = herald.ConduitSink(fake.url)
            with pytest.raises(herald.ConduitError) as e:
                sink.emit(sent)
            assert e.value.status == 201 and not e.value.signed, what
            assert "not delivered" in str(e.value), (what, str(e.value))
            assert sink.conduit_key == conduit.public_key


def test_sink_delivers_with_a_receipt_by_the_pinned_key(keys):
    conduit = herald.SigningKey.generate()
    sent = herald.genesis(keys["agent"], "hello")

    def good(b):
        return 201, acknowledged(herald.Envelope(b).cosign(conduit, "conduit_receipt"))

    with FakeConduit(conduit, good) as fake:
        got = herald.ConduitSink(fake.url).emit(sent)
        assert got.id == sent.id
        assert [s["scope"] for s in got.signatures] == ["origin", "conduit_receipt"]
        # A key given by the caller wins over the published one.
        other = herald.SigningKey.generate()
        with pytest.raises(herald.ConduitError):
            herald.ConduitSink(fake.url, conduit_key=other.public_key).emit(sent)


def test_sink_trusts_only_a_refusal_the_conduit_signed(keys):
    conduit, impostor = herald.SigningKey.generate(), herald.SigningKey.generate()
    sent = herald.genesis(keys["agent"], "hello")

    def refusal(by):
        def answer(b):
            env = herald.Envelope(b)
            r = herald.reply(by, env, {"reason": "rate_limited", "retry_after": 1}, kind="refusal")
            return 429, bytes(r)

        return answer

    with FakeConduit(conduit, refusal(conduit)) as fake:
        with pytest.raises(herald.ConduitError) as e:
            herald.ConduitSink(fake.url).emit(sent)
        assert (e.value.status, e.value.reason, e.value.signed) == (429, "rate_limited", True)
    for answer in (refusal(impostor), lambda b: (503, b"busy")):
        with FakeConduit(conduit, answer) as fake:
            with pytest.raises(herald.ConduitError) as e:
                herald.ConduitSink(fake.url).emit(sent)
            assert not e.value.signed and e.value.reason == "", str(e.value)


def test_sink_delivers_through_a_real_relay(herald_bin, keys, tmp_path):
    run_cli(herald_bin, "keygen", "-o", tmp_path / "conduit", check=True)
    proc = subprocess.Popen(
        [
            herald_bin, "conduit", "serve",
            "--key", str(tmp_path / "conduit.key"),
            "--state", str(tmp_path / "state"),
            "--listen", "127.0.0.1:0",
            "--roles", "relay",
            "--keyring", str(keys["dir"]),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "the conduit did not start within 30 s"
        line = proc.stdout.readline()
        assert line.startswith("listening on http://"), line
        sink = herald.ConduitSink(line.split()[-1])
        sent = herald.genesis(keys["agent"], "through a relay")
        got = sink.emit(sent)
        assert got.id == sent.id
        assert [s["scope"] for s in got.signatures] == ["origin", "conduit_receipt"]
        # Its signed refusal is one.
        with pytest.raises(herald.ConduitError) as e:
            sink.emit(herald.genesis(herald.SigningKey.generate(), "unknown to the conduit"))
        assert (e.value.status, e.value.reason, e.value.signed) == (422, "unknown_signer", True)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
