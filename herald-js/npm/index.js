// @herald-rs/core: HERALD envelopes in JavaScript (docs/javascript.md).
// herald-core and herald-verify run inside one WebAssembly instance,
// loaded once when this module is imported (top-level await); everything
// below is a thin layer over its exports.
import init, {
  initSync,
  SigningKey,
  Keyring,
  Envelope,
  McpSession,
  genesis,
  reply,
  encode,
  decode,
  splitSequence,
  verifyJson,
  protocolVersion,
} from './wasm/herald_js.js';

const wasmUrl = new URL('./wasm/herald_js_bg.wasm', import.meta.url);
if (wasmUrl.protocol === 'file:' && typeof process === 'object' && process.versions?.node) {
  // Node: fetch() does not read file: URLs.
  const { readFile } = await import('node:fs/promises');
  initSync({ module: await readFile(wasmUrl) });
} else {
  await init({ module_or_path: wasmUrl });
}

export { SigningKey, Keyring, Envelope, McpSession, genesis, reply, encode, decode, splitSequence, protocolVersion };

/** [name, bytes] of an input: a Uint8Array, an Envelope, or {name, bytes}. */
function named(input, n) {
  if (input instanceof Envelope) return [`<input ${n}>`, input.bytes];
  if (input instanceof Uint8Array) return [`<input ${n}>`, input];
  if (input && typeof input.name === 'string' && input.bytes instanceof Uint8Array) return [input.name, input.bytes];
  throw new TypeError('verify: each input is a Uint8Array, an Envelope, or {name, bytes}');
}

/** Keyring texts of the `keyring` option. */
function keyringTexts(keyring) {
  if (keyring === undefined || keyring === null) return [];
  const items = Array.isArray(keyring) ? keyring : [keyring];
  return items.map((k) => {
    if (typeof k === 'string') return k;
    if (k instanceof Keyring) return k.toString();
    throw new TypeError('verify: keyring is keyring file text, a Keyring, or an array of them');
  });
}

/**
 * The `herald verify --json` document as text, without the final newline:
 * byte for byte what the command prints for the same inputs and options.
 */
export function verifyText(input, options = {}) {
  const inputs = (Array.isArray(input) ? input : [input]).map(named);
  return verifyJson(
    inputs.map(([, bytes]) => bytes),
    inputs.map(([name]) => name),
    keyringTexts(options.keyring),
    options.now ?? undefined,
    options.require ?? [],
    options.skew ?? undefined,
    options.profile ?? undefined,
    Object.keys(options.evidence ?? {}),
    Object.values(options.evidence ?? {}),
  );
}

/** The object `herald verify --json` prints for `input` (CLI.md). */
export function verify(input, options = {}) {
  return JSON.parse(verifyText(input, options));
}

/** Whether every envelope of a report is valid (`herald verify` exits 0). */
export function allValid(report) {
  return (
    report.envelopes.length > 0 &&
    !report.unlisted &&
    report.envelopes.every((e) => e.status === 'valid') &&
    (report.proofs ?? []).every((p) => p.status === 'valid') &&
    (report.profile?.findings ?? []).length === 0
  );
}
