#!/usr/bin/env node
// Measures what the uitrail sender costs the page, in headless Chromium:
// the time spent in its click handler (plus the after-click state read), in
// its change handler and in each mutation flush, on the demo app, on a
// generated page of about 5 000 elements, and on every page of the e2e
// corpus built with real libraries (ag-grid, Shoelace, Grid.js with
// Micromodal, Bootstrap, Ant Design, Element Plus, htmx, Tom Select with
// SweetAlert2, Downshift). The sender records each handler's duration with
// performance.measure() when started with `measure: true`; this script
// drives the pages and prints median and p95 in milliseconds.
//
// Per corpus page it also prints how long a click takes to reach the
// daemon's socket (the click's own event time to the moment the capture
// server, standing in for uitraild, decodes it: p50 / p95) and the
// sender's own CPU per click (every uitrail:* measure of the run, divided
// by the clicks made). The goal for the first is p95 <= 50 ms.
//
// Usage: node tools/bench-sender.mjs [--clicks N] [--json] [--sender DIR]
//   --sender DIR  measure another copy of the sender (e.g. an older
//                 checkout's tools/sender, with its npm packages installed)
// Needs the npm packages of tests/e2e and tools/sender (tools/e2e installs
// them). A benchmark measures; it asserts nothing.

import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    clicks: { type: 'string', default: '40' }, json: { type: 'boolean', default: false },
    sender: { type: 'string' },
  },
});
if (args.sender) process.env.UITRAIL_SENDER_DIR = args.sender;
const CLICKS = Number.parseInt(args.clicks, 10);
// The harness reads UITRAIL_SENDER_DIR when it is loaded.
const { launchBrowser, sleep, startStaticServer } = await import('../tests/e2e/lib/harness.mjs');
const { startCorpusServer } = await import('../tests/e2e/lib/corpus.mjs');

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
 *  CPU per click: the sum of its measures over the clicks the page saw. */
async function clickLatency(page, records, from) {
  const clicks = records.slice(from).filter((r) => r.record && r.record.kind === 'click' ||
    r.tag === 'uitrail.click');
  const latency = summarize(clicks.map((r) => r.at - r.time));
  const { cpu, userClicks } = await page.evaluate(() => ({
    cpu: performance.getEntriesByType('measure').filter((e) => e.name.startsWith('uitrail:'))
      .reduce((sum, e) => sum + e.duration, 0),
    userClicks: window.benchClicks || 0,
  }));
  return { toDaemon: latency, cpuPerClick: userClicks ? cpu / userClicks : NaN, userClicks };
}

/** A corpus page with the sender measuring, sending to the capture
 *  server; `drive(page, i)` makes the i-th click. */
async function benchCorpus(browser, origin, path, ready, drive) {
  const page = await browser.newPage();
  await page.addInitScript(() => {
    window.uitrailSetup = { measure: true };
    // Counts the clicks the user made (the denominator of CPU per click).
    window.benchClicks = Number(sessionStorage.getItem('bench.clicks') || 0);
    addEventListener('pointerdown', (event) => {
      if (event.isTrusted) sessionStorage.setItem('bench.clicks', String(++window.benchClicks));
    }, true);
  });
  await page.goto(`${origin}${path}`);
  await page.waitForFunction(ready);
  const from = server.records.length;
  for (let i = 0; i < CLICKS; i++) await drive(page, i);
  await sleep(1500);
  const elements = await page.evaluate(() => {
    const count = (root) => Array.from(root.querySelectorAll('*')).reduce((n, el) => n + 1 + (el.shadowRoot ? count(el.shadowRoot) : 0), 0);
    return count(document);
  });
  const result = {
    page: `${path} (${elements} elements with shadow roots)`, ...(await collect(page)),
    ...(await clickLatency(page, server.records, from)),
  };
  await page.close();
  return result;
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
    await page.locator('.ts-control').click();
    await page.locator('.ts-dropdown .option', { hasText: i % 4 === 0 ? 'Kenya' : 'Canada' }).click();
  } else {
    await page.getByRole('button', { name: 'Delete address' }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    await page.locator('.swal2-container').waitFor({ state: 'detached' });
  }
}

async function driveDownshift(page, i) {
  await page.getByRole('button', { name: 'Show teams' }).click();
  await page.getByRole('option', { name: ['Billing', 'Sales', 'Returns'][i % 3] }).click();
}

async function driveHtmx(page, i) {
  await page.getByRole('link', { name: i % 2 === 0 ? 'Edit Ann Lee' : 'Edit Bo Chen' }).click();
  await page.getByRole('link', { name: 'Back to contacts' }).click();
  await page.getByRole('heading', { name: 'Contacts' }).waitFor();
}

const server = await startStaticServer({ capture: true, config: { transport: 'websocket' }, pages: { '/bench/big.html': BIG_PAGE } });
const corpus = await startCorpusServer({ daemon: server.origin });
const browser = await launchBrowser();
try {
  const results = [
    await benchDemo(browser, server.origin), await benchBig(browser, server.origin),
    await benchCorpus(browser, corpus.origin, '/corpus/orders-aggrid.html',
      () => window.tracker && document.querySelector('[row-id="4411"] [col-id="customer"]'), driveAgGrid),
    await benchCorpus(browser, corpus.origin, '/corpus/invoices-shoelace.html',
      () => window.tracker && customElements.get('sl-dialog') && document.querySelector('#invoices sl-button'), driveShoelace),
    await benchCorpus(browser, corpus.origin, '/corpus/customers-gridjs.html',
      () => window.tracker && document.querySelector('.gridjs-tbody button'), driveGridjs),
    await benchCorpus(browser, corpus.origin, '/corpus/checkout-bootstrap.html', () => window.tracker, driveBootstrap),
    await benchCorpus(browser, corpus.origin, '/corpus/orders-antd.html',
      () => window.tracker && document.querySelector('tr[data-row-key="4411"]'), driveAntd),
    await benchCorpus(browser, corpus.origin, '/corpus/customers-element-plus.html',
      () => window.tracker && document.querySelector('.el-table__row'), driveElementPlus),
    await benchCorpus(browser, corpus.origin, '/corpus/address-tomselect-sweetalert.html', () => window.tracker, driveTomSelect),
    await benchCorpus(browser, corpus.origin, '/corpus/ticket-downshift.html',
      () => window.tracker && document.querySelector('input[role="combobox"]'), driveDownshift),
    await benchCorpus(browser, corpus.origin, '/htmx/contacts', () => window.tracker, driveHtmx),
  ];
  if (args.json) {
    console.log(JSON.stringify(results, null, 2));
  } else {
    const ms = (value) => (Number.isNaN(value) ? '-' : value.toFixed(3));
    console.log('uitrail sender cost per handler, ms (median / p95 / max, n)');
    for (const result of results) {
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
      console.log(`  ${r.page.split(' ')[0].padEnd(44)} ${ms(t.median).padStart(7)} / ${ms(t.p95).padStart(7)} / ${ms(t.max).padStart(7)}   n=${String(t.n).padEnd(4)} cpu/click ${ms(r.cpuPerClick)} (${r.userClicks} clicks)`);
    }
    const worst = Math.max(...corpusPages.map((r) => r.toDaemon.p95));
    console.log(`  worst p95 ${ms(worst)} ms (goal: <= 50 ms on every page)`);
  }
} finally {
  await browser.close();
  await corpus.close();
  await server.close();
}
