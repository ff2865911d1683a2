// Node-only helpers of @herald-rs/core (docs/javascript.md): the trace
// file the MCP wrapper records into (a CBOR sequence, CLI.md *Files*,
// mode 0600, as `herald mcp proxy --trace` writes it), and key files.
import { openSync, writeSync, fdatasyncSync, closeSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { SigningKey } from './index.js';

/**
 * A recorder appending each envelope to the trace file `path` (created
 * mode 0600). sync 'release' (the default, as the proxy's --sync): a
 * result is made durable with everything before it before the client
 * sees it; 'each': every envelope is made durable before anything
 * depends on it. Returns { record, close }.
 */
export function traceFile(path, { sync = 'release' } = {}) {
  if (sync !== 'release' && sync !== 'each') throw new TypeError("traceFile: sync is 'release' or 'each'");
  const fd = openSync(path, 'a', 0o600);
  const record = (bytes, before) => {
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    if (sync === 'each' || before === 'release') fdatasyncSync(fd);
  };
  const close = () => closeSync(fd);
  return { record, close };
}

/** Load a `herald keygen` secret key file; refused when group or others may read it (CLI.md). */
export function loadKeyFile(path) {
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) throw new Error(`${path}: secret key file has mode ${mode.toString(8).padStart(4, '0')}, readable by group or others`);
  const lines = readFileSync(path, 'utf8').split('\n');
  if (lines[0] !== 'herald-secret-key-v1' || !/^[0-9a-f]{64}$/.test(lines[1] ?? '') || lines.slice(2).some((l) => l !== '')) {
    throw new Error(`${path}: not a herald secret key file`);
  }
  const seed = Uint8Array.from(lines[1].match(/../g), (h) => parseInt(h, 16));
  try {
    return SigningKey.fromSeed(seed);
  } finally {
    seed.fill(0);
  }
}

/** Write `key` to the new file `path` (it must not exist), mode 0600, as `herald keygen` does. */
export function saveKeyFile(path, key) {
  writeFileSync(path, key.exportKeyFile(), { mode: 0o600, flag: 'wx' });
}
