"""Benchmark: `herald.verify` against the loop a Python user would write
with PyNaCl (libsodium) instead, on the 10 000-envelope bench trace, in the
same run (docs/python.md *Performance*).

    python benches/verify_vs_pynacl.py [--rounds R] [--min-ratio X]
        [--trace FILE --keyring FILE --now N]

The peer is PyNaCl from PyPI (`pip install pynacl==1.6.2`; herald-py/test.sh
installs it beside the wheel). The trace is the whole-process benchmark's
shape (benches/src/bin/process.rs): one trace of 10 000 envelopes by three
signers, each answering an earlier one, 40-byte payloads, the five
attestations of the spec example, `to` and `expires`. It is built here with
the same keys, parents, timestamps and payloads; only the nonces differ
(random here, counted there), so every envelope has the byte length of its
twin. `--trace/--keyring/--now` verify the Rust bench's own files instead
(`HERALD_BENCH_DIR=DIR target/release/process 1` writes them; now =
1746442000).

Both sides check every origin signature and hash every body:
- herald: `herald.verify(path, keyring=..., now=...)`, the whole audit
  (file read, decode, ids, parents, replays, every signature, the report);
- PyNaCl: for each envelope, `hashlib.sha256(body(E, 0))` and
  `VerifyKey.verify(tag || body(E, 0), sig)`, over messages, signatures
  and keys extracted before the clock starts (the file read, the CBOR
  decoding and every check other than the signature are not timed on this
  side).

A third series, `herald.verify(...).to_json()`, adds writing the whole
`herald verify --json` document (not counted in the ratio: the loop
writes nothing either). Rounds alternate them (ABC then CBA, so none
always runs first);
medians, spread and the ratio of the wall-clock medians are printed, and
the CPU time of each (all threads): herald verifies on every core, the
loop on one, so on a machine shared with other work the wall-clock ratio
moves with the cores herald gets, the CPU-time ratio much less. Exits 1 when the
ratio PyNaCl / herald is below --min-ratio (default 0: report only).
"""

from __future__ import annotations

import argparse
import hashlib
import pathlib
import statistics
import sys
import tempfile
import time

import herald

try:
    import nacl.signing
except ImportError:  # pragma: no cover - a setup error, said plainly
    sys.exit("verify_vs_pynacl: PyNaCl is not installed: pip install pynacl==1.6.2")

N = 10_000
T0 = 1_746_432_000
WORDS = "the answer arrived already grateful and the conduit kept it "
ATTESTATIONS = [
    ("model", "claude-opus-4-7"),
    ("tools", ["search", "python"]),
    ("temperature", 0.7),
    ("confidence", 0.62),
    ("vibe", "the answer arrived already grateful"),
]
# The origin signature's domain-separation tag by kind (PROFILE P7).
ORIGIN_TAGS = {
    "message": b"herald.origin.v1",
    "posthumous_citation": b"herald.origin.v1",
    "birth": b"herald.birth.v1",
    "molt": b"herald.molt.v1",
    "deprecation": b"herald.deprecation.v1",
    "refusal": b"herald.refusal.v1",
    "duress": b"herald.duress.v1",
    "manifest": b"herald.manifest.v1",
}


def signer(n: int) -> herald.SigningKey:
    """The bench's signing key number n (benches/src/lib.rs `signer`)."""
    return herald.SigningKey.from_seed(bytes([(n + 1) & 0xFF]) * 32)


def make_trace(dir: pathlib.Path, n: int) -> tuple[pathlib.Path, pathlib.Path, int]:
    """The whole-process bench trace (`TraceSet::with_payload(n, 1, 3, 40)`)."""
    keys = [signer(i) for i in range(3)]
    to = signer(200).sigil
    payload = (WORDS * (40 // len(WORDS) + 1))[:40]
    mask = (1 << 64) - 1
    state = 0x2545_F491_4F6C_DD1D
    envs: list[herald.Envelope] = []
    for i in range(n):
        state ^= (state << 13) & mask
        state ^= state >> 7
        state ^= (state << 17) & mask
        key = keys[(state >> 32) % len(keys)]
        common = dict(to=to, ts=T0 + i, expires=T0 + i + 86_400, attestations=ATTESTATIONS)
        if envs:
            env = herald.reply(key, envs[state % len(envs)], payload, **common)
        else:
            env = herald.genesis(key, payload, **common)
        envs.append(env)
    trace = dir / "trace.cbor"
    trace.write_bytes(b"".join(bytes(e) for e in envs))
    keyring = dir / "keyring"
    keyring.write_text("".join(k.keyring_line() + "\n" for k in keys))
    return trace, keyring, T0 + n


# --- the PyNaCl side's inputs: a minimal reader of canonical CBOR (P1) ---


def head(buf: bytes, pos: int) -> tuple[int, int, int]:
    """(major type, argument, position after the head) of the item at pos."""
    ib = buf[pos]
    major, info = ib >> 5, ib & 0x1F
    if info < 24:
        return major, info, pos + 1
    size = {24: 1, 25: 2, 26: 4, 27: 8}[info]
    return major, int.from_bytes(buf[pos + 1 : pos + 1 + size], "big"), pos + 1 + size


def skip(buf: bytes, pos: int) -> int:
    """The end of the item at pos."""
    major, arg, pos = head(buf, pos)
    if major in (2, 3):
        return pos + arg
    if major == 4:
        for _ in range(arg):
            pos = skip(buf, pos)
    elif major == 5:
        for _ in range(2 * arg):
            pos = skip(buf, pos)
    elif major == 6:
        pos = skip(buf, pos)
    # Majors 0, 1 and 7 (integers, simple values, floats): the head is all.
    return pos


def map_entries(buf: bytes, pos: int) -> list[tuple[str, int, int, int]]:
    """(key, entry start, value start, entry end) of the map at pos, text keys."""
    major, count, pos = head(buf, pos)
    assert major == 5, "not a map"
    out = []
    for _ in range(count):
        start = pos
        kmajor, klen, kpos = head(buf, pos)
        assert kmajor == 3, "not a text key"
        vstart = kpos + klen
        pos = skip(buf, vstart)
        out.append((buf[kpos:vstart].decode(), start, vstart, pos))
    return out


def text_at(buf: bytes, pos: int) -> str:
    major, n, pos = head(buf, pos)
    assert major == 3
    return buf[pos : pos + n].decode()


def bytes_at(buf: bytes, pos: int) -> bytes:
    major, n, pos = head(buf, pos)
    assert major == 2
    return buf[pos : pos + n]


def origin_item(env: bytes) -> tuple[bytes, bytes, bytes, str, bytes]:
    """(body(E, 0), tag || body(E, 0), origin signature, from sigil, id) (P4, P5)."""
    entries = {k: (s, v, e) for k, s, v, e in map_entries(env, 0)}
    genesis = env[entries["parent"][1]] == 0xF6
    dropped = {"id"} | ({"trace"} if genesis else set())
    kept = [(k, s, v, e) for k, s, v, e in map_entries(env, 0) if k not in dropped]
    assert len(kept) < 24
    parts = [bytes([0xA0 + len(kept)])]
    for k, s, v, e in kept:
        parts.append(env[s:v] + (b"\x80" if k == "signatures" else env[v:e]))
    body = b"".join(parts)
    kind = text_at(env, entries["kind"][1]) if "kind" in entries else "message"
    first = head(env, entries["signatures"][1])[2]
    sig_map = {k: v for k, _, v, _ in map_entries(env, first)}
    return (
        body,
        ORIGIN_TAGS[kind] + body,
        bytes_at(env, sig_map["sig"]),
        text_at(env, entries["from"][1]),
        bytes_at(env, entries["id"][1]),
    )


def split_sequence(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        end = skip(data, pos)
        out.append(data[pos:end])
        pos = end
    return out


def pynacl_items(trace: pathlib.Path, keyring: pathlib.Path) -> list[tuple[bytes, bytes, bytes, object]]:
    keys = {}
    for line in keyring.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            sigil, alg, hexkey = line.split()[:3]
            assert alg == "ed25519"
            keys[sigil] = nacl.signing.VerifyKey(bytes.fromhex(hexkey))
    items = []
    for env in split_sequence(trace.read_bytes()):
        body, msg, sig, sender, id_ = origin_item(env)
        # The extraction is right: the body hashes to the id it carries.
        assert hashlib.sha256(body).digest() == id_, "body(E, 0) does not hash to the id"
        items.append((body, msg, sig, keys[sender]))
    return items


def pynacl_loop(items) -> int:
    sha256 = hashlib.sha256
    ok = 0
    for body, msg, sig, vk in items:
        sha256(body).digest()
        vk.verify(msg, sig)  # raises nacl.exceptions.BadSignatureError
        ok += 1
    return ok


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--envelopes", type=int, default=N)
    ap.add_argument("--min-ratio", type=float, default=0.0)
    ap.add_argument("--trace", type=pathlib.Path)
    ap.add_argument("--keyring", type=pathlib.Path)
    ap.add_argument("--now", type=int)
    args = ap.parse_args()
    if args.rounds < 5:
        ap.error("--rounds: at least 5 (medians of 5 or more)")
    with tempfile.TemporaryDirectory() as d:
        if args.trace:
            if not (args.keyring and args.now):
                ap.error("--trace needs --keyring and --now")
            trace, keyring, now = args.trace, args.keyring, args.now
        else:
            trace, keyring, now = make_trace(pathlib.Path(d), args.envelopes)
        keys = herald.Keyring(keyring)
        items = pynacl_items(trace, keyring)

        def run_herald() -> tuple[float, float]:
            t, c = time.perf_counter(), time.process_time()
            report = herald.verify(trace, keyring=keys, now=now)
            took = time.perf_counter() - t, time.process_time() - c
            assert report.ok and report.summary.valid == len(items), report
            return took

        def run_herald_json() -> tuple[float, float]:
            t, c = time.perf_counter(), time.process_time()
            herald.verify(trace, keyring=keys, now=now).to_json()
            return time.perf_counter() - t, time.process_time() - c

        def run_pynacl() -> tuple[float, float]:
            t, c = time.perf_counter(), time.process_time()
            ok = pynacl_loop(items)
            took = time.perf_counter() - t, time.process_time() - c
            assert ok == len(items)
            return took

        # One of each to warm caches and thread pools, not counted.
        run_herald()
        run_pynacl()
        h_times, n_times, j_times = [], [], []
        for r in range(args.rounds):
            if r % 2 == 0:
                h_times.append(run_herald())
                n_times.append(run_pynacl())
                j_times.append(run_herald_json())
            else:
                j_times.append(run_herald_json())
                n_times.append(run_pynacl())
                h_times.append(run_herald())
    wall = {k: [w for w, _ in v] for k, v in (("h", h_times), ("n", n_times), ("j", j_times))}
    cpu = {k: [c for _, c in v] for k, v in (("h", h_times), ("n", n_times), ("j", j_times))}
    med = {k: statistics.median(v) for k, v in wall.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    ratio = med["n"] / med["h"]
    per_round = sorted(n / h for h, n in zip(wall["h"], wall["n"]))
    ms = lambda v: " ".join(f"{x * 1000:.1f}" for x in v)  # noqa: E731
    print(f"verify {len(items)} envelopes (one trace, 3 signers, 40-byte payloads), {args.rounds} rounds alternating;")
    print("wall-clock median [min, max] and every round; CPU time (all threads) median:")
    for k, label in (("h", "herald.verify(path)          "), ("j", "herald.verify(path).to_json()"),
                     ("n", "PyNaCl sha256 + verify loop  ")):
        v = wall[k]
        print(f"  {label} {med[k] * 1000:7.1f} ms [{min(v) * 1000:.1f}, {max(v) * 1000:.1f}]  cpu {cmed[k] * 1000:7.1f} ms  all: {ms(v)}")
    print(f"  ratio PyNaCl / herald.verify: wall {ratio:.2f}x (per-round {per_round[0]:.2f}x to {per_round[-1]:.2f}x),"
          f" CPU time {cmed['n'] / cmed['h']:.2f}x"
          + (f"; minimum {args.min_ratio}x (wall)" if args.min_ratio else ""))
    return 0 if ratio >= args.min_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
