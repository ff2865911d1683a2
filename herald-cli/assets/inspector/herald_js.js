/* @ts-self-types="./herald_js.d.ts" */

/**
 * A signed envelope: its canonical bytes, decoded strictly (P1, P3).
 * Signatures are checked by `verify`, not here.
 */
export class Envelope {
    static __wrap(ptr) {
        const obj = Object.create(Envelope.prototype);
        obj.__wbg_ptr = ptr;
        EnvelopeFinalization.register(obj, obj.__wbg_ptr, obj);
        return obj;
    }
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        EnvelopeFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_envelope_free(ptr, 0);
    }
    /**
     * The value of the first attestation of type `ty`, or undefined.
     * @param {string} ty
     * @returns {any}
     */
    attestation(ty) {
        const ptr0 = passStringToWasm0(ty, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.envelope_attestation(this.__wbg_ptr, ptr0, len0);
        return ret;
    }
    /**
     * The attestations: `[{type, value}]`.
     * @returns {any}
     */
    get attestations() {
        const ret = wasm.envelope_attestations(this.__wbg_ptr);
        return ret;
    }
    /**
     * The canonical bytes (what is stored, sent and verified).
     * @returns {Uint8Array}
     */
    get bytes() {
        const ret = wasm.envelope_bytes(this.__wbg_ptr);
        var v1 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        return v1;
    }
    /**
     * A copy with one more signature by `key` in `scope` (P5, P6), with an
     * optional claimed `ts`.
     * @param {SigningKey} key
     * @param {string} scope
     * @param {number | null} [ts]
     * @returns {Envelope}
     */
    cosign(key, scope, ts) {
        _assertClass(key, SigningKey);
        const val2 = +(isLikeNone(ts) ? 0 : ts);
        const ptr0 = passStringToWasm0(scope, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.envelope_cosign(this.__wbg_ptr, key.__wbg_ptr, ptr0, len0, !isLikeNone(ts), val2);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Envelope.__wrap(ret[0]);
    }
    /**
     * Decode envelope bytes strictly; throws with `code` the P11 reason.
     * @param {Uint8Array | number[]} bytes
     * @returns {Envelope}
     */
    static decode(bytes) {
        const ptr0 = passArray8ToWasm0(bytes, wasm.__wbindgen_malloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.envelope_decode(ptr0, len0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Envelope.__wrap(ret[0]);
    }
    /**
     * `expires`, or undefined.
     * @returns {number | undefined}
     */
    get expires() {
        const ret = wasm.envelope_expires(this.__wbg_ptr);
        return ret[0] === 0 ? undefined : ret[1];
    }
    /**
     * `from`, a sigil.
     * @returns {string}
     */
    get from() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.envelope_from(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * The id, lowercase hex.
     * @returns {string}
     */
    get idHex() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.envelope_idHex(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * The id carried on the wire (32 bytes).
     * @returns {Uint8Array}
     */
    get id() {
        const ret = wasm.envelope_id(this.__wbg_ptr);
        var v1 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        return v1;
    }
    /**
     * `kind` (P7), `message` when absent.
     * @returns {string}
     */
    get kind() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.envelope_kind(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * `nonce` (16 bytes).
     * @returns {Uint8Array}
     */
    get nonce() {
        const ret = wasm.envelope_nonce(this.__wbg_ptr);
        var v1 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        return v1;
    }
    /**
     * `parent` (32 bytes), undefined for a genesis.
     * @returns {Uint8Array | undefined}
     */
    get parent() {
        const ret = wasm.envelope_parent(this.__wbg_ptr);
        let v1;
        if (ret[0] !== 0) {
            v1 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
            wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        }
        return v1;
    }
    /**
     * The payload as a JavaScript value.
     * @returns {any}
     */
    get payload() {
        const ret = wasm.envelope_payload(this.__wbg_ptr);
        return ret;
    }
    /**
     * A reply to this envelope signed by `key` (see `reply`).
     * @param {SigningKey} key
     * @param {any} payload
     * @param {any} options
     * @returns {Envelope}
     */
    reply(key, payload, options) {
        _assertClass(key, SigningKey);
        const ret = wasm.envelope_reply(this.__wbg_ptr, key.__wbg_ptr, payload, options);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Envelope.__wrap(ret[0]);
    }
    /**
     * The signature maps: `{alg, by, scope, sig, ts?}` each.
     * @returns {any}
     */
    get signatures() {
        const ret = wasm.envelope_signatures(this.__wbg_ptr);
        return ret;
    }
    /**
     * The display form (P3: JSON, byte strings as lowercase hex); for
     * reading only, never hashed or signed.
     * @returns {string}
     */
    toDisplayJson() {
        let deferred2_0;
        let deferred2_1;
        try {
            const ret = wasm.envelope_toDisplayJson(this.__wbg_ptr);
            var ptr1 = ret[0];
            var len1 = ret[1];
            if (ret[3]) {
                ptr1 = 0; len1 = 0;
                throw takeFromExternrefTable0(ret[2]);
            }
            deferred2_0 = ptr1;
            deferred2_1 = len1;
            return getStringFromWasm0(ptr1, len1);
        } finally {
            wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
        }
    }
    /**
     * `Envelope(<id hex>, from <sigil>, <kind>)`.
     * @returns {string}
     */
    toString() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.envelope_toString(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * `to`, a sigil, or undefined.
     * @returns {string | undefined}
     */
    get to() {
        const ret = wasm.envelope_to(this.__wbg_ptr);
        let v1;
        if (ret[0] !== 0) {
            v1 = getStringFromWasm0(ret[0], ret[1]);
            wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        }
        return v1;
    }
    /**
     * `trace`, lowercase hex.
     * @returns {string}
     */
    get traceHex() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.envelope_traceHex(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * `trace` (32 bytes).
     * @returns {Uint8Array}
     */
    get trace() {
        const ret = wasm.envelope_trace(this.__wbg_ptr);
        var v1 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        return v1;
    }
    /**
     * `ts`, Unix seconds.
     * @returns {number}
     */
    get ts() {
        const ret = wasm.envelope_ts(this.__wbg_ptr);
        return ret;
    }
}
if (Symbol.dispose) Envelope.prototype[Symbol.dispose] = Envelope.prototype.free;

/**
 * One inspector session (the page's inputs, keyrings and required
 * scopes, then the report of their audit as one set, CLI.md).
 */
export class Inspection {
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        InspectionFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_inspection_free(ptr, 0);
    }
    /**
     * Add an input (an envelope, a CBOR sequence or a bundle) named
     * `name` (made unique in the session).
     * @param {string} name
     * @param {Uint8Array | number[]} bytes
     */
    addInput(name, bytes) {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(name, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passArray8ToWasm0(bytes, wasm.__wbindgen_malloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        wasm.inspection_addInput(this.__wbg_ptr, ptr0, len0, ptr1, len1);
    }
    /**
     * Add keyring text (CLI.md *Keyring files*): the number of keys; a bad
     * line throws with the message `herald verify --keyring` gives.
     * @param {string} name
     * @param {string} text
     * @returns {number}
     */
    addKeyring(name, text) {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(name, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.inspection_addKeyring(this.__wbg_ptr, ptr0, len0, ptr1, len1);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return ret[0] >>> 0;
    }
    /**
     * What the Heralds of the last audit said about each certification
     * given (JSON array of `{id, herald, subject, claim, counts, why}`).
     * @returns {string}
     */
    certifications() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.inspection_certifications(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * The detail of report entry `index` (JSON object), or undefined past
     * the end.
     * @param {number} index
     * @returns {string | undefined}
     */
    detail(index) {
        const ret = wasm.inspection_detail(this.__wbg_ptr, index);
        let v1;
        if (ret[0] !== 0) {
            v1 = getStringFromWasm0(ret[0], ret[1]);
            wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        }
        return v1;
    }
    /**
     * An empty session.
     */
    constructor() {
        const ret = wasm.inspection_new();
        this.__wbg_ptr = ret;
        InspectionFinalization.register(this, this.__wbg_ptr, this);
        return this;
    }
    /**
     * The nodes of the last report (JSON array, report order).
     * @returns {string}
     */
    nodes() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.inspection_nodes(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * The signed tree head of each bundled proof of the last report (JSON
     * array, report order; `null` for one that did not decode).
     * @returns {string}
     */
    proofs() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.inspection_proofs(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * Require a valid signature in `scope` (`herald verify --require`).
     * @param {string} scope
     */
    requireScope(scope) {
        const ptr0 = passStringToWasm0(scope, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.inspection_requireScope(this.__wbg_ptr, ptr0, len0);
        if (ret[1]) {
            throw takeFromExternrefTable0(ret[0]);
        }
    }
    /**
     * Set the Herald list (`herald verify --heralds`, PROFILE P14), after
     * the tlog-policy naming each Herald's log: the Heralds and the
     * threshold (JSON `{threshold, heralds: [{sigil, label}]}`); a bad
     * list throws.
     * @param {string} name
     * @param {string} text
     * @returns {string}
     */
    setHeralds(name, text) {
        let deferred4_0;
        let deferred4_1;
        try {
            let ptr0, len0, ptr1, len1;
            try {
                ptr0 = passStringToWasm0(name, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
                len0 = WASM_VECTOR_LEN;
                ptr1 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
                len1 = WASM_VECTOR_LEN;
            } catch (e) {
                if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
                if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
                throw e;
            }
            const ret = wasm.inspection_setHeralds(this.__wbg_ptr, ptr0, len0, ptr1, len1);
            var ptr3 = ret[0];
            var len3 = ret[1];
            if (ret[3]) {
                ptr3 = 0; len3 = 0;
                throw takeFromExternrefTable0(ret[2]);
            }
            deferred4_0 = ptr3;
            deferred4_1 = len3;
            return getStringFromWasm0(ptr3, len3);
        } finally {
            wasm.__wbindgen_free(deferred4_0, deferred4_1, 1);
        }
    }
    /**
     * Set the tlog-policy (`herald verify --log-policy`); a bad line
     * throws.
     * @param {string} name
     * @param {string} text
     */
    setLogPolicy(name, text) {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(name, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.inspection_setLogPolicy(this.__wbg_ptr, ptr0, len0, ptr1, len1);
        if (ret[1]) {
            throw takeFromExternrefTable0(ret[0]);
        }
    }
    /**
     * Audit every input as one set at `now` (Unix seconds; undefined,
     * negative or not finite: no time checks): the `herald verify --json`
     * document, without its final newline.
     * @param {number | null} [now]
     * @returns {string}
     */
    verify(now) {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.inspection_verify(this.__wbg_ptr, !isLikeNone(now), isLikeNone(now) ? 0 : now);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
}
if (Symbol.dispose) Inspection.prototype[Symbol.dispose] = Inspection.prototype.free;

/**
 * Public keys pinned by the verifier (CLI.md keyring; P13: a key resolves
 * every sigil form of itself), with their labels.
 */
export class Keyring {
    static __wrap(ptr) {
        const obj = Object.create(Keyring.prototype);
        obj.__wbg_ptr = ptr;
        KeyringFinalization.register(obj, obj.__wbg_ptr, obj);
        return obj;
    }
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        KeyringFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_keyring_free(ptr, 0);
    }
    /**
     * Pin the public half of a signing key, with an optional label.
     * @param {SigningKey} key
     * @param {string | null} [label]
     */
    addKey(key, label) {
        _assertClass(key, SigningKey);
        var ptr0 = isLikeNone(label) ? 0 : passStringToWasm0(label, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        var len0 = WASM_VECTOR_LEN;
        const ret = wasm.keyring_addKey(this.__wbg_ptr, key.__wbg_ptr, ptr0, len0);
        if (ret[1]) {
            throw takeFromExternrefTable0(ret[0]);
        }
    }
    /**
     * Pin a public key (32 bytes), with an optional label.
     * @param {Uint8Array | number[]} key
     * @param {string | null} [label]
     */
    addPublicKey(key, label) {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passArray8ToWasm0(key, wasm.__wbindgen_malloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = isLikeNone(label) ? 0 : passStringToWasm0(label, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.keyring_addPublicKey(this.__wbg_ptr, ptr0, len0, ptr1, len1);
        if (ret[1]) {
            throw takeFromExternrefTable0(ret[0]);
        }
    }
    /**
     * An independent copy (what `verify` consumes, so this one stays usable).
     * @returns {Keyring}
     */
    copy() {
        const ret = wasm.keyring_copy(this.__wbg_ptr);
        return Keyring.__wrap(ret);
    }
    /**
     * Every key: `{sigil, sigilLong, publicKey (hex), label?}`.
     * @returns {Array<any>}
     */
    entries() {
        const ret = wasm.keyring_entries(this.__wbg_ptr);
        return ret;
    }
    /**
     * The keys labelled `label`, as entries (more than one is an
     * ambiguity for the caller).
     * @param {string} label
     * @returns {Array<any>}
     */
    labelled(label) {
        const ptr0 = passStringToWasm0(label, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.keyring_labelled(this.__wbg_ptr, ptr0, len0);
        return ret;
    }
    /**
     * The key a sigil of any form names (P13), as an entry, or undefined.
     * @param {string} sigil
     * @returns {any}
     */
    lookup(sigil) {
        const ptr0 = passStringToWasm0(sigil, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.keyring_lookup(this.__wbg_ptr, ptr0, len0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * An empty keyring, or the keys of keyring text.
     * @param {string | null} [text]
     */
    constructor(text) {
        var ptr0 = isLikeNone(text) ? 0 : passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        var len0 = WASM_VECTOR_LEN;
        const ret = wasm.keyring_new(ptr0, len0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        this.__wbg_ptr = ret[0];
        KeyringFinalization.register(this, this.__wbg_ptr, this);
        return this;
    }
    /**
     * Parse keyring text (CLI.md: `<sigil> ed25519 <hex> [label]` lines,
     * `#` comments); `origin` names it in errors. Returns the keys read.
     * @param {string} text
     * @param {string | null} [origin]
     * @returns {number}
     */
    parse(text, origin) {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = isLikeNone(origin) ? 0 : passStringToWasm0(origin, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.keyring_parse(this.__wbg_ptr, ptr0, len0, ptr1, len1);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return ret[0] >>> 0;
    }
    /**
     * The number of keys.
     * @returns {number}
     */
    get size() {
        const ret = wasm.keyring_size(this.__wbg_ptr);
        return ret >>> 0;
    }
    /**
     * The keyring file text: one labelled line per key.
     * @returns {string}
     */
    toString() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.keyring_toString(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
}
if (Symbol.dispose) Keyring.prototype[Symbol.dispose] = Keyring.prototype.free;

/**
 * One MCP session's trace: the keys it signs with (copies, inside this
 * instance), the tool identity, and the chain's latest envelope.
 */
export class McpSession {
    static __wrap(ptr) {
        const obj = Object.create(McpSession.prototype);
        obj.__wbg_ptr = ptr;
        McpSessionFinalization.register(obj, obj.__wbg_ptr, obj);
        return obj;
    }
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        McpSessionFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_mcpsession_free(ptr, 0);
    }
    /**
     * `notifications/cancelled` for the pending call `request`: an event
     * (`requestId`, `reason`) whose parent is that request.
     * @param {Uint8Array | number[]} request
     * @param {string} params
     * @returns {Envelope}
     */
    cancelled(request, params) {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passArray8ToWasm0(request, wasm.__wbindgen_malloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(params, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.mcpsession_cancelled(this.__wbg_ptr, ptr0, len0, ptr1, len1);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Envelope.__wrap(ret[0]);
    }
    /**
     * The envelope answering `request` with a JSON-RPC error object.
     * @param {Uint8Array | number[]} request
     * @param {string} error
     * @returns {Envelope}
     */
    error(request, error) {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passArray8ToWasm0(request, wasm.__wbindgen_malloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(error, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.mcpsession_error(this.__wbg_ptr, ptr0, len0, ptr1, len1);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Envelope.__wrap(ret[0]);
    }
    /**
     * Open a session: the tool identity's birth, then the genesis.
     * `initialize_params` and `initialize_result` are the JSON of the
     * client's `initialize` params and the server's result; `tools` the
     * JSON array of every page's tools (`undefined`: a server without
     * tools). Both opening envelopes are in `opening`, in trace order.
     * @param {SigningKey} agent
     * @param {SigningKey} sandbox
     * @param {string} initialize_params
     * @param {string} initialize_result
     * @param {string | null} [tools]
     * @returns {McpSession}
     */
    static open(agent, sandbox, initialize_params, initialize_result, tools) {
        _assertClass(agent, SigningKey);
        _assertClass(sandbox, SigningKey);
        let ptr0, len0, ptr1, len1, ptr2, len2;
        try {
            ptr0 = passStringToWasm0(initialize_params, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(initialize_result, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
            ptr2 = isLikeNone(tools) ? 0 : passStringToWasm0(tools, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len2 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 1, 1); }
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.mcpsession_open(agent.__wbg_ptr, sandbox.__wbg_ptr, ptr0, len0, ptr1, len1, ptr2, len2);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return McpSession.__wrap(ret[0]);
    }
    /**
     * The birth and the genesis, in the order they go into the trace.
     * @returns {Envelope[]}
     */
    get opening() {
        const ret = wasm.mcpsession_opening(this.__wbg_ptr);
        var v1 = getArrayJsValueFromWasm0(ret[0], ret[1]);
        wasm.__wbindgen_free(ret[0], ret[1] * 4, 4);
        return v1;
    }
    /**
     * The request envelope of a `tools/call` (`arguments` the JSON as
     * sent, `undefined` when absent).
     * @param {string} name
     * @param {string | null} [_arguments]
     * @returns {Envelope}
     */
    request(name, _arguments) {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(name, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = isLikeNone(_arguments) ? 0 : passStringToWasm0(_arguments, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.mcpsession_request(this.__wbg_ptr, ptr0, len0, ptr1, len1);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Envelope.__wrap(ret[0]);
    }
    /**
     * The result envelope answering the request `request` (its id):
     * `result` is the JSON of the `CallToolResult` as received;
     * `sandboxed` adds the `tool_sandbox` co-signature (false when the
     * wrapper itself answered: the sandbox ran nothing).
     * @param {Uint8Array | number[]} request
     * @param {string} result
     * @param {boolean} sandboxed
     * @returns {Envelope}
     */
    result(request, result, sandboxed) {
        const val3 = +sandboxed;
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passArray8ToWasm0(request, wasm.__wbindgen_malloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(result, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.mcpsession_result(this.__wbg_ptr, ptr0, len0, ptr1, len1, val3);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Envelope.__wrap(ret[0]);
    }
    /**
     * The tool identity's sigil.
     * @returns {string}
     */
    get toolSigil() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.mcpsession_toolSigil(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * A complete `tools/list` (JSON array of every page's tools) compared
     * with the pinned set: `undefined` when it is the same, else the
     * signed `tools/changed` event recording the pinned digest and the
     * new set.
     * @param {string} tools
     * @returns {Envelope | undefined}
     */
    toolsChanged(tools) {
        const ptr0 = passStringToWasm0(tools, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.mcpsession_toolsChanged(this.__wbg_ptr, ptr0, len0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return ret[0] === 0 ? undefined : Envelope.__wrap(ret[0]);
    }
    /**
     * The pinned tool set's digest, lowercase hex.
     * @returns {string}
     */
    get toolsDigest() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.mcpsession_toolsDigest(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * The trace id (the genesis id), lowercase hex.
     * @returns {string}
     */
    get traceHex() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.mcpsession_traceHex(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
}
if (Symbol.dispose) McpSession.prototype[Symbol.dispose] = McpSession.prototype.free;

/**
 * An Ed25519 signing key (P5) held inside the WebAssembly instance.
 */
export class SigningKey {
    static __wrap(ptr) {
        const obj = Object.create(SigningKey.prototype);
        obj.__wbg_ptr = ptr;
        SigningKeyFinalization.register(obj, obj.__wbg_ptr, obj);
        return obj;
    }
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        SigningKeyFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_signingkey_free(ptr, 0);
    }
    /**
     * The key as the text of a `herald keygen` secret key file (CLI.md
     * *Files*; write it with mode 0600).
     * @returns {string}
     */
    exportKeyFile() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.signingkey_exportKeyFile(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * The 32-byte secret seed. The only way a seed leaves the instance
     * besides `exportKeyFile`: the caller owns the copy and must wipe it.
     * @returns {Uint8Array}
     */
    exportSecretKey() {
        const ret = wasm.signingkey_exportSecretKey(this.__wbg_ptr);
        var v1 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        return v1;
    }
    /**
     * The key of a 32-byte RFC 8032 seed (test vectors, seeds held
     * elsewhere); prefer `generate`.
     * @param {Uint8Array | number[]} seed
     * @returns {SigningKey}
     */
    static fromSeed(seed) {
        const ptr0 = passArray8ToWasm0(seed, wasm.__wbindgen_malloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.signingkey_fromSeed(ptr0, len0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return SigningKey.__wrap(ret[0]);
    }
    /**
     * A new key from the platform's CSPRNG (WebCrypto
     * `crypto.getRandomValues`: browsers, Node >= 19).
     * @returns {SigningKey}
     */
    static generate() {
        const ret = wasm.signingkey_generate();
        return SigningKey.__wrap(ret);
    }
    /**
     * The key's keyring line (CLI.md): `<sigil> ed25519 <hex>`, with
     * ` <label>` when given.
     * @param {string | null} [label]
     * @returns {string}
     */
    keyringLine(label) {
        let deferred2_0;
        let deferred2_1;
        try {
            var ptr0 = isLikeNone(label) ? 0 : passStringToWasm0(label, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            var len0 = WASM_VECTOR_LEN;
            const ret = wasm.signingkey_keyringLine(this.__wbg_ptr, ptr0, len0);
            deferred2_0 = ret[0];
            deferred2_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
        }
    }
    /**
     * The 32-byte public key.
     * @returns {Uint8Array}
     */
    get publicKey() {
        const ret = wasm.signingkey_publicKey(this.__wbg_ptr);
        var v1 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        return v1;
    }
    /**
     * The long sigil (P2).
     * @returns {string}
     */
    get sigilLong() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.signingkey_sigilLong(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * The default sigil (P2).
     * @returns {string}
     */
    get sigil() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.signingkey_sigil(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * What `JSON.stringify` writes: the sigil and public key only.
     * @returns {any}
     */
    toJSON() {
        const ret = wasm.signingkey_toJSON(this.__wbg_ptr);
        return ret;
    }
    /**
     * `SigningKey(<sigil>)`: never the secret.
     * @returns {string}
     */
    toString() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.signingkey_toString(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
}
if (Symbol.dispose) SigningKey.prototype[Symbol.dispose] = SigningKey.prototype.free;

/**
 * Decode exactly one canonical CBOR item (P1, strict: trailing bytes,
 * non-shortest forms, tags and the like throw with `code` the P1 rule).
 * @param {Uint8Array | number[]} bytes
 * @returns {any}
 */
export function decode(bytes) {
    const ptr0 = passArray8ToWasm0(bytes, wasm.__wbindgen_malloc);
    const len0 = WASM_VECTOR_LEN;
    const ret = wasm.decode(ptr0, len0);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return takeFromExternrefTable0(ret[0]);
}

/**
 * The P1 canonical CBOR encoding of `value`.
 * @param {any} value
 * @returns {Uint8Array}
 */
export function encode(value) {
    const ret = wasm.encode(value);
    if (ret[3]) {
        throw takeFromExternrefTable0(ret[2]);
    }
    var v1 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
    wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
    return v1;
}

/**
 * A genesis envelope (`parent: null`, `trace` = its id, P4) signed by
 * `key`; `options`: `{to, ts, expires, kind, attestations}`.
 * @param {SigningKey} key
 * @param {any} payload
 * @param {any} options
 * @returns {Envelope}
 */
export function genesis(key, payload, options) {
    _assertClass(key, SigningKey);
    const ret = wasm.genesis(key.__wbg_ptr, payload, options);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return Envelope.__wrap(ret[0]);
}

/**
 * The protocol version envelopes carry (spec §3.1).
 * @returns {string}
 */
export function protocolVersion() {
    let deferred1_0;
    let deferred1_1;
    try {
        const ret = wasm.protocolVersion();
        deferred1_0 = ret[0];
        deferred1_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
    }
}

/**
 * A reply to `parent` (same trace, spec §3.3a) signed by `key`.
 * @param {SigningKey} key
 * @param {Envelope} parent
 * @param {any} payload
 * @param {any} options
 * @returns {Envelope}
 */
export function reply(key, parent, payload, options) {
    _assertClass(key, SigningKey);
    _assertClass(parent, Envelope);
    const ret = wasm.reply(key.__wbg_ptr, parent.__wbg_ptr, payload, options);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return Envelope.__wrap(ret[0]);
}

/**
 * The items of a CBOR sequence (RFC 8742; a trace file, CLI.md), each
 * well-formed and at most an envelope's size (P1), as `Uint8Array`s; an
 * empty input has none. Throws (`code` the rule) where it cannot be split.
 * @param {Uint8Array | number[]} bytes
 * @returns {Array<any>}
 */
export function splitSequence(bytes) {
    const ptr0 = passArray8ToWasm0(bytes, wasm.__wbindgen_malloc);
    const len0 = WASM_VECTOR_LEN;
    const ret = wasm.splitSequence(ptr0, len0);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return takeFromExternrefTable0(ret[0]);
}

/**
 * The `herald verify --json` document (without the final newline) for
 * `inputs` (each a `Uint8Array`: an envelope, a CBOR sequence or a
 * bundle), named by `names` in the reasons that name their input (the
 * command's file paths), against the keys of each keyring text of `keyring_texts`, at `now` (Unix seconds; the clock when undefined),
 * requiring a valid signature in each scope of `require`, with `skew`
 * seconds of clock skew (P10: 300); with `profile` (`"haven"` or
 * `"valp"`), that protocol's rules checked over the verified set with
 * `evidence_bytes[n]` the bytes of the `content_ref` `evidence_refs[n]`
 * (`herald verify --profile --evidence`, docs/valp.md).
 * @param {Array<any>} inputs
 * @param {Array<any>} names
 * @param {Array<any>} keyring_texts
 * @param {number | null | undefined} now
 * @param {Array<any>} require
 * @param {number | null | undefined} skew
 * @param {string | null | undefined} profile
 * @param {Array<any>} evidence_refs
 * @param {Array<any>} evidence_bytes
 * @returns {string}
 */
export function verifyJson(inputs, names, keyring_texts, now, require, skew, profile, evidence_refs, evidence_bytes) {
    let deferred5_0;
    let deferred5_1;
    try {
        const val2 = +(isLikeNone(now) ? 0 : now);
        const val3 = +(isLikeNone(skew) ? 0 : skew);
        var ptr0 = isLikeNone(profile) ? 0 : passStringToWasm0(profile, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        var len0 = WASM_VECTOR_LEN;
        const ret = wasm.verifyJson(inputs, names, keyring_texts, !isLikeNone(now), val2, require, !isLikeNone(skew), val3, ptr0, len0, evidence_refs, evidence_bytes);
        var ptr4 = ret[0];
        var len4 = ret[1];
        if (ret[3]) {
            ptr4 = 0; len4 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred5_0 = ptr4;
        deferred5_1 = len4;
        return getStringFromWasm0(ptr4, len4);
    } finally {
        wasm.__wbindgen_free(deferred5_0, deferred5_1, 1);
    }
}
function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        __wbg___wbindgen_boolean_get_4f1baf9a00be3c74: function(arg0) {
            const v = arg0;
            const ret = typeof(v) === 'boolean' ? v : undefined;
            return isLikeNone(ret) ? 0xFFFFFF : ret ? 1 : 0;
        },
        __wbg___wbindgen_is_bigint_5fa10641e039d3ef: function(arg0) {
            const ret = typeof(arg0) === 'bigint';
            return ret;
        },
        __wbg___wbindgen_is_function_741ff2bb612836f5: function(arg0) {
            const ret = typeof(arg0) === 'function';
            return ret;
        },
        __wbg___wbindgen_is_null_c22311b1cc228e3a: function(arg0) {
            const ret = arg0 === null;
            return ret;
        },
        __wbg___wbindgen_is_object_8b968c3ab8e96595: function(arg0) {
            const val = arg0;
            const ret = typeof(val) === 'object' && val !== null;
            return ret;
        },
        __wbg___wbindgen_is_undefined_be5b34249ff1fc15: function(arg0) {
            const ret = arg0 === undefined;
            return ret;
        },
        __wbg___wbindgen_jsval_eq_38d7bfbe4cc84039: function(arg0, arg1) {
            const ret = arg0 === arg1;
            return ret;
        },
        __wbg___wbindgen_number_get_934b640d0889af78: function(arg0, arg1) {
            const obj = arg1;
            const ret = typeof(obj) === 'number' ? obj : undefined;
            getDataViewMemory0().setFloat64((arg0 >>> 0) + 8 * 1, isLikeNone(ret) ? 0 : ret, true);
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 0, !isLikeNone(ret), true);
        },
        __wbg___wbindgen_string_get_7ce8eee7fd327545: function(arg0, arg1) {
            const obj = arg1;
            const ret = typeof(obj) === 'string' ? obj : undefined;
            var ptr1 = isLikeNone(ret) ? 0 : passStringToWasm0(ret, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            var len1 = WASM_VECTOR_LEN;
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 1, len1, true);
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 0, ptr1, true);
        },
        __wbg___wbindgen_throw_4c88d8bf264fd984: function(arg0, arg1) {
            throw new Error(getStringFromWasm0(arg0, arg1));
        },
        __wbg___wbindgen_typeof_ee4990276e02f607: function(arg0) {
            const ret = typeof arg0;
            return ret;
        },
        __wbg_constructor_76ad3e2c50d259de: function(arg0) {
            const ret = arg0.constructor;
            return ret;
        },
        __wbg_entries_7bb1459bd9b5c2b9: function(arg0) {
            const ret = Object.entries(arg0);
            return ret;
        },
        __wbg_envelope_new: function(arg0) {
            const ret = Envelope.__wrap(arg0);
            return ret;
        },
        __wbg_fromEntries_d7c8cd4202f2bba8: function() { return handleError(function (arg0) {
            const ret = Object.fromEntries(arg0);
            return ret;
        }, arguments); },
        __wbg_getPrototypeOf_684ea783c7170e41: function(arg0) {
            const ret = Object.getPrototypeOf(arg0);
            return ret;
        },
        __wbg_getRandomValues_8b6f1f663e6f188d: function() { return handleError(function (arg0, arg1) {
            globalThis.crypto.getRandomValues(getArrayU8FromWasm0(arg0, arg1));
        }, arguments); },
        __wbg_get_2080c49015e35254: function() { return handleError(function (arg0, arg1) {
            const ret = Reflect.get(arg0, arg1);
            return ret;
        }, arguments); },
        __wbg_get_d7176cfb76d71114: function(arg0, arg1) {
            const ret = arg0[arg1 >>> 0];
            return ret;
        },
        __wbg_get_unchecked_e6325ad374eff861: function(arg0, arg1) {
            const ret = arg0[arg1 >>> 0];
            return ret;
        },
        __wbg_instanceof_Object_97e16a01fd368661: function(arg0) {
            let result;
            try {
                result = arg0 instanceof Object;
            } catch (_) {
                result = false;
            }
            const ret = result;
            return ret;
        },
        __wbg_instanceof_Uint8Array_d7aeb0dcb3108fea: function(arg0) {
            let result;
            try {
                result = arg0 instanceof Uint8Array;
            } catch (_) {
                result = false;
            }
            const ret = result;
            return ret;
        },
        __wbg_isArray_bcf1376d0d732d08: function(arg0) {
            const ret = Array.isArray(arg0);
            return ret;
        },
        __wbg_length_186163212ffe79c3: function(arg0) {
            const ret = arg0.length;
            return ret;
        },
        __wbg_length_b03a0fabb109b1e9: function(arg0) {
            const ret = arg0.length;
            return ret;
        },
        __wbg_name_fd11f69c917c5670: function(arg0) {
            const ret = arg0.name;
            return ret;
        },
        __wbg_new_37eb45aaf5eeb820: function() {
            const ret = new Array();
            return ret;
        },
        __wbg_new_787b9fb330d55d78: function(arg0, arg1) {
            const ret = new Error(getStringFromWasm0(arg0, arg1));
            return ret;
        },
        __wbg_new_cd4348290afae586: function() {
            const ret = new Object();
            return ret;
        },
        __wbg_new_from_slice_b8daf545a41c6aa0: function(arg0, arg1) {
            const ret = new Uint8Array(getArrayU8FromWasm0(arg0, arg1));
            return ret;
        },
        __wbg_now_463ac581d2fc7ea3: function() {
            const ret = Date.now();
            return ret;
        },
        __wbg_of_e7ea0fcd535c1444: function(arg0, arg1) {
            const ret = Array.of(arg0, arg1);
            return ret;
        },
        __wbg_prototypesetcall_13162965d1fe7aa3: function(arg0, arg1, arg2) {
            Uint8Array.prototype.set.call(getArrayU8FromWasm0(arg0, arg1), arg2);
        },
        __wbg_push_c9f4893fc209f768: function(arg0, arg1) {
            const ret = arg0.push(arg1);
            return ret;
        },
        __wbg_set_2793479888329cb6: function() { return handleError(function (arg0, arg1, arg2) {
            const ret = Reflect.set(arg0, arg1, arg2);
            return ret;
        }, arguments); },
        __wbg_set_name_822e3903f3184979: function(arg0, arg1, arg2) {
            arg0.name = getStringFromWasm0(arg1, arg2);
        },
        __wbg_toString_ac62c4a5cb3e62c7: function() { return handleError(function (arg0, arg1) {
            const ret = arg0.toString(arg1);
            return ret;
        }, arguments); },
        __wbindgen_generic_0000000000000001: function(arg0) {
            // Cast intrinsic for `F64 -> Externref`.
            const ret = arg0;
            return ret;
        },
        __wbindgen_generic_0000000000000002: function(arg0, arg1) {
            // Cast intrinsic for `I128 -> Externref`.
            const ret = (BigInt.asUintN(64, arg0) | (arg1 << BigInt(64)));
            return ret;
        },
        __wbindgen_generic_0000000000000003: function(arg0, arg1) {
            // Cast intrinsic for `Ref(String) -> Externref`.
            const ret = getStringFromWasm0(arg0, arg1);
            return ret;
        },
        __wbindgen_generic_0000000000000004: function(arg0) {
            // Cast intrinsic for `U64 -> Externref`.
            const ret = BigInt.asUintN(64, arg0);
            return ret;
        },
        __wbindgen_init_externref_table: function() {
            const table = wasm.__wbindgen_externrefs;
            table.set(0, undefined);
            table.set(1024, undefined);
            table.set(1025, null);
            table.set(1026, true);
            table.set(1027, false);
        },
    };
    return {
        __proto__: null,
        "./herald_js_bg.js": import0,
    };
}

const EnvelopeFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_envelope_free(ptr, 1));
const InspectionFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_inspection_free(ptr, 1));
const KeyringFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_keyring_free(ptr, 1));
const McpSessionFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_mcpsession_free(ptr, 1));
const SigningKeyFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_signingkey_free(ptr, 1));

function addToExternrefTable0(obj) {
    const idx = wasm.__externref_table_alloc();
    wasm.__wbindgen_externrefs.set(idx, obj);
    return idx;
}

function _assertClass(instance, klass) {
    if (!(instance instanceof klass)) {
        throw new Error(`expected instance of ${klass.name}`);
    }
}

function getArrayJsValueFromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    const mem = getDataViewMemory0();
    const result = [];
    for (let i = ptr; i < ptr + 4 * len; i += 4) {
        result.push(wasm.__wbindgen_externrefs.get(mem.getUint32(i, true)));
    }
    wasm.__externref_drop_slice(ptr, len);
    return result;
}

function getArrayU8FromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return getUint8ArrayMemory0().subarray(ptr / 1, ptr / 1 + len);
}

let cachedDataViewMemory0 = null;
function getDataViewMemory0() {
    if (cachedDataViewMemory0 === null || cachedDataViewMemory0.buffer.detached === true || (cachedDataViewMemory0.buffer.detached === undefined && cachedDataViewMemory0.buffer !== wasm.memory.buffer)) {
        cachedDataViewMemory0 = new DataView(wasm.memory.buffer);
    }
    return cachedDataViewMemory0;
}

function getStringFromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return decodeText(getUint8ArrayMemory0().subarray(ptr, ptr + len));
}

let cachedUint8ArrayMemory0 = null;
function getUint8ArrayMemory0() {
    if (cachedUint8ArrayMemory0 === null || cachedUint8ArrayMemory0.byteLength === 0) {
        cachedUint8ArrayMemory0 = new Uint8Array(wasm.memory.buffer);
    }
    return cachedUint8ArrayMemory0;
}

function handleError(f, args) {
    try {
        return f.apply(this, args);
    } catch (e) {
        const idx = addToExternrefTable0(e);
        wasm.__wbindgen_exn_store(idx);
    }
}

function isLikeNone(x) {
    return x === undefined || x === null;
}

function passArray8ToWasm0(arg, malloc) {
    const ptr = malloc(arg.length * 1, 1) >>> 0;
    getUint8ArrayMemory0().set(arg, ptr / 1);
    WASM_VECTOR_LEN = arg.length;
    return ptr;
}

function passStringToWasm0(arg, malloc, realloc) {
    if (realloc === undefined) {
        const buf = cachedTextEncoder.encode(arg);
        const ptr = malloc(buf.length, 1) >>> 0;
        getUint8ArrayMemory0().subarray(ptr, ptr + buf.length).set(buf);
        WASM_VECTOR_LEN = buf.length;
        return ptr;
    }

    let len = arg.length;
    let ptr = malloc(len, 1) >>> 0;

    const mem = getUint8ArrayMemory0();

    let offset = 0;

    for (; offset < len; offset++) {
        const code = arg.charCodeAt(offset);
        if (code > 0x7F) break;
        mem[ptr + offset] = code;
    }
    if (offset !== len) {
        if (offset !== 0) {
            arg = arg.slice(offset);
        }
        ptr = realloc(ptr, len, len = offset + arg.length * 3, 1) >>> 0;
        const view = getUint8ArrayMemory0().subarray(ptr + offset, ptr + len);
        const ret = cachedTextEncoder.encodeInto(arg, view);

        offset += ret.written;
        ptr = realloc(ptr, len, offset, 1) >>> 0;
    }

    WASM_VECTOR_LEN = offset;
    return ptr;
}

function takeFromExternrefTable0(idx) {
    const value = wasm.__wbindgen_externrefs.get(idx);
    wasm.__externref_table_dealloc(idx);
    return value;
}

let cachedTextDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
cachedTextDecoder.decode();
const MAX_SAFARI_DECODE_BYTES = 2146435072;
let numBytesDecoded = 0;
function decodeText(bytes) {
    numBytesDecoded += bytes.length;
    if (numBytesDecoded >= MAX_SAFARI_DECODE_BYTES) {
        cachedTextDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
        cachedTextDecoder.decode();
        numBytesDecoded = bytes.length;
    }
    return cachedTextDecoder.decode(bytes);
}

const cachedTextEncoder = new TextEncoder();

if (!('encodeInto' in cachedTextEncoder)) {
    cachedTextEncoder.encodeInto = function (arg, view) {
        const buf = cachedTextEncoder.encode(arg);
        view.set(buf);
        return {
            read: arg.length,
            written: buf.length
        };
    };
}

let WASM_VECTOR_LEN = 0;

let wasmModule, wasmInstance, wasm;
function __wbg_finalize_init(instance, module) {
    wasmInstance = instance;
    wasm = instance.exports;
    wasmModule = module;
    cachedDataViewMemory0 = null;
    cachedUint8ArrayMemory0 = null;
    wasm.__wbindgen_start();
    return wasm;
}

async function __wbg_load(module, imports) {
    if (typeof Response === 'function' && module instanceof Response) {
        if (!module.ok) {
            throw new Error(`failed to fetch Wasm: ${module.status} ${module.statusText} fetching '${module.url}'`);
        }

        if (typeof WebAssembly.instantiateStreaming === 'function') {
            try {
                return await WebAssembly.instantiateStreaming(module, imports);
            } catch (e) {
                const validResponse = expectedResponseType(module.type);

                if (validResponse && module.headers.get('Content-Type') !== 'application/wasm') {
                    console.warn("`WebAssembly.instantiateStreaming` failed because your server does not serve Wasm with `application/wasm` MIME type. Falling back to `WebAssembly.instantiate` which is slower. Original error:\n", e);

                } else { throw e; }
            }
        }

        const bytes = await module.arrayBuffer();
        return await WebAssembly.instantiate(bytes, imports);
    } else {
        const instance = await WebAssembly.instantiate(module, imports);

        if (instance instanceof WebAssembly.Instance) {
            return { instance, module };
        } else {
            return instance;
        }
    }

    function expectedResponseType(type) {
        switch (type) {
            case 'basic': case 'cors': case 'default': return true;
        }
        return false;
    }
}

function initSync(module) {
    if (wasm !== undefined) return wasm;


    if (module !== undefined) {
        if (Object.getPrototypeOf(module) === Object.prototype) {
            ({module} = module)
        } else {
            console.warn('using deprecated parameters for `initSync()`; pass a single object instead')
        }
    }

    const imports = __wbg_get_imports();
    if (!(module instanceof WebAssembly.Module)) {
        module = new WebAssembly.Module(module);
    }
    const instance = new WebAssembly.Instance(module, imports);
    return __wbg_finalize_init(instance, module);
}

let __wbg_init_promise;
async function __wbg_init(module_or_path) {
    if (wasm !== undefined) return wasm;
    if (__wbg_init_promise === undefined) {
        __wbg_init_promise = __wbg_init_once(module_or_path);
        __wbg_init_promise.catch(() => { __wbg_init_promise = undefined; });
    }
    return __wbg_init_promise;
}

async function __wbg_init_once(module_or_path) {

    if (module_or_path !== undefined) {
        if (Object.getPrototypeOf(module_or_path) === Object.prototype) {
            ({module_or_path} = module_or_path)
        } else {
            console.warn('using deprecated parameters for the initialization function; pass a single object instead')
        }
    }

    if (module_or_path === undefined) {
        module_or_path = new URL('herald_js_bg.wasm', import.meta.url);
    }
    const imports = __wbg_get_imports();

    if (typeof module_or_path === 'string' || (typeof Request === 'function' && module_or_path instanceof Request) || (typeof URL === 'function' && module_or_path instanceof URL)) {
        module_or_path = fetch(module_or_path);
    }

    const { instance, module } = await __wbg_load(await module_or_path, imports);

    return __wbg_finalize_init(instance, module);
}

export { initSync, __wbg_init as default };
