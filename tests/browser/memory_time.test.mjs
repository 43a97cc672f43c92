// memory.html's "Memory over time" panel in headless Chromium: both charts drawn, the
// fullest tile's per-step live bytes peak at the fullest tile's peak_bytes of memory.json,
// the peak step named with its largest allocations, no console error.
// Usage: node memory_time.test.mjs DIR (memory.html and memory.json of one package)
import path from 'node:path';
import fs from 'node:fs';
import { run, openPage, waitDrawn, check } from './browser.mjs';

const dir = process.argv[2];
if (!dir) { console.error('usage: node memory_time.test.mjs DIR'); process.exit(2); }
const map = JSON.parse(fs.readFileSync(path.join(dir, 'memory.json'), 'utf8'));
const fullest = Math.max(...map.tiles.map((t) => t.summary.peak_bytes));
const api = 'window.tilevitMemoryTime';

await run('memory.html over time', async (browser) => {
  const { page, errors } = await openPage(browser, path.join(dir, 'memory.html'));
  await waitDrawn(page);
  await page.waitForFunction(() => window.tilevitMemoryTime !== undefined);
  check(await page.evaluate(`${api}.steps()`) === map.steps, `one bar per step (${map.steps})`);
  const peak = await page.evaluate(`${api}.maxFullest()`);
  check(peak === fullest && await page.evaluate(`${api}.peakBytes()`) === fullest,
    `the fullest tile's per-step live bytes peak at memory.json's fullest peak_bytes (${peak} = ${fullest})`);
  const maxima = await page.evaluate(`${api}.drawnMaxima()`);
  check(maxima[0] === fullest && maxima[1] >= fullest, `both charts are drawn (${maxima})`);
  const text = await page.locator('#time-peak').textContent();
  check(text.includes(map.over_time.peak.label) && await page.locator('#time-peak tr').count() > 0,
    `the peak step is named (${map.over_time.peak.label}) with its largest allocations`);
  check(errors.length === 0, `no console error or network request (${errors.join('; ')})`);
});
