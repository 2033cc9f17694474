// Makes the labelled recordings of fixtures/sessions/recorded/ (issue 6,
// "Fixtures"): the hard-case pages of fixtures/demo/cases/ and the demo
// app, each opened several times in headless Chromium with the real sender
// feeding the real `uitraild --demo --record`, each page's true settle times
// written beside its recording.
//
// Usage: node tests/e2e/record-sessions.mjs [--runs N] [--parallel N]
//                                           [--only CASE,...] [--out DIR]
// Environment: UITRAILD (daemon binary, default build/src/daemon/uitraild),
//              CHROMIUM (default /usr/bin/chromium).
//
// For each case and run it writes DIR/<case>-<run>.uitrail, the daemon's
// recording of that tab, and DIR/<case>-<run>.labels, the sidecar that
// `uitrail tune` reads (the recording's name with .labels for its
// extension): JSON lines {"tab": T, "settled": MS}. MS is on the sender's
// clock (performance.timeOrigin + performance.now() in the page, the clock
// of every event time the sender sends), and `uitrail tune` compares labels
// with change starts and stable marks on that same clock (the engine maps
// its receive-time clock onto each tab's sender time), so no conversion is
// needed.
//
// Then check and plot them:
//   uitrail info fixtures/sessions/recorded/<case>-<run>.uitrail
//   uitrail tune fixtures/sessions/recorded fixtures/sessions/labelled \
//     --svg fixtures/sessions/recorded/demo_blue_widget-1.svg --svg-session demo_blue_widget-1
//
// The hard-case pages record their own truth in window.__uitrailSettled
// (fixtures/demo/cases/case.js). The demo app knows nothing of labels, so an
// init script watches it from outside: the table losing aria-busy (the data
// replaced the skeleton) and a <dialog> opening or closing are its settles.

import { chmodSync, copyFileSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

import {
  CHROMIUM, CHROMIUM_ARGS, chromiumMissing, daemonMissing, REPO, sleep, startDaemon, tempDir,
} from './lib/harness.mjs';

const DEFAULT_RUNS = 3;
/**
 * One page at a time by default: pages sharing the CPU delay each other's
 * frames by hundreds of milliseconds, silences no real page of this size
 * has, which the truth would then blame on the scorer.
 */
const DEFAULT_PARALLEL = 1;
const PAGE_START_TIMEOUT_MS = 10000;
/** After the last page closed: time for its close record to reach the daemon. */
const DRAIN_MS = 500;

/**
 * The sessions. `path` is served by the daemon; `runMs` is how long the page
 * is left open, counted from the first frame in which the sender was seen
 * running; `actions` are clicks at fixed times on the same count.
 */
const CASES = [
  { name: 'static_page', path: '/demo/cases/static_page.html', runMs: 5000 },
  { name: 'one_big_render', path: '/demo/cases/one_big_render.html', runMs: 5000 },
  { name: 'skeleton_busy_then_data', path: '/demo/cases/skeleton_busy_then_data.html', runMs: 5000 },
  // Long enough for the rhythm of the background churn to be learned.
  { name: 'ticking_clock', path: '/demo/cases/ticking_clock.html', runMs: 8000 },
  { name: 'carousel_3s', path: '/demo/cases/carousel_3s.html', runMs: 11000 },
  // Past the default busy cap (10 s), so the cap's stable mark is recorded.
  { name: 'infinite_spinner', path: '/demo/cases/infinite_spinner.html', runMs: 13000 },
  { name: 'shell_then_late_data', path: '/demo/cases/shell_then_late_data.html', runMs: 5000 },
  { name: 'page_swaps_2s', path: '/demo/cases/page_swaps_2s.html', runMs: 12500 },
  {
    name: 'click_dialog',
    path: '/demo/cases/click_dialog.html',
    runMs: 8000,
    actions: [
      { at: 2500, click: (page) => page.getByRole('link', { name: 'Blue Widget', exact: true }) },
      { at: 5000, click: (page) => page.getByRole('dialog').getByRole('button', { name: 'Close' }) },
    ],
  },
  {
    name: 'dead_click',
    path: '/demo/cases/dead_click.html',
    runMs: 6000,
    actions: [{ at: 2500, click: (page) => page.getByRole('button', { name: 'Export' }) }],
  },
  {
    // The demo's Blue Widget story: the catalog behind its skeleton, the
    // item's details dialog opened and closed, its edit dialog opened and
    // cancelled. The header clock ticks throughout.
    name: 'demo_blue_widget',
    path: '/demo/',
    demo: true,
    runMs: 10000,
    actions: [
      { at: 2500, click: (page) => page.getByRole('link', { name: 'Blue Widget', exact: true }) },
      { at: 4500, click: (page) => page.locator('#details-close') },
      {
        at: 6000,
        click: (page) => page.locator('tr', { hasText: 'Blue Widget' }).getByRole('button', { name: 'Edit Item' }),
      },
      { at: 8000, click: (page) => page.locator('#edit-cancel') },
    ],
  },
];

/**
 * Runs in the demo page before its own scripts: records, on the sender's
 * clock and after the next paint, each moment the demo settles (the skeleton
 * table losing aria-busy, a <dialog> opening or closing).
 */
function watchDemoSettles() {
  const settled = [];
  window.__uitrailSettled = settled;
  const markAfterPaint = () => requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      settled.push(Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000);
    };
    channel.port2.postMessage(null);
  });
  new MutationObserver((records) => {
    for (const record of records) {
      const dialogToggled = record.attributeName === 'open' && record.target.localName === 'dialog';
      const busyEnded = record.attributeName === 'aria-busy' && !record.target.hasAttribute('aria-busy');
      if (dialogToggled || busyEnded) {
        markAfterPaint();
        return;
      }
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['open', 'aria-busy'] });
}

function usage(message) {
  console.error(`record-sessions: ${message}\n` +
    'usage: node tests/e2e/record-sessions.mjs [--runs N] [--parallel N] [--only CASE,...] [--out DIR]');
  process.exit(2);
}

function positiveInt(value, option) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) usage(`${option} '${value}': use a whole number from 1 to 100`);
  return n;
}

function parseOptions() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        runs: { type: 'string', default: String(DEFAULT_RUNS) },
        parallel: { type: 'string', default: String(DEFAULT_PARALLEL) },
        only: { type: 'string' },
        out: { type: 'string', default: join(REPO, 'fixtures', 'sessions', 'recorded') },
      },
    });
  } catch (error) {
    usage(error.message);
  }
  const { values } = parsed;
  let cases = CASES;
  if (values.only) {
    const wanted = values.only.split(',');
    const unknown = wanted.filter((name) => !CASES.some((c) => c.name === name));
    if (unknown.length) usage(`--only: no case ${unknown.join(', ')}; known: ${CASES.map((c) => c.name).join(' ')}`);
    cases = CASES.filter((c) => wanted.includes(c.name));
  }
  return {
    runs: positiveInt(values.runs, '--runs'),
    parallel: positiveInt(values.parallel, '--parallel'),
    cases,
    out: values.out,
  };
}

/**
 * Plays one session in a fresh browser context: opens the page under the tab
 * id `tab` (the demo picks its own id), waits for the sender, clicks at the
 * case's times, collects the page's true settles and closes the page, which
 * sends uitrail.close. Returns {tab, settled}.
 */
async function playSession(browser, daemon, session) {
  const { spec, tab } = session;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    if (spec.demo) await page.addInitScript(watchDemoSettles);
    const url = spec.demo ? `${daemon.url}${spec.path}` : `${daemon.url}${spec.path}?tab=${encodeURIComponent(tab)}`;
    await page.goto(url);
    const trackerReady = spec.demo ? 'window.uitrailDemo?.tracker' : 'window.__uitrailTracker';
    await page.waitForFunction(trackerReady, null, { timeout: PAGE_START_TIMEOUT_MS });
    const started = Date.now();
    for (const action of spec.actions || []) {
      await sleep(Math.max(0, started + action.at - Date.now()));
      await action.click(page).click();
    }
    await sleep(Math.max(0, started + spec.runMs - Date.now()));
    const result = await page.evaluate((demo) => ({
      tab: demo ? window.uitrailDemo.tracker.tab : window.__uitrailTracker.tab,
      settled: [...window.__uitrailSettled],
    }), Boolean(spec.demo));
    // Closing the page fires pagehide, on which the sender sends
    // uitrail.close and the daemon closes the tab's recording.
    await page.close({ runBeforeUnload: true });
    if (result.tab !== tab && !spec.demo) throw new Error(`${session.name}: the page used tab ${result.tab}, not ${tab}`);
    if (result.settled.length === 0) throw new Error(`${session.name}: the page recorded no true settle`);
    return result;
  } finally {
    await context.close();
  }
}

/** Runs `work` over `items` with at most `limit` at a time, in order of start. */
async function pool(items, limit, work) {
  const results = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  });
  await Promise.all(lanes);
  return results;
}

/**
 * The one recording of `tab` in `dir`: the daemon names it
 * <first-event-time>-<tab>.uitrail (a second file, should the tab have been
 * evicted and come back, would be an error here).
 */
function recordingOf(dir, tab) {
  const matches = readdirSync(dir).filter((name) => name.endsWith(`-${tab}.uitrail`));
  if (matches.length !== 1) {
    throw new Error(`tab ${tab}: expected one recording in ${dir}, found ${matches.length ? matches.join(', ') : 'none'}`);
  }
  return join(dir, matches[0]);
}

async function main() {
  const options = parseOptions();
  const missing = chromiumMissing() || daemonMissing();
  if (missing) {
    console.error(`record-sessions: ${missing}`);
    process.exit(1);
  }
  const recordDir = join(tempDir('record'), 'sessions');
  const sessions = [];
  for (let run = 1; run <= options.runs; run++) {
    for (const spec of options.cases) {
      const name = `${spec.name}-${run}`;
      sessions.push({ name, spec, tab: `rec-${name}` });
    }
  }

  const daemon = await startDaemon({ extraArgs: ['--record', recordDir, '--demo-root', REPO] });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  let results;
  try {
    results = await pool(sessions, options.parallel, async (session) => {
      const result = await playSession(browser, daemon, session);
      console.log(`record-sessions: ${session.name}: tab ${result.tab}, ${result.settled.length} true settles`);
      return result;
    });
    await sleep(DRAIN_MS);
  } finally {
    await browser.close();
    // SIGTERM: the daemon writes its last frames and closes every file.
    const status = await daemon.stop();
    if (status !== 0) console.error(`record-sessions: uitraild exited with ${status}:\n${daemon.stderr}`);
  }

  mkdirSync(options.out, { recursive: true });
  // Only the files of the cases recorded now are replaced, so --only can
  // remake one case without losing the others.
  const remade = new Set(options.cases.map((c) => c.name));
  for (const file of readdirSync(options.out)) {
    const match = /^(.+)-\d+\.(uitrail|labels)$/.exec(file);
    if (match && remade.has(match[1])) rmSync(join(options.out, file));
  }
  let bytes = 0;
  for (const [index, session] of sessions.entries()) {
    const { tab, settled } = results[index];
    const target = join(options.out, `${session.name}.uitrail`);
    copyFileSync(recordingOf(recordDir, tab), target);
    chmodSync(target, 0o644); // the daemon writes recordings 0600; fixtures are for everyone
    bytes += statSync(target).size;
    writeFileSync(join(options.out, `${session.name}.labels`),
      settled.map((ms) => `${JSON.stringify({ tab, settled: ms })}\n`).join(''));
  }
  rmSync(join(recordDir, '..'), { recursive: true, force: true });
  console.log(`record-sessions: wrote ${sessions.length} recordings (${bytes} bytes) and their labels to ${options.out}`);
}

await main();
