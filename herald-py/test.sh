#!/usr/bin/env bash
# Build, lint and test herald-py (docs/python.md) in one command:
#   herald-py/test.sh [PYTEST ARGS...]
# Stage "build": a build venv with maturin (requirements-build.txt), the
# crate's formatting and clippy, the `herald` CLI (the oracle the suites
# compare against) and the abi3 wheel (`maturin build --release`: one
# wheel, cp310-abi3, for every CPython >= 3.10).
# Stage "test": that wheel as users install it: a fresh venv, with no
# compiler on PATH (cc, gcc, clang, rustc, cargo, maturin hidden), `pip
# install "WHEEL[langchain]"` (the extra from the wheel), then
# requirements-test.txt; the .pyi stubs checked against the installed
# extension (mypy stubtest), pytest run from outside the source tree (the
# README's Python example among the suites), then the benchmarks: verify
# against the CLI (fails above 1.2x) and against PyNaCl (reported).
# HERALD_PY_ALSO: more interpreters (paths) the same wheel is installed
# into and tested with (the core suites). HERALD_PY_STAGES selects stages
# (default "build test").
# Environment: PYTHON (default python3, >= 3.10), CARGO_TARGET_DIR (default
# the repository's target/), HERALD_PY_VENV (the test venv, made afresh on
# every run; default $CARGO_TARGET_DIR/herald-py-venv), HERALD_PY_PROFILE
# (the wheel's: release, the default, or dev for a quicker build) and
# HERALD_PY_CLI_PROFILE (the CLI's, the suites' oracle; default the
# wheel's). The CLI budget is enforced when both are release, the PyNaCl
# comparison run when the wheel is.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
build_venv=$CARGO_TARGET_DIR/herald-py-build-venv
venv=${HERALD_PY_VENV:-$CARGO_TARGET_DIR/herald-py-venv}
dist=$CARGO_TARGET_DIR/herald-py-dist
python=${PYTHON:-python3}
profile=${HERALD_PY_PROFILE:-release}
cli_profile=${HERALD_PY_CLI_PROFILE:-$profile}
stages=${HERALD_PY_STAGES:-build test}
case "$profile" in
release) cargo_profile=(--release) ;;
dev) cargo_profile=() ;;
*) echo "HERALD_PY_PROFILE must be release or dev, not $profile" >&2; exit 2 ;;
esac
case "$cli_profile" in
release) cli_cargo_profile=(--release) bin_dir=release ;;
dev) cli_cargo_profile=() bin_dir=debug ;;
*) echo "HERALD_PY_CLI_PROFILE must be release or dev, not $cli_profile" >&2; exit 2 ;;
esac

step() { printf '+ %s\n' "$*"; "$@"; }

if [[ " $stages " == *" build "* ]]; then
    if [[ ! -x "$build_venv/bin/maturin" ]]; then
        step "$python" -m venv "$build_venv"
    fi
    step "$build_venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements-build.txt"

    # The crate is its own workspace (excluded from the root one): lint it here.
    step cargo fmt --manifest-path "$here/Cargo.toml" -- --check
    step cargo clippy --manifest-path "$here/Cargo.toml" --all-targets -- -D warnings

    # The CLI (in the wheel's profile unless HERALD_PY_CLI_PROFILE says
    # otherwise, so the benchmark compares like with like).
    # --workspace: the features the workspace's own build resolves, so a dev
    # build reuses what `cargo test --workspace` built (`-p herald-cli`
    # resolves other features and rebuilds every crate of the workspace).
    step cargo build "${cli_cargo_profile[@]}" --workspace --bin herald --manifest-path "$root/Cargo.toml"
    rm -rf "$dist"
    (
        cd "$here"
        step "$build_venv/bin/maturin" build "${cargo_profile[@]}" --quiet --interpreter "$build_venv/bin/python" --out "$dist"
    )
fi

if [[ " $stages " == *" test "* ]]; then
    wheels=("$dist"/herald_rs-*-cp310-abi3-*.whl)
    [[ ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]] ||
        { echo "expected one cp310-abi3 wheel in $dist, found: ${wheels[*]}" >&2; exit 1; }
    wheel=${wheels[0]}

    # A PATH without a compiler: a directory of symlinks to everything on
    # PATH but C and Rust toolchains (so nothing the wheel or its
    # dependencies need may be compiled), the test venv's bin first.
    nocc=$(mktemp -d)
    trap 'rm -rf "$nocc"' EXIT
    mkdir "$nocc/bin"
    IFS=: read -r -a path_dirs <<<"$PATH"
    for dir in "${path_dirs[@]}"; do
        [[ -d "$dir" ]] || continue
        for exe in "$dir"/*; do
            name=${exe##*/}
            case "$name" in
            cc | c++ | c89 | c99 | cpp | gcc | gcc-* | g++ | g++-* | *-gcc | *-gcc-* | *-g++ | *-g++-* | \
                clang | clang-* | clang++ | clang++-* | tcc | ld | ld.* | *-ld | \
                rustc | rustdoc | rustup | cargo | cargo-* | maturin) continue ;;
            esac
            if [[ -x "$exe" && ! -e "$nocc/bin/$name" ]]; then
                ln -s "$exe" "$nocc/bin/$name"
            fi
        done
    done
    restricted=(env -u PYTHONPATH PATH="$venv/bin:$nocc/bin" VIRTUAL_ENV="$venv")
    for tool in cc gcc rustc cargo; do
        if "${restricted[@]}" sh -c "command -v $tool" >/dev/null; then
            echo "the wheel test's PATH still has $tool" >&2
            exit 1
        fi
    done

    # A fresh venv on every run; the wheel with its LangChain extra first,
    # from the wheel file (the extra's packages must come with it), then
    # the test tools. --no-compile: no byte-compiling of every installed
    # module at install time (about 1 GB with crewai's dependencies);
    # Python compiles what the suites import, when they import it.
    rm -rf "$venv"
    step "$python" -m venv "$venv"
    pip=("${restricted[@]}" "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary :all: --no-compile)
    step "${pip[@]}" "$wheel[langchain]"
    step "${restricted[@]}" "$venv/bin/python" -c 'import herald, langchain_core, herald.langchain'
    step "${pip[@]}" -r "$here/requirements-test.txt"

    export HERALD_BIN="$CARGO_TARGET_DIR/$bin_dir/herald"
    export HERALD_VECTORS="$root/vectors/conformance"
    export HERALD_PY_WHEEL="$wheel"
    # Outside the source tree, so only the installed package can be imported.
    cd "$nocc"
    # The shipped type stubs match the extension (names, signatures, defaults).
    step "${restricted[@]}" python -m mypy.stubtest herald._native
    step "${restricted[@]}" python -m pytest -q -p no:cacheprovider "$here/tests" "$@"

    # The Python bindings' budget: Python's verify costs at most 1.2x the
    # CLI's on one 10 000-envelope trace, both measured here
    # (docs/performance.md). Enforced when both are release builds;
    # otherwise the two sides are not built alike (and in a dev build the
    # extension's herald crates are optimised dependencies of its own
    # workspace, profile.dev.package."*", the CLI's unoptimised members),
    # so the ratio is reported, not compared.
    if [[ "$profile" == release && "$cli_profile" == release ]]; then
        step "${restricted[@]}" python "$here/benches/verify_throughput.py" "$HERALD_BIN"
    else
        step "${restricted[@]}" python "$here/benches/verify_throughput.py" "$HERALD_BIN" --max-ratio inf
    fi
    # Against what a Python user would write instead (PyNaCl, libsodium):
    # reported, not enforced (docs/python.md *Performance*). Only a release
    # build says anything against libsodium's optimised C.
    if [[ "$profile" == release ]]; then
        step "${restricted[@]}" python "$here/benches/verify_vs_pynacl.py" --rounds 5
    else
        echo "verify_vs_pynacl.py not run: a $profile build says nothing against libsodium (HERALD_PY_PROFILE=release)"
    fi

    # The same wheel on other CPythons (HERALD_PY_ALSO: interpreters, e.g.
    # the abi3 floor 3.10 and the newest): each in a fresh venv without a
    # compiler, the wheel alone, then the core suites and the README example.
    for other in ${HERALD_PY_ALSO:-}; do
        other_venv=$(mktemp -d)/venv
        step "$other" -m venv "$other_venv"
        step env -u PYTHONPATH PATH="$other_venv/bin:$nocc/bin" VIRTUAL_ENV="$other_venv" \
            "$other_venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary :all: --no-compile \
            "$wheel" "$(grep '^pytest==' "$here/requirements-test.txt")"
        step env -u PYTHONPATH PATH="$other_venv/bin:$nocc/bin" VIRTUAL_ENV="$other_venv" \
            python -m pytest -q -p no:cacheprovider "$here/tests/test_core.py" \
            "$here/tests/test_conformance.py" "$here/tests/test_readme.py" \
            "$here/tests/test_wheel.py::test_wheel_is_what_is_imported" \
            "$here/tests/test_wheel.py::test_no_compiler_on_path"
        rm -rf "$(dirname "$other_venv")"
    done
fi
