"""The recorder's parts are herald-agent's, the MCP proxy's: the trace file
cuts a torn tail and refuses a file that is not a trace, the
``tool_sandbox`` co-signature carries no ``ts`` (PROFILE P5), and the
conduit sender takes a URL with a path prefix."""

from __future__ import annotations

import os
import stat

import pytest

import herald
from herald._recorder import TraceRecorder


def test_a_torn_tail_is_cut_before_the_next_envelope(tmp_path):
    key = herald.SigningKey.generate()
    path = tmp_path / "t.herald"
    first = herald.genesis(key, "first")
    herald.FileSink(path).emit(first)
    # A crash mid-append: half of an envelope at the end.
    torn = bytes(herald.reply(key, first, "torn"))
    with open(path, "ab") as f:
        f.write(torn[: len(torn) // 2])
    third = herald.reply(key, first, "after the crash")
    herald.FileSink(path).emit(third)
    assert [e.id for e in herald.read_trace(path)] == [first.id, third.id]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    reopened = herald.TraceFile(path)
    assert (reopened.recovered, len(reopened)) == (0, os.path.getsize(path))


def test_a_file_that_is_not_a_trace_is_never_appended_to(tmp_path):
    path = tmp_path / "notes.json"
    path.write_bytes(b'{"json": true}')
    with pytest.raises(OSError, match="not a trace file"):
        herald.FileSink(path).emit(herald.genesis(herald.SigningKey.generate(), "x"))
    assert path.read_bytes() == b'{"json": true}'


def test_a_tool_result_is_cosigned_without_a_timestamp(tmp_path):
    agent, sandbox = herald.SigningKey.generate(), herald.SigningKey.generate()
    recorder = TraceRecorder(agent, tmp_path / "t.herald", tool_sandbox_key=sandbox)
    recorder.start({"run": 1})
    recorder.llm_call({"prompt": "2*3"}, model="m", tools=["mult"], temperature=None)
    call = recorder.tool_call({"tool": "mult"}, "mult")
    result = recorder.tool_result(call, {"output": 6})
    _origin, cosig = result.signatures
    assert cosig["scope"] == "tool_sandbox" and cosig["by"] == sandbox.sigil
    assert "ts" not in cosig
    # The same rule as a bare co-signature by the native function.
    bare = herald.reply(agent, call, {"output": 6})
    assert "ts" not in herald.sandbox_cosign(bare, sandbox).signatures[1]


def test_the_conduit_sender_takes_a_prefix_and_refuses_bad_urls():
    sender = herald.ConduitSender("http://127.0.0.1:9/conduit/")
    assert sender.url == "http://127.0.0.1:9/conduit/"
    for bad in ("https://example.test", "127.0.0.1:9", "http://user@h/"):
        with pytest.raises(ValueError):
            herald.ConduitSender(bad)
    # Nothing listens on port 9: no key, said so.
    with pytest.raises(OSError):
        sender.key()
