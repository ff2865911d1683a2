// Protocol profiles (docs/haven.md, docs/valp.md): `verify` with
// `profile` gives the document `herald verify --profile --json` prints,
// byte for byte, on every profile fixture of the CLI's tests, with the
// VALP evidence given as the CLI's `--evidence REF=PATH` gives it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { verify, verifyText, allValid } from '@herald-rs/core';
import { needs, herald } from './support.mjs';

const NOW = 1746432600;
const EVIDENCE = 'evidence/tests.log';

test('verify with a profile equals herald verify --profile --json on every profile fixture', (t) => {
  const dir = needs(t, 'HERALD_PROFILE_FIXTURES', 'the profile fixtures (herald-cli/tests/fixtures/profile)');
  const bin = needs(t, 'HERALD_BIN', 'the herald CLI');
  if (!dir || !bin) return;
  const keys = join(dir, 'keys');
  const evidencePath = join(dir, EVIDENCE);
  const files = readdirSync(dir).filter((f) => f.endsWith('.cbor')).sort();
  assert.ok(files.length >= 10, `only ${files.length} fixtures in ${dir}`);
  let withFindings = 0;
  for (const f of files) {
    const profile = f.split('-')[0];
    assert.ok(profile === 'haven' || profile === 'valp', `${f}: not a haven- or valp- fixture`);
    const path = join(dir, f);
    const args = ['verify', path, '--keyring', keys, '--now', String(NOW), '--profile', profile];
    const evidence = {};
    if (profile === 'valp') {
      args.push('--evidence', `${EVIDENCE}=${evidencePath}`);
      evidence[EVIDENCE] = new Uint8Array(readFileSync(evidencePath));
    }
    args.push('--json');
    const cli = herald(bin, args);
    assert.ok(cli.status === 0 || cli.status === 1, `${f}: herald exited ${cli.status}: ${cli.stderr}`);
    // The CLI reads a keyring directory's files; the package takes their texts.
    const keyring = readdirSync(keys).sort().map((k) => readFileSync(join(keys, k), 'utf8'));
    const options = { keyring, now: NOW, profile, evidence };
    const input = { name: path, bytes: new Uint8Array(readFileSync(path)) };
    assert.equal(verifyText(input, options), cli.stdout.replace(/\n$/, ''), f);
    const report = verify(input, options);
    assert.equal(report.profile.name, profile, f);
    // The command exits 1 on any finding; allValid agrees.
    assert.equal(allValid(report), cli.status === 0, `${f}: allValid against the exit status`);
    if (report.profile.findings.length > 0) withFindings += 1;
  }
  assert.ok(withFindings > 0, 'no fixture produced a finding');
});

test('an unknown profile is refused by name', () => {
  assert.throws(() => verify(new Uint8Array([0xa0]), { profile: 'nope' }), /profile/);
});
