// pareto.html (tilevit sweep's chart) in headless Chromium: one circle per compiled point
// inside the plot, the front ringed and named in each tooltip, the front's table as long
// as the front, and no error or network request. Usage: node pareto.test.mjs DIR
// (DIR holds pareto.html and pareto.json, the sweep.json it was drawn from).
import path from 'node:path';
import fs from 'node:fs';
import { run, openPage, check } from './browser.mjs';

const dir = process.argv[2];
if (!dir) { console.error('usage: node pareto.test.mjs DIR'); process.exit(2); }
const merged = JSON.parse(fs.readFileSync(path.join(dir, 'pareto.json'), 'utf8'));

await run('pareto.html', async (browser) => {
  const { page, errors } = await openPage(browser, path.join(dir, 'pareto.html'));
  const circles = await page.$$eval('circle.point', (cs) => cs.map((c) => {
    const box = c.getBBox();
    const svg = c.ownerSVGElement;
    return { x: box.x, y: box.y, w: box.width, pareto: c.classList.contains('pareto'), title: c.textContent,
             svgWidth: svg.width.baseVal.value, svgHeight: svg.height.baseVal.value };
  }));
  check(circles.length === merged.ok, `one circle per compiled point (${circles.length} of ${merged.ok})`);
  check(circles.every((c) => c.x >= 0 && c.y >= 0 && c.x + c.w <= c.svgWidth && c.y + c.w <= c.svgHeight),
    'every circle lies inside the chart');
  const front = circles.filter((c) => c.pareto);
  check(front.length === merged.pareto && front.length > 0, `the front is ringed (${front.length} of ${merged.pareto})`);
  check(front.every((c) => c.title.includes('(Pareto front)')), 'each front tooltip says so');
  check(circles.every((c) => /^#\d+ .* ms, .* images\/s, .* MiB/.test(c.title)), 'each tooltip gives the point and its figures');
  const frontRows = await page.$$eval('h2 + table', (ts) => ts[0].querySelectorAll('tr').length - 1);
  check(frontRows === merged.pareto, `the front's table has ${merged.pareto} rows`);
  check(errors.length === 0, `no errors or network requests (${errors.join('; ')})`);
});
