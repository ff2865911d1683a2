// Checked with `tsc --strict` against the packed declarations
// (herald-js/test.sh): the documented uses type-check, and the wrapper is a
// Transport the official SDK Client accepts.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  SigningKey, Keyring, Envelope, genesis, reply, verify, verifyText, allValid, encode, decode,
  splitSequence, type VerifyReport, type EnvelopeReport, type HeraldError,
} from '@herald-rs/core';
import { HeraldTransport, memoryRecorder, META } from '@herald-rs/core/mcp';
import { traceFile, loadKeyFile } from '@herald-rs/core/node';

const key: SigningKey = SigningKey.generate();
const ring = new Keyring(key.keyringLine('me'));
const g: Envelope = genesis(key, { hello: 'world', n: 1n }, { ts: 1, attestations: [['model', 'x']] });
const r: Envelope = reply(key, g, null, { to: key.sigil, kind: 'message' });
const report: VerifyReport = verify([g, r.bytes], { keyring: [ring, key.keyringLine()], now: 2, require: [] });
const first: EnvelopeReport | undefined = report.envelopes[0];
const status: 'valid' | 'partial' | 'invalid' | undefined = first?.status;
const ok: boolean = allValid(report) && verifyText(g.bytes).length > 0;
const bytes: Uint8Array = encode(decode(g.bytes));
const items: Uint8Array[] = splitSequence(bytes);
try {
  Envelope.decode(new Uint8Array([0xff]));
} catch (e) {
  const code: string = (e as HeraldError).code;
  void code;
}

const recorder = memoryRecorder();
const transport = new HeraldTransport(new StdioClientTransport({ command: 'server' }), {
  agentKey: key,
  sandboxKey: loadKeyFile('tool.key'),
  record: recorder.record,
});
const client = new Client({ name: 'typed', version: '1.0.0' });
void client.connect(transport);
const file = traceFile('t.herald', { sync: 'each' });
file.close();
const metaKey: 'herald/envelope' = META.envelope;
void [status, ok, items, metaKey];
