// The trace DAG: dagre (vendored) lays it out, this draws it as SVG.
// Up to MAX_DRAWN nodes it draws every node; above, the neighbourhood of
// the selection (its ancestors and descendants, nearest first), so a
// 10 000-envelope trace stays responsive; the list below has them all.

import { cut, rfc3339 } from './people.js';

export const MAX_DRAWN = 300;
const W = 236, H = 70;
// Drawn at most this much larger than laid out, and at least this much smaller.
const MAX_SCALE = 1.5, MIN_SCALE = 0.6;
const SVG = 'http://www.w3.org/2000/svg';
const LIFECYCLE = new Set(['birth', 'molt', 'deprecation', 'refusal', 'duress', 'posthumous_citation']);

/** Which node indices to draw around `center` (all when few). */
export function visible(nodes, graph, center) {
  if (nodes.length <= MAX_DRAWN) return nodes.map((_, i) => i);
  const seen = new Set();
  const queue = [center ?? 0];
  while (queue.length && seen.size < MAX_DRAWN) {
    const i = queue.shift();
    if (seen.has(i)) continue;
    seen.add(i);
    for (const p of graph.parents[i]) queue.push(p);
    for (const c of graph.children[i]) queue.push(c);
  }
  return [...seen].sort((a, b) => a - b);
}

/**
 * Parent and child indices of every node, as the audit links them: by id,
 * owned by the first envelope carrying it whose id is its own (an
 * `id_mismatch` is nobody's parent; P13 revision 2).
 */
export function links(nodes) {
  const byId = new Map();
  nodes.forEach((n, i) => {
    if (n.id && n.trace && !n.codes.includes('id_mismatch') && !byId.has(n.id)) byId.set(n.id, i);
  });
  const parents = nodes.map(() => []);
  const children = nodes.map(() => []);
  nodes.forEach((n, i) => {
    const p = n.parent != null ? byId.get(n.parent) : undefined;
    if (p !== undefined && p !== i) { parents[i].push(p); children[p].push(i); }
  });
  return { byId, parents, children };
}

/**
 * Draw `shown` (indices) of `nodes` into `host`, scaled to fill `room`
 * (within MIN_SCALE and MAX_SCALE); `onSelect(i)` on click. Each node
 * says who wrote to whom, what, and when (`facts(i)`, `names`), and a
 * co-signed one carries its signature count.
 */
export function draw(host, nodes, graph, shown, { selected, matches, onSelect, facts, names, room }) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 18, ranksep: 36, marginx: 10, marginy: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  const inView = new Set(shown);
  for (const i of shown) {
    g.setNode(`n${i}`, { width: W, height: H, index: i });
    const n = nodes[i];
    if (n.parent && graph.parents[i].length === 0) {
      // The parent is not in the set: a broken chain, drawn to a ghost.
      g.setNode(`m${i}`, { width: W, height: 30, ghost: n.parent });
      g.setEdge(`m${i}`, `n${i}`, { broken: true });
    }
  }
  for (const i of shown) {
    for (const p of graph.parents[i]) {
      if (!inView.has(p)) continue;
      const broken = nodes[i].codes.includes('trace_mismatch');
      g.setEdge(`n${p}`, `n${i}`, { broken });
    }
  }
  dagre.layout(g);
  const { width, height } = g.graph();
  const svg = document.createElementNS(SVG, 'svg');
  const fit = room && room.width > 0 && room.height > 0
    ? Math.min((room.width - 20) / width, (room.height - 20) / height)
    : 1;
  const scale = Math.max(MIN_SCALE, Math.min(MAX_SCALE, fit));
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', Math.round(width * scale));
  svg.setAttribute('height', Math.round(height * scale));
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `trace graph of ${shown.length} envelopes`);
  for (const e of g.edges()) {
    const edge = g.edge(e);
    const path = document.createElementNS(SVG, 'polyline');
    path.setAttribute('points', edge.points.map((p) => `${p.x},${p.y}`).join(' '));
    path.setAttribute('class', edge.broken ? 'edge broken' : 'edge');
    path.setAttribute('marker-end', 'url(#arrow)');
    svg.append(path);
  }
  svg.insertAdjacentHTML('afterbegin', '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#57606a"/></marker></defs>');
  for (const v of g.nodes()) {
    const box = g.node(v);
    const el = document.createElementNS(SVG, 'g');
    const rect = document.createElementNS(SVG, 'rect');
    rect.setAttribute('class', 'box');
    rect.setAttribute('x', box.x - box.width / 2);
    rect.setAttribute('y', box.y - box.height / 2);
    rect.setAttribute('width', box.width);
    rect.setAttribute('height', box.height);
    el.append(rect);
    if (box.ghost) {
      el.setAttribute('class', 'node ghost');
      text(el, box.x, box.y + 4, `missing parent ${box.ghost.slice(0, 12)}`);
      svg.append(el);
      continue;
    }
    const i = box.index;
    const n = nodes[i];
    const classes = ['node', n.status];
    if (n.kind && LIFECYCLE.has(n.kind)) classes.push('lifecycle');
    if (n.status === 'valid' && n.codes.length) classes.push('warned');
    if (i === selected) classes.push('selected');
    if (matches && matches.has(i)) classes.push('match');
    if (matches && matches.size && !matches.has(i)) classes.push('dim');
    el.setAttribute('class', classes.join(' '));
    el.dataset.index = i;
    el.dataset.status = n.status;
    el.dataset.testid = 'node';
    rect.style.fill = `var(--${n.status})`;
    const f = facts(i);
    const kind = n.kind && n.kind !== 'message' ? ` · ${n.kind}` : '';
    const who = n.from ? names.call(n.from) : 'unparsed';
    const to = n.to ? ` → ${names.call(n.to)}` : '';
    const top = box.y - box.height / 2;
    text(el, box.x, top + 18, cut(`${who}${to}${kind}`, 32), 'who');
    text(el, box.x, top + 37, f.said ? `“${cut(f.said, 30)}”` : n.id ? '' : 'did not parse', 'said');
    text(el, box.x, top + 56, n.id ? `${rfc3339(n.ts).replace('T', ' ')} · ${n.status}` : `malformed · ${n.status}`, 'meta');
    if (f.signers.length > 1) {
      // Co-signed: the count of signatures, on the node's corner.
      const mark = document.createElementNS(SVG, 'g');
      mark.setAttribute('class', 'cosigned');
      mark.dataset.testid = 'cosigned';
      const circle = document.createElementNS(SVG, 'circle');
      circle.setAttribute('cx', box.x + box.width / 2 - 4);
      circle.setAttribute('cy', top + 4);
      circle.setAttribute('r', 11);
      mark.append(circle);
      text(mark, box.x + box.width / 2 - 4, top + 8, `✎${f.signers.length}`);
      el.append(mark);
    }
    const title = document.createElementNS(SVG, 'title');
    const signed = f.signers.map((s) => `${names.full(s.by)} (${s.scope ?? '?'})`).join('\n  ');
    title.textContent = [
      n.id ?? 'unparsed input',
      `${n.status}${n.codes.length ? ': ' + n.codes.join(', ') : ''}`,
      n.from ? `from ${names.full(n.from)}` : '',
      n.to ? `to ${names.full(n.to)}` : '',
      n.ts != null ? `at ${rfc3339(n.ts)} (${n.ts})` : '',
      f.said ? `says: ${f.said}` : '',
      signed ? `signed by\n  ${signed}` : '',
    ].filter(Boolean).join('\n');
    el.append(title);
    el.addEventListener('click', () => onSelect(i));
    svg.append(el);
  }
  host.replaceChildren(svg);
}

function text(parent, x, y, value, cls) {
  const t = document.createElementNS(SVG, 'text');
  if (cls) t.setAttribute('class', cls);
  t.setAttribute('x', x);
  t.setAttribute('y', y);
  t.setAttribute('text-anchor', 'middle');
  t.textContent = value;
  parent.append(t);
}
