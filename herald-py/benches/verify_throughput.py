"""Benchmark (docs/python.md *Performance*): verify throughput from Python
against the `herald` CLI on the same 10 000-envelope trace, in the same run.

    python benches/verify_throughput.py HERALD_BIN [--envelopes N] [--rounds R] [--max-ratio X]

Both sides do the same work: read the trace file, audit it (every
signature, parents, replays), and produce the `verify --json` report
(the CLI writes it to /dev/null; Python builds the typed Report and its
JSON). The CLI is timed as a whole process (its start-up included, as a
user pays it); Python in-process, as a library user calls it. Rounds
alternate the two; the medians are compared. Exits 1 when Python costs
more than --max-ratio (default 1.2) times the CLI. A third timing, Python
in a fresh interpreter process (start-up and import included), is printed
for comparison with the CLI's whole process.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import herald

NOW = 1_800_000_000


def make_trace(dir: pathlib.Path, n: int) -> tuple[pathlib.Path, pathlib.Path]:
    key = herald.SigningKey.from_seed(bytes(range(32)))
    g = herald.genesis(key, {"bench": "root"}, ts=NOW - 60)
    envs = [g]
    parent = g
    for i in range(n - 1):
        parent = herald.reply(key, parent, {"i": i, "text": "x" * 64}, ts=NOW - 30,
                              attestations={"model": "bench-model", "temperature": 0.5})
        envs.append(parent)
    trace = dir / "trace.herald"
    trace.write_bytes(b"".join(bytes(e) for e in envs))
    keyring = dir / "bench.pub"
    keyring.write_text(key.keyring_line() + "\n")
    return trace, keyring


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("herald_bin")
    ap.add_argument("--envelopes", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--max-ratio", type=float, default=1.2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        trace, keyring = make_trace(pathlib.Path(d), args.envelopes)
        cli_cmd = [args.herald_bin, "verify", "--json", "--now", str(NOW), "--keyring", str(keyring), str(trace)]
        keys = herald.Keyring(keyring)
        # Warm both (page cache, thread pools) and check they agree.
        cli = subprocess.run(cli_cmd, capture_output=True, text=True, check=True)
        report = herald.verify(trace, keyring=keys, now=NOW)
        assert report.ok and report.summary.valid == args.envelopes
        assert report.to_json() + "\n" == cli.stdout, "Python and CLI reports differ"
        fresh_cmd = [
            sys.executable, "-c",
            "import sys, herald; herald.verify(sys.argv[1], keyring=sys.argv[2], now=int(sys.argv[3])).to_json()",
            str(trace), str(keyring), str(NOW),
        ]
        cli_times, py_times, fresh_times = [], [], []
        for _ in range(args.rounds):
            t = time.perf_counter()
            subprocess.run(fresh_cmd, check=True)
            fresh_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run(cli_cmd, stdout=subprocess.DEVNULL, check=True)
            cli_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            herald.verify(trace, keyring=keys, now=NOW).to_json()
            py_times.append(time.perf_counter() - t)
    cli_s, py_s = statistics.median(cli_times), statistics.median(py_times)
    fresh_s = statistics.median(fresh_times)
    ratio = py_s / cli_s
    print(f"verify {args.envelopes} envelopes, median of {args.rounds} rounds:")
    print(f"  herald verify --json (CLI process): {cli_s * 1000:8.1f} ms  {args.envelopes / cli_s:10.0f} envelopes/s")
    print(f"  herald.verify() (Python, in-process): {py_s * 1000:6.1f} ms  {args.envelopes / py_s:10.0f} envelopes/s")
    print(f"  python -c 'herald.verify(...)' (fresh interpreter): {fresh_s * 1000:6.1f} ms  {args.envelopes / fresh_s:10.0f} envelopes/s")
    print(f"  ratio Python / CLI: {ratio:.3f} (limit {args.max_ratio}); fresh interpreter / CLI: {fresh_s / cli_s:.3f}")
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
