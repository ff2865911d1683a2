// The official TypeScript SDK's MCP client over stdio, as Node.js hosts
// run a server: `node mcp-ts-client.cjs SDK_DIR COMMAND [ARGS...]`. Node
// (libuv) gives its children socket pairs, not pipes, for standard input
// and output. Calls `echo`, then prints one JSON line: the result, and
// what /proc says of the child's standard input and output meanwhile.
"use strict";
const fs = require("node:fs");
const [sdk, command, ...args] = process.argv.slice(2);
const { Client } = require(`${sdk}/dist/cjs/client/index.js`);
const { StdioClientTransport } = require(`${sdk}/dist/cjs/client/stdio.js`);

async function main() {
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client({ name: "herald-test", version: "1" });
  await client.connect(transport);
  const result = await client.callTool({
    name: "echo",
    arguments: { message: "over a socket pair" },
  });
  const fds = {};
  for (const fd of [0, 1]) {
    fds[fd] = {
      target: fs.readlinkSync(`/proc/${transport.pid}/fd/${fd}`),
      fdinfo: fs.readFileSync(`/proc/${transport.pid}/fdinfo/${fd}`, "utf8"),
    };
  }
  await client.close();
  console.log(JSON.stringify({ result, fds }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
