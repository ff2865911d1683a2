import type { SigningKey } from './index.js';

/** The `_meta` keys the wrapper adds (docs/mcp.md *What is signed*). */
export declare const META: Readonly<{
  id: 'herald/id';
  trace: 'herald/trace';
  request: 'herald/request';
  envelope: 'herald/envelope';
  warning: 'herald/warning';
}>;

/** A JSON-RPC message as the SDK's transports carry it. */
export type JSONRPCMessage = { jsonrpc: '2.0'; [key: string]: unknown };

/** The SDK's Transport interface (@modelcontextprotocol/sdk/shared/transport.js), structurally. */
export interface Transport {
  start(): Promise<void>;
  send(message: any, options?: any): Promise<void>;
  close(): Promise<void>;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: any, extra?: any) => void;
  sessionId?: string;
  setProtocolVersion?: (version: string) => void;
}

/** Where envelopes go: `before` is 'forward' (request, genesis) or 'release' (a result: make it durable). */
export interface Recorder {
  record(bytes: Uint8Array, before: 'forward' | 'release'): void | Promise<void>;
}

export interface HeraldTransportOptions extends Recorder {
  /** Signs each request and the session genesis. */
  agentKey: SigningKey;
  /** Co-signs each result tool_sandbox. */
  sandboxKey: SigningKey;
}

/** A Transport decorator signing each tools/call and its result as `herald mcp proxy` does. */
export declare class HeraldTransport implements Transport {
  constructor(inner: Transport, options: HeraldTransportOptions);
  readonly trace: string | undefined;
  readonly toolSigil: string | undefined;
  readonly sessionId: string | undefined;
  /** Resolves once the session genesis is recorded (or could not be). */
  opened(): Promise<void>;
  start(): Promise<void>;
  send(message: any, options?: any): Promise<void>;
  close(): Promise<void>;
  setProtocolVersion(version: string): void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: any, extra?: any) => void;
}

export declare function signTransport(inner: Transport, options: HeraldTransportOptions): HeraldTransport;

/** An in-memory recorder: the envelopes, and the trace as one CBOR sequence. */
export declare function memoryRecorder(): Recorder & { envelopes: Uint8Array[]; trace(): Uint8Array };
