// Sign -> verify round trips with the Rust CLI, both ways: what the
// package signs `herald verify` accepts (and rejects once tampered), and
// what `herald new`/`reply`/`cosign` sign the package verifies, with the
// same report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SigningKey, Keyring, Envelope, genesis, verify, verifyText } from '@herald-rs/core';
import { saveKeyFile, loadKeyFile } from '@herald-rs/core/node';
import { needs, herald, tempDir } from './support.mjs';

const NOW = 1_767_225_600;

test('JavaScript signs, herald verify accepts; a flipped byte it rejects', (t) => {
  const bin = needs(t, 'HERALD_BIN', 'the herald CLI');
  if (!bin) return;
  const dir = tempDir(t);
  const agent = SigningKey.generate();
  const tool = SigningKey.generate();
  const g = genesis(agent, { ask: 'weather', where: 'Lyon' }, { ts: NOW, to: tool.sigil });
  const r = g.reply(tool, { answer: 'sunny', temp: 21.5 }, { ts: NOW + 1 }).cosign(agent, 'human_approval');
  const trace = new Uint8Array([...g.bytes, ...r.bytes]);
  writeFileSync(join(dir, 'trace.herald'), trace);
  const ring = `${agent.keyringLine('agent')}\n${tool.keyringLine('tool')}\n`;
  writeFileSync(join(dir, 'keyring'), ring);
  const cli = herald(bin, ['verify', '--json', '--now', String(NOW + 5), '--keyring', join(dir, 'keyring'), join(dir, 'trace.herald')]);
  assert.equal(cli.status, 0, cli.stdout + cli.stderr);
  assert.equal(verifyText(trace, { keyring: ring, now: NOW + 5 }), cli.stdout.trimEnd());
  const bad = trace.slice();
  bad[bad.length - 3] ^= 0x40;
  writeFileSync(join(dir, 'bad.herald'), bad);
  const rejected = herald(bin, ['verify', '--json', '--now', String(NOW + 5), '--keyring', join(dir, 'keyring'), join(dir, 'bad.herald')]);
  assert.equal(rejected.status, 1);
  assert.deepEqual(verify(bad, { keyring: ring, now: NOW + 5 }), JSON.parse(rejected.stdout));
});

test('herald new, reply and cosign sign; the package verifies with the CLI report', (t) => {
  const bin = needs(t, 'HERALD_BIN', 'the herald CLI');
  if (!bin) return;
  const dir = tempDir(t);
  for (const name of ['alice', 'bob']) {
    const k = herald(bin, ['keygen', '-o', join(dir, name)]);
    assert.equal(k.status, 0, k.stderr);
  }
  const run = (args) => {
    const r = herald(bin, args);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
  };
  run(['new', '--key', join(dir, 'alice.key'), '--payload-json', '{"n": 1, "x": [1.5, "a"]}', '--ts', String(NOW), '-o', join(dir, 'g.cbor')]);
  run(['reply', '--parent', join(dir, 'g.cbor'), '--key', join(dir, 'bob.key'), '--payload-text', 'ok', '--ts', String(NOW + 1), '-o', join(dir, 'r.cbor')]);
  const g = new Uint8Array(readFileSync(join(dir, 'g.cbor')));
  const r = new Uint8Array(readFileSync(join(dir, 'r.cbor')));
  const ring = [readFileSync(join(dir, 'alice.pub'), 'utf8'), readFileSync(join(dir, 'bob.pub'), 'utf8')];
  const report = verify([g, r], { keyring: ring, now: NOW + 5 });
  assert.deepEqual(report.summary, { valid: 2, partial: 0, invalid: 0 });
  const cli = herald(bin, ['verify', '--json', '--now', String(NOW + 5), '--keyring', join(dir, 'alice.pub'), '--keyring', join(dir, 'bob.pub'), join(dir, 'g.cbor'), join(dir, 'r.cbor')]);
  assert.deepEqual(report, JSON.parse(cli.stdout));
  const env = Envelope.decode(g);
  assert.deepEqual(env.payload, { n: 1, x: [1.5, 'a'] });
  assert.equal(new Keyring(ring[0]).lookup(env.from).label, 'alice');
  // A key file the CLI wrote is loaded by the package and signs as it.
  const alice = loadKeyFile(join(dir, 'alice.key'));
  assert.equal(alice.sigil, env.from);
  // A key file the package writes the CLI signs with.
  const carol = SigningKey.generate();
  saveKeyFile(join(dir, 'carol.key'), carol);
  run(['reply', '--parent', join(dir, 'r.cbor'), '--key', join(dir, 'carol.key'), '--ts', String(NOW + 2), '-o', join(dir, 'c.cbor')]);
  const c = Envelope.decode(new Uint8Array(readFileSync(join(dir, 'c.cbor'))));
  assert.equal(c.from, carol.sigil);
  assert.equal(verify([g, r, c.bytes], { keyring: [...ring, carol.keyringLine()], now: NOW + 5 }).summary.valid, 3);
});
