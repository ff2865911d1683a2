// Types of @herald-rs/core (docs/javascript.md). The classes are handles
// into the WebAssembly instance: call free() (or use `using`) to release
// them early; a SigningKey's secret is zeroized when freed.

/** A JavaScript value the P1 encoder takes (and the decoder returns). */
export type CborValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | CborValue[]
  | { [key: string]: CborValue | undefined };

/** Attestations: `{type: value}`, or `[type, value]` pairs / `{type, value}` objects. */
export type Attestations =
  | { [type: string]: CborValue }
  | Array<[string, CborValue] | { type: string; value: CborValue }>;

/** What genesis and reply take besides the payload (all optional). */
export interface BuildOptions {
  /** The recipient's sigil. */
  to?: string;
  /** Unix seconds (default: the clock). */
  ts?: number;
  /** Unix seconds after which the envelope is stale (P10). */
  expires?: number;
  /** A P7 kind name (default `message`). */
  kind?: string;
  attestations?: Attestations;
}

/** An error thrown by this package: `code` is a P11 reason code, a P1 rule, or `invalid_argument`, `keyring`, `build`. */
export interface HeraldError extends Error {
  code: string;
}

/** An Ed25519 signing key (P5) held inside the WebAssembly instance. */
export class SigningKey {
  private constructor();
  free(): void;
  [Symbol.dispose](): void;
  /** A new key from WebCrypto's CSPRNG. */
  static generate(): SigningKey;
  /** The key of a 32-byte RFC 8032 seed. */
  static fromSeed(seed: Uint8Array): SigningKey;
  /** The default sigil (P2). */
  readonly sigil: string;
  /** The long sigil (P2). */
  readonly sigilLong: string;
  /** The 32-byte public key. */
  readonly publicKey: Uint8Array;
  /** `<sigil> ed25519 <hex> [label]` (CLI.md keyring line). */
  keyringLine(label?: string | null): string;
  /** The 32-byte secret seed: the caller owns the copy and must wipe it. */
  exportSecretKey(): Uint8Array;
  /** The text of a `herald keygen` secret key file (write it mode 0600). */
  exportKeyFile(): string;
  toString(): string;
  toJSON(): { sigil: string; publicKey: string };
}

/** One keyring entry. */
export interface KeyringEntry {
  sigil: string;
  sigilLong: string;
  /** The public key, lowercase hex. */
  publicKey: string;
  label?: string;
}

/** Public keys pinned by the verifier, with labels (CLI.md keyring files). */
export class Keyring {
  free(): void;
  [Symbol.dispose](): void;
  /** An empty keyring, or the keys of keyring file text. */
  constructor(text?: string | null);
  /** Parse keyring text; returns the number of keys read. */
  parse(text: string, origin?: string | null): number;
  addPublicKey(key: Uint8Array, label?: string | null): void;
  addKey(key: SigningKey, label?: string | null): void;
  readonly size: number;
  entries(): KeyringEntry[];
  /** The key a sigil of any form names (P13). */
  lookup(sigil: string): KeyringEntry | undefined;
  labelled(label: string): KeyringEntry[];
  copy(): Keyring;
  /** Keyring file text, one (labelled) line per key. */
  toString(): string;
}

/** A signed envelope, decoded strictly (P1, P3). */
export class Envelope {
  private constructor();
  free(): void;
  [Symbol.dispose](): void;
  /** Decode envelope bytes; throws a HeraldError whose code is the P11 reason. */
  static decode(bytes: Uint8Array): Envelope;
  readonly bytes: Uint8Array;
  readonly id: Uint8Array;
  readonly idHex: string;
  readonly from: string;
  readonly to: string | undefined;
  readonly parent: Uint8Array | undefined;
  readonly trace: Uint8Array;
  readonly traceHex: string;
  readonly ts: number;
  readonly nonce: Uint8Array;
  readonly expires: number | undefined;
  readonly kind: string;
  readonly payload: CborValue;
  readonly attestations: Array<{ type: string; value: CborValue }>;
  attestation(type: string): CborValue | undefined;
  readonly signatures: Array<{ [field: string]: CborValue }>;
  /** The display form (P3 JSON, bytes as hex): for reading, never signed. */
  toDisplayJson(): string;
  /** A copy with one more signature (P6 scope; optional claimed ts). */
  cosign(key: SigningKey, scope: string, ts?: number | null): Envelope;
  /** A reply to this envelope (same rules as `reply`). */
  reply(key: SigningKey, payload?: CborValue, options?: BuildOptions): Envelope;
  toString(): string;
}

/** The envelopes of one MCP session as `herald mcp proxy` makes them (used by `@herald-rs/core/mcp`). */
export class McpSession {
  private constructor();
  free(): void;
  [Symbol.dispose](): void;
  static open(
    agent: SigningKey,
    sandbox: SigningKey,
    initializeParams: string,
    initializeResult: string,
    tools?: string | null,
  ): McpSession;
  readonly opening: Envelope[];
  readonly traceHex: string;
  readonly toolSigil: string;
  readonly toolsDigest: string;
  request(name: string, args?: string | null): Envelope;
  result(request: Uint8Array, result: string, sandboxed: boolean): Envelope;
  error(request: Uint8Array, error: string): Envelope;
  cancelled(request: Uint8Array, params: string): Envelope;
  toolsChanged(tools: string): Envelope | undefined;
}

/** A genesis envelope signed by `key` (P4: parent null, trace = its id). */
export function genesis(key: SigningKey, payload?: CborValue, options?: BuildOptions): Envelope;
/** A reply to `parent` signed by `key` (same trace, spec §3.3a). */
export function reply(key: SigningKey, parent: Envelope, payload?: CborValue, options?: BuildOptions): Envelope;
/** P1 canonical CBOR of a value. */
export function encode(value: CborValue): Uint8Array;
/** Strictly decode one canonical CBOR item. */
export function decode(bytes: Uint8Array): CborValue;
/** The items of a CBOR sequence (a trace file), each as bytes. */
export function splitSequence(bytes: Uint8Array): Uint8Array[];
/** The protocol version envelopes carry (`herald/0.2`). */
export function protocolVersion(): string;

/** One reason (P11). */
export interface ReportReason {
  code: string;
  index?: number;
  detail: string;
}

/** One envelope's verdict (CLI.md `herald verify --json`). */
export interface EnvelopeReport {
  id: string | null;
  from: string | null;
  status: 'valid' | 'partial' | 'invalid';
  reasons: ReportReason[];
  unlisted_reasons?: { [code: string]: number };
  key_source?: string;
  handle?: string;
  dnssec?: boolean;
  signing_key?: string;
  lineage_consents?: string[];
}

export interface TraceReport {
  trace: string;
  genesis: string | null;
  leaves: string[];
  valid: number;
  partial: number;
  invalid: number;
}

export interface ProofReport {
  id: string | null;
  log: string | null;
  index?: number;
  size?: number;
  status: 'valid' | 'partial' | 'invalid';
  detail: string;
  witnessed?: string;
}

/** The document `herald verify --json` prints. */
export interface VerifyReport {
  /** The document format, `herald-verify/1`. */
  format: string;
  envelopes: EnvelopeReport[];
  traces: TraceReport[];
  summary: { valid: number; partial: number; invalid: number };
  proofs?: ProofReport[];
  unlisted?: number;
  /** With the `profile` option: that protocol's findings (docs/haven.md, docs/valp.md). */
  profile?: ProfileReport;
}

/** A protocol profile's result: findings beside the reasons; no status changes. */
export interface ProfileReport {
  name: 'haven' | 'valp';
  checked: number;
  skipped: number;
  findings: { code: string; id: string; detail: string }[];
}

export interface VerifyOptions {
  /** Keyring file text, a Keyring, or several. */
  keyring?: string | Keyring | Array<string | Keyring>;
  /** Unix seconds (default: the clock). */
  now?: number;
  /** Scopes that must carry a valid signature (`--require`). */
  require?: string[];
  /** Clock skew tolerated, seconds (default 300, P10). */
  skew?: number;
  /** A protocol profile checked over the verified set (`--profile`). */
  profile?: 'haven' | 'valp';
  /** The bytes of each evidence `content_ref` (`--evidence REF=PATH`). */
  evidence?: { [contentRef: string]: Uint8Array };
}

/**
 * An input: envelope bytes, a CBOR sequence (a trace file), a bundle, or an
 * Envelope; with a name (as the CLI's file path) for the reasons' details
 * that name their input (default `<input N>`).
 */
export type VerifyInput = Uint8Array | Envelope | { name: string; bytes: Uint8Array };

/** Verify inputs as one set: the object `herald verify --json` prints. */
export function verify(input: VerifyInput | VerifyInput[], options?: VerifyOptions): VerifyReport;
/** The same report as the exact text `herald verify --json` prints (no final newline). */
export function verifyText(input: VerifyInput | VerifyInput[], options?: VerifyOptions): string;
/** Whether `herald verify` would exit 0 for this report. */
export function allValid(report: VerifyReport): boolean;
