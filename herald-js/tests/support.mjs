// Shared by the Node test suite of @herald-rs/core (herald-js/test.sh runs
// it in a fresh project where the packed tarball is installed).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** An external program or directory from the environment; skip the test (or fail with HERALD_TEST_ALL=1) without it. */
export function needs(t, name, what) {
  const value = process.env[name];
  if (value) return value;
  if (process.env.HERALD_TEST_ALL === '1') throw new Error(`${name} is not set: ${what} is needed`);
  t.skip(`skipped: needs ${what} (${name})`);
  return null;
}

/** Run the herald CLI: { status, stdout, stderr }. */
export function herald(bin, args, options = {}) {
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 60_000, ...options });
  if (r.error) throw r.error;
  return r;
}

/** A temporary directory removed after the test. */
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'herald-js-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A fixed time inside every vector's validity (herald-cli/tests/inspector/parity.mjs). */
export const FIXED_NOW = 1746518400;
