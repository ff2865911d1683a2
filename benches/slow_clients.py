#!/usr/bin/env python3
"""Slow and idle clients against a HERALD server (docs/conduit.md, *Limits
against slow and idle clients*; docs/performance.md, *Slow and idle
clients*).

    python3 benches/slow_clients.py HOST:PORT [CONNECTIONS] [SECONDS]

1. One request head trickled one byte a second: how long the server keeps
   the connection open.
2. CONNECTIONS attacking connections (default 1000; half send nothing,
   half trickle a head one byte a second), each reopened as soon as the
   server closes it, held for SECONDS (default 30); meanwhile a genuine
   `GET /healthz` on a new connection every 200 ms, 5 s timeout each:
   how many are answered, and the slowest answer.

Loopback only: it is a measurement of our own servers, not a tool.
"""
import resource
import selectors
import socket
import sys
import threading
import time


def trickle_open_time(addr, give_up=120.0):
    s = socket.create_connection(addr)
    s.settimeout(1.0)
    head = b"POST /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
    start = time.monotonic()
    i = 0
    while time.monotonic() - start < give_up:
        try:
            s.sendall(head[i:i + 1] if i < len(head) else b"a")
            i += 1
            s.recv(512)
            break  # closed (b"") or answered before closing
        except socket.timeout:
            continue
        except OSError:
            break
    s.close()
    return time.monotonic() - start


def genuine(addr, results, stop):
    while not stop.is_set():
        t = time.monotonic()
        try:
            s = socket.create_connection(addr, timeout=5.0)
            s.settimeout(5.0)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n"
                      % (addr[0].encode(), addr[1]))
            ok = s.recv(9).startswith(b"HTTP/1.1 ")
            s.close()
        except OSError:
            ok = False
        results.append((ok, time.monotonic() - t))
        time.sleep(0.2)


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    addr = (host, int(port))
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    print(f"trickled head kept open: {trickle_open_time(addr):.1f} s")

    sel = selectors.DefaultSelector()
    conns = {}

    def open_one(kind):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(addr)
        except BlockingIOError:
            pass
        sel.register(s, selectors.EVENT_READ, kind)
        conns[s] = kind

    for i in range(n):
        open_one("idle" if i % 2 == 0 else "trickle")
    results, stop = [], threading.Event()
    t = threading.Thread(target=genuine, args=(addr, results, stop))
    t.start()
    reopened = 0
    end = time.monotonic() + seconds
    next_byte = time.monotonic()
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(512)
            except OSError:
                data = b""
            if not data:
                kind = conns.pop(s)
                sel.unregister(s)
                s.close()
                open_one(kind)
                reopened += 1
        if time.monotonic() >= next_byte:
            next_byte += 1.0
            for s, kind in list(conns.items()):
                if kind == "trickle":
                    try:
                        s.send(b"G")
                    except OSError:
                        pass
    stop.set()
    t.join()
    answered = [d for ok, d in results if ok]
    print(f"{n} attacking connections held {seconds:.0f} s, {reopened} reopened after "
          f"the server closed them")
    print(f"genuine requests answered: {len(answered)} / {len(results)}; slowest "
          f"{max(answered) * 1000 if answered else float('nan'):.0f} ms")
    for s in conns:
        s.close()


if __name__ == "__main__":
    main()
