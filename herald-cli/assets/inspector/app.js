// The inspector page: inputs in, verdicts from the WebAssembly verifier,
// the DAG, a virtualised list, the selected node's panel, search.
import { loadVerifier } from './verifier.js';
import { draw, links, visible } from './graph.js';
import { initCompose } from './compose.js';
import { Names, rfc3339, said, timeEl } from './people.js';
import { applyHeralds, certificationsTable, certifiedLine, certifiedSection, isHeraldList, isLogPolicy } from './heralds.js';

const $ = (id) => document.getElementById(id);
const ROW = 24;

const state = {
  verifier: null,
  inputs: [],     // [{name, bytes}]
  keyrings: [],   // [{name, text}]
  policy: null,   // {name, text}: the tlog-policy (--log-policy)
  heraldList: null, // {name, text}: the Herald list (--heralds, PROFILE P14)
  listed: null,   // its Heralds and threshold, as the verifier read them
  judged: [],     // each certification given, as the Heralds judged it
  report: null,   // the `herald verify --json` document
  nodes: [],
  graph: null,
  selected: null,
  matches: null,
  names: new Names(),
  facts: [],      // per node, when first shown: what it says and who signed it
};
window.herald = state;

// Notes replace each other (the latest run is what matters); errors stay
// until Clear.
function message(text, kind = 'note') {
  if (kind === 'note') for (const old of $('messages').querySelectorAll('.note')) old.remove();
  const p = document.createElement('p');
  p.className = kind;
  p.textContent = text;
  $('messages').append(p);
}

// --- input -----------------------------------------------------------------

/** Bytes from pasted or dropped text: hex, else base64; null if neither. */
export function decodeText(text) {
  const clean = text.replace(/\s+/g, '');
  if (!clean.length) return null;
  if (clean.length % 2 === 0 && /^[0-9a-fA-F]+$/.test(clean)) {
    return Uint8Array.from(clean.match(/../g), (h) => parseInt(h, 16));
  }
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(clean)) {
    try {
      const std = clean.replace(/-/g, '+').replace(/_/g, '/');
      return Uint8Array.from(atob(std), (c) => c.charCodeAt(0));
    } catch { return null; }
  }
  return null;
}

// Keyring text (CLI.md): comment lines, then `sigil:… ed25519 HEX [label]`
// lines; a bad line is reported by the verifier, as `--keyring` does.
const isKeyringText = (text) => /^\s*(#.*\n\s*)*sigil:/.test(text);

async function addFiles(files) {
  for (const file of files) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    addBytes(file.name, bytes);
  }
  run();
}

function addBytes(name, bytes) {
  // A keyring is text; an envelope starts with a CBOR map head, never text.
  const printable = bytes.length > 0 && bytes.length < (1 << 20) && bytes.every((b) => b === 9 || b === 10 || b === 13 || (b >= 32 && b < 127));
  if (printable) {
    const text = new TextDecoder().decode(bytes);
    if (isKeyringText(text)) { state.keyrings.push({ name, text }); return; }
    if (isHeraldList(text)) { state.heraldList = { name, text }; return; }
    if (isLogPolicy(text)) { state.policy = { name, text }; return; }
    if (text.trim().startsWith('{')) {
      message(`${name}: the JSON display form is read by \`herald inspect --serve ${name}\`, not in the browser`, 'error');
      return;
    }
    const decoded = decodeText(text);
    if (decoded) { state.inputs.push({ name, bytes: decoded }); return; }
  }
  state.inputs.push({ name, bytes });
}

// --- verification ----------------------------------------------------------

function run() {
  const v = state.verifier;
  const t0 = performance.now();
  v.reset();
  for (const k of state.keyrings) {
    try { v.addKeyring(k.name, k.text); } catch (e) { message(`keyring ${e.message}`, 'error'); }
  }
  state.listed = applyHeralds(v, state, message);
  for (const i of state.inputs) v.addInput(i.name, i.bytes);
  state.report = JSON.parse(v.verify(Math.floor(Date.now() / 1000)));
  state.judged = state.listed ? v.certifications() : [];
  const tv = performance.now();
  state.nodes = v.nodes();
  state.facts = [];
  state.names = new Names();
  for (const k of state.keyrings) state.names.addKeyring(k.text);
  for (const h of state.listed?.heralds ?? []) state.names.learn(h.sigil, h.label);
  for (const n of state.nodes) state.names.learn(n.from, n.label);
  for (const n of state.nodes) state.names.describe(n.from, n.described);
  const t1 = performance.now();
  state.graph = links(state.nodes);
  state.selected = null;
  state.matches = null;
  render();
  state.onRun?.();
  const t2 = performance.now();
  state.timing = { count: state.nodes.length, verifyMs: tv - t0, nodesMs: t1 - tv, renderMs: t2 - t1, totalMs: t2 - t0 };
  document.body.dataset.verified = String(state.nodes.length);
  const s = state.report.summary;
  message(`verified ${state.nodes.length} entries in ${Math.round(tv - t0)} ms (graph nodes ${Math.round(t1 - tv)} ms), drawn in ${Math.round(t2 - t1)} ms (${s.valid} valid, ${s.partial} partial, ${s.invalid} invalid)`);
}

// --- views -----------------------------------------------------------------

function render() {
  const s = state.report.summary;
  const badge = $('badge');
  const worst = s.invalid ? 'invalid' : s.partial ? 'partial' : state.nodes.length ? 'valid' : 'idle';
  badge.className = `badge ${worst}`;
  badge.textContent = state.nodes.length
    ? `${s.valid} valid · ${s.partial} partial · ${s.invalid} invalid`
    : 'no input';
  renderSummary();
  renderGraph();
  renderList();
  $('panel').innerHTML = '<p class="hint">Select a node to see its display form, bytes, signatures and reasons.</p>';
}

function renderSummary() {
  const r = state.report;
  const box = $('summary');
  box.replaceChildren();
  if (!state.nodes.length) return;
  const table = el('table');
  table.append(row(['trace', 'genesis', 'leaves', 'valid', 'partial', 'invalid'], 'th'));
  for (const t of r.traces) {
    table.append(row([short(t.trace), t.genesis ? short(t.genesis) : 'not in the set', t.leaves.length, t.valid, t.partial, t.invalid]));
  }
  box.append(table);
  if (r.proofs && r.proofs.length) {
    const proofs = el('table');
    proofs.dataset.testid = 'proofs';
    const heads = state.verifier.proofs();
    proofs.append(row(['proof of', 'log', 'index', 'tree head (size, root, ts)', 'status', 'detail'], 'th'));
    r.proofs.forEach((p, i) => {
      const h = heads[i];
      const head = h ? `${h.size}, ${short(h.root)}…, ${rfc3339(h.ts)}` : '—';
      proofs.append(row([p.id ? short(p.id) : '—', p.log ?? '—', p.index ?? '—', head, p.status, p.detail]));
    });
    box.append(el('h3', 'Inclusion proofs'), proofs);
  }
  if (state.judged.length) {
    box.append(el('h3', `Certifications (${state.judged.filter((j) => j.counts).length} of ${state.judged.length} count)`), certificationsTable(state.judged, state.names, el));
  }
  if (r.unlisted) box.append(el('p', `${r.unlisted} more items that are not envelopes, not listed`));
}

function renderGraph() {
  const shown = visible(state.nodes, state.graph, state.selected ?? firstProblem());
  $('graph-note').textContent = shown.length < state.nodes.length
    ? `${state.nodes.length} envelopes: the graph shows the ${shown.length} nearest the selection (select in the list or search to move it); the list has all of them.`
    : '';
  draw($('graph'), state.nodes, state.graph, shown, {
    selected: state.selected,
    matches: state.matches,
    onSelect: select,
    // Each node's text costs a detail() of the verifier: a large
    // neighbourhood shows it only for the nodes already read (the list's).
    facts: shown.length <= GRAPH_TEXT ? facts : (i) => state.facts[i] ?? NO_FACTS,
    names: state.names,
    room: { width: $('graph').clientWidth, height: $('graph').clientHeight },
  });
}

// Up to this many nodes drawn, each says what its envelope says.
const GRAPH_TEXT = 100;
const NO_FACTS = Object.freeze({ said: '', signers: [] });

function firstProblem() {
  const i = state.nodes.findIndex((n) => n.status !== 'valid');
  return i < 0 ? 0 : i;
}

/**
 * What node `i` says and who signed it, from the verifier's detail (made
 * once, when the node is first shown): `{ said, signers: [{scope, by}] }`.
 */
export function facts(i) {
  let f = state.facts[i];
  if (f) return f;
  const n = state.nodes[i];
  f = { said: '', signers: [] };
  if (n.id) {
    const d = state.verifier.detail(i);
    try { f.said = said(JSON.parse(d.display).payload); } catch { f.said = d.payload ?? ''; }
    f.signers = d.signatures.map((s) => ({ scope: s.scope, by: s.by }));
    for (const s of d.signatures) state.names.learn(s.by, s.label);
  }
  state.facts[i] = f;
  return f;
}
state.factsOf = facts;

// The list: only the rows in view exist (10 000 entries stay light).
function renderList() {
  const list = $('list');
  const rows = state.matches ? [...state.matches] : state.nodes.map((_, i) => i);
  list.dataset.count = rows.length;
  $('list-spacer').style.height = `${rows.length * ROW}px`;
  const paint = () => {
    const first = Math.floor(list.scrollTop / ROW);
    const count = Math.ceil(list.clientHeight / ROW) + 2;
    const box = $('list-rows');
    box.style.transform = `translateY(${first * ROW}px)`;
    box.replaceChildren(...rows.slice(first, first + count).map((i) => {
      const n = state.nodes[i];
      const f = facts(i);
      const r = el('div');
      r.className = `list-row list-grid${i === state.selected ? ' selected' : ''}`;
      r.dataset.index = i;
      r.dataset.testid = 'row';
      const dot = el('span');
      const mark = el('span');
      mark.className = `dot ${n.status}`;
      dot.append(mark);
      dot.title = `${n.status}${n.codes.length ? ': ' + n.codes.join(', ') : ''}`;
      const cell = (cls, content, title) => {
        const c = el('span');
        c.className = cls;
        if (content instanceof Node) c.append(content); else c.textContent = content;
        if (title) c.title = title;
        return c;
      };
      const sigs = f.signers.length;
      r.append(
        dot,
        cell('num', String(i)),
        cell('time', n.ts != null ? timeEl(n.ts) : '—'),
        cell('from', n.from ? state.names.el(n.from) : '(unparsed)'),
        cell('to', n.to ? state.names.el(n.to) : ''),
        cell('kind', n.kind ?? ''),
        cell('said', f.said, f.said),
        cell(`sigs${sigs > 1 ? ' multi' : ''}`, sigs ? String(sigs) : '', sigs > 1 ? signedBy(f) : ''),
        cell('id', n.id ? n.id.slice(0, 12) : n.codes.join(','), n.id ?? ''),
      );
      r.addEventListener('click', () => select(i));
      return r;
    }));
  };
  list.onscroll = paint;
  state.paintList = paint;
  paint();
}

function select(i) {
  state.selected = i;
  renderGraph();
  state.paintList?.();
  renderPanel(i);
  state.onSelect?.(state.nodes[i]);
}

function renderPanel(i) {
  const n = state.nodes[i];
  const d = state.verifier.detail(i);
  const panel = $('panel');
  panel.replaceChildren();
  const head = el('h2');
  const badge = el('span', n.status);
  badge.className = `badge ${n.status}`;
  head.append(badge, ` envelope ${i}`, n.kind && n.kind !== 'message' ? ` · ${n.kind}` : '');
  panel.append(head);
  const f = facts(i);
  const certified = state.report.envelopes[i]?.certified ?? [];
  if (n.id) {
    // What was said, by whom, to whom, when, signed by whom: at a glance.
    const card = el('div');
    card.className = 'said-card';
    card.dataset.testid = 'said';
    const line = el('div');
    line.className = 'head';
    line.append(state.names.el(n.from));
    if (n.to) line.append(' → ', state.names.el(n.to));
    line.append(' · ', timeEl(n.ts));
    const quote = el('blockquote', f.said || '(no text)');
    const signed = el('div');
    signed.className = 'signed-by';
    signed.append('signed by ');
    f.signers.forEach((s, k) => {
      if (k) signed.append(', ');
      signed.append(state.names.el(s.by), ` (${s.scope ?? '?'})`);
    });
    card.append(line);
    if (certified.length) card.append(certifiedLine(certified, el));
    card.append(quote, signed);
    panel.append(card);
  }
  const who = (sigil) => {
    if (!sigil) return '—';
    const box = el('span');
    box.append(state.names.el(sigil), ' ', Object.assign(el('span', sigil), { className: 'sigil' }));
    return box;
  };
  const when = (ts) => {
    if (ts == null) return '—';
    const box = el('span');
    box.append(timeEl(ts), ` (${ts})`);
    return box;
  };
  panel.append(kv([
    ['id', n.id ?? 'did not parse'],
    ['from', who(n.from)],
    ['to', who(n.to)],
    ['kind', n.kind ?? '—'],
    ['parent', n.parent ?? 'none (genesis)'],
    ['trace', n.trace ?? '—'],
    ['ts', when(n.ts)],
    ['key source', d.key_source ?? '—'],
    ['source', `${d.input}, byte ${d.offset}, ${d.size} bytes`],
  ]));

  if (certified.length) panel.append(certifiedSection(certified, state.listed, state.names, el));

  const reasons = el('section');
  reasons.dataset.testid = 'reasons';
  reasons.append(el('h2', `Reasons (${d.reasons.length + d.unlisted_reasons.reduce((n, [, c]) => n + c, 0)})`));
  if (!d.reasons.length) reasons.append(el('p', 'None: every check passed.'));
  for (const [code, count] of d.unlisted_reasons) reasons.append(el('p', `… and ${count} more ${code}, not listed.`));
  for (const r of d.reasons) {
    const box = el('div');
    box.className = `reason${r.warning ? ' warning' : ''}`;
    box.dataset.code = r.code;
    const code = el('code', r.code);
    box.append(code, r.index != null ? ` (signature ${r.index})` : '', r.warning ? ' — warning' : '');
    if (r.detail) box.append(el('div', r.detail));
    if (r.explanation) box.append(el('div', r.explanation));
    if (r.section) {
      const a = el('a', `PROFILE.md ${r.section}`);
      a.href = `spec.html#${r.section}`;
      a.target = '_blank';
      a.rel = 'noopener';
      box.append(a);
    }
    reasons.append(box);
  }
  panel.append(reasons);

  if (d.signatures.length) {
    const table = el('table');
    table.className = 'sigs';
    table.dataset.testid = 'signatures';
    table.append(row(['#', 'scope', 'signer', 'verdict', 'claimed time (UTC)', 'key source'], 'th'));
    for (const s of d.signatures) {
      const tr = row([s.index, s.scope ?? '?', '', s.codes.length ? `${s.verdict}: ${s.codes.join(', ')}` : s.verdict, '', s.key_source ?? (s.index === 0 ? '—' : 'keyring / set')]);
      const signer = tr.children[2];
      if (s.by) signer.append(state.names.el(s.by), el('br'), Object.assign(el('span', s.by), { className: 'sigil' }));
      else signer.textContent = 'malformed';
      const time = tr.children[4];
      time.className = 'time';
      if (s.ts != null) time.append(timeEl(s.ts)); else time.textContent = '—';
      table.append(tr);
    }
    panel.append(el('h2', 'Signature chain'), table);
  }
  if (d.display) {
    const pre = el('pre', JSON.stringify(JSON.parse(d.display), null, 2));
    pre.dataset.testid = 'display';
    panel.append(el('h2', 'JSON display form (P3)'), pre);
  }
  if (d.payload) panel.append(el('h2', 'Payload (CBOR diagnostic)'), el('pre', d.payload));
  if (d.diagnostic) panel.append(el('h2', 'Envelope (CBOR diagnostic, RFC 8949 §8)'), el('pre', d.diagnostic));
  if (d.annotated.length) {
    const table = el('table');
    table.className = 'hex';
    table.dataset.testid = 'hex';
    for (const line of d.annotated.slice(0, 2000)) {
      const tr = el('tr');
      const off = el('td', String(line.offset).padStart(5, '0'));
      const hex = el('td', line.hex);
      hex.style.paddingLeft = `${line.depth * 1.2}em`;
      const note = el('td', line.note);
      note.className = 'note';
      tr.append(off, hex, note);
      table.append(tr);
    }
    panel.append(el('h2', 'Bytes (annotated, as cbor.me)'), table);
  }
}

// --- search ----------------------------------------------------------------

// Up to this many entries, search reads what every one says; above, what
// those already shown say (reading all of 10 000 would freeze the page).
const SEARCH_TEXT_ALL = 2000;
const saidOf = (i) => (state.nodes.length <= SEARCH_TEXT_ALL ? facts(i) : state.facts[i])?.said ?? '';

function search(query) {
  const q = query.trim().toLowerCase();
  if (!q) {
    state.matches = null;
  } else {
    state.matches = new Set();
    state.nodes.forEach((n, i) => {
      const hit = (n.id && n.id.startsWith(q))
        || (n.from && n.from.toLowerCase().includes(q))
        || (n.to && n.to.toLowerCase().includes(q))
        || (n.label && n.label.toLowerCase().includes(q))
        || (n.to && (state.names.label(n.to) ?? '').toLowerCase().includes(q))
        || n.codes.includes(q)
        || (q.length > 2 && saidOf(i).toLowerCase().includes(q));
      if (hit) state.matches.add(i);
    });
  }
  $('search-count').textContent = state.matches ? `${state.matches.size} match${state.matches.size === 1 ? '' : 'es'}` : '';
  $('list').scrollTop = 0;
  renderList();
  if (state.matches && state.matches.size) select([...state.matches][0]);
  else renderGraph();
}

// --- helpers ---------------------------------------------------------------

function el(tag, text) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  return e;
}
function row(cells, tag = 'td') {
  const tr = el('tr');
  for (const c of cells) tr.append(el(tag, String(c)));
  return tr;
}
function kv(pairs) {
  const table = el('table');
  table.className = 'kv';
  for (const [k, v] of pairs) {
    const tr = row([k, '']);
    if (v instanceof Node) tr.lastChild.append(v);
    else {
      tr.lastChild.textContent = String(v);
      tr.lastChild.className = 'mono';
    }
    table.append(tr);
  }
  return table;
}
const short = (hex) => hex.slice(0, 12);
/** `signed by alice (origin), carol (human_approval)`. */
function signedBy(f) {
  return `signed by ${f.signers.map((s) => `${state.names.call(s.by)} (${s.scope ?? '?'})`).join(', ')}`;
}

// --- start -----------------------------------------------------------------

async function start() {
  const wasm = await (await fetch('herald_js_bg.wasm')).arrayBuffer();
  state.verifier = await loadVerifier(wasm);
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => { e.preventDefault(); drop.classList.remove('over'); addFiles(e.dataTransfer.files); });
  $('files').addEventListener('change', async (e) => {
    await addFiles([...e.target.files]);
    e.target.value = ''; // choosing the same file again is a change too
  });
  $('paste-load').addEventListener('click', () => {
    const bytes = decodeText($('paste').value);
    if (!bytes) { message('the pasted text is neither hex nor base64', 'error'); return; }
    state.inputs.push({ name: 'pasted', bytes });
    run();
  });
  $('clear').addEventListener('click', () => { state.inputs = []; state.keyrings = []; state.policy = null; state.heraldList = null; $('messages').replaceChildren(); run(); });
  $('search').addEventListener('input', (e) => search(e.target.value));
  for (const b of document.querySelectorAll('nav button')) {
    b.addEventListener('click', () => {
      for (const o of document.querySelectorAll('nav button')) o.classList.toggle('active', o === b);
      $('inspect').hidden = b.dataset.tab !== 'inspect';
      $('compose').hidden = b.dataset.tab !== 'compose';
    });
  }

  // Served by `herald inspect --serve`: load its FILEs and keyrings.
  const token = await sessionToken();
  let signer = null;
  if (token) {
    const headers = { 'Herald-Token': token };
    const session = await (await fetch('api/session', { headers })).json();
    state.keyrings.push(...session.keyrings);
    for (const [n, name] of session.inputs.entries()) {
      const bytes = new Uint8Array(await (await fetch(`api/input/${n}`, { headers })).arrayBuffer());
      state.inputs.push({ name, bytes });
    }
    signer = session.signer;
  }
  initCompose({ state, token, signer, run, select, message });
  run();
  document.body.dataset.ready = 'true';
}

/**
 * The per-run token of `herald inspect --serve`: handed out of band, in the
 * fragment of the URL it printed (`#token=…`, which the browser never sends
 * to a server), then kept for this tab only and removed from the address
 * bar. '' on a static copy, or when the page was opened without it.
 */
async function sessionToken() {
  const m = /^#token=([0-9a-f]{64})$/.exec(location.hash);
  if (m) {
    sessionStorage.setItem('herald-token', m[1]);
    history.replaceState(null, '', location.pathname + location.search);
  }
  const token = m ? m[1] : sessionStorage.getItem('herald-token');
  // A server that answers 403 is `herald inspect --serve` without (or with
  // an older run's) token; a static host answers 404.
  const probe = await fetch('api/session', { headers: token ? { 'Herald-Token': token } : {} }).catch(() => null);
  if (probe && probe.status === 403) {
    sessionStorage.removeItem('herald-token');
    message('this page is served by `herald inspect --serve`: open the URL it printed, with its #token=…, to load its files and to sign', 'error');
    return '';
  }
  return probe && probe.ok ? token : '';
}

start().catch((e) => { message(`the inspector could not start: ${e.message}`, 'error'); throw e; });
