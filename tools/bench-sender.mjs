#!/usr/bin/env node
// Measures what the uitrail sender costs the page, in headless Chromium:
// the time spent in its click handler (plus the after-click state read), in
// its change handler and in each mutation flush, on the demo app, on a
// generated page of about 5 000 elements, and on every page of the e2e
// corpus (tests/e2e/corpus/*.html, the server-side pages of the multi-page
// shop and the htmx app, and the WAI-ARIA APG examples in fixtures/apg).
// The sender records each handler's duration with performance.measure()
// when started with `measure: true`; this script drives the pages and
// prints median and p95 in milliseconds.
//
// Per corpus page it also prints how long a click takes to reach the
// daemon's socket (the click's own event time to the moment the capture
// server, standing in for uitraild, decodes it: p50 / p95) and the
// sender's own CPU per click (every uitrail:* measure of the run, across
// the documents the tab went through, divided by the clicks the user made).
// The goal for the first is p95 <= 50 ms on every page.
//
// A page with a driver of its own below is driven the way its story does;
// any other page (a new corpus page, an APG example) is driven by clicking
// its visible controls in turn, each followed by Escape.
// A benchmark measures; it asserts nothing.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `Usage: node tools/bench-sender.mjs [--clicks N] [--pages REGEX] [--json] [--sender DIR]
  --clicks N     clicks (driver steps) per page (default 40)
  --pages REGEX  only the pages whose path matches (e.g. 'apg|aggrid');
                 the demo and the generated page run only without it
  --json         print the results as JSON
  --sender DIR   measure another copy of the sender (e.g. an older
                 checkout's tools/sender, with its npm packages installed)
Needs the npm packages of tests/e2e and tools/sender (tools/e2e installs
them) and Chromium (CHROMIUM, default /usr/bin/chromium).`;

let args;
try {
  ({ values: args } = parseArgs({
    options: {
      clicks: { type: 'string', default: '40' }, json: { type: 'boolean', default: false },
      sender: { type: 'string' }, pages: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (error) {
  console.error(`bench-sender: ${error.message}\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
if (args.sender) process.env.UITRAIL_SENDER_DIR = args.sender;
const CLICKS = Number.parseInt(args.clicks, 10);
if (!(CLICKS > 0)) {
  console.error(`bench-sender: --clicks must be a positive number\n${USAGE}`);
  process.exit(2);
}
const PAGES = args.pages ? new RegExp(args.pages) : null;
// The harness reads UITRAIL_SENDER_DIR when it is loaded.
const { REPO, launchBrowser, sleep, startStaticServer } = await import('../tests/e2e/lib/harness.mjs');
const { CORPUS_DIR, startCorpusServer } = await import('../tests/e2e/lib/corpus.mjs');

const IMPORT_MAP = '<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>';

// About 5 000 elements: a 450-row, 10-column table with row context, a
// ticking clock and a cell that changes every 100 ms.
const BIG_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Big</title>
<link rel="icon" href="data:,">${IMPORT_MAP}</head><body>
<header><time id="clock"></time></header>
<main><table data-track-row-context="true" aria-label="Orders"><tbody id="rows"></tbody></table></main>
<script type="module">
  const rows = document.getElementById('rows');
  for (let r = 0; r < 450; r++) {
    const tr = document.createElement('tr');
    for (let c = 0; c < 9; c++) {
      const td = document.createElement('td');
      td.textContent = 'Order ' + r + '.' + c;
      tr.append(td);
    }
    const td = document.createElement('td');
    const button = document.createElement('button');
    button.textContent = 'Open';
    button.addEventListener('click', () => { tr.classList.toggle('open'); });
    td.append(button);
    tr.append(td);
    rows.append(tr);
  }
  const clock = document.getElementById('clock');
  setInterval(() => { clock.textContent = new Date().toLocaleTimeString(); }, 1000);
  let n = 0;
  setInterval(() => { rows.children[(n++ * 7) % 450].cells[3].textContent = 'Updated ' + n; }, 100);
  const { default: uitrail } = await import('/sender/uitrail.js');
  window.tracker = uitrail.start({ measure: true });
  window.elementCount = document.getElementsByTagName('*').length;
</script></body></html>`;

function summarize(durations) {
  if (!durations.length) return { n: 0, median: NaN, p95: NaN, max: NaN };
  const sorted = [...durations].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, median: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1] };
}

/** Collects the sender's measures; a click costs its handler plus its
 *  after-click state read (paired in order). */
async function collect(page) {
  const entries = await page.evaluate(() => performance.getEntriesByType('measure')
    .filter((entry) => entry.name.startsWith('uitrail:'))
    .map((entry) => [entry.name, entry.duration]));
  const byName = (name) => entries.filter(([n]) => n === name).map(([, d]) => d);
  const clicks = byName('uitrail:click');
  const states = byName('uitrail:click-state');
  return {
    click: summarize(clicks.map((d, i) => d + (states[i] || 0))),
    change: summarize(byName('uitrail:change')),
    flush: summarize(byName('uitrail:flush')),
    encode: summarize(byName('uitrail:encode')),
  };
}

async function benchDemo(browser, origin) {
  const page = await browser.newPage();
  await page.goto(`${origin}/demo/?measure`);
  await page.waitForFunction(() => window.uitrailDemo?.dataRenderedAt > 0);
  const chips = await page.locator('label.chip').all();
  for (let i = 0; i < CLICKS; i++) {
    switch (i % 4) {
      case 0: await page.click('text=Blue Widget'); await page.keyboard.press('Escape'); break;
      case 1: await chips[i % chips.length].click(); break;
      case 2: await page.click('#apply'); break;
      default: await page.selectOption('#status-filter', i % 8 === 3 ? 'Published' : 'All'); break;
    }
  }
  await sleep(1500);
  const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
  const result = { page: `demo (${elements} elements)`, ...(await collect(page)) };
  await page.close();
  return result;
}

async function benchBig(browser, origin) {
  const page = await browser.newPage();
  await page.goto(`${origin}/bench/big.html`);
  await page.waitForFunction(() => window.tracker);
  const buttons = page.locator('button');
  for (let i = 0; i < CLICKS; i++) await buttons.nth((i * 37) % 450).click();
  await sleep(1500);
  const elements = await page.evaluate(() => window.elementCount);
  const result = { page: `generated (${elements} elements)`, ...(await collect(page)) };
  await page.close();
  return result;
}

/** Click-to-daemon latency of the click records that arrived since
 *  `from` (an index into the capture server's records), and the sender's
 *  CPU per click: the sum of its measures, in every document the tab
 *  showed (bench.cpu holds those of the documents it left), over the
 *  clicks the user made. */
async function clickLatency(page, records, from) {
  const clicks = records.slice(from).filter((r) => r.tag === 'uitrail.click' ||
    (r.tag === 'uitrail' && r.record && r.record.kind === 'click'));
  const latency = summarize(clicks.map((r) => r.at - r.time));
  const { cpu, userClicks } = await page.evaluate(() => ({
    cpu: Number(sessionStorage.getItem('bench.cpu') || 0) + window.benchCpu(),
    userClicks: Number(sessionStorage.getItem('bench.clicks') || 0),
  }));
  return { toDaemon: latency, cpuPerClick: userClicks ? cpu / userClicks : NaN, userClicks };
}

/** A corpus page with the sender measuring, sending to the capture
 *  server; `drive(page, i)` makes the i-th click. */
async function benchCorpus(browser, origin, { path, ready, drive }) {
  const page = await browser.newPage();
  // The APG pages link a stylesheet on www.w3.org: the benchmark runs offline.
  await page.route(/^https:/, (route) => route.abort());
  await page.addInitScript(() => {
    window.uitrailSetup = { measure: true };
    window.benchCpu = () => performance.getEntriesByType('measure').filter((e) => e.name.startsWith('uitrail:'))
      .reduce((sum, e) => sum + e.duration, 0);
    // Counts the clicks the user made (the denominator of CPU per click)
    // and keeps the sender's CPU of a document the tab leaves.
    addEventListener('pointerdown', (event) => {
      if (event.isTrusted) sessionStorage.setItem('bench.clicks', String(Number(sessionStorage.getItem('bench.clicks') || 0) + 1));
    }, true);
    addEventListener('pagehide', () => {
      sessionStorage.setItem('bench.cpu', String(Number(sessionStorage.getItem('bench.cpu') || 0) + window.benchCpu()));
      performance.clearMeasures();
    });
  });
  await page.goto(`${origin}${path}`);
  await page.waitForFunction(ready || (() => window.tracker));
  const from = server.records.length;
  for (let i = 0; i < CLICKS; i++) await drive(page, i, path);
  await sleep(1500);
  const elements = await page.evaluate(() => {
    const count = (root) => Array.from(root.querySelectorAll('*')).reduce((n, el) => n + 1 + (el.shadowRoot ? count(el.shadowRoot) : 0), 0);
    return count(document);
  });
  const result = {
    page: `${path} (${elements} elements with shadow roots)`, path, ...(await collect(page)),
    ...(await clickLatency(page, server.records, from)),
  };
  await page.close();
  return result;
}

// What the generic driver clicks: the controls a user clicks, links only
// when they stay on the page.
const CONTROLS = 'button, [role="button"], [role="tab"], [role="option"], [role="menuitem"], [role="menuitemcheckbox"], '
  + '[role="menuitemradio"], [role="checkbox"], [role="radio"], [role="switch"], [role="treeitem"], [role="gridcell"], '
  + '[role="combobox"], [role="row"], summary, input[type="checkbox"], input[type="radio"], select, label, a[href^="#"]';

/** Clicks the i-th of the page's visible controls that a pointer can reach
 *  (the one under its centre is it), round robin, then presses Escape. A
 *  control that took the page elsewhere brings it back. */
async function driveGeneric(page, i, path) {
  const at = await page.evaluate(([selector, n]) => {
    const reachable = [];
    for (const el of document.querySelectorAll(selector)) {
      if (el.closest('[data-uitrail-ignore], [aria-disabled="true"]') || el.disabled) continue;
      const box = el.getBoundingClientRect();
      if (box.width < 4 || box.height < 4 || !el.checkVisibility({ visibilityProperty: true })) continue;
      reachable.push(el);
    }
    for (let k = 0; k < reachable.length; k++) {
      const el = reachable[(n + k) % reachable.length];
      el.scrollIntoView({ block: 'center', inline: 'center' });
      const box = el.getBoundingClientRect();
      const x = box.left + box.width / 2;
      const y = box.top + box.height / 2;
      const hit = document.elementFromPoint(x, y);
      if (hit && (hit === el || el.contains(hit))) return { x, y };
    }
    return null;
  }, [CONTROLS, i]).catch(() => null);
  if (at) await page.mouse.click(at.x, at.y);
  await sleep(100);
  await page.keyboard.press('Escape').catch(() => {});
  await sleep(50);
  if (new URL(page.url()).pathname !== path.split('?')[0]) {
    await page.goto(new URL(path, page.url()).href).catch(() => {});
    await page.waitForFunction(() => window.tracker).catch(() => {});
  }
}

async function driveAgGrid(page, i) {
  const row = ['4411', '4412', '4413', '4414'][i % 4];
  switch (i % 4) {
    case 0: await page.click('[role="columnheader"][col-id="total"]'); break;
    case 1:
      await page.locator(`[row-id="${row}"]`).getByRole('button', { name: 'Details' }).click();
      await page.keyboard.press('Escape');
      break;
    case 2: await page.click(`[row-id="${row}"] [col-id="customer"]`); break;
    default: await page.click('[role="columnheader"][col-id="customer"]'); break;
  }
}

async function driveShoelace(page, i) {
  if (i % 2 === 0) {
    await page.locator('tr', { hasText: i % 4 === 0 ? 'INV-9' : 'INV-8' }).locator('sl-button').click();
    await page.locator('#close-dialog').click();
  } else {
    await page.locator('sl-dropdown sl-button').click();
    await page.locator('#new-invoice').click();
  }
  await sleep(150);
}

async function driveGridjs(page, i) {
  switch (i % 3) {
    case 0: await page.getByLabel('VIP').click(); break;
    case 1:
      await page.locator('.gridjs-tbody tr').nth(i % 2).locator('button').click();
      await page.locator('#customer-modal button[data-micromodal-close]').first().click();
      break;
    default: await page.locator('#page-size-trigger').click(); await page.keyboard.press('Escape'); break;
  }
}

async function driveBootstrap(page, i) {
  if (i % 2 === 0) {
    await page.getByRole('button', { name: 'Cart (2)' }).click();
    await page.locator('#cart.show .btn-close').click();
    await page.locator('#cart:not(.show)').waitFor({ state: 'attached' });
  } else {
    await page.getByLabel('I accept the terms').click();
    await page.getByRole('button', { name: 'Place order' }).click();
  }
}

async function driveAntd(page, i) {
  if (i % 2 === 0) {
    await page.locator('.ant-select').first().click();
    await page.locator('.ant-select-item-option', { hasText: i % 4 === 0 ? 'Paid' : 'All statuses' }).click();
  } else {
    await page.locator('tr[data-row-key="4411"]').getByRole('button', { name: 'Refund' }).click();
    await page.locator('.ant-modal-footer .ant-btn:not(.ant-btn-primary)').click();
    await page.locator('.ant-modal-wrap').waitFor({ state: 'hidden' });
  }
}

async function driveElementPlus(page, i) {
  await page.locator('.el-table__row').nth(i % 3).getByRole('button', { name: 'Edit' }).click();
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.locator('.el-overlay').waitFor({ state: 'hidden' });
}

async function driveTomSelect(page, i) {
  if (i % 2 === 0) {
    // A press on the box while it has the focus after a choice may leave
    // the list closed, as it does for a user: press again, as they would.
    for (let press = 0; press < 3; press++) {
      await page.locator('.ts-control').click();
      const opened = await page.locator('.ts-dropdown').waitFor({ state: 'visible', timeout: 2000 }).then(() => true, () => false);
      if (opened) break;
    }
    await page.locator('.ts-dropdown .option', { hasText: i % 4 === 0 ? 'Kenya' : 'Canada' }).click();
  } else {
    await page.getByRole('button', { name: 'Delete address' }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    await page.locator('.swal2-container').waitFor({ state: 'detached' });
  }
}

async function driveDownshift(page, i) {
  // The list shows only the teams matching the field, which holds the last
  // choice: clear it first, as a user picking another team does.
  await page.getByRole('combobox').fill('');
  const option = page.getByRole('option', { name: ['Billing', 'Sales', 'Returns'][i % 3] });
  // Clearing it may have opened the list already: the button toggles it.
  for (let press = 0; press < 2; press++) {
    if (await option.waitFor({ timeout: 1000 }).then(() => true, () => false)) break;
    await page.getByRole('button', { name: 'Show teams' }).click();
  }
  await option.click();
}

async function driveHtmx(page, i) {
  await page.getByRole('link', { name: i % 2 === 0 ? 'Edit Ann Lee' : 'Edit Bo Chen' }).click();
  await page.getByRole('link', { name: 'Back to contacts' }).click();
  await page.getByRole('heading', { name: 'Contacts' }).waitFor();
}

async function driveActThenWait(page, i) {
  if (i % 2 === 0) {
    await page.click('#open');
    await page.locator('[role="dialog"] input[type="checkbox"]').first().waitFor();
  } else {
    await page.locator('[role="dialog"] input[type="checkbox"]').nth(i % 6).click();
  }
}

async function driveSpa(page, i) {
  await page.getByRole('link', { name: i % 2 === 0 ? 'Bo Chen' : 'Ann Lee' }).click();
  await page.getByRole('button', { name: 'All customers' }).click();
  await page.getByRole('heading', { name: 'Customers' }).first().waitFor();
}

async function driveShop(page, i) {
  const order = ['4411', '4412', '4413'][i % 3];
  await page.getByRole('link', { name: `View order ${order}` }).click();
  await page.waitForFunction(() => window.tracker);
  await page.getByRole('link', { name: 'Back to orders' }).click();
  await page.waitForFunction(() => window.tracker && document.querySelector('table'));
}

async function driveSupport(page, i) {
  if (i % 2 === 0) {
    await page.click('#refresh');
  } else {
    const frame = page.frameLocator('#support');
    await frame.locator('select[name="topic"]').click();
    await page.keyboard.press('Escape');
  }
  await sleep(100);
}

async function driveHostEvents(page, i) {
  if (i % 2 === 0) {
    await page.getByRole('button', { name: 'Pay $120.00' }).click();
  } else {
    await page.getByRole('button', { name: 'OK' }).click();
  }
}


/** Every corpus page: those with a driver of their own, then every other
 *  page of tests/e2e/corpus and every APG example, driven generically. */
function corpusPages() {
  const own = [
    { path: '/corpus/orders-aggrid.html', ready: () => window.tracker && document.querySelector('[row-id="4411"] [col-id="customer"]'), drive: driveAgGrid },
    { path: '/corpus/invoices-shoelace.html', ready: () => window.tracker && customElements.get('sl-dialog') && document.querySelector('#invoices sl-button'), drive: driveShoelace },
    { path: '/corpus/customers-gridjs.html', ready: () => window.tracker && document.querySelector('.gridjs-tbody button'), drive: driveGridjs },
    { path: '/corpus/checkout-bootstrap.html', drive: driveBootstrap },
    { path: '/corpus/orders-antd.html', ready: () => window.tracker && document.querySelector('tr[data-row-key="4411"]'), drive: driveAntd },
    { path: '/corpus/customers-element-plus.html', ready: () => window.tracker && document.querySelector('.el-table__row'), drive: driveElementPlus },
    { path: '/corpus/address-tomselect-sweetalert.html', drive: driveTomSelect },
    { path: '/corpus/ticket-downshift.html', ready: () => window.tracker && document.querySelector('input[role="combobox"]'), drive: driveDownshift },
    { path: '/htmx/contacts', drive: driveHtmx },
    { path: '/corpus/act-then-wait.html?delay=20', drive: driveActThenWait },
    { path: '/corpus/spa/', ready: () => window.tracker && document.querySelector('a[href$="/customers/102"]'), drive: driveSpa },
    { path: '/shop/orders', drive: driveShop },
    { path: '/corpus/orders-with-support.html', ready: () => window.tracker && document.querySelector('#support')?.contentDocument?.querySelector('select'), drive: driveSupport },
    // Host events only (dom: false): no click record is ever sent.
    { path: '/corpus/checkout-host-events.html', drive: driveHostEvents },
  ];
  const covered = new Set(own.map(({ path }) => path.split('?')[0]));
  // The SPA's page is its routes; the support frame's pages are the frame's.
  for (const page of ['spa.html']) covered.add(`/corpus/${page}`);
  const generic = readdirSync(CORPUS_DIR).filter((name) => name.endsWith('.html')).sort()
    .map((name) => `/corpus/${name}`).filter((path) => !covered.has(path))
    .map((path) => ({ path, drive: driveGeneric }));
  const apgDir = join(REPO, 'fixtures', 'apg', 'content', 'patterns');
  const apg = readdirSync(apgDir).sort().flatMap((pattern) => {
    let files = [];
    try { files = readdirSync(join(apgDir, pattern, 'examples')); } catch { return []; }
    return files.filter((name) => name.endsWith('.html')).sort()
      .map((name) => ({ path: `/apg/patterns/${pattern}/examples/${name}`, drive: driveGeneric }));
  });
  return [...own, ...generic, ...apg].filter(({ path }) => !PAGES || PAGES.test(path));
}

const server = await startStaticServer({ capture: true, config: { transport: 'websocket' }, pages: { '/bench/big.html': BIG_PAGE } });
const corpus = await startCorpusServer({ daemon: server.origin });
const browser = await launchBrowser();
try {
  const results = PAGES ? [] : [await benchDemo(browser, server.origin), await benchBig(browser, server.origin)];
  for (const page of corpusPages()) {
    try {
      results.push(await benchCorpus(browser, corpus.origin, page));
    } catch (error) {
      // A page the driver could not drive is reported, not fatal.
      results.push({ page: page.path, path: page.path, error: String(error.message).split('\n')[0] });
    }
  }
  if (args.json) {
    console.log(JSON.stringify(results, null, 2));
  } else {
    const ms = (value) => (Number.isNaN(value) ? '-' : value.toFixed(3));
    console.log('uitrail sender cost per handler, ms (median / p95 / max, n)');
    for (const result of results.filter((r) => !r.error)) {
      console.log(`\n${result.page}`);
      for (const kind of ['click', 'change', 'flush', 'encode']) {
        const s = result[kind];
        console.log(`  ${kind.padEnd(7)} ${ms(s.median).padStart(7)} / ${ms(s.p95).padStart(7)} / ${ms(s.max).padStart(7)}   n=${s.n}`);
      }
    }
    const corpusPages = results.filter((r) => r.toDaemon);
    console.log('\nclick to daemon socket, ms (p50 / p95 / max, n click records) and sender CPU per user click, ms');
    for (const r of corpusPages) {
      const t = r.toDaemon;
      console.log(`  ${r.path.padEnd(58)} ${ms(t.median).padStart(7)} / ${ms(t.p95).padStart(7)} / ${ms(t.max).padStart(7)}   n=${String(t.n).padEnd(4)} cpu/click ${ms(r.cpuPerClick)} (${r.userClicks} clicks)`);
    }
    for (const r of results.filter((x) => x.error)) console.log(`  ${r.path.padEnd(58)} not driven: ${r.error}`);
    const measured = corpusPages.filter((r) => r.toDaemon.n > 0);
    const worst = measured.reduce((w, r) => (r.toDaemon.p95 > w.toDaemon.p95 ? r : w), measured[0]);
    if (worst) console.log(`  worst p95 ${ms(worst.toDaemon.p95)} ms (${worst.path}; goal: <= 50 ms on every page)`);
  }
} finally {
  await browser.close();
  await corpus.close();
  await server.close();
}
