// compare.html (two runs side by side) in headless Chromium: no console error or network
// request, the step table's total difference is the two runs' cycle difference, both
// timelines are drawn, zoom and pan are locked, a row aligns B on its step.
// Usage: node compare.test.mjs DIR (compare.html, compare-a.json and compare-b.json: the runs' run.json)
import path from 'node:path';
import fs from 'node:fs';
import { run, openPage, waitDrawn, check } from './browser.mjs';

const dir = process.argv[2];
if (!dir) { console.error('usage: node compare.test.mjs DIR'); process.exit(2); }
const file = path.join(dir, 'compare.html');
const cycles = (name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')).calls[0].device_cycles;
const api = 'window.tilevitCompare';

await run('compare.html', async (browser) => {
  const t0 = Date.now();
  const { page, errors } = await openPage(browser, file);
  await waitDrawn(page);
  console.log(`drawn ${Date.now() - t0} ms after navigation started`);
  const total = await page.evaluate(`${api}.stepTotal()`);
  const a = cycles('compare-a.json'), b = cycles('compare-b.json');
  check(total.a === a && total.b === b, `the step table sums to each run's cycles (${total.a} = ${a}, ${total.b} = ${b})`);
  const totalText = await page.locator('#steps tr.total td').nth(3).textContent();
  const shown = Number(totalText.replace(/[,+]/g, '').replace('\u2212', '-'));
  check(shown === b - a, `the table's total difference (${totalText}) is the runs' cycle difference (${b - a})`);
  check(await page.evaluate(`${api}.stepRows()`) > 0, 'the step table has rows');
  check(await page.locator('#ops tbody tr').count() > 0 && await page.locator('#kernels tbody tr').count() > 0,
    'the operation and kernel tables have rows');
  const rows = await page.evaluate(`${api}.drawnRows()`), painted = await page.evaluate(`${api}.paintedPixels()`);
  check(rows[0] > 0 && rows[1] > 0, `both timelines draw rows (${rows})`);
  check(painted[0] > 1000 && painted[1] > 1000, `both timelines are painted (${painted} pixel columns)`);

  // One view for both: a wheel over B zooms A's range too; fit shows both calls.
  const full = await page.evaluate(`${api}.visibleRange()`);
  const box = await page.locator('#timeline-b').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -500);
  await page.waitForTimeout(100);
  const zoomed = await page.evaluate(`${api}.visibleRange()`);
  check(zoomed[1] - zoomed[0] < full[1] - full[0], `the wheel over B zooms both (${full} -> ${zoomed})`);
  await page.evaluate(`${api}.fit()`);
  const fitted = await page.evaluate(`${api}.visibleRange()`);
  check(fitted[1] >= Math.max(a, b), 'fit shows both calls');

  // A click on a step row (of a step both runs have) aligns B on that step.
  const options = await page.locator('#align option').evaluateAll((os) => os.map((o) => o.value));
  const keys = await page.locator('#steps tbody tr[data-row] td.key').allTextContents();
  const row = keys.findIndex((k) => options.includes(k));
  check(row >= 0, 'a step of both runs is in the table');
  await page.locator('#steps tbody tr[data-row]').nth(row).click();
  await page.waitForTimeout(100);
  check(await page.locator('#align').inputValue() === keys[row], `a step row aligns B on "${keys[row]}"`);
  check(await page.evaluate(`${api}.drawMs`) < 2000, 'a frame takes under 2 s');
  check(await page.locator('#flame').evaluate((c) => c.height > 0), 'the flame-graph difference is drawn');
  check(errors.length === 0, `no console error or network request (${errors.join('; ')})`);
});
