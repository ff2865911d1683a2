// Every conformance vector (vectors/conformance): `verify` gives the
// document `herald verify --json` prints, byte for byte, for the same
// bytes, keyrings, scopes and time; keyring, sigil and CBOR cases give the
// manifest's answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verify, verifyText, Keyring, decode } from '@herald-rs/core';
import { needs, herald, FIXED_NOW } from './support.mjs';

function manifest(dir) {
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
}

test('verify equals herald verify --json on every conformance case with inputs', (t) => {
  const dir = needs(t, 'HERALD_VECTORS', 'the conformance vectors');
  const bin = needs(t, 'HERALD_BIN', 'the herald CLI');
  if (!dir || !bin) return;
  const m = manifest(dir);
  const keyFile = Object.fromEntries(m.keys.map((k) => [k.name, k.keyring_file]));
  let compared = 0;
  const differing = [];
  for (const c of m.cases) {
    if (c.type === 'sigil') continue;
    const inputs = c.inputs ?? (c.input ? [c.input] : []);
    if (inputs.length === 0) continue;
    const now = c.now ?? FIXED_NOW;
    const keyrings = (c.keyring ?? []).map((name) => keyFile[name]);
    const require = c.required_scopes ?? [];
    const args = ['verify', '--json', '--now', String(now)];
    for (const k of keyrings) args.push('--keyring', join(dir, k));
    for (const s of require) args.push('--require', s);
    for (const i of inputs) args.push(join(dir, i));
    const cli = herald(bin, args);
    assert.ok(cli.status === 0 || cli.status === 1, `${c.name}: herald exited ${cli.status}: ${cli.stderr}`);
    const bytes = inputs.map((i) => ({ name: join(dir, i), bytes: new Uint8Array(readFileSync(join(dir, i))) }));
    const options = { now, require, keyring: keyrings.map((k) => readFileSync(join(dir, k), 'utf8')) };
    const text = verifyText(bytes, options);
    compared += 1;
    if (text !== cli.stdout.replace(/\n$/, '')) differing.push(`${c.name}:\n  cli: ${cli.stdout}  js:  ${text}`);
    assert.deepEqual(verify(bytes, options), JSON.parse(cli.stdout), c.name);
  }
  assert.deepEqual(differing, []);
  assert.ok(compared >= 100, `only ${compared} cases compared`);
  t.diagnostic(`${compared} conformance cases compared with herald verify --json`);
});

test('keyring cases: the keys read, or the refusal', (t) => {
  const dir = needs(t, 'HERALD_VECTORS', 'the conformance vectors');
  if (!dir) return;
  const cases = manifest(dir).cases.filter((c) => c.type === 'keyring');
  assert.ok(cases.length > 0);
  for (const c of cases) {
    const text = readFileSync(join(dir, c.input), 'utf8');
    if (c.expect.valid) {
      const k = new Keyring();
      assert.equal(k.parse(text), c.expect.keys, c.name);
      assert.equal(k.size, c.expect.keys, c.name);
    } else {
      assert.throws(() => new Keyring(text), (e) => e.code === 'keyring', c.name);
    }
  }
});

test('cbor cases: accepted or refused as the manifest says', (t) => {
  const dir = needs(t, 'HERALD_VECTORS', 'the conformance vectors');
  if (!dir) return;
  const cases = manifest(dir).cases.filter((c) => c.type === 'cbor');
  assert.ok(cases.length > 0);
  for (const c of cases) {
    const bytes = new Uint8Array(readFileSync(join(dir, c.input)));
    if (c.expect.accept) {
      assert.doesNotThrow(() => decode(bytes), c.name);
    } else {
      assert.throws(() => decode(bytes), (e) => e.code === c.expect.rule && e.message.startsWith(`byte ${c.expect.offset}:`), c.name);
    }
  }
});

test('sigil cases: a keyring of the vector keys resolves each valid sigil to its key', (t) => {
  const dir = needs(t, 'HERALD_VECTORS', 'the conformance vectors');
  if (!dir) return;
  const m = manifest(dir);
  const ring = new Keyring();
  for (const k of m.keys) ring.parse(readFileSync(join(dir, k.keyring_file), 'utf8'));
  const publicOf = Object.fromEntries(m.keys.map((k) => [k.name, k.public]));
  let checked = 0;
  for (const c of m.cases.filter((c) => c.type === 'sigil' && c.expect.valid && c.expect.key)) {
    assert.equal(ring.lookup(c.input)?.publicKey, publicOf[c.expect.key], c.name);
    checked += 1;
  }
  assert.ok(checked > 0);
  for (const c of m.cases.filter((c) => c.type === 'sigil' && !c.expect.valid)) {
    assert.throws(() => ring.lookup(c.input), (e) => e.code === 'bad_sigil', c.name);
  }
});
