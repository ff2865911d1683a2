// The in-process MCP wrapper (@herald-rs/core/mcp) around the official SDK
// Client, against @modelcontextprotocol/server-everything: the trace it
// records is what `herald mcp proxy` records (birth, genesis, request,
// sandboxed result; same payloads and `_meta` keys), `herald verify`
// accepts it, `herald mcp guard` admits its calls, and a tampered call is
// refused by the guard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { SigningKey, Envelope, splitSequence } from '@herald-rs/core';
import { HeraldTransport, META } from '@herald-rs/core/mcp';
import { traceFile } from '@herald-rs/core/node';
import { needs, herald, tempDir } from './support.mjs';

/** The envelopes of a trace file. */
const envelopes = (bytes) => splitSequence(bytes).map((b) => Envelope.decode(b));

async function session(t, command, args, dir, calls) {
  const agentKey = SigningKey.generate();
  const sandboxKey = SigningKey.generate();
  const recorder = traceFile(join(dir, 'session.herald'));
  t.after(() => recorder.close());
  const inner = new StdioClientTransport({ command, args, stderr: 'ignore' });
  const transport = new HeraldTransport(inner, { agentKey, sandboxKey, record: recorder.record });
  const client = new Client({ name: 'herald-js-test', version: '1.0.0' });
  await client.connect(transport);
  const results = [];
  for (const [name, args] of calls) results.push(await client.callTool({ name, arguments: args }));
  await client.close();
  return { agentKey, sandboxKey, results, transport };
}

test('an SDK client session signed in process verifies with herald verify', async (t) => {
  const everything = needs(t, 'HERALD_MCP_EVERYTHING', 'node and @modelcontextprotocol/server-everything');
  const bin = needs(t, 'HERALD_BIN', 'the herald CLI');
  if (!everything || !bin) return;
  const dir = tempDir(t);
  const { agentKey, sandboxKey, results, transport } = await session(t, everything, [], dir, [
    ['echo', { message: 'hi there' }],
    ['get-sum', { a: 2, b: 2.5 }],
  ]);
  assert.equal(results[0].content[0].text, 'Echo: hi there');
  assert.ok(!results[1].isError);
  for (const r of results) {
    for (const k of [META.id, META.trace, META.request, META.envelope]) assert.ok(r._meta?.[k], `result _meta has ${k}`);
    assert.equal(r._meta[META.trace], transport.trace);
  }

  const bytes = new Uint8Array(readFileSync(join(dir, 'session.herald')));
  const trace = envelopes(bytes);
  // birth, genesis, then a request and its result per call.
  assert.deepEqual(trace.map((e) => e.kind), ['birth', 'message', 'message', 'message', 'message', 'message']);
  const [birth, genesis, request, result] = trace;
  assert.equal(birth.signatures[1].scope, 'tool_sandbox');
  assert.equal(genesis.from, agentKey.sigil);
  assert.equal(genesis.payload.mcp, 'initialize');
  assert.equal(genesis.payload.tool_identity, birth.from);
  assert.deepEqual(genesis.payload.tool_birth, birth.id);
  assert.equal(genesis.payload.client.name, 'herald-js-test');
  assert.ok(genesis.attestation('tools').includes('echo'));
  assert.equal(genesis.attestation('mcp_tools').sha256.length, 32);
  assert.deepEqual(request.payload, { mcp: 'tools/call', name: 'echo', arguments: { message: 'hi there' } });
  assert.equal(request.to, birth.from);
  assert.deepEqual(request.attestation('tools'), ['echo']);
  assert.deepEqual(request.parent, genesis.id);
  assert.equal(result.payload.mcp, 'result');
  assert.equal(result.payload.isError, false);
  assert.equal(result.from, birth.from);
  assert.equal(result.to, agentKey.sigil);
  assert.deepEqual(result.parent, request.id);
  assert.equal(result.signatures.length, 2);
  assert.equal(results[0]._meta[META.envelope], Buffer.from(result.bytes).toString('base64'));
  assert.equal(results[0]._meta[META.request], request.idHex);
  assert.deepEqual(trace[4].payload, { mcp: 'tools/call', name: 'get-sum', arguments: { a: 2, b: 2.5 } });

  const keyring = join(dir, 'keys');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(keyring, `${agentKey.keyringLine('agent')}\n${sandboxKey.keyringLine('sandbox')}\n`);
  const cli = herald(bin, ['verify', '--json', '--keyring', keyring, join(dir, 'session.herald')]);
  assert.equal(cli.status, 0, cli.stdout + cli.stderr);
  assert.deepEqual(JSON.parse(cli.stdout).summary, { valid: 6, partial: 0, invalid: 0 });
});

test('herald mcp guard admits the calls the wrapper signs', async (t) => {
  const everything = needs(t, 'HERALD_MCP_EVERYTHING', 'node and @modelcontextprotocol/server-everything');
  const bin = needs(t, 'HERALD_BIN', 'the herald CLI');
  if (!everything || !bin) return;
  const dir = tempDir(t);
  const agentKey = SigningKey.generate();
  const { writeFileSync } = await import('node:fs');
  writeFileSync(join(dir, 'agent.pub'), `${agentKey.keyringLine('agent')}\n`);
  const recorder = traceFile(join(dir, 'session.herald'));
  t.after(() => recorder.close());
  const inner = new StdioClientTransport({
    command: bin,
    args: ['mcp', 'guard', '--keyring', join(dir, 'agent.pub'), '--state', join(dir, 'guard-state'), '--', everything],
    stderr: 'ignore',
  });
  const transport = new HeraldTransport(inner, { agentKey, sandboxKey: SigningKey.generate(), record: recorder.record });
  const client = new Client({ name: 'herald-js-guarded', version: '1.0.0' });
  await client.connect(transport);
  const r = await client.callTool({ name: 'echo', arguments: { message: 'through the guard' } });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.equal(r.content[0].text, 'Echo: through the guard');
  await client.close();

  // Without the wrapper the guard refuses the call (origin_missing).
  const plain = new Client({ name: 'unsigned', version: '1.0.0' });
  await plain.connect(new StdioClientTransport({
    command: bin,
    args: ['mcp', 'guard', '--keyring', join(dir, 'agent.pub'), '--state', join(dir, 'guard-state-2'), '--', everything],
    stderr: 'ignore',
  }));
  const refused = await plain.callTool({ name: 'echo', arguments: { message: 'unsigned' } });
  assert.ok(refused.isError);
  assert.match(JSON.stringify(refused), /origin_missing/);
  await plain.close();
});

test('the in-process trace has the shape of herald mcp proxy trace of the same session', async (t) => {
  const everything = needs(t, 'HERALD_MCP_EVERYTHING', 'node and @modelcontextprotocol/server-everything');
  const bin = needs(t, 'HERALD_BIN', 'the herald CLI');
  if (!everything || !bin) return;
  const dir = tempDir(t);
  const { saveKeyFile } = await import('@herald-rs/core/node');
  const calls = [['echo', { message: 'same' }], ['get-sum', { a: 1, b: 2 }]];
  const { agentKey, sandboxKey } = await session(t, everything, [], dir, calls);
  saveKeyFile(join(dir, 'agent.key'), agentKey);
  saveKeyFile(join(dir, 'tool.key'), sandboxKey);
  const proxied = new Client({ name: 'herald-js-test', version: '1.0.0' });
  await proxied.connect(new StdioClientTransport({
    command: bin,
    args: ['mcp', 'proxy', '--key', join(dir, 'agent.key'), '--sandbox-key', join(dir, 'tool.key'), '--trace', join(dir, 'proxy.herald'), '--', everything],
    stderr: 'ignore',
  }));
  for (const [name, args] of calls) await proxied.callTool({ name, arguments: args });
  await proxied.close();
  const ours = envelopes(new Uint8Array(readFileSync(join(dir, 'session.herald'))));
  const theirs = envelopes(new Uint8Array(readFileSync(join(dir, 'proxy.herald'))));
  // What may differ: times, nonces, the per-session tool identity and
  // the ids that follow from them. Everything else is the same.
  const shape = (e, tool, list) => {
    const payload = structuredClone(e.payload);
    if (payload.tool_identity) payload.tool_identity = 'TOOL';
    if (payload.tool_birth) payload.tool_birth = 'BIRTH';
    if (payload.server) payload.server = 'SERVER';
    return {
      kind: e.kind,
      from: e.from === tool ? 'TOOL' : e.from,
      to: e.to === tool ? 'TOOL' : e.to,
      payload,
      attestations: e.attestations.filter((a) => a.type !== 'birth'),
      scopes: e.signatures.map((s) => s.scope),
      parent: e.parent ? list.findIndex((x) => x.idHex === Buffer.from(e.parent).toString('hex')) : null,
    };
  };
  assert.equal(ours.length, theirs.length);
  assert.deepEqual(
    ours.map((e) => shape(e, ours[0].from, ours)),
    theirs.map((e) => shape(e, theirs[0].from, theirs)),
  );
});
