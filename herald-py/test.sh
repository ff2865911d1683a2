#!/usr/bin/env bash
# Build, lint and test herald-py (docs/python.md) in one command:
#   herald-py/test.sh [PYTEST ARGS...]
# It makes its own venv (never installs globally), installs
# requirements-test.txt there, checks the crate's formatting and clippy,
# builds the `herald` CLI (the oracle the suites compare against) and the
# extension with `maturin develop --release`, checks the .pyi stubs against
# it (mypy stubtest), then runs pytest and the verify benchmark.
# Environment: PYTHON (default python3, >= 3.10), CARGO_TARGET_DIR (default
# the repository's target/), HERALD_PY_VENV (default
# $CARGO_TARGET_DIR/herald-py-venv), HERALD_PY_PROFILE (release, the
# default, for benchmark figures; dev for a quicker build: both sides of
# the benchmark are then dev builds of the same code).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
venv=${HERALD_PY_VENV:-$CARGO_TARGET_DIR/herald-py-venv}
python=${PYTHON:-python3}
profile=${HERALD_PY_PROFILE:-release}
case "$profile" in
release) cargo_profile=(--release) bin_dir=release ;;
dev) cargo_profile=() bin_dir=debug ;;
*) echo "HERALD_PY_PROFILE must be release or dev, not $profile" >&2; exit 2 ;;
esac

step() { printf '+ %s\n' "$*"; "$@"; }

if [[ ! -x "$venv/bin/python" ]]; then
    step "$python" -m venv "$venv"
fi
step "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements-test.txt"

# The crate is its own workspace (excluded from the root one): lint it here.
step cargo fmt --manifest-path "$here/Cargo.toml" -- --check
step cargo clippy --manifest-path "$here/Cargo.toml" --all-targets -- -D warnings

# The CLI and the extension in the same profile, so the benchmark
# compares like with like.
step cargo build "${cargo_profile[@]}" -p herald-cli --manifest-path "$root/Cargo.toml"
(
    cd "$here"
    VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" step maturin develop "${cargo_profile[@]}" --quiet
)

# The shipped type stubs match the extension (names, signatures, defaults).
step "$venv/bin/python" -m mypy.stubtest herald._native

export HERALD_BIN="$CARGO_TARGET_DIR/$bin_dir/herald"
export HERALD_VECTORS="$root/vectors/conformance"
cd "$here"
step "$venv/bin/python" -m pytest -q tests "$@"

# The Python bindings' budget: Python's verify costs at most 1.2x the
# CLI's on one 10 000-envelope trace, both measured here
# (docs/performance.md).
step "$venv/bin/python" benches/verify_throughput.py "$HERALD_BIN"
