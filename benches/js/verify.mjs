// `verify` of @herald-rs/core in Node against the native `herald verify`
// on the 10 000-envelope bench trace (herald-benches `ProcessTrace`: one
// trace, three signers, 40-byte payloads), measured alternately in one
// run; prints the medians and their ratio (goal: at most 3).
//
//   HERALD_BENCH_DIR=DIR target/release/process 1   # writes DIR/trace.cbor, DIR/keyring
//   node benches/js/verify.mjs PACKAGE_DIR HERALD_BIN DIR [ROUNDS]
//
// PACKAGE_DIR is the built package (herald-js/build.sh: target/herald-js-npm).
// The JavaScript side is timed from the file's bytes in memory to the
// report object (the WebAssembly module is loaded once, before); the CLI
// side is the whole process, as a user runs it.
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [pkg, herald, dir, roundsArg] = process.argv.slice(2);
if (!dir) {
  console.error('usage: verify.mjs PACKAGE_DIR HERALD_BIN DIR [ROUNDS]');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 7);
const { verify, splitSequence, Envelope } = await import(pathToFileURL(join(resolve(pkg), 'index.js')).href);
const trace = new Uint8Array(readFileSync(join(dir, 'trace.cbor')));
const keyring = readFileSync(join(dir, 'keyring'), 'utf8');
const items = splitSequence(trace);
const now = Math.max(...items.slice(-3).map((b) => Envelope.decode(b).ts)) + 1;

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const js = [];
const cli = [];
let envelopes = 0;
for (let i = 0; i < rounds; i += 1) {
  let t = performance.now();
  const report = verify(trace, { keyring, now });
  js.push(performance.now() - t);
  envelopes = report.envelopes.length;
  if (report.summary.valid !== envelopes) throw new Error(`not all valid: ${JSON.stringify(report.summary)}`);
  t = performance.now();
  const r = spawnSync(herald, ['verify', join(dir, 'trace.cbor'), '--keyring', join(dir, 'keyring'), '--now', String(now)], { stdio: 'ignore' });
  cli.push(performance.now() - t);
  if (r.status !== 0) throw new Error(`herald verify exited ${r.status}`);
}
const [j, c] = [median(js), median(cli)];
console.log(`${envelopes} envelopes, ${rounds} rounds, node ${process.version}`);
console.log(`node verify (wasm): median ${j.toFixed(1)} ms  [${js.map((x) => x.toFixed(0)).join(' ')}]`);
console.log(`herald verify:      median ${c.toFixed(1)} ms  [${cli.map((x) => x.toFixed(0)).join(' ')}]`);
console.log(`ratio node / cli: ${(j / c).toFixed(2)} (goal <= 3)`);
