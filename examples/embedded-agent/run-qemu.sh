#!/usr/bin/env bash
# Build the embedded agent firmware and run it under QEMU (lm3s6965evb,
# Cortex-M3), semihosting on. Prints the firmware's output, including
#   key <64 hex>      its public key
#   sigil <sigil>     its sigil
#   reply <hex>       the reply it signed (P1 bytes)
# and exits with the firmware's status: 0 only when every check matched.
#
#   bash examples/embedded-agent/run-qemu.sh [--verify-only]
#
# Needs qemu-system-arm (Debian: apt-get install qemu-system-arm) and the
# thumbv7m-none-eabi target (rustup target add thumbv7m-none-eabi).
# QEMU_TIMEOUT (seconds, default 120) bounds the run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target=thumbv7m-none-eabi
features=()
if [[ "${1:-}" == "--verify-only" ]]; then
    features=(--no-default-features)
fi

command -v qemu-system-arm >/dev/null ||
    { echo "run-qemu.sh: qemu-system-arm not found (apt-get install qemu-system-arm)" >&2; exit 2; }

# The firmware is its own workspace; its own target directory unless the
# caller chose one.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
build_json=$(cargo build --manifest-path "$here/Cargo.toml" --config "$here/.cargo/config.toml" \
    --release --target "$target" \
    "${features[@]}" --message-format=json-render-diagnostics)
elf=$(printf '%s\n' "$build_json" | grep -o '"executable":"[^"]*"' | tail -n 1 |
    sed 's/^"executable":"//; s/"$//')
[[ -n "$elf" && -f "$elf" ]] || { echo "run-qemu.sh: cargo reported no firmware ELF" >&2; exit 2; }
echo "elf $elf" >&2

# -icount shift=0: one instruction is one nanosecond of virtual time, so the
# firmware's SysTick-based instruction counts do not depend on the host.
status=0
timeout "${QEMU_TIMEOUT:-120}" qemu-system-arm \
    -M lm3s6965evb -cpu cortex-m3 -nographic -monitor none -serial none \
    -icount shift=0 \
    -semihosting-config enable=on,target=native \
    -kernel "$elf" || status=$?
if ((status == 124)); then
    echo "run-qemu.sh: QEMU did not finish within ${QEMU_TIMEOUT:-120} s" >&2
fi
exit "$status"
