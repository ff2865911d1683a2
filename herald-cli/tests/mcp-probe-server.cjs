// A minimal MCP server (stdio) for tests/mcp_release_order.rs. On each
// tools/call it looks in the trace file named by $PROBE_TRACE for the
// request envelope the wrapper put in params._meta["herald/envelope"], and
// answers whether it was there: what the server saw of the trace at the
// moment the call reached it (docs/mcp.md, *Release order*).
"use strict";
const fs = require("node:fs");
const readline = require("node:readline");

const trace = process.env.PROBE_TRACE;
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const answer = (id, result) => send({ jsonrpc: "2.0", id, result });

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined || m.method === undefined) {
    return; // notifications
  }
  switch (m.method) {
    case "initialize":
      return answer(m.id, {
        protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "probe", version: "1" },
      });
    case "tools/list":
      return answer(m.id, {
        tools: [
          {
            name: "probe",
            description: "whether the call's request envelope is in the trace file",
            inputSchema: { type: "object" },
          },
        ],
      });
    case "tools/call": {
      const meta = (m.params && m.params._meta) || {};
      const envelope = Buffer.from(meta["herald/envelope"] || "", "base64");
      const file = fs.readFileSync(trace);
      const found = envelope.length > 0 && file.indexOf(envelope) >= 0;
      return answer(m.id, {
        content: [{ type: "text", text: found ? "in the trace file" : "not in the trace file" }],
        isError: false,
      });
    }
    default:
      return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no such method" } });
  }
});
