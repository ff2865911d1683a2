"""The conformance vectors (vectors/conformance/manifest.json) through the
Python bindings, case by case against the `herald` CLI and the manifest:
the verify and bundle reports are byte for byte `herald verify --json`, the
proof verdicts those of `herald log verify-proof`, and every verdict the
manifest's."""

from __future__ import annotations

import json

import pytest

import herald
from conftest import run_cli


def cases(manifest, *types):
    return [c for c in manifest["cases"] if c["type"] in types]


def key_files(vectors, manifest, names):
    files = {k["name"]: vectors / k["keyring_file"] for k in manifest["keys"]}
    return [files[n] for n in names]


def test_every_case_type_is_covered(manifest):
    # The types this suite compares; `sigil` and `receive` (live reception)
    # have no Python surface beyond what verify and SigningKey cover.
    compared = {"verify", "bundle", "proof", "cbor", "keyring"}
    types = {c["type"] for c in manifest["cases"]}
    assert compared <= types, types
    assert len(cases(manifest, *compared)) >= 140


def test_verify_and_bundle_reports_equal_the_cli(herald_bin, vectors, manifest):
    checked = 0
    for case in cases(manifest, "verify", "bundle"):
        name = case["name"]
        inputs = [vectors / p for p in case.get("inputs", [case["input"]])]
        keyrings = key_files(vectors, manifest, case["keyring"])
        args = ["verify", "--json", "--now", str(case["now"])]
        for k in keyrings:
            args += ["--keyring", k]
        for scope in case.get("required_scopes", []):
            args += ["--require", scope]
        cli = run_cli(herald_bin, *args, *inputs)
        assert cli.returncode in (0, 1), (name, cli.stderr)

        report = herald.verify(
            inputs if len(inputs) > 1 else inputs[0],
            keyring=keyrings,
            now=case["now"],
            require=case.get("required_scopes", []),
            skew=case.get("skew"),
        )
        # Byte for byte the CLI's document, and the same exit verdict.
        assert report.to_json() + "\n" == cli.stdout, name
        assert report.ok == (cli.returncode == 0), name

        # The typed report says what the JSON says, and what the manifest expects.
        expect = case["expect"]
        want_envelopes = expect["envelopes"] if isinstance(expect, dict) else expect
        assert len(report.envelopes) == len(want_envelopes), name
        for got, want in zip(report.envelopes, want_envelopes):
            assert got.status == want["status"], (name, got)
            # The manifest lists reasons as a set (sorted by code).
            got_reasons = sorted((r.code, r.index) for r in got.reasons)
            want_reasons = sorted((w["code"], w.get("index")) for w in want["reasons"])
            assert [c for c, _ in got_reasons] == [c for c, _ in want_reasons], (name, got)
            for (_, gi), (_, wi) in zip(got_reasons, want_reasons):
                if wi is not None:
                    assert gi == wi, (name, got)
        if isinstance(expect, dict) and "proofs" in expect:
            assert [p.status == "valid" for p in report.proofs] == [p["valid"] for p in expect["proofs"]]
        doc = json.loads(cli.stdout)
        assert [e["status"] for e in doc["envelopes"]] == [e.status for e in report.envelopes]
        checked += 1
    assert checked == len(cases(manifest, "verify", "bundle"))


def test_verify_accepts_bytes_envelopes_and_paths_alike(vectors, manifest):
    case = next(c for c in cases(manifest, "verify") if c["name"] == "genesis")
    path = vectors / case["input"]
    keyring = herald.Keyring(*key_files(vectors, manifest, case["keyring"]))
    by_path = herald.verify(path, keyring=keyring, now=case["now"])
    by_str = herald.verify(str(path), keyring=keyring, now=case["now"])
    by_bytes = herald.verify(path.read_bytes(), keyring=keyring, now=case["now"])
    by_env = herald.verify([herald.Envelope(path.read_bytes())], keyring=keyring, now=case["now"])
    assert by_path.to_json() == by_str.to_json() == by_bytes.to_json() == by_env.to_json()
    assert by_path.ok


def test_proof_verdicts_equal_the_cli(herald_bin, vectors, manifest):
    for case in cases(manifest, "proof"):
        name = case["name"]
        keyring_files = key_files(vectors, manifest, case["keyring"])
        proof = (vectors / case["input"]).read_bytes()
        args = ["log", "verify-proof", vectors / case["input"]]
        for k in keyring_files:
            args += ["--keyring", k]
        envelope = None
        if case.get("envelope"):
            args += ["--envelope", vectors / case["envelope"]]
            envelope = herald.Envelope((vectors / case["envelope"]).read_bytes())
        cli = run_cli(herald_bin, *args)
        assert cli.returncode in (0, 1), (name, cli.stderr)
        try:
            info = herald.verify_proof(proof, keyring=herald.Keyring(*keyring_files), envelope=envelope)
            ok, code = True, None
            assert info["kind"] == case["object"], name
        except herald.ProofError as e:
            ok, code = False, e.code
        assert ok == (cli.returncode == 0), (name, code, cli.stdout)
        assert ok == case["expect"]["valid"], (name, code)
        if not ok:
            assert code == case["expect"]["error"], (name, code)


def test_cbor_cases_decode_as_the_manifest_says(vectors, manifest):
    for case in cases(manifest, "cbor"):
        data = (vectors / case["input"]).read_bytes()
        expect = case["expect"]
        if expect["accept"]:
            value = herald.decode(data)
            # Any accepted input re-encodes to identical bytes (P1).
            assert herald.encode(value) == data, case["name"]
        else:
            with pytest.raises(herald.DecodeError) as e:
                herald.decode(data)
            assert e.value.rule == expect["rule"], case["name"]
            assert e.value.offset == expect["offset"], case["name"]


def test_keyring_cases_load_as_the_manifest_says(vectors, manifest):
    for case in cases(manifest, "keyring"):
        path = vectors / case["input"]
        expect = case["expect"]
        if expect["valid"]:
            assert herald.Keyring().load(path) == expect["keys"], case["name"]
        else:
            with pytest.raises(herald.KeyringError) as e:
                herald.Keyring(path)
            assert f"{path}:{expect['line']}:" in str(e.value), (case["name"], str(e.value))
