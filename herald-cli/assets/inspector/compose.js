// Compose and send: the page describes an envelope; `herald inspect
// --serve --key KEYFILE` signs it (the page never holds a secret key) and
// posts it to a conduit (CONDUIT.md); the receipt or the signed refusal
// joins the set and is verified here like everything else.

import { rfc3339 } from './people.js';

const $ = (id) => document.getElementById(id);
// The kinds the server signs only with --allow-lifecycle (PROFILE P8).
const LIFECYCLE = ['molt', 'deprecation', 'duress'];
const fromHex = (hex) => Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));

export function initCompose({ state, token, signer, run, select, message }) {
  const result = $('c-result');
  const say = (text, cls = '') => {
    const p = document.createElement('p');
    p.className = cls;
    p.textContent = text;
    result.append(p);
    return p;
  };
  if (!token || !signer) {
    $('signer').textContent = token
      ? 'Signing is off: start the inspector with `herald inspect --serve --key KEYFILE`.'
      : 'This copy of the inspector is a static page: it verifies, but cannot sign. Run `herald inspect --serve --key KEYFILE` to compose.';
    for (const b of ['c-sign', 'c-send']) $(b).disabled = true;
    return;
  }
  const names = () => state.names;
  const signerLine = () => {
    const p = $('signer');
    p.replaceChildren('Signed by ', names().el(signer.sigil), ` (${signer.sigil}), with the key file given to herald inspect --serve (the key stays in that process).`);
  };
  signerLine();
  state.onRun = () => { signerLine(); showTo(); };
  if (!signer.lifecycle) {
    for (const option of $('c-kind').options) {
      if (LIFECYCLE.includes(option.value)) {
        option.disabled = true;
        option.textContent = `${option.value} (needs --allow-lifecycle)`;
      }
    }
  }
  // The name of the recipient typed or picked, beside the field.
  const showTo = () => {
    const to = $('c-to').value.trim();
    const label = names().label(to);
    $('c-to-name').textContent = label ? `→ ${label}` : '';
    $('c-to-name').title = to;
  };
  $('c-to').addEventListener('input', showTo);

  const api = async (path, body) => {
    const response = await fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Herald-Token': token },
      body: JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(json.error ?? `HTTP ${response.status}`);
    return json;
  };

  // Selecting a node makes it the parent, addressed to its sender.
  state.onSelect = (node) => {
    if (!node.id || !node.trace) return;
    $('c-parent').value = node.id;
    $('c-trace').value = node.trace;
    if (node.from && node.from !== signer.sigil) $('c-to').value = node.from;
    showTo();
  };
  $('c-genesis').addEventListener('click', () => { $('c-parent').value = ''; $('c-trace').value = ''; });

  const sigils = () => {
    const list = $('sigils');
    const known = new Set(state.nodes.flatMap((n) => [n.from, n.to]).filter(Boolean));
    list.replaceChildren(...[...known].map((s) => Object.assign(document.createElement('option'), { value: s, label: names().call(s) })));
  };
  $('c-to').addEventListener('focus', sigils);

  let signed = null;
  $('c-sign').addEventListener('click', async () => {
    result.replaceChildren();
    try {
      const payload = JSON.parse($('c-payload').value || 'null');
      const attest = JSON.parse($('c-attest').value || '{}');
      const body = {
        kind: $('c-kind').value,
        to: $('c-to').value.trim() || null,
        payload,
        attestations: Object.entries(attest),
        parent: $('c-parent').value || null,
        trace: $('c-trace').value || null,
      };
      signed = await api('api/sign', body);
      state.inputs.push({ name: `composed ${signed.id.slice(0, 12)}`, bytes: fromHex(signed.envelope) });
      run();
      const s = say(`signed ${signed.id} (${signed.envelope.length / 2} bytes); verified here: ${statusOf(state, signed.id)}`);
      s.dataset.testid = 'signed';
      $('c-send').disabled = false;
    } catch (e) {
      say(`cannot sign: ${e.message}`, 'error');
    }
  });

  $('c-send').addEventListener('click', async () => {
    if (!signed) return;
    try {
      const answer = await api('api/send', { conduit: $('c-conduit').value.trim(), envelope: signed.envelope });
      const line = say(`conduit answered ${answer.status}${answer.reasons ? ` (${answer.reasons})` : ''}`);
      line.dataset.testid = 'send-status';
      if (answer.envelope) {
        if (answer.status === 201) {
          // The envelope as forwarded (with the relay's receipt): it replaces ours.
          state.inputs = state.inputs.filter((i) => i.name !== `composed ${signed.id.slice(0, 12)}`);
          state.inputs.push({ name: `receipt ${signed.id.slice(0, 12)}`, bytes: fromHex(answer.envelope) });
        } else {
          state.inputs.push({ name: `refusal of ${signed.id.slice(0, 12)}`, bytes: fromHex(answer.envelope) });
        }
        run();
        const at = answer.status === 201
          ? state.nodes.findIndex((n) => n.id === signed.id)
          : state.nodes.findIndex((n) => n.parent === signed.id && n.kind === 'refusal');
        if (at >= 0) {
          select(at);
          const detail = state.verifier.detail(at);
          if (answer.status === 201) {
            const receipts = detail.signatures.filter((s) => s.scope === 'conduit_receipt');
            const r = say(receipts.length
              ? `receipt: ${receipts.map((s) => `${s.scope} by ${names().full(s.by)} at ${s.ts != null ? rfc3339(s.ts) : '?'} — ${s.verdict}`).join('; ')}${answer.index != null ? `; log index ${answer.index}` : ''}`
              : `accepted${answer.index != null ? ` at log index ${answer.index}` : ''} (no relay receipt: a pass-through conduit)`);
            r.dataset.testid = 'receipt';
          } else {
            const r = say(`signed refusal from ${names().full(state.nodes[at].from)}: ${detail.payload ?? ''} — ${state.nodes[at].status}`);
            r.dataset.testid = 'refusal';
          }
        }
      } else if (answer.text) {
        say(answer.text);
      }
    } catch (e) {
      say(`cannot send: ${e.message}`, 'error');
      message(`send failed: ${e.message}`, 'error');
    }
  });
}

function statusOf(state, id) {
  const n = state.nodes.find((x) => x.id === id);
  return n ? n.status : 'not found';
}
