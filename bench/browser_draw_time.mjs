// Time until a tilevit HTML page (memory.html, model.html, ...) has drawn in headless
// Chromium: milliseconds from navigation start until the page sets
// document.body.dataset.drawn = "1" (every tilevit viewer does after its first draw).
// Uses tests/browser/browser.mjs (Debian's /usr/bin/chromium; `npm ci --prefix tests/browser`).
// Usage: node bench/browser_draw_time.mjs [--runs N] [--json] PAGE.html...
import fs from 'node:fs';
import { launch, collectErrors, gotoFile, waitDrawn } from '../tests/browser/browser.mjs';

const args = process.argv.slice(2);
let runs = 3, json = false;
const files = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--runs') runs = Math.max(1, parseInt(args[++i], 10) || 1);
  else if (args[i] === '--json') json = true;
  else files.push(args[i]);
}
if (!files.length) { console.error('usage: node bench/browser_draw_time.mjs [--runs N] [--json] PAGE.html...'); process.exit(2); }

// Records, inside the page, when the drawn flag appears (performance.now() counts from
// navigation start), whoever sets it and however it is set.
const recorder = () => {
  const mark = () => {
    if (document.body && document.body.dataset.drawn === '1' && window.__tilevitDrawnAt === undefined)
      window.__tilevitDrawnAt = performance.now();
  };
  new MutationObserver(mark).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-drawn'] });
};

const results = [];
const browser = await launch();
try {
  for (const file of files) {
    const bytes = fs.statSync(file).size;
    const times = [];
    let errors = [];
    for (let r = 0; r < runs; ++r) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.addInitScript(recorder);
      const page = await context.newPage();
      errors = collectErrors(page);
      await gotoFile(page, file);
      await waitDrawn(page, 120000);
      times.push(await page.evaluate(() => window.__tilevitDrawnAt));
      await context.close();
    }
    const sorted = [...times].sort((a, b) => a - b);
    const result = { file, bytes, runs, drawn_ms: sorted.map((t) => Math.round(t)), median_ms: Math.round(sorted[sorted.length >> 1]), errors };
    results.push(result);
    if (!json)
      console.log(`${file}: ${(bytes / 1e6).toFixed(2)} MB, drawn after ${result.median_ms} ms (median of ${runs}: ${result.drawn_ms.join(', ')} ms)` +
        (errors.length ? `; ${errors.length} errors: ${errors.join('; ')}` : ''));
  }
} finally {
  await browser.close();
}
if (json) console.log(JSON.stringify(results, null, 1));
if (results.some((r) => r.errors.length)) process.exitCode = 1;
