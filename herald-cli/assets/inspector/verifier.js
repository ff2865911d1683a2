// The verifier, compiled to WebAssembly (herald-wasm): a plain C ABI, no
// generated glue. Buffers are allocated by the module, filled here and
// handed over; answers are UTF-8 JSON in the module's output buffer.
// Used by the page (app.js) and by the parity test in node.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Instantiate the module from its bytes; the verifier's API. */
export async function loadVerifier(wasmBytes) {
  let memory = null;
  const imports = {
    env: {
      // getrandom's source (batch-equation coefficients, P5): 0 on success.
      herald_random(ptr, len) {
        const view = new Uint8Array(memory.buffer, ptr, len);
        for (let at = 0; at < len; at += 65536) {
          crypto.getRandomValues(view.subarray(at, Math.min(len, at + 65536)));
        }
        return 0;
      },
    },
  };
  const { instance } = await WebAssembly.instantiate(wasmBytes, imports);
  const x = instance.exports;
  memory = x.memory;

  // Copy bytes into a fresh module buffer: [ptr, len].
  const give = (bytes) => {
    const len = bytes.length;
    const ptr = x.herald_alloc(len);
    if (len > 0) new Uint8Array(memory.buffer, ptr, len).set(bytes);
    return [ptr, len];
  };
  const text = (s) => give(encoder.encode(s));
  const answer = (len) => decoder.decode(new Uint8Array(memory.buffer, x.herald_out_ptr(), len).slice());

  x.herald_reset();
  return {
    reset() { x.herald_reset(); },
    addInput(name, bytes) { x.herald_add_input(...text(name), ...give(bytes)); },
    /** Keys added; throws with the keyring error (CLI.md keyring syntax). */
    addKeyring(name, keyringText) {
      const n = x.herald_add_keyring(...text(name), ...text(keyringText));
      if (n < 0) throw new Error(answer(x.herald_out_len()));
      return n;
    },
    requireScope(scope) {
      if (x.herald_require(...text(scope)) < 0) throw new Error(answer(x.herald_out_len()));
    },
    /** The `herald verify --json` document, as text. */
    verify(nowSeconds) { return answer(x.herald_verify(nowSeconds ?? -1)); },
    nodes() { return JSON.parse(answer(x.herald_nodes())); },
    detail(index) { return JSON.parse(answer(x.herald_detail(index))); },
    /** The signed tree head of each bundled proof, in report order. */
    proofs() { return JSON.parse(answer(x.herald_proofs())); },
  };

}
