// model.html of a two-chip pipeline (model-x2.html: test16x2, two micro-batches) in headless
// Chromium: a row per tile of each chip and one per link, labelled by chip, drawn with no
// console error; the whole call is the run's cycles.
// Usage: node timeline_chips.test.mjs DIR
import path from 'node:path';
import fs from 'node:fs';
import { run, openPage, waitDrawn, check } from './browser.mjs';

const dir = process.argv[2];
if (!dir) { console.error('usage: node timeline_chips.test.mjs DIR'); process.exit(2); }
const runJson = JSON.parse(fs.readFileSync(path.join(dir, 'model-x2.json'), 'utf8'));
const api = 'window.tilevitTimeline';

await run('model.html of two chips', async (browser) => {
  const t0 = Date.now();
  const { page, errors } = await openPage(browser, path.join(dir, 'model-x2.html'));
  await waitDrawn(page);
  console.log(`drawn ${Date.now() - t0} ms after navigation started`);
  const data = await page.evaluate(() => JSON.parse(document.getElementById('tilevit-data').textContent));
  check(JSON.stringify(data.row_groups) === JSON.stringify([['chip 0', 16, 1], ['chip 1', 16, 1], ['links', 1, 0]]),
    `rows grouped by chip, then the links (${JSON.stringify(data.row_groups)})`);
  check(await page.evaluate(`${api}.rowCount()`) === 33, 'a row per tile of each chip and one per link');
  check(data.span === runJson.calls[0].device_cycles, `the call is the run's cycles (${data.span})`);
  const micro = data.meta.filter((m) => m[3].startsWith('link chip 0 -> 1, micro-batch ')).length;
  check(micro === 2, 'a link transfer per micro-batch');
  check(await page.evaluate(`${api}.drawnRows()`) > 0, 'rows are drawn');
  check(errors.length === 0, `no console error or network request (${errors.join('; ')})`);
});
