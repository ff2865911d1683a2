// Heralds in the page (PROFILE P14, docs/heralds.md): a dropped
// tlog-policy and Herald list are given to the verifier as `herald verify
// --log-policy POLICY --heralds LIST` takes them; files of certification
// items are inputs it judges. What a quorum certifies about a sender is
// in its report entry (`certified`: {claim, value, heralds}); shown here
// in the selected node's panel, beside the sender, and every
// certification's judgement in the summary. A Herald's word, not a proof
// (spec §2.3).

// The first line that is not blank or a comment.
const firstLine = (text) => text.split('\n').map((l) => l.trim()).find((l) => l && !l.startsWith('#')) ?? '';

/** A Herald list: `herald <sigil> ed25519 <hex> <origin> [URL] [label]` lines, `threshold N`. */
export const isHeraldList = (text) => /^(herald\s+sigil:|threshold\s+\d)/.test(firstLine(text));

/** A tlog-policy: `log`, `witness`, `group` and `quorum` lines. */
export const isLogPolicy = (text) => /^(log|witness|group|quorum)\s/.test(firstLine(text));

/**
 * Give the verifier `state.policy` and `state.heraldList` (the last of
 * each dropped); the list's Heralds and threshold, or null. Errors are
 * reported as `--log-policy` and `--heralds` report them.
 */
export function applyHeralds(v, state, message) {
  if (state.policy) {
    try { v.setLogPolicy(state.policy.name, state.policy.text); } catch (e) { message(`log policy ${e.message}`, 'error'); }
  }
  if (!state.heraldList) return null;
  try {
    return v.setHeralds(state.heraldList.name, state.heraldList.text);
  } catch (e) {
    message(`Herald list ${e.message}`, 'error');
    return null;
  }
}

/** A claim's value as people read it: a handle or text as is, a model by name, else JSON. */
export function claimValue(value) {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof value.name === 'string') return value.name;
  return JSON.stringify(value);
}

/** `2 of 3 listed Heralds`, or `2 Heralds` without a list at hand. */
function howMany(claim, listed) {
  const n = claim.heralds.length;
  return listed ? `${n} of ${listed.heralds.length} listed Heralds (threshold ${listed.threshold})` : `${n} Herald${n === 1 ? '' : 's'}`;
}

/** `handle alice@acme.com · model m-1 (certified)`: beside the sender in the card. */
export function certifiedLine(claims, el) {
  const line = el('div');
  line.className = 'certified-line';
  line.dataset.testid = 'certified-line';
  // A certified key is what resolved the sender (key source `herald`): named, not spelt out.
  line.append('certified: ', claims.map((c) => (c.claim === 'key' ? 'key' : `${c.claim} ${claimValue(c.value)}`)).join(' · '));
  return line;
}

/** The panel's section: each claim, its value, and the Heralds that certified it. */
export function certifiedSection(claims, listed, names, el) {
  const box = el('section');
  box.dataset.testid = 'certified';
  box.append(el('h2', `Certified by Heralds (${claims.length})`));
  const note = el('p', "What a quorum of the listed Heralds certifies about the sender (PROFILE P14): a Herald's word, not a proof (spec §2.3).");
  note.className = 'hint';
  box.append(note);
  const table = el('table');
  table.className = 'certified';
  const head = el('tr');
  for (const h of ['claim', 'value', 'certified by']) head.append(el('th', h));
  table.append(head);
  for (const c of claims) {
    const tr = el('tr');
    tr.dataset.claim = c.claim;
    // A key is 64 hex digits: shortened, the whole of it on hover.
    const shown = claimValue(c.value);
    const value = el('td', c.claim === 'key' && shown.length > 16 ? `${shown.slice(0, 16)}…` : shown);
    value.title = JSON.stringify(c.value);
    const by = el('td', `${howMany(c, listed)}: `);
    c.heralds.forEach((h, k) => { if (k) by.append(', '); by.append(names.el(h)); });
    tr.append(el('td', c.claim), value, by);
    table.append(tr);
  }
  box.append(table);
  return box;
}

/** The summary's table: every certification given and whether it counts, or the rule it broke. */
export function certificationsTable(judged, names, el) {
  const table = el('table');
  table.dataset.testid = 'certifications';
  const head = el('tr');
  for (const h of ['certification', 'Herald', 'subject', 'claim', 'counts']) head.append(el('th', h));
  table.append(head);
  for (const j of judged) {
    const tr = el('tr');
    tr.dataset.counts = String(j.counts);
    const who = (sigil) => { const td = el('td'); td.append(sigil ? names.el(sigil) : '—'); return td; };
    tr.append(el('td', j.id ? `${j.id.slice(0, 12)}…` : '(undecodable)'), who(j.herald), who(j.subject), el('td', j.claim ?? '—'), el('td', j.counts ? 'yes' : `no: ${j.why}`));
    table.append(tr);
  }
  return table;
}
