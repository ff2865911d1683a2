// End-to-end tests of `herald inspect --serve` in headless Chromium
// (docs/inspector.md *Tests*), driven by playwright-core with Debian's
// chromium.
//
//   node e2e.mjs --herald PATH --trace-writer PATH [--heralds-writer PATH] [--screenshot docs/inspector.png]
//
// --heralds-writer defaults to herald-heralds-writer beside --trace-writer
// (both test-kit binaries).
//
// Every server it starts listens on 127.0.0.1 port 0 and is stopped at the
// end; each wait is bounded. Timings are printed and written to
// $INSPECTOR_TIMINGS (JSON) when set.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const { values: opts } = parseArgs({
  options: {
    herald: { type: 'string' },
    'trace-writer': { type: 'string' },
    'heralds-writer': { type: 'string' },
    screenshot: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
  },
});
assert.ok(opts.herald && opts['trace-writer'], 'usage: e2e.mjs --herald PATH --trace-writer PATH [--screenshot PNG]');
if (!existsSync(opts.chromium)) {
  // Without a browser there is nothing to test; CI (HERALD_TEST_ALL=1) must have one.
  if (process.env.HERALD_TEST_ALL === '1') { console.error(`FAIL no chromium at ${opts.chromium} (HERALD_TEST_ALL=1)`); process.exit(1); }
  console.log(`skipped: the inspector browser tests need chromium at ${opts.chromium} (apt-get install chromium)`);
  process.exit(0);
}

// Every process started here is killed when this one exits, however it
// exits; the whole run is bounded.
const children = [];
process.on('exit', () => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL'); });
setTimeout(() => { console.error('FAIL the inspector tests took over 5 minutes'); process.exit(1); }, 300_000).unref();

const tmp = mkdtempSync(join(tmpdir(), 'herald-inspector-'));
const cleanups = [() => rmSync(tmp, { recursive: true, force: true })];
const timings = {};
let failed = 0;

async function test(name, body) {
  const t0 = performance.now();
  try {
    await body();
    console.log(`ok   ${name} (${Math.round(performance.now() - t0)} ms)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}\n${e.stack}`);
  }
}

/**
 * Start `herald inspect --serve ARGS`: the URL it printed (`open`, with
 * the token in its fragment), the server's base URL (`url`), the token,
 * its output and a stop function.
 */
async function serve(args) {
  const child = spawn(opts.herald, ['inspect', '--serve', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const log = { out: '', err: '' };
  child.stderr.on('data', (d) => { log.err += d; });
  const open = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line in 10 s: ${log.err}`)), 10_000);
    child.stdout.on('data', (d) => {
      log.out += d;
      const m = log.out.match(/^listening on (http:\/\/\S+)$/m);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => reject(new Error(`herald exited ${code}: ${log.err}`)));
  });
  const printed = /^(http:\/\/[^/]+)\/#token=([0-9a-f]{64})$/.exec(open);
  assert.ok(printed, `the listening line names the URL with its token: ${open}`);
  const [, url, token] = printed;
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.on('exit', resolve);
    child.kill('SIGINT');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
  cleanups.push(stop);
  return { open, url, token, log, stop };
}

// --- fixtures --------------------------------------------------------------
const demo = join(tmp, 'demo');
const made = spawnSync(opts.herald, ['demo', '--dir', demo], { encoding: 'utf8' });
assert.equal(made.status, 0, made.stderr);
const seedHex = readFileSync(join(demo, 'alice.key'), 'utf8').split('\n').find((l) => /^[0-9a-f]{64}$/.test(l));
assert.ok(seedHex, 'alice.key holds a hex seed');
const secrets = [seedHex, seedHex.toUpperCase(), Buffer.from(seedHex, 'hex').toString('base64')];
const noSecret = (where, text) => {
  for (const s of secrets) assert.ok(!text.includes(s), `${where} contains the secret key`);
};

const big = join(tmp, 'big');
spawnSync('mkdir', ['-p', big]);
const BIG = 10_000;
const wrote = spawnSync(opts['trace-writer'], [big, String(BIG), String(Math.floor(Date.now() / 1000) - 2 * BIG)], { encoding: 'utf8' });
assert.equal(wrote.status, 0, wrote.stderr);

// Two conduits (herald conduit serve, CONDUIT.md) on loopback: a relay and
// notary that knows the demo keys (it accepts: a receipt), and one that
// knows no key (it refuses, with a signed refusal).
assert.equal(spawnSync(opts.herald, ['keygen', '--output', join(tmp, 'conduit')]).status, 0);
async function conduit(args) {
  const child = spawn(opts.herald, ['conduit', 'serve', '--key', join(tmp, 'conduit.key'), '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`conduit: no listening line in 10 s: ${err}`)), 10_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => reject(new Error(`conduit exited ${code}: ${err}`)));
  });
  cleanups.push(() => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.on('exit', resolve);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  }));
  return url;
}
const relay = await conduit(['--state', join(tmp, 'relay'), '--roles', 'relay,notary', '--keyring', join(demo, 'keyring')]);
const stranger = await conduit(['--state', join(tmp, 'stranger')]);

// Heralds (PROFILE P14): a trace by alice, whose key no keyring holds; a
// Herald list (threshold 2 of 3), its tlog-policy and the certification
// items (test-kit's herald-heralds-writer: Heralds a and b certify alice's
// key, handle and model; c lies and has one expired certification).
const heraldsDir = join(tmp, 'heralds');
spawnSync('mkdir', ['-p', heraldsDir]);
const heraldsWriter = opts['heralds-writer'] ?? join(dirname(opts['trace-writer']), 'herald-heralds-writer');
const heraldsMade = spawnSync(heraldsWriter, [heraldsDir], { encoding: 'utf8' });
assert.equal(heraldsMade.status, 0, `${heraldsWriter}: ${heraldsMade.stderr}`);

// --- the browser -----------------------------------------------------------
const browser = await chromium.launch({ executablePath: opts.chromium, args: ['--no-sandbox'] });
cleanups.push(() => browser.close());
const server = await serve([join(demo, 'trace.cbor'), '--keyring', join(demo, 'keyring'), '--keyring', join(tmp, 'conduit.pub'), '--key', join(demo, 'alice.key')]);
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const bodies = [];
page.on('response', async (r) => { try { bodies.push(await r.text()); } catch { /* redirects, aborted */ } });
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
page.setDefaultTimeout(15_000);

async function loadFiles(files) {
  await page.click('#clear');
  await page.evaluate(() => { document.body.dataset.verified = ''; });
  await page.setInputFiles('#files', files);
  await page.waitForFunction(() => document.body.dataset.verified !== '');
}
const nodes = () => page.locator('[data-testid=node]');

await test('the demo trace loads and verifies when the page opens', async () => {
  await page.goto(server.open);
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(page.url(), `${server.url}/`, 'the token is taken out of the address bar');
  assert.equal(await nodes().count(), 6);
  const statuses = await nodes().evaluateAll((els) => els.map((e) => e.dataset.status));
  assert.deepEqual(statuses, Array(6).fill('valid'));
  assert.equal((await page.textContent('#badge')).trim(), '6 valid · 0 partial · 0 invalid');
  assert.match(await page.getAttribute('#badge', 'class'), /\bvalid\b/);
});

await test('clicking a node shows its panel: reasons, signature chain, display form, bytes', async () => {
  // The envelope Carol co-signed has two signatures.
  const count = await nodes().count();
  let cosigned = -1;
  for (let i = 0; i < count && cosigned < 0; i++) {
    await nodes().nth(i).click();
    if ((await page.locator('[data-testid=signatures] tr').count()) === 3) cosigned = i;
  }
  assert.ok(cosigned >= 0, 'one envelope has an origin and a co-signature');
  assert.equal(await page.textContent('[data-testid=reasons] h2'), 'Reasons (0)');
  const chain = await page.locator('[data-testid=signatures] tr').allTextContents();
  assert.match(chain[1], /origin/);
  assert.match(chain[2], /human_approval.*carol.*verified/);
  assert.match(await page.textContent('[data-testid=display]'), /"v": "herald\/0.2"/);
  assert.match(await page.textContent('[data-testid=hex]'), /text\(8\)"signatures"|"signatures"/);
  if (opts.screenshot) await page.screenshot({ path: opts.screenshot });
});

// What the demo trace says, from `herald inspect --json` (P3 display form).
const demoEnvelopes = spawnSync(opts.herald, ['inspect', '--json', join(demo, 'trace.cbor')], { encoding: 'utf8' })
  .stdout.trim().split('\n').map((l) => JSON.parse(l));
const textOf = (p) => (typeof p === 'string' ? p : p?.text ?? p?.reason ?? p?.description ?? '');
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

await test('what was said, by whom, to whom, when and signed by whom: graph, list and panel', async () => {
  assert.equal(demoEnvelopes.length, 6);
  const said = demoEnvelopes.map((e) => textOf(e.payload)).filter(Boolean);
  assert.ok(said.length >= 3, `the demo says things: ${said}`);
  // The words drawn on the nodes (not their hover titles).
  const graphText = (await page.locator('[data-testid=node] > text').allTextContents()).join('\n');
  const rows = page.locator('[data-testid=row]');
  assert.equal(await rows.count(), 6);
  const listText = (await rows.locator('.said').allTextContents()).join('\n');
  for (const text of said) {
    assert.ok(graphText.includes(text.slice(0, 20)), `graph shows ${JSON.stringify(text)}: ${graphText}`);
    assert.ok(listText.includes(text), `list shows ${JSON.stringify(text)}: ${listText}`);
  }
  // Times are RFC 3339 UTC, the Unix seconds on hover.
  const times = await rows.locator('.time time').evaluateAll((els) => els.map((e) => [e.textContent, e.title]));
  const seconds = new Set(demoEnvelopes.map((e) => `${e.ts} (Unix seconds)`));
  for (const [shown, title] of times) {
    assert.match(shown, RFC3339);
    assert.ok(seconds.has(title), title);
    assert.equal(new Date(shown).getTime() / 1000, Number.parseInt(title, 10));
  }
  // Names: keyring labels for from and to, the sigil on hover; never a raw sigil shown.
  const who = await rows.locator('.from .who, .to .who').evaluateAll((els) => els.map((e) => [e.textContent, e.title]));
  assert.ok(who.length >= 6);
  for (const [name, sigil] of who) {
    assert.ok(['alice', 'bob', 'carol'].includes(name), `a label, not ${name}`);
    assert.match(sigil, /^sigil:/);
  }
  assert.ok(!/sigil:/.test(graphText), `the graph names people by label: ${graphText}`);
  // The columns line up: every row's cells start where the head's do.
  const lefts = await page.evaluate(() => [document.getElementById('list-head'), ...document.querySelectorAll('.list-row')]
    .map((r) => [...r.children].map((c) => Math.round(c.getBoundingClientRect().left)).join()));
  assert.equal(new Set(lefts).size, 1, lefts.join('\n'));
  // Co-signed envelopes are marked on their node, with their signature count.
  const marked = await page.locator('[data-testid=node]:has([data-testid=cosigned])').evaluateAll((els) => els.map((e) => [e.dataset.index, e.textContent]));
  const cosigned = demoEnvelopes.map((e, i) => [i, e.signatures.length]).filter(([, n]) => n > 1);
  assert.equal(marked.length, cosigned.length, JSON.stringify(marked));
  assert.ok(marked.every(([, t]) => /✎2/.test(t)), JSON.stringify(marked));
  // The panel: the card, the names and the claimed time, whole and readable.
  await page.locator(`[data-testid=node][data-index="${marked[0][0]}"]`).click();
  const card = await page.textContent('[data-testid=said]');
  assert.match(card, /^(alice|bob|carol) → (alice|bob|carol) · \d{4}-\d\d-\d\dT[\d:]+Z/);
  assert.match(card, /signed by (alice|bob|carol) \(origin\), (alice|bob|carol) \(\w+\)/);
  const claimed = page.locator('[data-testid=signatures] td.time time');
  assert.equal(await claimed.count(), 1);
  assert.match(await claimed.textContent(), RFC3339);
  assert.match(await claimed.getAttribute('title'), /^\d+ \(Unix seconds\)$/);
  const inside = await page.evaluate(() => {
    const panel = document.getElementById('panel').getBoundingClientRect();
    const cell = document.querySelector('[data-testid=signatures] td.time').getBoundingClientRect();
    return cell.left >= panel.left && cell.right <= panel.right && document.getElementById('panel').scrollWidth <= document.getElementById('panel').clientWidth;
  });
  assert.ok(inside, 'the claimed-time column is inside the panel, not cut off');
  // The graph uses its pane: it fills most of its width or its height.
  const fill = await page.evaluate(() => {
    const pane = document.getElementById('graph');
    const svg = pane.querySelector('svg').getBoundingClientRect();
    return [svg.width / pane.clientWidth, svg.height / pane.clientHeight];
  });
  assert.ok(Math.max(...fill) > 0.75, `the graph fills ${fill.map((f) => Math.round(f * 100))}% of its pane`);
});

await test('the tabs switch: Compose shows its form on screen and hides Inspect (visibility, not the DOM)', async () => {
  const view = page.viewportSize();
  const shown = async (sel) => page.evaluate((s) => {
    const e = document.querySelector(s);
    const r = e.getBoundingClientRect();
    return { display: getComputedStyle(e).display, top: r.top, bottom: r.bottom, height: r.height };
  }, sel);
  await page.click('nav button[data-tab=compose]');
  const inspect = await shown('#inspect');
  assert.equal(inspect.display, 'none');
  assert.equal(inspect.height, 0);
  assert.equal(await page.locator('#graph').boundingBox(), null, 'the graph is not drawn');
  for (const sel of ['#compose-form', '#c-payload', '#c-sign']) {
    const box = await shown(sel);
    assert.notEqual(box.display, 'none', sel);
    assert.ok(box.height > 0 && box.top >= 0 && box.bottom <= view.height, `${sel} on screen: ${JSON.stringify(box)}`);
  }
  // And the pixels say so: the form's textarea is where the graph was.
  const shot = await page.screenshot({ clip: { x: 0, y: 0, width: view.width, height: view.height } });
  assert.ok(shot.length > 1000);
  const at = await page.evaluate(() => {
    const r = document.getElementById('c-payload').getBoundingClientRect();
    return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)?.id;
  });
  assert.equal(at, 'c-payload', 'the payload field is the topmost element at its own place');
  await page.click('nav button[data-tab=inspect]');
  assert.equal((await shown('#compose')).display, 'none');
  assert.notEqual((await shown('#inspect')).display, 'none');
  assert.ok(await page.locator('#graph svg').isVisible());
});

await test('compose names the signer and recipient by label; lifecycle kinds need --allow-lifecycle', async () => {
  await page.click('nav button[data-tab=compose]');
  const signer = await page.textContent('#signer');
  assert.match(signer, /^Signed by alice \(sigil:\S+\), with the key file/);
  assert.equal(await page.getAttribute('#signer .who', 'title'), (await page.evaluate(() => window.herald.nodes.find((n) => n.label === 'alice').from)));
  const bob = await page.evaluate(() => window.herald.nodes.find((n) => n.label === 'bob').from);
  await page.fill('#c-to', bob);
  assert.equal(await page.textContent('#c-to-name'), '→ bob');
  for (const kind of ['molt', 'deprecation', 'duress']) {
    assert.ok(await page.locator(`#c-kind option[value=${kind}]`).evaluate((o) => o.disabled), kind);
  }
  const refused = await fetch(`${server.url}/api/sign`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: server.url, 'Herald-Token': server.token },
    body: JSON.stringify({ kind: 'deprecation', payload: { reason: 'stolen' } }),
  });
  assert.equal(refused.status, 403);
  assert.match((await refused.json()).error, /--allow-lifecycle/);
  await page.fill('#c-to', '');
  await page.click('nav button[data-tab=inspect]');
});

await test('the tampered copy: exactly one invalid node, with id_mismatch and bad_signature', async () => {
  await loadFiles([join(demo, 'tampered.cbor'), join(demo, 'keyring')]);
  const statuses = await nodes().evaluateAll((els) => els.map((e) => e.dataset.status));
  assert.equal(statuses.length, 6);
  assert.equal(statuses.filter((s) => s === 'invalid').length, 1, statuses.join());
  assert.equal(statuses.filter((s) => s === 'valid').length, 5);
  await page.locator('[data-testid=node][data-status=invalid]').click();
  const codes = await page.locator('[data-testid=reasons] .reason').evaluateAll((els) => els.map((e) => e.dataset.code));
  assert.deepEqual([...codes].sort(), ['bad_signature', 'id_mismatch']);
  const text = await page.textContent('[data-testid=reasons]');
  assert.match(text, /content was changed after it was signed/);
  assert.equal(await page.getAttribute('.reason[data-code=id_mismatch] a', 'href'), 'spec.html#P4');
  await page.fill('#search', 'bad_signature');
  assert.equal(await page.getAttribute('#list', 'data-count'), '1');
  await page.fill('#search', '');
});

await test('a trace pasted as hex or base64 verifies the same', async () => {
  const bytes = readFileSync(join(demo, 'trace.cbor'));
  for (const text of [bytes.toString('hex').replace(/(.{64})/g, '$1\n'), bytes.toString('base64')]) {
    await page.click('#clear');
    await page.setInputFiles('#files', [join(demo, 'keyring')]);
    await page.waitForFunction(() => window.herald.keyrings.length === 1);
    await page.fill('#paste', text);
    await page.click('#paste-load');
    await page.waitForFunction(() => document.body.dataset.verified === '6');
    assert.equal((await page.textContent('#badge')).trim(), '6 valid · 0 partial · 0 invalid');
  }
  await page.fill('#paste', 'not hex, not base64!');
  await page.click('#paste-load');
  assert.match(await page.textContent('#messages'), /neither hex nor base64/);
});

await test('a bundle shows its inclusion proofs with their signed tree heads', async () => {
  const vectors = new URL('../../../vectors/conformance/', import.meta.url).pathname;
  await loadFiles([join(vectors, 'cases/bundle/bundle_molt_proven.cbor'), join(vectors, 'keys/log.pub')]);
  const rows = await page.locator('[data-testid=proofs] tr').allTextContents();
  assert.ok(rows.length >= 2, rows.join('\n'));
  assert.match(rows[1], /sigil:\S+\d+\d+, [0-9a-f]{12}…, \d{4}-\d\d-\d\dT.*valid/);
});

await test('a bad keyring line and bytes that are not envelopes are named, not guessed', async () => {
  writeFileSync(join(tmp, 'bad.pub'), 'sigil:uvagxudvnp5j62yx4vlbbq6tm4 ed25519 00\n');
  writeFileSync(join(tmp, 'junk.bin'), Buffer.from([0xff, 0x00, 0x13]));
  await page.click('#clear');
  await loadFiles([join(tmp, 'bad.pub'), join(tmp, 'junk.bin')]);
  assert.match(await page.textContent('#messages'), /keyring bad\.pub:1: the key must be 64 lowercase hex characters/);
  const statuses = await nodes().evaluateAll((els) => els.map((e) => e.dataset.status));
  assert.deepEqual(statuses, ['invalid']);
  await nodes().first().click();
  assert.equal(await page.getAttribute('[data-testid=reasons] .reason', 'data-code'), 'malformed');
});

// A key not in any keyring, learned from its birth in the set (PROFILE P7):
// the MCP tool identity `herald mcp proxy` draws per session, with its
// description. It is named by that description, quoted and marked
// self-described (not passed off as a label); a keyring label wins.
const TOOL_DESCRIPTION = 'herald-mcp tool-side identity of one MCP session, vouched for by the tool_sandbox co-signature';
const tool = join(tmp, 'tool');
spawnSync('mkdir', ['-p', tool]);
for (const args of [
  ['keygen', '--output', join(tool, 'tool')],
  ['new', '--key', join(tool, 'tool.key'), '--kind', 'birth', '--description', TOOL_DESCRIPTION,
    '--payload-json', '{"mcp":"tool_identity","server":{"name":"example-server","version":"1.0.0"}}', '-o', join(tool, 'birth.cbor')],
  ['reply', '--key', join(tool, 'tool.key'), '--parent', join(tool, 'birth.cbor'), '--payload-json', '"tool result"', '-o', join(tool, 'result.cbor')],
]) {
  const r = spawnSync(opts.herald, args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `herald ${args.join(' ')}: ${r.stderr}`);
}

await test('a key introduced by its birth is named by its quoted self-description, marked as such; a label wins', async () => {
  await loadFiles([join(tool, 'birth.cbor'), join(tool, 'result.cbor')]);
  assert.equal(await nodes().count(), 2);
  const quoted = `"${TOOL_DESCRIPTION.slice(0, 40)}…"`;
  const who = await page.locator('[data-testid=row] .from .who').evaluateAll((els) => els.map((e) => [e.textContent, e.title, e.dataset.testid]));
  assert.equal(who.length, 2);
  for (const [name, title, testid] of who) {
    assert.equal(name, quoted);
    assert.equal(testid, 'self-described');
    assert.match(title, /self-described: the key's own description from its birth envelope, not a keyring label/);
    assert.ok(title.includes(TOOL_DESCRIPTION), title);
    assert.match(title, /\nsigil:/);
  }
  const graphText = (await page.locator('[data-testid=node] > text').allTextContents()).join('\n');
  assert.ok(graphText.includes(`"${TOOL_DESCRIPTION.slice(0, 20)}`), `the graph shows the quoted description: ${graphText}`);
  assert.ok(!/sigil:/.test(graphText), `no raw sigil on the graph: ${graphText}`);
  const hover = await page.locator('[data-testid=node] > title').first().textContent();
  assert.match(hover, /from "herald-mcp tool-side identity[^"]*" \(self-described, sigil:/);
  // With the key's keyring line (label "tool"), the label is shown instead.
  await loadFiles([join(tool, 'birth.cbor'), join(tool, 'result.cbor'), join(tool, 'tool.pub')]);
  const labelled = await page.locator('[data-testid=row] .from .who').evaluateAll((els) => els.map((e) => [e.textContent, e.dataset.testid ?? '']));
  assert.deepEqual(labelled, [['tool', ''], ['tool', '']]);
});

await test('certified claims: what a quorum of Heralds certifies is shown beside the sender, as herald verify --heralds reports it', async () => {
  const h = (name) => join(heraldsDir, name);
  await loadFiles([h('trace.cbor'), h('certs.cbor'), h('heralds.txt'), h('heralds.policy')]);
  assert.equal(await nodes().count(), 2);
  // alice's key is in no keyring: the certified key resolves it.
  assert.equal((await page.textContent('#badge')).trim(), '2 valid · 0 partial · 0 invalid');
  await nodes().first().click();
  const rows = await page.locator('[data-testid=certified] tr[data-claim]').evaluateAll((els) => els.map((e) => [e.dataset.claim, e.children[1].textContent, e.children[2].textContent]));
  const byClaim = Object.fromEntries(rows.map(([c, v, by]) => [c, [v, by]]));
  assert.deepEqual(Object.keys(byClaim).sort(), ['handle', 'key', 'model'], JSON.stringify(rows));
  assert.equal(byClaim.handle[0], 'alice@acme.com');
  assert.equal(byClaim.model[0], 'claude-test');
  // Named by their labels in the list (in the report's order of keys).
  for (const [, by] of Object.values(byClaim)) assert.match(by, /^2 of 3 listed Heralds \(threshold 2\): (herald-a, herald-b|herald-b, herald-a)$/);
  // The liar's claims are not certified (one Herald, below the threshold).
  assert.ok(!rows.some(([, v]) => v === 'm-2'), JSON.stringify(rows));
  // Beside the sender, on the card; the key source says who resolved it.
  assert.match(await page.textContent('[data-testid=certified-line]'), /^certified: .*handle alice@acme\.com.*model claude-test/);
  assert.match(await page.textContent('#panel table.kv'), /key source\s*herald/);
  // Every certification given is judged in the summary: the expired one does not count.
  const judged = await page.locator('[data-testid=certifications] tr[data-counts]').evaluateAll((els) => els.map((e) => [e.dataset.counts, e.textContent]));
  assert.equal(judged.length, 9, JSON.stringify(judged));
  assert.ok(judged.some(([counts, text]) => counts === 'false' && /herald-c/.test(text) && /expired|not_after/i.test(text)), JSON.stringify(judged));
  // The same claims as `herald verify --heralds --log-policy --json` gives.
  const cli = spawnSync(opts.herald, ['verify', '--json', h('trace.cbor'), h('certs.cbor'), '--heralds', h('heralds.txt'), '--log-policy', h('heralds.policy')], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  const want = JSON.parse(cli.stdout).envelopes.map((e) => e.certified);
  assert.equal(want[0].length, 3);
  assert.deepEqual(await page.evaluate(() => window.herald.report.envelopes.map((e) => e.certified)), want);
  // Without the Herald list nothing is certified, and nothing is shown.
  await loadFiles([h('trace.cbor')]);
  await nodes().first().click();
  assert.equal(await page.locator('[data-testid=certified]').count(), 0);
});

await test(`${BIG} envelopes load and verify in the page in under 3 s and stay responsive`, async () => {
  const t0 = Date.now();
  await loadFiles([join(big, 'trace.cbor'), join(big, 'keyring')]);
  const wall = Date.now() - t0;
  const t = await page.evaluate(() => window.herald.timing);
  Object.assign(timings, { envelopes: t.count, wallMs: wall, verifyMs: Math.round(t.verifyMs), nodesMs: Math.round(t.nodesMs), renderMs: Math.round(t.renderMs) });
  console.log(`     ${BIG} envelopes: ${wall} ms from file input to drawn (verify ${Math.round(t.verifyMs)} ms, graph nodes ${Math.round(t.nodesMs)} ms, draw ${Math.round(t.renderMs)} ms)`);
  assert.equal(t.count, BIG);
  assert.equal((await page.textContent('#badge')).trim(), `${BIG} valid · 0 partial · 0 invalid`);
  assert.ok(wall < 3000, `${wall} ms`);
  // Collapsed: the graph draws the neighbourhood; the list is virtual.
  assert.ok((await nodes().count()) <= 300);
  assert.ok((await page.locator('.list-row').count()) < 100);
  // Responsive: select deep in the list, search by prefix.
  const s0 = Date.now();
  await page.evaluate(() => { document.getElementById('list').scrollTop = 24 * 9000; });
  await page.locator('.list-row').first().click();
  await page.waitForSelector('[data-testid=reasons]');
  const id = await page.evaluate(() => window.herald.nodes[window.herald.selected].id);
  timings.selectMs = Date.now() - s0;
  const q0 = Date.now();
  await page.fill('#search', id.slice(0, 10));
  await page.waitForFunction(() => document.getElementById('list').dataset.count === '1');
  timings.searchMs = Date.now() - q0;
  console.log(`     select deep in the list ${timings.selectMs} ms, search by id prefix ${timings.searchMs} ms`);
  assert.ok(timings.selectMs < 1000 && timings.searchMs < 1000);
  await page.fill('#search', '');
});

async function composeAndSend(conduitUrl, text) {
  await page.click('nav button[data-tab=inspect]');
  await nodes().last().click();
  const parent = await page.evaluate(() => window.herald.nodes[window.herald.selected].id);
  await page.click('nav button[data-tab=compose]');
  assert.equal(await page.inputValue('#c-parent'), parent);
  await page.fill('#c-payload', JSON.stringify({ text }));
  await page.click('#c-sign');
  await page.waitForSelector('[data-testid=signed]');
  assert.match(await page.textContent('[data-testid=signed]'), /verified here: valid/);
  await page.fill('#c-conduit', conduitUrl);
  await page.click('#c-send');
  await page.waitForSelector('[data-testid=send-status]');
  return parent;
}

await test('the spec link opens PROFILE.md at its section', async () => {
  const spec = await browser.newPage();
  await spec.goto(`${server.url}/spec.html#P4`);
  await spec.waitForSelector('section#P4.target');
  assert.match(await spec.textContent('section#P4'), /^## P4\. Canonical body, id, and the genesis rule/);
  await spec.close();
});

await test('--export-site: the static copy verifies dropped files and cannot sign', async () => {
  const site = join(tmp, 'site');
  assert.equal(spawnSync(opts.herald, ['inspect', '--export-site', site]).status, 0);
  const types = { html: 'text/html', js: 'text/javascript', css: 'text/css', wasm: 'application/wasm', md: 'text/markdown' };
  const host = createServer((req, res) => {
    const path = join(site, decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/$/, '/index.html'));
    if (!path.startsWith(site)) { res.writeHead(403).end(); return; }
    try {
      const body = readFileSync(path);
      res.writeHead(200, { 'Content-Type': types[path.split('.').pop()] ?? 'application/octet-stream' });
      res.end(body);
    } catch { res.writeHead(404).end(); }
  });
  await new Promise((r) => host.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => host.close(r)));
  const staticPage = await browser.newPage();
  await staticPage.goto(`http://127.0.0.1:${host.address().port}/`);
  await staticPage.waitForSelector('body[data-ready="true"]');
  assert.equal(await staticPage.locator('[data-testid=node]').count(), 0, 'nothing preloaded');
  await staticPage.setInputFiles('#files', [join(demo, 'tampered.cbor'), join(demo, 'keyring')]);
  await staticPage.waitForFunction(() => document.body.dataset.verified === '6');
  assert.equal((await staticPage.textContent('#badge')).trim(), '5 valid · 0 partial · 1 invalid');
  assert.ok(await staticPage.isDisabled('#c-sign'));
  assert.match(await staticPage.textContent('#signer'), /static page: it verifies, but cannot sign/);
  await staticPage.close();
});

await test('compose, sign by the server, send to a conduit, see the receipt', async () => {
  await loadFiles([join(demo, 'trace.cbor'), join(demo, 'keyring'), join(tmp, 'conduit.pub')]);
  const parent = await composeAndSend(relay, 'sent from the inspector');
  await page.waitForSelector('[data-testid=receipt]');
  assert.match(await page.textContent('[data-testid=send-status]'), /answered 201/);
  const receipt = await page.textContent('[data-testid=receipt]');
  assert.match(receipt, /conduit_receipt by (\S+ \()?sigil:[a-z0-9]+\)? at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ — verified; log index \d+/);
  const sent = await page.evaluate(() => window.herald.nodes[window.herald.selected]);
  assert.equal(sent.parent, parent);
  assert.equal(sent.status, 'valid');
  assert.equal(sent.label, 'alice');
});

await test('compose and send to a conduit that refuses: the signed refusal is shown and verified', async () => {
  const parent = await composeAndSend(stranger, 'to a conduit that does not know alice');
  await page.waitForSelector('[data-testid=refusal]');
  assert.match(await page.textContent('[data-testid=send-status]'), /answered 422 \(unknown_signer\)/);
  const refusal = await page.textContent('[data-testid=refusal]');
  assert.match(refusal, /signed refusal from (\S+ \()?sigil:[a-z0-9]+\)?: .*unknown_signer.* — valid/);
  const node = await page.evaluate(() => window.herald.nodes[window.herald.selected]);
  assert.equal(node.kind, 'refusal');
  assert.ok(node.parent && node.parent !== parent, 'the refusal answers the composed envelope');
  await page.click('nav button[data-tab=inspect]');
  assert.equal(await page.getAttribute('[data-testid=node].selected', 'class'), 'node valid lifecycle selected');
});

await test('a cross-origin page cannot use the signing endpoint', async () => {
  // The attacker's page, on another loopback port, tries every way in.
  const evil = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>evil</title>');
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => evil.close(r)));
  const other = await browser.newPage();
  await other.goto(`http://127.0.0.1:${evil.address().port}/`);
  const outcome = await other.evaluate(async (target) => {
    const tries = {};
    const attempt = async (name, init) => {
      try {
        const r = await fetch(`${target}/api/sign`, init);
        tries[name] = `status ${r.status}`;
      } catch (e) { tries[name] = 'blocked'; }
    };
    await attempt('json', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    await attempt('guessed-token', { method: 'POST', headers: { 'Content-Type': 'application/json', 'Herald-Token': '00'.repeat(32) }, body: '{}' });
    await attempt('no-cors', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: '{}' });
    try {
      const r = await fetch(`${target}/`);
      tries.page = `read ${(await r.text()).length}`;
    } catch { tries.page = 'blocked'; }
    return tries;
  }, server.url);
  assert.equal(outcome.json, 'blocked');
  assert.equal(outcome['guessed-token'], 'blocked');
  assert.equal(outcome.page, 'blocked', 'the page (with its token) is not readable cross-origin');
  // no-cors hides the answer from the page; the server must still have refused it.
  await other.close();
  // The same requests outside a browser, where the answer is visible.
  const post = (headers) => fetch(`${server.url}/api/sign`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: '{}' });
  const { token } = server;
  assert.equal((await post({ Origin: 'http://evil.example', 'Herald-Token': token })).status, 403);
  assert.equal((await post({ Origin: server.url })).status, 403);
  assert.equal((await post({ Origin: server.url, 'Herald-Token': 'x' + token.slice(1) })).status, 403);
  assert.equal((await fetch(`${server.url}/api/session`, { headers: { 'Herald-Token': token, 'Sec-Fetch-Site': 'cross-site' } })).status, 403);
  const { port } = new URL(server.url);
  const rebound = await new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', headers: { Host: `rebound.example:${port}` } }, (r) => { r.resume(); resolve(r.statusCode); })
      .on('error', reject).end();
  });
  assert.equal(rebound, 421, 'a DNS-rebound Host is refused');
  // And the page's own origin works (the compose test signed through it).
  const ok = await post({ Origin: server.url, 'Herald-Token': token });
  assert.equal(ok.status, 200);
  const signed = await ok.json();
  assert.match(signed.envelope, /^[0-9a-f]+$/);
  bodies.push(JSON.stringify(signed));
});

await test('no response, page or log line contains the secret key', async () => {
  assert.ok(bodies.length > 10, `${bodies.length} responses seen`);
  bodies.forEach((b, i) => noSecret(`response ${i}`, b));
  bodies.forEach((b, i) => assert.ok(!b.includes(server.token), `response ${i} carries the per-run token`));
  noSecret('the page', await page.content());
  await server.stop();
  noSecret('standard output', server.log.out);
  noSecret('standard error', server.log.err);
  assert.deepEqual(pageErrors, []);
});

for (const c of cleanups.reverse()) await c();
if (process.env.INSPECTOR_TIMINGS) writeFileSync(process.env.INSPECTOR_TIMINGS, JSON.stringify(timings, null, 2));
console.log(failed ? `${failed} test(s) failed` : 'all inspector tests passed');
process.exit(failed ? 1 : 0);
