import type { SigningKey } from './index.js';
import type { Recorder } from './mcp.js';

/** A recorder appending to a trace file (mode 0600); `close()` closes it. */
export function traceFile(path: string, options?: { sync?: 'release' | 'each' }): Recorder & { close(): void };
/** Load a `herald keygen` secret key file (refused when group/others may read it). */
export function loadKeyFile(path: string): SigningKey;
/** Write a `herald keygen` secret key file (new file, mode 0600). */
export function saveKeyFile(path: string, key: SigningKey): void;
