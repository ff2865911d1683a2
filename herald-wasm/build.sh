#!/usr/bin/env bash
# Build the inspector's WebAssembly verifier and copy it to
# herald-cli/assets/inspector/herald_wasm.wasm (or to $1), where
# `herald inspect --serve` embeds it.
#
# Reproducible: paths of this checkout and of the cargo registry are
# remapped, so the same toolchain and Cargo.lock give the same bytes on any
# machine; .ci/run rebuilds it and requires the committed copy to match.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-herald-cli/assets/inspector/herald_wasm.wasm}
cargo_home=${CARGO_HOME:-$HOME/.cargo}
sep=$'\x1f'
export CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=$cargo_home=/cargo$sep--remap-path-prefix=$PWD=/herald"
cargo build -p herald-wasm --target wasm32-unknown-unknown --release --locked
cp "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/herald_wasm.wasm" "$out"
echo "wrote $out ($(wc -c <"$out") bytes)"
