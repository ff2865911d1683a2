// The cost of in-process MCP signing per `tools/call`: the official SDK
// Client against server-everything over stdio, N `echo` calls with
// HeraldTransport (sign the request, record, sign + co-sign the result,
// record; an in-memory recorder, and a trace file synced per result) and
// N without it, alternating in rounds in one run; prints the medians per
// call and the difference.
//
//   node benches/js/mcp_overhead.mjs PACKAGE_DIR SERVER_EVERYTHING [CALLS] [ROUNDS]
//
// The SDK is the one installed beside server-everything (its dependency).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { realpathSync } from 'node:fs';

const [pkg, everything, callsArg, roundsArg] = process.argv.slice(2);
if (!everything) {
  console.error('usage: mcp_overhead.mjs PACKAGE_DIR SERVER_EVERYTHING [CALLS] [ROUNDS]');
  process.exit(2);
}
const calls = Number(callsArg ?? 200);
const rounds = Number(roundsArg ?? 5);
let modules = realpathSync(everything);
while (!modules.endsWith('/node_modules')) modules = dirname(modules);
const sdk = join(modules, '@modelcontextprotocol/sdk/dist/esm');
const { Client } = await import(pathToFileURL(join(sdk, 'client/index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, 'client/stdio.js')).href);
const url = (f) => pathToFileURL(join(resolve(pkg), f)).href;
const { SigningKey } = await import(url('index.js'));
const { HeraldTransport, memoryRecorder } = await import(url('mcp.js'));
const { traceFile } = await import(url('node.js'));

const agentKey = SigningKey.generate();
const sandboxKey = SigningKey.generate();
const dir = mkdtempSync(join(tmpdir(), 'herald-js-bench-'));

async function perCall(wrap) {
  const inner = new StdioClientTransport({ command: everything, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const recorder = wrap === 'file' ? traceFile(join(dir, `t-${Date.now()}-${Math.random()}.herald`)) : memoryRecorder();
  await client.connect(wrap ? new HeraldTransport(inner, { agentKey, sandboxKey, record: recorder.record }) : inner);
  for (let i = 0; i < 10; i += 1) await client.callTool({ name: 'echo', arguments: { message: `warm ${i}` } });
  const t = performance.now();
  for (let i = 0; i < calls; i += 1) await client.callTool({ name: 'echo', arguments: { message: `call ${i}` } });
  const ms = (performance.now() - t) / calls;
  await client.close();
  recorder.close?.();
  return ms;
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const plain = [];
const memory = [];
const file = [];
for (let r = 0; r < rounds; r += 1) {
  plain.push(await perCall(null));
  memory.push(await perCall('memory'));
  file.push(await perCall('file'));
}
rmSync(dir, { recursive: true, force: true });
const [p, m, f] = [median(plain), median(memory), median(file)];
console.log(`${calls} echo calls x ${rounds} rounds, node ${process.version}`);
console.log(`without signing:               ${(p * 1000).toFixed(0)} us/call`);
console.log(`HeraldTransport, memory:       ${(m * 1000).toFixed(0)} us/call (+${((m - p) * 1000).toFixed(0)} us)`);
console.log(`HeraldTransport, trace file:   ${(f * 1000).toFixed(0)} us/call (+${((f - p) * 1000).toFixed(0)} us, fdatasync per result)`);
