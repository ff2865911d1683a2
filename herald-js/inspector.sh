#!/usr/bin/env bash
# Build the inspector's verifier: the npm package @herald-rs/core
# (herald-js/build.sh, reproducible: paths remapped), whose wasm-bindgen
# module and ES module glue, herald_js_bg.wasm and herald_js.js, are
# copied to herald-cli/assets/inspector/ (or to DIR), where `herald inspect
# --serve` embeds them. One WebAssembly verifier for the package and the
# page. .ci/run rebuilds them and requires the committed copies to match:
# run this and commit the result after changing herald-core, herald-verify,
# herald-tlog or herald-js.
#
#   herald-js/inspector.sh [DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-herald-cli/assets/inspector}
target=${CARGO_TARGET_DIR:-$PWD/target}
pkg=$(realpath -m "$target/herald-js-npm")
bash herald-js/build.sh "$pkg"
mkdir -p "$out"
cp "$pkg/wasm/herald_js_bg.wasm" "$pkg/wasm/herald_js.js" "$out/"
echo "wrote $out/herald_js_bg.wasm and $out/herald_js.js"
