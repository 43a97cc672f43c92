// model.html (the execution timeline) in headless Chromium: one row per tile, zooming by
// key, wheel and drag changes the visible cycle range and right-click undoes it, clicking
// pins a sample's details and lists the tiles at that cycle, the flame graph focuses, the
// origin switches, and nothing logs an error. Usage: node timeline.test.mjs DIR_OR_model.html
import path from 'node:path';
import fs from 'node:fs';
import { run, openPage, waitDrawn, check } from './browser.mjs';

let file = process.argv[2] || process.env.TILEVIT_TIMELINE_HTML;
if (!file) { console.error('usage: node timeline.test.mjs model.html'); process.exit(2); }
if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'model.html');

const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const api = 'window.tilevitTimeline';
const width = (r) => r[1] - r[0];

await run('model.html', async (browser) => {
  const { page, errors } = await openPage(browser, file);
  await waitDrawn(page);
  const data = await page.evaluate(() => JSON.parse(document.getElementById('tilevit-data').textContent));
  check(data.tiles > 0 && data.samples > 0, `the profile has tiles (${data.tiles}) and samples (${data.samples})`);
  check(await page.evaluate(`${api}.rowCount()`) === data.tiles, 'one row per tile');
  check(await page.evaluate(`${api}.samples()`) === data.samples, 'every embedded sample is decoded');
  await page.evaluate(`${api}.setRowHeight(1)`);
  await frames(page);
  check(await page.evaluate(`${api}.drawnRows()`) === data.tiles, 'at 1 px every tile row is drawn');
  await page.evaluate(`${api}.setRowHeight(16)`);
  await frames(page);

  // Keys: '+' halves the visible range, '0' fits, right-click undoes a zoom.
  const full = await page.evaluate(`${api}.visibleRange()`);
  const repeat = await page.evaluate(`${api}.repeatRange()`);
  if (repeat && repeat[1] - repeat[0] > 0.2 * data.span) {
    check(full[1] < data.span && full[1] > repeat[0], `the first view shows the steps in detail, not the repeat remainder (${full})`);
    check(await page.locator('#first-view .cost').count() > 0, 'the first screen lists the largest costs');
    await page.locator('#whole-call').click();
    await frames(page);
    check((await page.evaluate(`${api}.visibleRange()`))[1] === data.span, '"whole call" shows the whole call');
    await page.evaluate(`${api}.zoomTo(${full[0]}, ${full[1]})`);
    await frames(page);
  } else check(full[1] === data.span, 'the first view ends at the end of the call');
  await page.locator('#rows').focus();
  await page.keyboard.press('+');
  await frames(page);
  const zoomed = await page.evaluate(`${api}.visibleRange()`);
  check(Math.abs(width(zoomed) * 2 - width(full)) <= 1, `'+' halves the visible cycles (${width(full)} -> ${width(zoomed)})`);
  const box = await page.locator('#rows').boundingBox();
  await page.mouse.click(box.x + 400, box.y + 40, { button: 'right' });
  await frames(page);
  const undone = await page.evaluate(`${api}.visibleRange()`);
  check(undone[0] === full[0] && undone[1] === full[1], 'right-click undoes the zoom');

  // Wheel zoom around the pointer and drag-to-zoom.
  await page.mouse.move(box.x + 400, box.y + 40);
  await page.mouse.wheel(0, -400);
  await frames(page);
  const wheeled = await page.evaluate(`${api}.visibleRange()`);
  check(width(wheeled) < width(full), `the wheel zooms in (${width(full)} -> ${width(wheeled)})`);
  await page.keyboard.press('0');
  await page.mouse.move(box.x + 200, box.y + 40);
  await page.mouse.down();
  await page.mouse.move(box.x + 500, box.y + 40, { steps: 5 });
  await page.mouse.up();
  await frames(page);
  const dragged = await page.evaluate(`${api}.visibleRange()`);
  check(width(dragged) < data.span / 2, 'dragging across the timeline zooms to that range');

  // A click lists the tiles at that cycle and pins the sample under the pointer.
  await page.keyboard.press('0');
  await frames(page);
  await page.mouse.click(box.x + 300, box.y + 8);
  await frames(page);
  const at = await page.textContent('#at');
  check(at.includes('active tiles') && at.includes(`of ${data.tiles}`), 'a click lists the active tiles at that cycle');
  const details = await page.textContent('#details');
  check(details.includes('tile') && details.includes('duration') && details.includes('cycles'), 'a click pins the sample details');

  // Search, kind filter, flame focus and origin.
  await page.fill('#search', 'layer');
  await page.waitForTimeout(300);
  await page.click('#kinds input[data-kind="idle"]');
  await page.locator('#flame').scrollIntoViewIfNeeded();
  const flame = await page.locator('#flame').boundingBox();
  await page.mouse.click(flame.x + 5, flame.y + 21 + 10);  // the widest kind
  await frames(page);
  check((await page.textContent('#focus')).includes('focus:'), 'clicking the flame graph focuses a node');
  await page.keyboard.press('Escape');
  await page.evaluate(`${api}.setOrigin('zero')`);
  await frames(page);
  check((await page.evaluate(`${api}.visibleRange()`))[0] === 0, 'shared clock starts at cycle 0');
  check(await page.locator('#ops tbody tr').count() > 0, 'the operation table has rows');
  const stepTable = await page.evaluate(() => ({
    rows: [...document.querySelectorAll('#steps tbody tr')].map(tr => Number(tr.children[1].textContent.replace(/,/g, ''))),
    bounds: [...document.querySelectorAll('#steps tbody tr')].filter(tr => tr.children[3].textContent !== '\u2013').length,
  }));
  check(stepTable.rows.length > 0 && stepTable.bounds > 0, 'the step table has rows with bounds');
  check(stepTable.rows.reduce((a, b) => a + b, 0) === data.span,
        'the step table\'s cycles sum to the span');
  check(await page.evaluate(`${api}.drawMs`) < 1000, 'a redraw takes under a second');

  check(errors.length === 0, `no console or page errors${errors.length ? ': ' + errors.join('; ') : ''}`);
});

// Uncalibrated kernels: the small model's attention (key blocks combined, row maxima) has
// terms no measurement covers. The header gives the calibrated share, the legend the mark,
// the timeline hatches those samples, their details say why (docs/FIDELITY.md).
await run('model.html uncalibrated kernels', async (browser) => {
  const { page, errors } = await openPage(browser, file);
  await waitDrawn(page);
  const data = await page.evaluate(() => JSON.parse(document.getElementById('tilevit-data').textContent));
  check(data.uncalibrated_compute_cycles > 0, `the profile has uncalibrated compute cycles (${data.uncalibrated_compute_cycles})`);
  const share = await page.textContent('#calibrated-share');
  check(/^(\d+\.\d%|>99\.9%|<0\.1%)$/.test(share) && share !== '100.0%', `the header shows the calibrated share (${share})`);
  check((await page.textContent('#legend')).includes('uncalibrated kernel'), 'the legend names the uncalibrated mark');
  check(await page.evaluate(`${api}.uncalibratedSamples()`) > 0, 'some samples are uncalibrated');
  const [tile, sample] = await page.evaluate(`${api}.firstUncalibrated()`);
  // Zoom onto that sample, scroll its row into view and redraw: its pixels carry the hatching.
  const [s0, s1] = await page.evaluate(`[TV.start[${sample}], TV.end[${sample}]]`);
  await page.evaluate(`${api}.setRowHeight(16)`);
  await page.evaluate(`document.getElementById('rows-scroll').scrollTop = ${tile} * 16`);
  await page.evaluate(`${api}.zoomTo(${s0}, ${s1})`);
  await page.evaluate(`${api}.draw()`);
  check(await page.evaluate(`${api}.uncalibratedPixels()`) > 0, `the uncalibrated sample of tile ${tile} is hatched`);
  const details = await page.evaluate(`${api}.pin(${tile}, ${sample})`);
  check(details.includes('uncalibrated:') && details.includes('docs/FIDELITY.md'), 'its details say it is uncalibrated and why');
  check(errors.length === 0, `no console or page errors${errors.length ? ': ' + errors.join('; ') : ''}`);
});
