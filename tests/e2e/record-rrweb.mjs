// Makes the rrweb fixtures of fixtures/rrweb/ (issue 26): the Blue Widget
// checkout story of the Bootstrap corpus page, played in headless Chromium
// with rrweb's record() (npm rrweb, pinned in package.json) running beside
// the live sender feeding the real uitraild. Writes, for rrweb's defaults
// and once with maskAllInputs:
//   fixtures/rrweb/checkout-bootstrap[-masked].rrweb.json.gz  rrweb's events
//   fixtures/rrweb/checkout-bootstrap[-masked].live.txt        the live trace
//   fixtures/rrweb/checkout-bootstrap[-masked].live.uitrail    the live events
// (the daemon's text trace, times as HH:MM:SS), which tests/cli's import
// test compares the imported trace with.
//
// Usage: node tests/e2e/record-rrweb.mjs
// Environment: UITRAILD, CHROMIUM as for the e2e suite.

import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { REPO } from './lib/harness.mjs';
import { startCorpus, uniqueTab } from './lib/corpus.mjs';
import { SENTINELS } from './lib/story.mjs';

const RRWEB = readFileSync(join(REPO, 'tests', 'e2e', 'node_modules', 'rrweb', 'dist', 'rrweb.umd.cjs'), 'utf8');
const OUT = join(REPO, 'fixtures', 'rrweb');

/** rrweb's UMD bundle and its record() call, as an init script: it starts
 *  before the page's scripts, the way a team's snippet in <head> does. */
function recorderScript(options) {
  // Top window only: rrweb makes a blank iframe for clean prototypes, and an
  // init script runs in every frame, rrweb's own included.
  return `(() => {
    if (window !== window.top) return;
    const module = { exports: {} };
    (function (module, exports) { ${RRWEB} })(module, module.exports);
    window.__rrwebEvents = [];
    module.exports.record({ emit: (event) => window.__rrwebEvents.push(event), ...${JSON.stringify(options)} });
  })();`;
}

async function story(run, page, tab) {
  await run.until(tab, 'navigate /corpus/checkout-bootstrap.html');
  await run.stable(tab);
  await run.act(tab, () => page.getByRole('button', { name: 'Cart (2)' }).click());
  await page.locator('#cart.show').waitFor();
  await run.act(tab, () => page.locator('#cart .btn-close').click());
  await page.locator('#cart:not(.show)').waitFor({ state: 'attached' });
  await run.act(tab, () => page.getByRole('button', { name: 'Place order' }).click());
  await page.locator('form.was-validated').waitFor();
  await page.fill('#email', SENTINELS[0]);
  await page.fill('#card', '4111 1111 1111 1111');
  await run.act(tab, () => page.getByLabel('I accept the terms').check());
  await run.act(tab, () => page.getByRole('button', { name: 'Place order' }).click());
  await run.until(tab, '"Order placed"');
  await run.act(tab, () => page.getByRole('button', { name: 'Done' }).click());
  await run.until(tab, 'closed dialog "Order placed"');
  // The page settled after the last action (the modal's backdrop removed,
  // the body restored): rrweb has emitted those mutations too by then.
  await run.stable(tab);
}

async function record(run, name, options) {
  const tab = uniqueTab(`rrweb-${name}`);
  const page = await run.browser.newPage();
  page.on('console', (message) => process.stderr.write(`${name} console: ${message.text()}\n`));
  page.on('pageerror', (error) => process.stderr.write(`${name} pageerror: ${error.message}\n`));
  await page.addInitScript(recorderScript(options));
  await page.addInitScript(({ id, daemon }) => {
    sessionStorage.setItem('uitrail.tab', JSON.stringify({ tab: id, seq: 0 }));
    window.uitrailCorpusConfig = { daemon };
  }, { id: tab, daemon: run.daemon.url });
  page.setDefaultTimeout(120000);
  await page.goto(`${run.site.origin}/corpus/checkout-bootstrap.html`);
  process.stdout.write(`${name}: page loaded\n`);
  await story(run, page, tab);
  const events = await page.evaluate(() => window.__rrwebEvents);
  await page.close();
  const lines = await run.lines(tab);
  writeFileSync(join(OUT, `${name}.rrweb.json.gz`), gzipSync(JSON.stringify(events), { level: 9 }));
  writeFileSync(join(OUT, `${name}.live.txt`), `${lines.join('\n')}\n`);
  // The live events as the daemon recorded them, to compare event by event.
  const live = readdirSync(recorded).find((file) => file.endsWith(`-${tab}.uitrail`));
  if (live) copyFileSync(join(recorded, live), join(OUT, `${name}.live.uitrail`));
  process.stdout.write(`${name}: ${events.length} rrweb events, ${lines.length} live lines\n`);
}

const recorded = mkdtempSync(join(tmpdir(), 'uitrail-rrweb-live-'));
const run = await startCorpus({ daemonArgs: ['--record', recorded] });
try {
  await record(run, 'checkout-bootstrap', {});
  await record(run, 'checkout-bootstrap-masked', { maskAllInputs: true });
} finally {
  await run.close();
  rmSync(recorded, { recursive: true, force: true });
}
