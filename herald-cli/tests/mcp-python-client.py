"""The official MCP Python SDK client (`mcp` from PyPI) through
`herald mcp proxy` in front of server-everything (docs/mcp.md *How it is
tested*). Run by
.ci/run in its own step:

    python mcp-python-client.py HERALD_BIN SERVER_EVERYTHING_BIN

It lists tools, calls several (one streaming progress, one cancelled
mid-way), checks the results and the herald/ ids in _meta, then that
`herald verify` finds the session's trace valid. Then the same over
streamable HTTP downstream (--listen), with the server a child and with
the server itself speaking streamable HTTP (--upstream URL). Exit status 0 only when
every check passed; the last line is "N passed, N failed".
"""

import json
import os
import socket
import subprocess
import sys
import tempfile

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

HERALD, SERVER = sys.argv[1], sys.argv[2]
RESULTS = []


def check(name, ok, detail=""):
    RESULTS.append(bool(ok))
    print(("ok    " if ok else "FAIL  ") + name + ("" if ok else ": " + str(detail)))


async def long_running(s):
    """A 4-step operation with a progress callback: the steps seen, the result."""
    steps = []

    async def on_progress(progress, total, message):
        steps.append(progress)

    r = await s.call_tool("trigger-long-running-operation", {"duration": 0.4, "steps": 4},
                          progress_callback=on_progress)
    return steps, r


async def session(tmp):
    params = StdioServerParameters(
        command=HERALD,
        args=["mcp", "proxy", "--key", "agent.key", "--sandbox-key", "tool.key",
              "--trace", "py.herald", "--", "node", SERVER],
        cwd=tmp,
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            tools = await s.list_tools()
            names = [t.name for t in tools.tools]
            check("tools/list through the proxy", "echo" in names and "get-sum" in names, names)

            r = await s.call_tool("echo", {"message": "from python"})
            meta = r.meta or {}
            check("echo result", r.content[0].text == "Echo: from python", r)
            check("herald ids in result._meta",
                  all(k in meta for k in ("herald/id", "herald/request", "herald/trace", "herald/envelope")),
                  meta)

            r = await s.call_tool("get-sum", {"a": 40, "b": 2})
            check("get-sum result", "42" in r.content[0].text, r)

            steps, r = await long_running(s)
            check("progress passed through", steps == [1, 2, 3, 4], steps)
            check("long-running result", "completed" in r.content[0].text, r)

            # Cancelled mid-way: the SDK sends notifications/cancelled when
            # the waiting task is cancelled.
            with anyio.move_on_after(0.5):
                await s.call_tool("trigger-long-running-operation", {"duration": 3, "steps": 3})
            await anyio.sleep(0.3)
            r = await s.call_tool("echo", {"message": "after cancel"})
            check("session usable after a cancellation", r.content[0].text == "Echo: after cancel", r)


async def http_session(url, what="http"):
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as s:
            await s.initialize()
            tools = await s.list_tools()
            check(f"{what}: tools/list", "echo" in [t.name for t in tools.tools], tools)
            r = await s.call_tool("echo", {"message": "over http"})
            meta = r.meta or {}
            check(f"{what}: echo result with herald ids",
                  r.content[0].text == "Echo: over http" and "herald/id" in meta, r)
            steps, r = await long_running(s)
            check(f"{what}: progress on the request's stream", steps == [1, 2, 3, 4], steps)


def verify(tmp, trace, what):
    out = subprocess.run(
        [HERALD, "verify", "--json", "--keyring", "agent.pub", "--keyring", "tool.pub", trace],
        cwd=tmp, capture_output=True, text=True)
    summary = json.loads(out.stdout)["summary"]
    check(f"herald verify: the {what} trace is valid", out.returncode == 0 and summary["invalid"] == 0
          and summary["partial"] == 0 and summary["valid"] > 0, summary)


def main():
    tmp = tempfile.mkdtemp()
    for name in ("agent", "tool"):
        subprocess.run([HERALD, "keygen", "-o", name], cwd=tmp, check=True, capture_output=True)
    anyio.run(session, tmp)
    verify(tmp, "py.herald", "stdio session's")
    inspected = subprocess.run([HERALD, "inspect", "--json", "py.herald"], cwd=tmp,
                               capture_output=True, text=True).stdout
    check("the cancellation is in the trace", '"mcp":"cancelled"' in inspected)

    # Streamable HTTP downstream: the same proxy with --listen.
    proc = subprocess.Popen(
        [HERALD, "mcp", "proxy", "--key", "agent.key", "--sandbox-key", "tool.key",
         "--trace", "http.herald", "--listen", "127.0.0.1:0", "--", "node", SERVER],
        cwd=tmp, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        check("http: listening line", line.startswith("listening on http://127.0.0.1:"), line)
        anyio.run(http_session, line.removeprefix("listening on "))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    verify(tmp, "http.herald", "HTTP session's")

    # Streamable HTTP on both sides: server-everything in its HTTP mode on a
    # free loopback port (node-loopback.cjs holds its listen to 127.0.0.1).
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, PORT=str(port), NODE_OPTIONS="--require=" + os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "node-loopback.cjs"))
    server = subprocess.Popen(["node", SERVER, "streamableHttp"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    proc = None
    try:
        for line in server.stderr:
            if "listening on port" in line:
                break
        proc = subprocess.Popen(
            [HERALD, "mcp", "proxy", "--key", "agent.key", "--sandbox-key", "tool.key",
             "--trace", "up.herald", "--listen", "127.0.0.1:0",
             "--upstream", f"http://127.0.0.1:{port}/mcp"],
            cwd=tmp, stdout=subprocess.PIPE, text=True)
        line = proc.stdout.readline().strip()
        anyio.run(http_session, line.removeprefix("listening on "), "http upstream")
    finally:
        for p in (proc, server):
            if p:
                p.terminate()
                p.wait(timeout=30)
    verify(tmp, "up.herald", "HTTP upstream session's")
    passed, failed = RESULTS.count(True), RESULTS.count(False)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


main()
