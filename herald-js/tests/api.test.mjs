// The API of @herald-rs/core: keys as handles, the builder's rules,
// decoding, the display form, keyrings with labels, P1 values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SigningKey, Keyring, Envelope, genesis, reply, encode, decode, verify, allValid, protocolVersion,
} from '@herald-rs/core';

const NOW = 1_767_225_600;
// The conformance vectors' alice (vectors/conformance/manifest.json).
const ALICE_SEED = Uint8Array.from(Buffer.from('231744177de8b9f87d4143b5caf52aac8f4ed5c4759e293d818969574d336292', 'hex'));
const ALICE_SIGIL = 'sigil:uvagxudvnp5j62yx4vlbbq6tm4';

test('a key from a seed has the vectors sigil, and never shows its secret', () => {
  const key = SigningKey.fromSeed(ALICE_SEED);
  assert.equal(key.sigil, ALICE_SIGIL);
  assert.equal(Buffer.from(key.publicKey).toString('hex'), 'ed8ca15c58c5eaea0baff51f2fd02e4d7ebf49499321857d8faf992fdde9ba86');
  const shown = [String(key), JSON.stringify(key), key.keyringLine('alice')].join('\n');
  assert.ok(!shown.includes('231744177de8'), shown);
  assert.match(key.keyringLine('alice'), /^sigil:\S+ ed25519 [0-9a-f]{64} alice$/);
  assert.deepEqual(key.exportSecretKey(), ALICE_SEED);
  assert.equal(key.exportKeyFile(), 'herald-secret-key-v1\n231744177de8b9f87d4143b5caf52aac8f4ed5c4759e293d818969574d336292\n');
  key.free();
  assert.throws(() => key.sigil, 'a freed key is gone');
  assert.throws(() => SigningKey.fromSeed(new Uint8Array(31)), (e) => e.code === 'invalid_argument');
});

test('generated keys differ (WebCrypto randomness)', () => {
  const a = SigningKey.generate();
  const b = SigningKey.generate();
  assert.notEqual(a.sigil, b.sigil);
});

test('genesis, reply and co-sign follow the builder rules and verify', () => {
  const alice = SigningKey.generate();
  const bob = SigningKey.generate();
  const tool = SigningKey.generate();
  const g = genesis(alice, { task: 'summarise', n: 2, big: 2n ** 60n, raw: new Uint8Array([1, 2]) }, {
    ts: NOW, to: bob.sigil, attestations: { model: 'x' },
  });
  assert.equal(g.parent, undefined);
  assert.equal(g.traceHex, g.idHex, 'P4: a genesis is its own trace');
  assert.equal(g.from, alice.sigil);
  assert.equal(g.to, bob.sigil);
  assert.equal(g.kind, 'message');
  assert.equal(g.ts, NOW);
  assert.deepEqual(g.payload, { big: 2n ** 60n, n: 2, raw: new Uint8Array([1, 2]), task: 'summarise' });
  assert.equal(g.attestation('model'), 'x');
  const r = reply(bob, g, 'done', { ts: NOW + 1 });
  assert.deepEqual(r.parent, g.id);
  assert.equal(r.traceHex, g.idHex, 'a reply is in its parent trace');
  const r2 = r.reply(alice, null, { ts: NOW + 2 }).cosign(tool, 'tool_sandbox');
  assert.equal(r2.signatures.length, 2);
  assert.equal(r2.signatures[1].scope, 'tool_sandbox');
  assert.deepEqual(Envelope.decode(r2.bytes).bytes, r2.bytes);
  const keyring = new Keyring();
  keyring.addKey(alice, 'alice');
  keyring.addKey(bob, 'bob');
  keyring.addKey(tool, 'tool');
  const report = verify([g, r, r2], { keyring, now: NOW + 10 });
  assert.deepEqual(report.summary, { valid: 3, partial: 0, invalid: 0 });
  assert.ok(allValid(report));
  assert.equal(report.traces[0].genesis, g.idHex);
  const display = JSON.parse(g.toDisplayJson());
  assert.equal(display.from, alice.sigil);
  assert.equal(display.payload.raw, '0102', 'P3: bytes as hex in the display form');
  assert.throws(() => g.cosign(tool, 'origin'), (e) => e.code === 'invalid_argument');
});

test('a changed byte, an unknown key and a wrong time are reported as the CLI reports them', () => {
  const alice = SigningKey.generate();
  const g = genesis(alice, 'hi', { ts: NOW, expires: NOW + 60 });
  const ring = alice.keyringLine();
  assert.equal(verify(g.bytes, { keyring: ring, now: NOW }).envelopes[0].status, 'valid');
  assert.equal(verify(g.bytes, { keyring: ring, now: NOW + 3600 }).envelopes[0].reasons[0].code, 'expired');
  assert.notEqual(verify(g.bytes, { now: NOW }).envelopes[0].status, 'valid', 'no key: not valid');
  const bad = g.bytes;
  bad[bad.length - 1] ^= 1;
  const report = verify(bad, { keyring: ring, now: NOW });
  assert.equal(report.envelopes[0].status, 'invalid');
  assert.ok(!allValid(report));
});

test('decode refuses what is not an envelope, naming the P11 code', () => {
  assert.throws(() => Envelope.decode(new Uint8Array([0xa0])), (e) => typeof e.code === 'string' && e.name === 'HeraldError');
  assert.throws(() => Envelope.decode(new Uint8Array([0xff])), (e) => e.code === 'malformed');
});

test('keyrings: labels, every sigil form, text round trip', () => {
  const a = SigningKey.generate();
  const b = SigningKey.generate();
  const ring = new Keyring(`# two keys\n${a.keyringLine('alice')}\n${b.keyringLine()}\n`);
  assert.equal(ring.size, 2);
  assert.equal(ring.lookup(a.sigil).label, 'alice');
  assert.equal(ring.lookup(a.sigilLong).publicKey, Buffer.from(a.publicKey).toString('hex'));
  assert.equal(ring.lookup(b.sigil).label, undefined);
  assert.deepEqual(ring.labelled('alice').map((e) => e.sigil), [a.sigil]);
  assert.equal(new Keyring(ring.toString()).lookup(a.sigil).label, 'alice');
  assert.throws(() => new Keyring('sigil:nope ed25519 00'), (e) => e.code === 'keyring');
});

test('P1 values: canonical encoding, strict decoding, refusals', () => {
  assert.deepEqual(encode({ b: 1, a: [true, null, 2.5] }), Uint8Array.from([0xa2, 0x61, 0x61, 0x83, 0xf5, 0xf6, 0xf9, 0x41, 0x00, 0x61, 0x62, 0x01]));
  assert.deepEqual(encode(2.0), encode(2), 'P1 numeric reduction');
  assert.deepEqual(decode(encode({ x: -(2n ** 64n) })), { x: -(2n ** 64n) });
  assert.throws(() => encode(NaN), (e) => e.code === 'nan');
  assert.throws(() => encode(-0), (e) => e.code === 'negative_zero');
  assert.throws(() => encode(new Map()), (e) => e.code === 'unsupported_type');
  assert.throws(() => encode(2n ** 64n), (e) => e.code === 'integer_range');
  assert.deepEqual(Object.keys(decode(encode({ __proto__: null, ['__proto__']: 1 }))), ['__proto__']);
  assert.equal(protocolVersion(), 'herald/0.2');
});
