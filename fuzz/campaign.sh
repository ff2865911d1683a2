#!/usr/bin/env bash
# Run libFuzzer on each named target until its process has used CPU_SECONDS
# of CPU time (user + system, read from /proc), then stop it with SIGINT so
# libFuzzer prints its final stats. Counting CPU rather than wall time keeps
# the record honest on a shared machine: a target that waits for the CPU is
# not credited for waiting. One target at a time, one process each.
#
#   fuzz/campaign.sh CPU_SECONDS LOG_DIR TARGET...
#
# MAX_LEN overrides the input cap; SEEDS names one more (read-only) seed
# directory, e.g. the many-signature envelopes of docs/fuzzing.md.
#
# Every target runs with -rss_limit_mb=256: its inputs are at most 8 KiB
# (or MAX_LEN from the environment), and the memory bound holds every path to
# 2 x input + 64 MiB, so a target that reaches 256 MB has blown up.
#
# New inputs go to a scratch corpus (/tmp/fzw/TARGET); the committed corpus
# is read second, read-only, so a run never bloats corpus/. Merge and
# minimise afterwards as docs/fuzzing.md says. Needs nightly and cargo-fuzz.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
cpu_limit=$1
logs=$2
shift 2
mkdir -p "$logs"
ticks=$(getconf CLK_TCK)

cpu_of() { # user + system seconds of pid $1, or nothing once it is gone
    awk -v t="$ticks" '{ print int(($14 + $15) / t) }' "/proc/$1/stat" 2>/dev/null || true
}

for t in "$@"; do
    max_len=4096
    case $t in trace_audit | sequence_split | bundle_verify | log_file) max_len=8192 ;; esac
    max_len=${MAX_LEN:-$max_len}
    mkdir -p "/tmp/fzw/$t" "artifacts/$t"
    cargo +nightly fuzz build -s none "$t"
    bin=target/x86_64-unknown-linux-gnu/release/$t
    start=$(date -u +%FT%TZ)
    "$bin" "/tmp/fzw/$t" "corpus/$t" ${SEEDS:+"$SEEDS"} -timeout=10 -max_len=$max_len \
        -rss_limit_mb=256 -malloc_limit_mb=256 \
        -print_final_stats=1 -artifact_prefix="artifacts/$t/" \
        >"$logs/$t.log" 2>&1 &
    pid=$!
    used=0
    while kill -0 "$pid" 2>/dev/null; do
        c=$(cpu_of "$pid")
        [[ -n "$c" ]] && used=$c
        if ((used >= cpu_limit)); then
            kill -INT "$pid" 2>/dev/null || true
            break
        fi
        sleep 5
    done
    rc=0
    wait "$pid" || rc=$?
    echo "$t start=$start end=$(date -u +%FT%TZ) cpu_s=$used exit=$rc" | tee -a "$logs/summary.txt"
done
