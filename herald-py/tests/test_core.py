"""The herald module itself: keys, the P1 encoder and decoder, envelopes,
co-signatures, the audit log's proofs, bundles, errors, the GIL."""

from __future__ import annotations

import copy
import json
import os
import pickle
import stat
import threading
import time

import pytest

import herald
from conftest import run_cli


def test_keys_save_load_0600_and_interoperate_with_the_cli(tmp_path, herald_bin):
    key = herald.SigningKey.generate()
    path = tmp_path / "me.key"
    key.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # Labelled with the file's stem, as `herald keygen -o me` writes it.
    assert (tmp_path / "me.pub").read_text() == key.keyring_line() + " me\n"
    assert herald.SigningKey.load(path).sigil == key.sigil
    with pytest.raises(herald.KeyFileError):
        key.save(path)  # never overwritten
    # The CLI reads a Python key file, and Python reads a CLI one.
    env = tmp_path / "e.cbor"
    run_cli(herald_bin, "new", "--key", path, "--payload-json", '{"x": 1}', "-o", env, check=True)
    assert herald.Envelope(env.read_bytes()).from_ == key.sigil
    run_cli(herald_bin, "keygen", "-o", tmp_path / "cli", check=True)
    assert herald.SigningKey.load(tmp_path / "cli.key").sigil.startswith("sigil:")
    os.chmod(path, 0o644)
    with pytest.raises(herald.KeyFileError, match="0644"):
        herald.SigningKey.load(path)
    with pytest.raises(herald.KeyFileError, match="public key file"):
        herald.SigningKey.load(tmp_path / "me.pub")
    # The secret never comes back out.
    for attempt in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError):
            attempt(key)
    assert key.sigil in repr(key)
    assert herald.SigningKey.from_seed(bytes(32)).sigil == herald.SigningKey.from_seed(bytes(32)).sigil
    with pytest.raises(ValueError):
        herald.SigningKey.from_seed(b"short")


def test_encoder_is_p1(herald_bin):
    # Numeric reduction, shortest floats, sorted keys (shorter first).
    assert herald.encode(2.0) == herald.encode(2) == b"\x02"
    assert herald.encode(1.5) == bytes.fromhex("f93e00")
    assert herald.encode({"bb": 1, "a": 2, "c": 3}) == bytes.fromhex("a3616102616303626262" "01")
    assert herald.encode(-1) == b"\x20"
    assert herald.encode(2**64 - 1) == bytes.fromhex("1bffffffffffffffff")
    assert herald.encode(-(2**64)) == bytes.fromhex("3bffffffffffffffff")
    assert herald.encode((1, b"\x00", None, True)) == bytes.fromhex("840141 00f6f5".replace(" ", ""))
    for value, rule in [
        (float("nan"), "nan"),
        (float("inf"), "infinite"),
        (float("-inf"), "infinite"),
        (-0.0, "negative_zero"),
        (2**64, "integer_range"),
        (-(2**64) - 1, "integer_range"),
        ({1: "x"}, "non_text_key"),
        (object(), "unsupported_type"),
        ({"x": [float("nan")]}, "nan"),
    ]:
        with pytest.raises(herald.EncodeError) as e:
            herald.encode(value)
        assert e.value.rule == rule, value
    deep = []
    cur = deep
    for _ in range(40):
        cur.append([])
        cur = cur[0]
    with pytest.raises(herald.EncodeError) as e:
        herald.encode(deep)
    assert e.value.rule == "depth_exceeded"
    loop = []
    loop.append(loop)
    with pytest.raises(herald.EncodeError):
        herald.encode(loop)
    # NaN in a payload raises too: nothing is quietly fixed.
    with pytest.raises(herald.EncodeError):
        herald.genesis(herald.SigningKey.generate(), {"score": float("nan")})


def test_decoder_is_strict():
    value = {"a": [1, -2, 1.5, "x", b"y", None, False], "bb": {"c": 2**63}}
    data = herald.encode(value)
    assert herald.decode(data) == value
    with pytest.raises(herald.DecodeError) as e:
        herald.decode(data + b"\x00")
    assert (e.value.rule, e.value.offset) == ("trailing_bytes", len(data))
    with pytest.raises(herald.DecodeError) as e:
        herald.decode(bytes.fromhex("f97e00"))
    assert e.value.rule == "non_finite_float"
    with pytest.raises(herald.DecodeError):
        herald.decode(b"")


def test_envelopes_build_cosign_decode(keys):
    agent, sandbox = keys["agent"], keys["sandbox"]
    g = herald.genesis(
        agent,
        {"q": "hi"},
        to=sandbox.sigil,
        ts=1_700_000_000,
        expires=1_700_000_600,
        attestations={"model": "m1", "tools": ["t"], "temperature": 0.5},
    )
    assert g.parent is None and g.trace == g.id and g.ts == 1_700_000_000
    assert g.to == sandbox.sigil and g.expires == 1_700_000_600 and g.kind == "message"
    assert g.attestations == [
        {"type": "model", "value": "m1"},
        {"type": "tools", "value": ["t"]},
        {"type": "temperature", "value": 0.5},
    ]
    r = g.reply(agent, [1, 2], ts=1_700_000_001, attestations=[("citation", {"kind": "originates"})])
    assert r.parent == g.id and r.trace == g.trace
    c = r.cosign(sandbox, "tool_sandbox", ts=1_700_000_002)
    assert c.id == r.id and len(c.signatures) == 2
    assert c.signatures[1] == {**c.signatures[1], "scope": "tool_sandbox", "by": sandbox.sigil, "ts": 1_700_000_002}
    assert herald.Envelope(bytes(c)) == c and len(c) == len(bytes(c))
    assert json.loads(c.to_json())["id"] == c.id_hex
    with pytest.raises(ValueError):
        r.cosign(sandbox, "origin")
    with pytest.raises(ValueError):
        r.cosign(sandbox, "no_such_scope")
    with pytest.raises(ValueError):
        herald.genesis(agent, to="sigil:nope")
    with pytest.raises(ValueError):
        herald.genesis(agent, kind="nope")
    report = herald.verify([g, r, c], keyring=keys["dir"], now=1_700_000_100)
    # r and c share an id and a nonce: the second is a replay (P10).
    assert [e.status for e in report.envelopes] == ["valid", "valid", "invalid"]
    assert report.envelopes[2].codes == ["replayed_nonce"]
    report = herald.verify([g, c], keyring=keys["dir"], now=1_700_000_100, require=["tool_sandbox"])
    assert [e.status for e in report.envelopes] == ["partial", "valid"]
    assert herald.verify([g, c], keyring=keys["dir"], now=1_700_001_000).envelopes[0].codes == ["expired"]


def test_envelope_errors_carry_the_p11_code_and_rule():
    with pytest.raises(herald.EnvelopeError) as e:
        herald.Envelope(herald.encode({"v": "herald/0.2"}))
    assert e.value.code == "malformed"
    with pytest.raises(herald.EnvelopeError) as e:
        herald.Envelope(b"\xa1\x61")
    assert e.value.code == "malformed" and e.value.rule == "truncated"
    with pytest.raises(herald.EnvelopeError) as e:
        herald.Envelope(herald.encode({"v": "herald/9"}))
    assert isinstance(e.value, herald.HeraldError)


def test_verify_unparseable_and_empty_input_is_invalid(keys):
    empty = herald.verify(b"", keyring=keys["dir"])
    assert not empty.ok and empty.envelopes[0].codes == ["malformed"] and empty.envelopes[0].id is None
    with pytest.raises(OSError):
        herald.verify("/nonexistent/trace.herald")
    with pytest.raises(TypeError):
        herald.verify(12)
    with pytest.raises(herald.KeyringError):
        herald.verify(b"", keyring="/nonexistent/keys")
    with pytest.raises(ValueError):
        herald.verify(b"", require=["origin"])


def test_audit_log_proofs_match_the_cli(tmp_path, keys, herald_bin):
    log_key = herald.SigningKey.generate()
    log_key.save(tmp_path / "log.key")
    log = herald.Log.create(tmp_path / "log", log_key)
    agent = keys["agent"]
    g = herald.genesis(agent, "zero")
    envs = [g] + [g.reply(agent, i) for i in range(1, 6)]
    assert log.append(envs) == [0, 1, 2, 3, 4, 5]
    assert log.append([envs[2]]) == [2]  # idempotent
    assert len(log) == 6 and len(log.root) == 32
    pinned = herald.Keyring()
    pinned.add(log_key)
    proof = log.prove(log_key, envs[3])
    info = herald.verify_proof(proof, keyring=pinned, envelope=envs[3])
    assert info == {**info, "kind": "inclusion", "index": 3, "size": 6, "log": log.sigil}
    with pytest.raises(herald.ProofError) as e:
        herald.verify_proof(proof, keyring=pinned, envelope=envs[4])
    assert e.value.code == "envelope_mismatch"
    with pytest.raises(herald.ProofError) as e:
        herald.verify_proof(proof, keyring=herald.Keyring())
    assert e.value.code == "unknown_log"
    tampered = bytearray(proof)
    tampered[-5] ^= 1
    with pytest.raises(herald.ProofError):
        herald.verify_proof(bytes(tampered), keyring=pinned)
    cons = log.consistency(log_key, 2)
    assert herald.verify_proof(cons, keyring=pinned)["size2"] == 6
    sth = log.sth(log_key)
    assert herald.verify_proof(sth, keyring=pinned)["kind"] == "sth"
    # The CLI reads the same log and agrees with Python's proofs.
    (tmp_path / "log.pub").write_text(log.keyring_line() + "\n")
    (tmp_path / "p.cbor").write_bytes(proof)
    (tmp_path / "e.cbor").write_bytes(bytes(envs[3]))
    cli = run_cli(
        herald_bin, "log", "verify-proof", tmp_path / "p.cbor",
        "--keyring", tmp_path / "log.pub", "--envelope", tmp_path / "e.cbor",
    )
    assert cli.returncode == 0, cli.stdout + cli.stderr
    # A log is open in one process at a time: the CLI waits for ours.
    del log
    status = run_cli(herald_bin, "log", "status", tmp_path / "log", "--json", check=True)
    assert json.loads(status.stdout)["leaves"] == 6
    assert len(herald.Log.open(tmp_path / "log")) == 6
    with pytest.raises(herald.LogError):
        herald.Log.create(tmp_path / "log", log_key)


def test_bundles(tmp_path, keys, herald_bin):
    log_key = herald.SigningKey.generate()
    log = herald.Log.create(tmp_path / "log", log_key)
    g = herald.genesis(keys["agent"], "bundled")
    log.append([g])
    proof = log.prove(log_key, g)
    data = herald.bundle([g], [proof], [keys["agent"]])
    parts = herald.unbundle(data)
    assert parts["envelopes"] == [bytes(g)] and parts["proofs"] == [proof]
    assert parts["keys"] == [keys["agent"].keyring_line()]
    pinned = herald.Keyring()
    pinned.add(log_key)
    report = herald.verify(data, keyring=pinned)
    assert report.ok and report.envelopes[0].key_source == "bundle"
    assert [p.status for p in report.proofs] == ["valid"]
    (tmp_path / "b.cbor").write_bytes(data)
    (tmp_path / "log.pub").write_text(log.keyring_line() + "\n")
    cli = run_cli(herald_bin, "verify", "--json", "--keyring", tmp_path / "log.pub", tmp_path / "b.cbor")
    assert cli.returncode == 0 and cli.stdout == herald.verify(tmp_path / "b.cbor", keyring=tmp_path / "log.pub").to_json() + "\n"
    with pytest.raises(herald.BundleError):
        herald.unbundle(bytes(g))
    with pytest.raises(herald.BundleError):
        herald.bundle([])


def test_verification_releases_the_gil(keys):
    """Another Python thread keeps running while verify() checks a large set."""
    agent = keys["agent"]
    g = herald.genesis(agent, "root")
    envs = [g] + [g.reply(agent, i) for i in range(3000)]
    data = b"".join(bytes(e) for e in envs)
    ticks = 0
    stop = threading.Event()

    def spin():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        before = ticks
        start = time.perf_counter()
        report = herald.verify([data] * 3, keyring=keys["dir"])
        took = time.perf_counter() - start
        during = ticks - before
    finally:
        stop.set()
        t.join()
    assert report.summary.valid == 3001
    # Holding the GIL for the whole call would leave the spinner at most a
    # switch interval or two (5 ms each) of the call.
    assert took > 0.05, took
    assert during > 1000, (during, took)


def test_saved_public_key_is_labelled_as_keygen_labels_it(tmp_path, herald_bin):
    key = herald.SigningKey.generate()
    key.save(tmp_path / "erin.key")
    run_cli(herald_bin, "keygen", "-o", tmp_path / "cli", check=True)
    # The same shape as the CLI's: `<sigil> ed25519 <hex> <stem>`.
    ours = (tmp_path / "erin.pub").read_text().split()
    theirs = (tmp_path / "cli.pub").read_text().split()
    assert len(ours) == len(theirs) == 4
    assert ours[:3] == key.keyring_line().split() and ours[3] == "erin" and theirs[3] == "cli"
    # `herald verify` with that directory as keyring names the signer by it.
    env = tmp_path / "e.cbor"
    env.write_bytes(bytes(herald.genesis(key, "hi")))
    cli = run_cli(herald_bin, "verify", env, "--keyring", tmp_path / "erin.pub", check=True)
    assert "erin (sigil:" in cli.stdout, cli.stdout


def test_report_classes_print_their_contents(keys):
    env = herald.genesis(keys["agent"], ts=1_746_432_000, payload="hi")
    report = herald.verify(bytes(env), keyring=herald.Keyring(keys["dir"]), now=1_746_432_001)
    assert repr(report.summary) == "Summary(valid=1, partial=0, invalid=0)"
    trace = report.traces[0]
    assert repr(trace) == f"TraceVerdict({trace.trace}, valid=1, partial=0, invalid=0)"
    for obj in [report, report.summary, trace, *report.envelopes]:
        assert " object at 0x" not in repr(obj), repr(obj)
