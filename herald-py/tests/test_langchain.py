"""herald.langchain: a LangGraph agent run (fake chat model, two real
tools, no network) becomes one trace that `herald verify` calls valid end
to end, with the right parents and attestations; tampering is caught; the
secret keys appear nowhere in the run."""

from __future__ import annotations

import copy
import json
import os
import pickle
import select
import stat
import subprocess

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake import FakeListLLM

import herald
from agent_fixture import MODEL, TEMPERATURE, TEXT, run_agent
from conftest import run_cli
from herald.langchain import HeraldCallbackHandler


def cli_verify(herald_bin, keys_dir, *files, extra=()):
    cli = run_cli(herald_bin, "verify", "--json", "--keyring", keys_dir, *extra, *files)
    assert cli.returncode in (0, 1), cli.stderr
    return cli.returncode, json.loads(cli.stdout)


@pytest.fixture
def recorded(tmp_path, keys):
    trace = tmp_path / "run.herald"
    handler = HeraldCallbackHandler(keys["agent"], trace, tool_sandbox_key=keys["sandbox"])
    result = run_agent([handler])
    return handler, trace, result


def test_agent_run_is_one_valid_trace(herald_bin, keys, recorded):
    handler, trace, result = recorded
    assert result["messages"][-1].content.startswith("2 + 3 = 5")
    envs = herald.read_trace(trace)
    events = [e.payload["event"] for e in envs]
    assert events == [
        "chain_start",
        "llm_call",
        "tool_call",
        "tool_result",
        "llm_call",
        "tool_call",
        "tool_result",
        "llm_call",
        "chain_end",
    ]
    # One trace, rooted at the genesis, each envelope replying to the right one.
    genesis = envs[0]
    assert genesis.parent is None and genesis.trace == genesis.id
    assert all(e.trace == genesis.id for e in envs)
    llm1, call1, result1, llm2, call2, result2, llm3, end = envs[1:]
    assert llm1.parent == genesis.id
    assert call1.parent == llm1.id and result1.parent == call1.id
    assert llm2.parent == result1.id
    assert call2.parent == llm2.id and result2.parent == call2.id
    assert llm3.parent == result2.id and end.parent == llm3.id
    # Tools really ran, and their results are recorded.
    assert call1.payload["tool"] == "add" and call1.payload["input"] == {"a": 2, "b": 3}
    assert "5" in json.dumps(result1.payload["output"])
    assert call2.payload["input"] == {"text": TEXT}
    # Attestations from the run: model, tools, temperature (P12).
    for llm in (llm1, llm2, llm3):
        assert llm.attestation("model") == MODEL
        assert llm.attestation("tools") == ["add", "word_count"]
        assert llm.attestation("temperature") == TEMPERATURE
    assert call1.attestation("tools") == ["add"] and call1.attestation("model") == MODEL
    assert call2.attestation("tools") == ["word_count"]
    # Tool results: origin by the agent, co-signed tool_sandbox by the sandbox.
    for res in (result1, result2):
        sigs = res.signatures
        assert [s["scope"] for s in sigs] == ["origin", "tool_sandbox"]
        assert sigs[0]["by"] == keys["agent"].sigil and sigs[1]["by"] == keys["sandbox"].sigil
    assert all(e.from_ == keys["agent"].sigil for e in envs)

    # `herald verify` (the CLI) calls it valid end to end.
    code, doc = cli_verify(herald_bin, keys["dir"], trace)
    assert code == 0, doc
    assert doc["summary"] == {"valid": 9, "partial": 0, "invalid": 0}
    assert doc["traces"][0]["genesis"] == genesis.id_hex
    assert doc["traces"][0]["leaves"] == [end.id_hex]
    # And the Python verifier says the same, byte for byte.
    report = herald.verify(trace, keyring=herald.Keyring(keys["dir"]))
    assert report.ok
    # A policy requiring the sandbox's co-signature holds for the results.
    path = trace.with_name("calls-and-results.herald")
    path.write_bytes(b"".join(bytes(e) for e in (genesis, llm1, call1, result1)))
    code, doc = cli_verify(herald_bin, keys["dir"], path, extra=["--require", "tool_sandbox"])
    assert code == 1
    assert [e["status"] for e in doc["envelopes"]] == ["partial", "partial", "partial", "valid"]


def test_tampered_trace_fails(herald_bin, keys, recorded, tmp_path):
    _, trace, _ = recorded
    data = trace.read_bytes()
    # Change what the add tool was asked: one byte of a signed payload.
    envs = herald.read_trace(trace)
    call1 = bytes(envs[2])
    offset = data.index(call1)
    needle = herald.encode("a") + b"\x02"  # {"a": 2} inside the tool call's input
    at = call1.index(needle) + len(needle) - 1
    tampered = bytearray(data)
    tampered[offset + at] = 0x07  # a: 7
    bad = tmp_path / "tampered.herald"
    bad.write_bytes(bytes(tampered))
    code, doc = cli_verify(herald_bin, keys["dir"], bad)
    assert code == 1
    statuses = [e["status"] for e in doc["envelopes"]]
    assert statuses[2] == "invalid"
    codes = {r["code"] for r in doc["envelopes"][2]["reasons"]}
    assert {"id_mismatch", "bad_signature"} <= codes
    # Its child signed over the real envelope, which is no longer in the set.
    assert "missing_parent" in {r["code"] for r in doc["envelopes"][3]["reasons"]}
    report = herald.verify(bad, keyring=keys["dir"])
    assert not report.ok and report.envelopes[2].status == "invalid"

    # Dropping an envelope is caught too.
    dropped = tmp_path / "dropped.herald"
    dropped.write_bytes(b"".join(bytes(e) for i, e in enumerate(envs) if i != 4))
    code, doc = cli_verify(herald_bin, keys["dir"], dropped)
    assert code == 1
    assert any(r["code"] == "missing_parent" for e in doc["envelopes"] for r in e["reasons"])

    # A tool result without the sandbox's key pinned is not valid.
    only_agent = tmp_path / "agent-only"
    only_agent.mkdir()
    (only_agent / "agent.pub").write_text(keys["agent"].keyring_line() + "\n")
    code, doc = cli_verify(herald_bin, only_agent, trace)
    assert code == 1
    assert doc["envelopes"][3]["status"] == "partial"
    assert doc["envelopes"][3]["reasons"][0]["code"] == "unknown_signer"


class Spy(BaseCallbackHandler):
    """Records every callback with all its arguments."""

    def __init__(self):
        self.events = []

    def __getattribute__(self, name):
        if name.startswith("on_"):
            events = object.__getattribute__(self, "events")

            def record(*args, **kwargs):
                events.append((name, args, kwargs))

            return record
        return object.__getattribute__(self, name)


def seeds(keys):
    out = []
    for name in ("agent", "sandbox"):
        text = (keys["dir"] / f"{name}.key").read_text().splitlines()[1]
        out.append(text)
    return out


def test_secret_keys_appear_nowhere_in_the_run(keys, tmp_path):
    trace = tmp_path / "run.herald"
    handler = HeraldCallbackHandler(keys["agent"], trace, tool_sandbox_key=keys["sandbox"])
    spy = Spy()
    result = run_agent([handler, spy])
    assert len(spy.events) > 10
    haystacks = [
        repr(spy.events),
        repr(result),
        json.dumps([m.model_dump() for m in result["messages"]], default=str),
        repr(handler),
        repr(vars(handler)),
        trace.read_bytes().hex(),
        repr(trace.read_bytes()),
        repr([e.to_json() for e in handler.envelopes]),
    ]
    for hex_seed in seeds(keys):
        raw = bytes.fromhex(hex_seed)
        for h in haystacks:
            assert hex_seed not in h
            assert hex_seed.upper() not in h
            assert repr(raw)[2:-1] not in h
    # Metadata and tags passed to callbacks carry nothing of ours.
    for name, args, kwargs in spy.events:
        for field in ("metadata", "tags"):
            assert "herald" not in repr(kwargs.get(field, "")).lower(), (name, kwargs.get(field))
    # The key cannot be pulled out of the handler by pickling or copying it.
    with pytest.raises(TypeError):
        pickle.dumps(handler)
    with pytest.raises(TypeError):
        copy.deepcopy(keys["agent"])
    assert not any(hasattr(keys["agent"], a) for a in ("seed", "secret", "private_key", "to_seed"))


def test_the_trace_file_is_created_private(recorded, keys, tmp_path):
    """A trace holds what the agent said and was told: created 0600, as
    `herald mcp proxy` creates its trace; an existing file keeps its mode."""
    _, trace, _ = recorded
    assert stat.S_IMODE(os.stat(trace).st_mode) == 0o600
    shared = tmp_path / "shared.herald"
    shared.touch(mode=0o640)
    os.chmod(shared, 0o640)
    run_agent([HeraldCallbackHandler(keys["agent"], shared, tool_sandbox_key=keys["sandbox"])])
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o640
    assert len(herald.read_trace(shared)) == 9


def test_plain_llm_run_and_conduit_sink(herald_bin, keys, tmp_path):
    """A bare LLM call (no chain) starts its own trace; envelopes posted
    to a conduit come back from it, relay receipts added, and verify."""
    run_cli(herald_bin, "keygen", "-o", tmp_path / "conduit", check=True)
    proc = subprocess.Popen(
        [
            herald_bin, "conduit", "serve",
            "--key", str(tmp_path / "conduit.key"),
            "--state", str(tmp_path / "state"),
            "--listen", "127.0.0.1:0",
            "--roles", "relay,notary",
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
        assert line.startswith("listening on http://"), line + proc.stderr.read()
        url = line.split()[-1]
        sink = herald.ConduitSink(url)
        handler = HeraldCallbackHandler(keys["agent"], sink, tool_sandbox_key=keys["sandbox"])
        llm = FakeListLLM(responses=["first answer", "second answer"])
        assert llm.invoke("question one", config={"callbacks": [handler]}) == "first answer"
        envs = handler.envelopes
        assert [e.payload["event"] for e in envs] == ["run_start", "llm_call"]
        assert envs[1].payload["output"] == ["first answer"]
        assert envs[1].attestation("model") is not None
        # The relay's receipt is on what the conduit forwarded.
        assert [s["scope"] for s in envs[1].signatures] == ["origin", "conduit_receipt"]
        assert len(sink.indices) == 2
        fetched = tmp_path / "fetched.herald"
        # Signed by the agent, a participant (CONDUIT.md *Who may read what*);
        # unsigned, the conduit does not say whether the trace exists.
        with pytest.raises(herald.ConduitError) as e:
            sink.trace(envs[0].trace)
        assert e.value.status == 401
        fetched.write_bytes(sink.trace(envs[0].trace, key=keys["agent"]))
        conduit_pub = tmp_path / "conduit.pub"
        code, doc = cli_verify(herald_bin, keys["dir"], fetched, extra=["--keyring", conduit_pub])
        assert code == 0, doc
        assert doc["summary"]["valid"] == 2
        # A refusal surfaces as ConduitError with the conduit's reason.
        with pytest.raises(herald.ConduitError) as e:
            sink.emit(herald.genesis(herald.SigningKey.generate(), "unknown to the conduit"))
        assert e.value.status == 422 and e.value.reason == "unknown_signer"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_failing_tool_is_recorded_and_the_error_still_raised(herald_bin, keys, tmp_path):
    from langchain_core.tools import tool

    @tool
    def explode(reason: str) -> str:
        """Always fails."""
        raise ValueError(f"boom: {reason}")

    trace = tmp_path / "fail.herald"
    handler = HeraldCallbackHandler(keys["agent"], trace, tool_sandbox_key=keys["sandbox"])
    with pytest.raises(ValueError, match="boom: test"):
        explode.invoke({"reason": "test"}, config={"callbacks": [handler]})
    envs = herald.read_trace(trace)
    assert [e.payload["event"] for e in envs] == ["run_start", "tool_call", "tool_result"]
    assert "boom: test" in envs[2].payload["error"]
    assert [s["scope"] for s in envs[2].signatures] == ["origin", "tool_sandbox"]
    code, doc = cli_verify(herald_bin, keys["dir"], trace)
    assert code == 0, doc


def test_a_sink_that_fails_stops_the_run(keys):
    class Broken:
        def emit(self, envelope):
            raise OSError("disk full")

    handler = HeraldCallbackHandler(keys["agent"], Broken())
    llm = FakeListLLM(responses=["never recorded"])
    with pytest.raises(OSError, match="disk full"):
        llm.invoke("q", config={"callbacks": [handler]})
