// Shared by the browser tests (tests/browser/*.test.mjs) and bench/browser_draw_time.mjs:
// launches Debian's Chromium (/usr/bin/chromium) headless through playwright-core.
// playwright-core never downloads a browser; we also refuse to run without the system one,
// so a missing browser is a clear failure, not a download attempt.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.TILEVIT_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
];

// Launches the browser. Throws with an install hint when it is missing.
export async function launch(options = {}) {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} not found: install it with 'apt-get install -y chromium' (scripts/setup.sh)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, ...options });
}

// A page that records console errors, uncaught page errors and failed or external
// requests (our pages are standalone: any network request is a bug).
export async function openPage(browser, file, { viewport = { width: 1280, height: 800 } } = {}) {
  const page = await browser.newPage({ viewport });
  const errors = collectErrors(page);
  await gotoFile(page, file);
  return { page, errors };
}

// Navigates `page` to a local file (file:// URL, as a user double-clicking it).
export async function gotoFile(page, file) {
  await page.goto(pathToFileURL(path.resolve(file)).href, { timeout: 120000 });
}

// Collects problems on `page` into an array (filled as they happen).
export function collectErrors(page) {
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) errors.push(`network request: ${r.url()}`); });
  return errors;
}

// Waits until the page says it has drawn (document.body.dataset.drawn == "1").
export async function waitDrawn(page, timeout = 30000) {
  await page.waitForFunction(() => document.body && document.body.dataset.drawn === '1', null, { timeout });
}

// Minimal assertion and test-runner helpers: a test file is a plain node script that
// exits non-zero on the first failure (ctest reads the exit code).
export function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
  console.log(`ok - ${message}`);
}

export async function run(name, body) {
  let browser;
  try {
    browser = await launch();
    await body(browser);
    console.log(`${name}: passed`);
  } catch (e) {
    console.error(`${name}: FAILED: ${e.stack || e}`);
    process.exitCode = 1;
  } finally {
    if (browser) await browser.close();
  }
}
