// What the page shows people, in one place: names for sigils (keyring
// labels, CLI.md keyring lines `sigil:… ed25519 HEX [label]`; the raw sigil
// on hover), times (RFC 3339 UTC; the Unix seconds on hover) and what an
// envelope says (its payload as text).

// A keyring line with a label (CLI.md *Keyring*).
const KEYRING_LINE = /^(sigil:\S+)\s+ed25519\s+[0-9a-f]{64}\s+(\S.*?)\s*$/;

// What a self-described name is, on hover and in the legend (PROFILE P7).
export const SELF_DESCRIBED = "self-described: the key's own description from its birth envelope, not a keyring label (nobody vouched for it)";

/** Characters of a self-description shown before it is cut (as `herald verify`). */
const DESCRIBED_CHARS = 40;

/**
 * Sigil → label, from keyring text and from what the verifier resolved;
 * and sigil → self-description, for a key a birth in the set introduced
 * (PROFILE P7): shown quoted and marked, and only where no label is.
 */
export class Names {
  constructor() { this.labels = new Map(); this.described = new Map(); }

  /** Learn the labels of keyring text (lines without one are skipped). */
  addKeyring(text) {
    for (const line of text.split('\n')) {
      const m = KEYRING_LINE.exec(line.trim());
      if (m) this.learn(m[1], m[2]);
    }
  }

  learn(sigil, label) {
    if (sigil && label && !this.labels.has(sigil)) this.labels.set(sigil, label);
  }

  /** Learn that `sigil`'s key describes itself as `description` (its birth's). */
  describe(sigil, description) {
    if (sigil && description != null && !this.described.has(sigil)) this.described.set(sigil, description);
  }

  /** `sigil`'s self-description, quoted and cut, when it has no label; else undefined. */
  quoted(sigil) {
    if (!sigil || this.label(sigil) !== undefined || !this.described.has(sigil)) return undefined;
    const chars = [...this.described.get(sigil)];
    const shown = chars.slice(0, DESCRIBED_CHARS).join('');
    return `"${shown}${chars.length > DESCRIBED_CHARS ? '…' : ''}"`;
  }

  /** The label of `sigil`, or undefined. */
  label(sigil) { return sigil ? this.labels.get(sigil) : undefined; }

  /** What to call `sigil`: its label, else the sigil shortened. */
  call(sigil) {
    if (!sigil) return '—';
    return this.label(sigil) ?? this.quoted(sigil) ?? shortSigil(sigil);
  }

  /** A `<span class="who">` naming `sigil`, the sigil itself on hover. */
  el(sigil) {
    const span = document.createElement('span');
    span.className = 'who';
    span.textContent = this.call(sigil);
    if (sigil) span.title = sigil;
    if (this.quoted(sigil) !== undefined) {
      span.classList.add('self-described');
      span.dataset.testid = 'self-described';
      span.title = `${SELF_DESCRIBED}:\n"${this.described.get(sigil)}"\n${sigil}`;
    }
    return span;
  }

  /** `label (sigil:…)`, or the sigil alone: for text where both belong. */
  full(sigil) {
    const label = this.label(sigil);
    if (label) return `${label} (${sigil})`;
    const quoted = this.quoted(sigil);
    return quoted ? `${quoted} (self-described, ${sigil})` : sigil;
  }
}

/** `sigil:abcdefgh…`: enough to tell sigils apart at a glance. */
export function shortSigil(sigil) {
  return sigil.length > 20 ? `${sigil.slice(0, 18)}…` : sigil;
}

/** Unix seconds as RFC 3339 UTC (`2025-05-05T08:02:00Z`). */
export function rfc3339(ts) {
  if (ts == null || !Number.isFinite(Number(ts))) return '—';
  const date = new Date(Number(ts) * 1000);
  if (Number.isNaN(date.getTime())) return `${ts}`;
  return date.toISOString().replace(/\.000Z$/, 'Z');
}

/** A `<time>` element: RFC 3339 shown, the Unix seconds on hover. */
export function timeEl(ts) {
  const t = document.createElement('time');
  t.textContent = rfc3339(ts);
  if (ts != null) {
    t.dateTime = rfc3339(ts);
    t.title = `${ts} (Unix seconds)`;
  }
  return t;
}

/**
 * What an envelope says, as one line of text, from its P3 display form's
 * payload: a text payload itself; a map's `text`, `message`, `reason`,
 * `note` or `description` member; else the payload as compact JSON.
 */
export function said(payload) {
  if (payload == null) return '';
  if (typeof payload === 'string') return payload;
  if (typeof payload === 'object' && !Array.isArray(payload)) {
    for (const key of ['text', 'message', 'reason', 'note', 'description', 'claim']) {
      if (typeof payload[key] === 'string') return payload[key];
    }
  }
  return JSON.stringify(payload);
}

/** `text` cut to `n` characters, with an ellipsis when cut. */
export function cut(text, n) {
  const chars = [...text];
  return chars.length > n ? `${chars.slice(0, n - 1).join('')}…` : text;
}
