// The verifier, compiled to WebAssembly: the module of the npm package
// @herald-rs/core (crate herald-js, built by herald-js/inspector.sh) and
// its wasm-bindgen glue, herald_js.js. One `Inspection` holds the page's
// inputs, keyrings, tlog-policy and Herald list; answers are JSON text.
// Used by the page (app.js) and by the parity test in node.
import init, { Inspection } from './herald_js.js';

/** Instantiate the module from its bytes; the verifier's API. */
export async function loadVerifier(wasmBytes) {
  await init({ module_or_path: wasmBytes });
  let session = new Inspection();
  return {
    reset() { session.free(); session = new Inspection(); },
    addInput(name, bytes) { session.addInput(name, bytes); },
    /** Keys added; throws with the keyring error (CLI.md keyring syntax). */
    addKeyring(name, keyringText) { return session.addKeyring(name, keyringText); },
    requireScope(scope) { session.requireScope(scope); },
    /** The tlog-policy (`--log-policy`); throws on a bad line. */
    setLogPolicy(name, text) { session.setLogPolicy(name, text); },
    /** The Herald list (`--heralds`, PROFILE P14), after its policy: {threshold, heralds}. */
    setHeralds(name, text) { return JSON.parse(session.setHeralds(name, text)); },
    /** The `herald verify --json` document, as text. */
    verify(nowSeconds) { return session.verify(nowSeconds ?? undefined); },
    nodes() { return JSON.parse(session.nodes()); },
    detail(index) { return JSON.parse(session.detail(index) ?? 'null'); },
    /** The signed tree head of each bundled proof, in report order. */
    proofs() { return JSON.parse(session.proofs()); },
    /** Each certification given, as the Heralds judged it. */
    certifications() { return JSON.parse(session.certifications()); },
  };
}
