// memory.html in headless Chromium: it draws every tile, the "Reused allocations"
// checkbox collapses the reuse rows, hovering shows the label, clicking pins details,
// and nothing logs an error. Usage: node memory.test.mjs DIR_OR_memory.html
import path from 'node:path';
import fs from 'node:fs';
import { run, openPage, waitDrawn, check } from './browser.mjs';

let file = process.argv[2] || process.env.TILEVIT_MEMORY_HTML;
if (!file) { console.error('usage: node memory.test.mjs memory.html'); process.exit(2); }
if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'memory.html');

const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

await run('memory.html', async (browser) => {
  const { page, errors } = await openPage(browser, file);
  await waitDrawn(page);
  const api = 'window.tilevitMemory';
  const tiles = await page.evaluate(`${api}.tiles`);
  check(tiles > 0, `the map has tiles (${tiles})`);
  check(await page.evaluate(`${api}.allocations`) > 0, 'the map has allocations');

  // Fit shows every tile.
  await page.click('#fit');
  await frames(page);
  check(await page.evaluate(`${api}.drawnTiles()`) === tiles, 'after Fit every tile is drawn');

  // Reuse rows collapse to one row per tile.
  const expanded = await page.evaluate(`${api}.rowCount()`);
  check(await page.isChecked('#reused'), '"Reused allocations" starts ticked');
  await page.click('#reused');
  await frames(page);
  const collapsed = await page.evaluate(`${api}.rowCount()`);
  check(collapsed === tiles, `unticked: one row per tile (${collapsed})`);
  check(collapsed < expanded, `unticking reduces the row count (${expanded} -> ${collapsed})`);
  await page.click('#reused');
  await frames(page);
  check(await page.evaluate(`${api}.rowCount()`) === expanded, 'ticking restores the reuse rows');

  // Hover shows the label; click pins the details.
  await page.fill('#row-height', '16');
  await page.dispatchEvent('#row-height', 'change');
  await page.evaluate(`${api}.goToTile(0)`);
  await frames(page);
  const target = await page.evaluate(`${api}.visibleAllocation(8)`);
  check(target !== null, 'some allocation is drawn at least 8 px wide');
  await page.mouse.move(target.x, target.y);
  await page.waitForSelector('#tooltip', { state: 'visible', timeout: 5000 });
  const tip = await page.textContent('#tooltip');
  check(tip.includes(target.label), `the tooltip shows the label "${target.label}"`);
  await page.mouse.down();
  await page.mouse.up();
  await frames(page);
  const details = await page.textContent('#details');
  check(details.includes(target.label) && details.includes('lifetime') && details.includes('payload'),
    'a click pins label, lifetime and payload vs tail');

  // Zoom buttons, drag-to-zoom, go to address, and a sortable summary.
  const before = await page.evaluate(`${api}.view()`);
  await page.click('#zoom-in');
  await frames(page);
  const zoomed = await page.evaluate(`${api}.view()`);
  check(Math.abs((zoomed.hi - zoomed.lo) * 2 - (before.hi - before.lo)) < 1, 'zoom in halves the address span');
  const box = await page.locator('#canvas').boundingBox();
  await page.mouse.move(box.x + 300, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 400, box.y + 100, { steps: 4 });
  await page.mouse.up();
  await frames(page);
  const dragged = await page.evaluate(`${api}.view()`);
  check(dragged.hi - dragged.lo < zoomed.hi - zoomed.lo, 'dragging across the map zooms in');
  await page.fill('#goto-address', '0x80000');
  await page.click('#goto-address-btn');
  await frames(page);
  const at = await page.evaluate(`${api}.view()`);
  check(at.lo <= 0x80000 && at.hi >= 0x80000, 'go to address shows that address');
  await page.waitForSelector('#summary tbody tr');
  check(await page.locator('#summary tbody tr').count() === Math.min(tiles, 100), 'the summary table lists (up to 100) tiles');
  if (await page.isVisible('#summary-all')) await page.click('#summary-all');
  check(await page.locator('#summary tbody tr').count() === tiles, 'the summary table can list every tile');
  await page.click('#summary th[data-key="peak_bytes"]');
  const column = await page.$$eval('#summary th', (ths) => ths.findIndex((th) => th.dataset.key === 'peak_bytes'));
  const peaks = await page.$$eval('#summary tbody tr', (trs, c) => trs.map((tr) => +tr.cells[c].textContent.replace(/,/g, '')), column);
  check(peaks.length === tiles && peaks.every((v, k) => k === 0 || peaks[k - 1] >= v), 'clicking "peak bytes" sorts by it (largest first)');
  check(await page.evaluate(`${api}.drawMs`) < 1000, 'a redraw takes under a second');

  check(errors.length === 0, `no console or page errors${errors.length ? ': ' + errors.join('; ') : ''}`);
});
