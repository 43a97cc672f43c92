// compare.html of a one-chip run (A: the small model on test16) against a two-chip pipeline
// (B: test16x2, two micro-batches) in headless Chromium: B's rows are labelled by chip and
// link as model.html labels them, A's by tile; the header gives B's tiles per chip and its
// fullest tile by chip; the hover names the chip; the step table sums to each side's span;
// no console error.
// Usage: node compare_chips.test.mjs DIR (compare-x2.html)
import path from 'node:path';
import { run, openPage, waitDrawn, check } from './browser.mjs';

const dir = process.argv[2];
if (!dir) { console.error('usage: node compare_chips.test.mjs DIR'); process.exit(2); }
const api = 'window.tilevitCompare';

await run('compare.html of one chip against two', async (browser) => {
  const { page, errors } = await openPage(browser, path.join(dir, 'compare-x2.html'));
  await waitDrawn(page);
  const total = await page.evaluate(`${api}.stepTotal()`), spans = await page.evaluate('[CV.report.span_a, CV.report.span_b]');
  check(total.a === spans[0] && total.b === spans[1], `the step table sums to each span, B's chips at work at once taken off (${total.b} = ${spans[1]})`);
  const [a, b] = await page.evaluate(`${api}.rowLabels()`);
  check(a.length > 0 && a.every((l) => /^tile \d+$/.test(l)), `A's rows are tiles (${a.slice(0, 3)} ...)`);
  check(b.length > 0 && b.every((l) => /^(chip [01] t\d+|links \d+)$/.test(l)), `B's rows are named by chip or link (${b.slice(0, 3)} ...)`);
  check(b.includes('chip 0 t0') && b.some((l) => l.startsWith('chip 1 t')), 'both chips are labelled');
  const names = await page.textContent('#names');
  check(names.includes('32 tiles on 2 chips (16 + 16), 1 link row'), `the header counts B's tiles per chip (${names})`);
  check(/fullest chip [01] t\d+:/.test(names), 'B\'s fullest tile is named by its chip');
  check(!/\(33 tiles\)/.test(names), 'the link row is not counted as a tile');
  // Hover over B's first row: the tooltip names its chip.
  const box = await page.locator('#timeline-b').boundingBox();
  await page.mouse.move(box.x + box.width * 0.3, box.y + 2);
  await page.waitForTimeout(100);
  const tip = await page.textContent('#tooltip');
  check(tip.startsWith('B, chip 0 t0: '), `the hover names the chip (${tip.split('\n')[0]})`);
  check(errors.length === 0, `no console error or network request (${errors.join('; ')})`);
});
