#!/usr/bin/env bash
# Build, lint and test herald-py (issue 23) in one command:
#   herald-py/test.sh [PYTEST ARGS...]
# It makes its own venv (never installs globally), installs
# requirements-test.txt there, checks the crate's formatting and clippy,
# builds the `herald` CLI (the oracle the suites compare against) and the
# extension with `maturin develop --release`, checks the .pyi stubs against
# it (mypy stubtest), then runs pytest and the verify benchmark.
# Environment: PYTHON (default python3, >= 3.10), CARGO_TARGET_DIR (default
# the repository's target/), HERALD_PY_VENV (default
# $CARGO_TARGET_DIR/herald-py-venv).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
venv=${HERALD_PY_VENV:-$CARGO_TARGET_DIR/herald-py-venv}
python=${PYTHON:-python3}

step() { printf '+ %s\n' "$*"; "$@"; }

if [[ ! -x "$venv/bin/python" ]]; then
    step "$python" -m venv "$venv"
fi
step "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements-test.txt"

# The crate is its own workspace (excluded from the root one): lint it here.
step cargo fmt --manifest-path "$here/Cargo.toml" -- --check
step cargo clippy --manifest-path "$here/Cargo.toml" --all-targets -- -D warnings

# The CLI and the extension in the same (release) profile, so the
# benchmark compares like with like.
step cargo build --release -p herald-cli --manifest-path "$root/Cargo.toml"
(
    cd "$here"
    VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" step maturin develop --release --quiet
)

# The shipped type stubs match the extension (names, signatures, defaults).
step "$venv/bin/python" -m mypy.stubtest herald._native

export HERALD_BIN="$CARGO_TARGET_DIR/release/herald"
export HERALD_VECTORS="$root/vectors/conformance"
cd "$here"
step "$venv/bin/python" -m pytest -q tests "$@"

# Issue 23: Python's verify costs at most 1.2x the CLI's on one 10 000-envelope
# trace, both measured here (docs/performance.md).
step "$venv/bin/python" benches/verify_throughput.py "$HERALD_BIN"
