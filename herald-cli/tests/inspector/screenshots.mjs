// Screenshots of the inspector for docs/inspector.md, in headless Chromium:
// the site (a folder, as `herald inspect --export-site` writes it) served
// on 127.0.0.1 port 0, FILES dropped on it, the envelope with the most
// signatures selected, one PNG per viewport (1400x900 and 1920x1080).
//
//   node screenshots.mjs --site DIR --out PREFIX FILE...
//
// writes PREFIX-1400.png and PREFIX-1920.png.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const { values: opts, positionals: files } = parseArgs({
  allowPositionals: true,
  options: {
    site: { type: 'string' },
    out: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
  },
});
if (!opts.site || !opts.out || !files.length) throw new Error('usage: screenshots.mjs --site DIR --out PREFIX FILE...');
setTimeout(() => { console.error('screenshots took over 2 minutes'); process.exit(1); }, 120_000).unref();

const types = { html: 'text/html', js: 'text/javascript', css: 'text/css', wasm: 'application/wasm', md: 'text/markdown' };
const host = createServer((req, res) => {
  const path = join(opts.site, decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/$/, '/index.html'));
  if (!path.startsWith(opts.site)) { res.writeHead(403).end(); return; }
  try {
    const body = readFileSync(path);
    res.writeHead(200, { 'Content-Type': types[path.split('.').pop()] ?? 'application/octet-stream' });
    res.end(body);
  } catch { res.writeHead(404).end(); }
});
await new Promise((r) => host.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({ executablePath: opts.chromium, args: ['--no-sandbox'] });
try {
  for (const [width, height] of [[1400, 900], [1920, 1080]]) {
    const page = await browser.newPage({ viewport: { width, height } });
    await page.goto(`http://127.0.0.1:${host.address().port}/`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.setInputFiles('#files', files);
    await page.waitForFunction(() => Number(document.body.dataset.verified) > 0);
    const most = await page.evaluate(() => {
      const h = window.herald;
      let best = 0;
      let count = -1;
      h.nodes.forEach((_, i) => {
        const n = h.verifier.detail(i).signatures.length;
        if (n > count) { best = i; count = n; }
      });
      return best;
    });
    await page.locator(`[data-testid=node][data-index="${most}"]`).click();
    await page.screenshot({ path: `${opts.out}-${width}.png` });
    await page.close();
    console.log(`wrote ${opts.out}-${width}.png`);
  }
} finally {
  await browser.close();
  host.close();
}
