// The inspector's WASM verifier (the embedded herald_js_bg.wasm and its
// glue, through verifier.js as the page loads them) gives the verdicts of
// `herald verify --json`, byte for byte, on every case of the conformance
// vectors (docs/inspector.md *The WebAssembly verifier*).
//
//   node herald-cli/tests/inspector/parity.mjs HERALD VECTORS_DIR
//
// For each case with input files: the CLI runs with --json, --now (the
// case's, or a fixed time), one --keyring per key the case names and one
// --require per required scope; the WASM session gets the same bytes,
// keyring text, scopes and time. Exit 1 on the first difference.
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { loadVerifier } from '../../assets/inspector/verifier.js';

const [herald, dir] = process.argv.slice(2);
if (!dir) {
  console.error('usage: parity.mjs HERALD VECTORS_DIR');
  process.exit(2);
}
const verifier = await loadVerifier(readFileSync(new URL('../../assets/inspector/herald_js_bg.wasm', import.meta.url)));
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const keyFile = Object.fromEntries(manifest.keys.map((k) => [k.name, k.keyring_file]));
const FIXED_NOW = 1746518400;

let compared = 0;
const differing = [];
for (const c of manifest.cases) {
  // A sigil case's input is a sigil string, not a file.
  if (c.type === 'sigil') continue;
  const inputs = c.inputs ?? (c.input ? [c.input] : []);
  if (inputs.length === 0) continue;
  const now = c.now ?? FIXED_NOW;
  const keyrings = (c.keyring ?? []).map((name) => keyFile[name]);
  const scopes = c.required_scopes ?? [];
  const args = ['verify', '--json', '--now', String(now)];
  for (const k of keyrings) args.push('--keyring', join(dir, k));
  for (const s of scopes) args.push('--require', s);
  for (const i of inputs) args.push(join(dir, i));
  const cli = spawnSync(herald, args, { encoding: 'utf8' });
  if (cli.status !== 0 && cli.status !== 1) {
    differing.push(`${c.name}: herald exited ${cli.status}: ${cli.stderr}`);
    continue;
  }

  verifier.reset();
  for (const k of keyrings) verifier.addKeyring(k, readFileSync(join(dir, k), 'utf8'));
  for (const s of scopes) verifier.requireScope(s);
  for (const i of inputs) verifier.addInput(join(dir, i), readFileSync(join(dir, i)));
  const wasm = verifier.verify(now);

  compared += 1;
  if (wasm !== cli.stdout.replace(/\n$/, '')) {
    differing.push(`${c.name}:\n  cli:  ${cli.stdout.trim()}\n  wasm: ${wasm}`);
  }
}
if (compared < 100) differing.push(`only ${compared} cases compared; the manifest has ${manifest.cases.length}`);
for (const d of differing) console.error(`DIFFERENT ${d}`);
console.log(`${compared} conformance cases compared, ${differing.length} differ`);
process.exit(differing.length === 0 ? 0 : 1);
