"""Shared fixtures: the `herald` CLI (the oracle the bindings are compared
with), the conformance vectors, fresh keys in a temp dir."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

import herald

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def herald_bin() -> str:
    path = os.environ.get("HERALD_BIN") or str(ROOT / "target" / "release" / "herald")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no herald binary at {path}: run herald-py/test.sh (it builds one)")
    return path


@pytest.fixture(scope="session")
def vectors() -> pathlib.Path:
    return pathlib.Path(os.environ.get("HERALD_VECTORS") or ROOT / "vectors" / "conformance")


@pytest.fixture(scope="session")
def manifest(vectors) -> dict:
    return json.loads((vectors / "manifest.json").read_text())


def run_cli(herald_bin: str, *args: str, check: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(
        [herald_bin, *map(str, args)], capture_output=True, text=True, timeout=120, check=check
    )


@pytest.fixture
def keys(tmp_path):
    """Two agent keys and a sandbox key, saved as NAME.key / NAME.pub in tmp_path/keys."""
    d = tmp_path / "keys"
    d.mkdir()
    out = {}
    for name in ("agent", "sandbox", "other"):
        k = herald.SigningKey.generate()
        k.save(d / f"{name}.key")
        out[name] = k
    out["dir"] = d
    return out
