#!/usr/bin/env bash
# The npm package @herald-rs/core as users get it (docs/javascript.md
# *Tests*): build it (herald-js/build.sh), `npm pack` it, install the
# tarball into a fresh temporary project with `npm install ./pkg.tgz`, and
# there run the Node test suite (node --test: conformance vectors, CLI
# round trips both ways, the MCP wrapper against server-everything, the
# guard) and `tsc --strict` on the packed declarations and on a typed use
# of the API with the official MCP SDK.
#
#   herald-js/test.sh HERALD_BIN
#
# HERALD_MCP_EVERYTHING names server-everything's entry point (.ci/run);
# without it the MCP tests skip, unless HERALD_TEST_ALL=1. The test
# project's own dependencies (typescript, the MCP SDK) are pinned here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
herald=$(realpath "${1:?usage: herald-js/test.sh HERALD_BIN}")
target=${CARGO_TARGET_DIR:-$PWD/target}
pkg_dir=$(realpath -m "$target/herald-js-npm")
bash herald-js/build.sh "$pkg_dir"
gz=$(gzip -9c "$pkg_dir/wasm/herald_js_bg.wasm" | wc -c)
((gz <= 400 * 1024)) || { echo "error: the .wasm is $gz bytes gzipped, over 400 KiB" >&2; exit 1; }
echo "herald_js_bg.wasm: $gz bytes gzipped (limit 409600)"

project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
tarball=$(cd "$project" && npm pack --silent "$pkg_dir")
mv "$project/$tarball" "$project/pkg.tgz"
cp herald-js/tests/*.mjs herald-js/tests/types.ts herald-js/tests/tsconfig.json "$project/"
cd "$project"
echo '{"name": "herald-js-consumer", "private": true, "type": "module"}' >package.json
timeout 600 npm install --no-audit --no-fund ./pkg.tgz \
    typescript@5.9.3 @modelcontextprotocol/sdk@1.32.2
node --version
HERALD_BIN=$herald HERALD_VECTORS=$OLDPWD/vectors/conformance \
    HERALD_PROFILE_FIXTURES=$OLDPWD/herald-cli/tests/fixtures/profile \
    node --test --test-reporter=spec ./*.test.mjs
# The packed declarations, checked on their own (not skipped as a
# library), then a strict typed use of them with the SDK.
npx tsc --strict --noEmit --target es2022 --module nodenext --moduleResolution nodenext \
    --lib es2022,esnext.disposable,dom node_modules/@herald-rs/core/*.d.ts
npx tsc -p tsconfig.json
echo "tsc --strict: the packed declarations and types.ts check"

# The README's npm example (README.md *Install*, the js block after
# "### JavaScript and TypeScript"), run as a user would paste it.
awk '/^### JavaScript and TypeScript/ { t = 1 } t && /^```js/ { c = 1; next } c && /^```/ { exit } c { print }' \
    "$OLDPWD/README.md" >readme-example.mjs
lines=$(wc -l <readme-example.mjs)
((lines > 0 && lines <= 10)) || { echo "error: the README's npm example has $lines lines (1 to 10)" >&2; exit 1; }
out=$(node readme-example.mjs)
[[ "$out" == "valid" ]] || { echo "error: the README's npm example printed '$out', not 'valid'" >&2; exit 1; }
echo "README npm example: $lines lines, prints valid"
