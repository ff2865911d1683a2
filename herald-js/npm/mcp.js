// In-process HERALD signing for the official MCP TypeScript SDK
// (docs/javascript.md *MCP*): a Transport decorator that does what
// `herald mcp proxy` does (docs/mcp.md *What is signed*), without a second
// process. Give the SDK Client `new HeraldTransport(inner, options)`
// instead of `inner`: every tools/call is signed before it is sent, its
// result signed before the Client sees it, both recorded in order, and
// `_meta` carries the same `herald/...` keys as the proxy's.
import { McpSession } from './index.js';

/** The `_meta` keys (docs/mcp.md *What is signed*). */
export const META = Object.freeze({
  id: 'herald/id',
  trace: 'herald/trace',
  request: 'herald/request',
  envelope: 'herald/envelope',
  warning: 'herald/warning',
});

/** The prefix of the ids of the wrapper's own tools/list requests (the proxy's). */
const OWN_ID = 'herald-mcp/tools/list/';
/** Most pages of the wrapper's own tools/list followed. */
const MAX_PAGES = 100;
/** How long a tools/call waits for the session's genesis, ms. */
const GENESIS_WAIT_MS = 10_000;

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const base64 = (bytes) => {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
};
const toolError = (text) => ({ content: [{ type: 'text', text }], isError: true });
const isRequest = (m) => m && typeof m === 'object' && 'method' in m && 'id' in m && m.id !== null;
const isNotification = (m) => m && typeof m === 'object' && 'method' in m && !('id' in m);
const isResponse = (m) =>
  m && typeof m === 'object' && !('method' in m) && 'id' in m && ('result' in m || 'error' in m);
/** The JSON-RPC id as a key (1 and "1" stay apart, as the proxy's). */
const idKey = (id) => JSON.stringify(id);

/** `container._meta` with `edit` applied (created if absent or not an object). */
function withMeta(container, edit) {
  const meta = container._meta && typeof container._meta === 'object' && !Array.isArray(container._meta)
    ? { ...container._meta }
    : {};
  edit(meta);
  return { ...container, _meta: meta };
}

function stamp(meta, envelope, trace) {
  meta[META.id] = envelope.idHex;
  meta[META.trace] = trace;
  meta[META.envelope] = base64(envelope.bytes);
}

/**
 * A Transport that signs an MCP client's session into a HERALD trace.
 *
 * options.agentKey, options.sandboxKey: SigningKeys (the agent signs
 * requests and the genesis; the sandbox key co-signs results tool_sandbox).
 * options.record(bytes, before): stores one envelope; `before` is
 * 'forward' (a request, the opening envelopes) or 'release' (a result:
 * make it and everything before it durable). It may return a Promise.
 */
export class HeraldTransport {
  #inner;
  #agent;
  #sandbox;
  #record;
  #session = null;
  #opened = { trace: undefined, toolSigil: undefined };
  #sessionError = null;
  #initialize = null;
  #handshake = { request: {}, result: {} };
  #fetch = null;
  #fetches = 0;
  #recheck = false;
  #calls = new Map();
  #lists = new Set();
  #ready;
  #resolveReady;
  #queue = Promise.resolve();
  #inbound = Promise.resolve();

  constructor(inner, options) {
    if (!inner || typeof inner.send !== 'function') throw new TypeError('HeraldTransport: inner is an MCP Transport');
    if (!options || !options.agentKey || !options.sandboxKey) {
      throw new TypeError('HeraldTransport: options.agentKey and options.sandboxKey are SigningKeys');
    }
    if (typeof options.record !== 'function') throw new TypeError('HeraldTransport: options.record is a function');
    this.#inner = inner;
    this.#agent = options.agentKey;
    this.#sandbox = options.sandboxKey;
    this.#record = options.record;
    this.#ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
    this.onclose = undefined;
    this.onerror = undefined;
    this.onmessage = undefined;
  }

  /** The session's trace id (hex), once the genesis is made. */
  get trace() {
    return this.#opened.trace;
  }

  /** The tool identity's sigil, once the genesis is made. */
  get toolSigil() {
    return this.#opened.toolSigil;
  }

  get sessionId() {
    return this.#inner.sessionId;
  }

  setProtocolVersion(version) {
    this.#inner.setProtocolVersion?.(version);
  }

  async start() {
    this.#inner.onmessage = (message, extra) => {
      this.#inbound = this.#inbound.then(() => this.#fromServer(message, extra)).catch((e) => this.onerror?.(e));
    };
    this.#inner.onerror = (e) => this.onerror?.(e);
    this.#inner.onclose = () => this.onclose?.();
    await this.#inner.start();
  }

  async close() {
    await this.#inner.close();
    this.#session?.free();
    this.#session = null;
  }

  /** Resolves once the session's genesis is recorded (or could not be). */
  opened() {
    return this.#ready;
  }

  /** Run `f` alone: envelopes are signed and recorded one at a time, in chain order. */
  #locked(f) {
    const run = this.#queue.then(f);
    this.#queue = run.catch(() => {});
    return run;
  }

  #deliver(message, extra) {
    this.onmessage?.(message, extra);
  }

  async send(message, options) {
    if (isRequest(message) && message.method === 'tools/call') return this.#call(message, options);
    if (isRequest(message) && message.method === 'initialize') {
      this.#initialize = idKey(message.id);
      this.#handshake.request = message.params ?? {};
    } else if (isRequest(message) && message.method === 'tools/list') {
      if (message.params?.cursor === undefined || message.params?.cursor === null) {
        this.#lists.add(idKey(message.id));
      }
    } else if (isNotification(message) && message.method === 'notifications/cancelled') {
      await this.#cancelled(message);
    }
    await this.#inner.send(message, options);
    if (isNotification(message) && message.method === 'notifications/initialized') {
      await this.#startFetch(true);
    }
  }

  async #call(message, options) {
    if (typeof message.params?.name !== 'string') {
      return this.#deliver({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32602, message: 'herald-mcp: tools/call without a text params.name' },
      });
    }
    let timer;
    const opened = await Promise.race([
      this.#ready.then(() => true),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(false), GENESIS_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!opened || !this.#session) {
      const text = this.#sessionError ??
        'herald-mcp: no MCP session to sign this call in (the client has not initialized, or the server did not answer the pinning tools/list)';
      return this.#deliver({ jsonrpc: '2.0', id: message.id, result: toolError(text) });
    }
    const forward = await this.#locked(async () => {
      const args = message.params.arguments;
      let request;
      try {
        request = this.#session.request(message.params.name, args === undefined ? undefined : JSON.stringify(args));
        await this.#record(request.bytes, 'forward');
      } catch (e) {
        request?.free();
        this.#deliver({ jsonrpc: '2.0', id: message.id, result: toolError(`herald-mcp: ${e.message}`) });
        return null;
      }
      this.#calls.set(idKey(message.id), request.id);
      const trace = this.#session.traceHex;
      const params = withMeta(message.params, (m) => stamp(m, request, trace));
      request.free();
      return { ...message, params };
    });
    if (forward) await this.#inner.send(forward, options);
  }

  async #cancelled(message) {
    const request = this.#calls.get(idKey(message.params?.requestId));
    if (!request || !this.#session) return;
    await this.#locked(async () => {
      try {
        const event = this.#session.cancelled(request, JSON.stringify(message.params ?? {}));
        await this.#record(event.bytes, 'forward');
        event.free();
      } catch (e) {
        this.onerror?.(e);
      }
    });
  }

  async #fromServer(message, extra) {
    if (!isResponse(message)) {
      this.#deliver(message, extra);
      if (isNotification(message) && message.method === 'notifications/tools/list_changed' && this.#session) {
        await this.#startFetch(false);
      }
      return;
    }
    const key = idKey(message.id);
    if (this.#fetch && this.#fetch.id === key) return this.#fetched(message);
    if (this.#initialize === key) {
      this.#initialize = null;
      this.#handshake.result = message.result ?? {};
    } else if (this.#calls.has(key)) {
      const request = this.#calls.get(key);
      this.#calls.delete(key);
      return this.#deliver(await this.#answer(request, message), extra);
    } else if (this.#lists.delete(key) && message.result && (message.result.nextCursor ?? null) === null) {
      const warning = await this.#changed(message.result.tools ?? []);
      if (warning) {
        this.#deliver({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', logger: 'herald-mcp', data: warning } });
        message = { ...message, result: withMeta(message.result, (m) => { m[META.warning] = warning; }) };
      }
    }
    this.#deliver(message, extra);
  }

  async #answer(request, message) {
    return this.#locked(async () => {
      let envelope;
      try {
        envelope = 'result' in message
          ? this.#session.result(request, JSON.stringify(message.result), true)
          : this.#session.error(request, JSON.stringify(message.error ?? null));
        await this.#record(envelope.bytes, 'release');
      } catch (e) {
        envelope?.free();
        return { jsonrpc: '2.0', id: message.id, result: toolError(`herald-mcp: ${e.message}; the tool's result is withheld`) };
      }
      let out = message;
      if (message.result && typeof message.result === 'object') {
        const trace = this.#session.traceHex;
        out = {
          ...message,
          result: withMeta(message.result, (m) => {
            stamp(m, envelope, trace);
            m[META.request] = hex(request);
          }),
        };
      }
      envelope.free();
      return out;
    });
  }

  async #startFetch(genesis) {
    if (genesis && (this.#session || this.#sessionError)) return;
    if (this.#fetch) {
      this.#recheck ||= !genesis;
      return;
    }
    const hasTools = this.#handshake.result?.capabilities?.tools !== undefined;
    if (genesis && !hasTools) return this.#open(null);
    this.#fetches += 1;
    const id = `${OWN_ID}${this.#fetches}`;
    this.#fetch = { id: idKey(id), page: 0, tools: [], genesis };
    await this.#inner.send({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
  }

  async #fetched(message) {
    const fetch = this.#fetch;
    this.#fetch = null;
    const tools = message.result?.tools;
    if (Array.isArray(tools)) fetch.tools.push(...tools);
    const cursor = message.result?.nextCursor;
    if (cursor !== undefined && cursor !== null && fetch.page < MAX_PAGES) {
      fetch.page += 1;
      const id = `${OWN_ID}${this.#fetches}.${fetch.page}`;
      this.#fetch = { ...fetch, id: idKey(id) };
      return this.#inner.send({ jsonrpc: '2.0', id, method: 'tools/list', params: { cursor } });
    }
    if (fetch.genesis) {
      if (message.error) {
        this.#sessionError = `herald-mcp: cannot pin the tool set: the server refused tools/list: ${JSON.stringify(message.error)}`;
        return this.#open(null);
      }
      return this.#open(fetch.tools);
    }
    const warning = message.error
      ? `herald-mcp: cannot check the tool set: the server refused tools/list: ${JSON.stringify(message.error)}`
      : await this.#changed(fetch.tools);
    if (warning) {
      this.#deliver({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', logger: 'herald-mcp', data: warning } });
    }
    const again = this.#recheck;
    this.#recheck = false;
    if (again) await this.#startFetch(false);
  }

  async #open(tools) {
    await this.#locked(async () => {
      try {
        const session = McpSession.open(
          this.#agent,
          this.#sandbox,
          JSON.stringify(this.#handshake.request ?? {}),
          JSON.stringify(this.#handshake.result ?? {}),
          tools === null ? undefined : JSON.stringify(tools),
        );
        for (const envelope of session.opening) {
          await this.#record(envelope.bytes, 'forward');
          envelope.free();
        }
        this.#session = session;
        this.#opened = { trace: session.traceHex, toolSigil: session.toolSigil };
      } catch (e) {
        this.#sessionError = `herald-mcp: cannot open the session: ${e.message}`;
        this.onerror?.(e);
      }
    });
    this.#resolveReady();
  }

  async #changed(tools) {
    if (!this.#session) return undefined;
    return this.#locked(async () => {
      let event;
      try {
        event = this.#session.toolsChanged(JSON.stringify(tools));
      } catch (e) {
        return `herald-mcp: cannot check the tool set: ${e.message}`;
      }
      if (!event) return undefined;
      let warning = `herald-mcp: the server's tool set changed since the session began (pinned sha256 ${this.#session.toolsDigest})`;
      try {
        await this.#record(event.bytes, 'release');
        warning += `; recorded as envelope ${event.idHex}`;
      } catch (e) {
        warning += `; herald-mcp: ${e.message}`;
      }
      event.free();
      return warning;
    });
  }
}

/** `new HeraldTransport(inner, options)`. */
export function signTransport(inner, options) {
  return new HeraldTransport(inner, options);
}

/** A recorder keeping envelopes in memory (tests, browsers): `envelopes` and `trace()` (the CBOR sequence). */
export function memoryRecorder() {
  const envelopes = [];
  const record = (bytes) => {
    envelopes.push(bytes.slice());
  };
  const trace = () => {
    const out = new Uint8Array(envelopes.reduce((n, e) => n + e.length, 0));
    let at = 0;
    for (const e of envelopes) {
      out.set(e, at);
      at += e.length;
    }
    return out;
  };
  return { record, envelopes, trace };
}
