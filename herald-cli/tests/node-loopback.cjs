// Preloaded (NODE_OPTIONS=--require=THIS) into a Node MCP server that a test
// starts: server-everything's streamable HTTP mode calls `listen(PORT)`,
// which binds every interface; this makes a listen given a port and no host
// bind 127.0.0.1 instead, so a test's server is reachable on loopback only.
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const numeric =
    typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (numeric && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
