#!/usr/bin/env bash
# Build the npm package @herald-rs/core into DIR (default
# $CARGO_TARGET_DIR/herald-js-npm, else target/herald-js-npm): the crate
# compiled to wasm32-unknown-unknown (profile `wasm`: release, sized for the
# wire, the verification path still at opt-level 3), wasm-bindgen's ES module
# glue and declarations (`--target web`: one module for Node >= 20 and
# browsers), and the hand-written layer of herald-js/npm/. Pack it with
# `npm pack DIR`. Needs wasm-bindgen-cli of the exact wasm-bindgen version
# in Cargo.lock (.ci/run installs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=${CARGO_TARGET_DIR:-$PWD/target}
out=${1:-$target/herald-js-npm}
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
[[ "$have" == "$want" ]] || {
    echo "error: wasm-bindgen-cli $want is needed (found '${have:-none}'):" \
        "cargo install wasm-bindgen-cli --version $want" >&2
    exit 1
}
# Paths of this checkout and of the cargo registry remapped: the same
# toolchain and Cargo.lock give the same bytes on any machine (.ci/run
# checks the inspector's committed copy, herald-js/inspector.sh).
cargo_home=${CARGO_HOME:-$HOME/.cargo}
sep=$'\x1f'
export CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=$cargo_home=/cargo$sep--remap-path-prefix=$PWD=/herald"
cargo build -p herald-js --target wasm32-unknown-unknown --profile wasm --locked
rm -rf "$out"
mkdir -p "$out/wasm"
# Without the name and producers sections: function names cost 30 KiB
# gzipped of the 400 KiB the package may weigh (docs/javascript.md).
wasm-bindgen --target web --out-dir "$out/wasm" --out-name herald_js \
    --remove-name-section --remove-producers-section \
    "$target/wasm32-unknown-unknown/wasm/herald_js.wasm"
cp herald-js/npm/package.json herald-js/npm/*.js herald-js/npm/*.d.ts herald-js/npm/README.md \
    LICENSE-MIT LICENSE-APACHE "$out/"
echo "wrote $out ($(wc -c <"$out/wasm/herald_js_bg.wasm") bytes of wasm," \
    "$(gzip -9c "$out/wasm/herald_js_bg.wasm" | wc -c) gzipped)"
