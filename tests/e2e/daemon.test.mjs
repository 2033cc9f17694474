// The whole chain in real Chromium: the demo app and the sender feeding the
// real uitraild, and the trace read back over HTTP. Skips, saying why, when
// the daemon binary is missing.
//
// The daemon serves the demo itself (`uitraild --demo`): the page comes from
// the daemon's origin and ingests over its WebSocket.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import WebSocket from 'ws';

import {
  captureEvents, chromiumMissing, daemonMissing, launchBrowser,
  startDaemon, startStaticServer, waitFor,
} from './lib/harness.mjs';

const STABLE_WAIT_MS = 5000;
// A clock (HH:MM:SS), or its ":SS" under the minute of the time before it.
const TIME_RE = /\b\d\d:\d\d:\d\d\b|(?<=^- |\(also |, ):\d\d\b/gm;
const ROW = 'Blue Widget | SKU-1234 | $24.99 | Published';

const skip = chromiumMissing() || daemonMissing();

/** True when the daemon accepts a WebSocket upgrade on /v1/ingest from
 *  `origin`. */
function websocketOpens(url, origin) {
  return new Promise((done) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/ingest`, ['uitrail.v1'], { origin });
    const timer = setTimeout(() => { ws.terminate(); done(false); }, 3000);
    ws.on('open', () => { clearTimeout(timer); ws.close(); done(true); });
    ws.on('error', () => { clearTimeout(timer); done(false); });
  });
}

/** Every file under dir, recursively. */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** A file's content as text to search; zstd recordings are decompressed. */
function searchableContent(path) {
  const raw = readFileSync(path);
  if (raw.length >= 4 && raw.readUInt32LE(0) === 0xfd2fb528) {
    try {
      return execFileSync('zstd', ['-dcq', path]).toString('latin1');
    } catch {
      // A torn last frame still decompresses up to it with -dc; keep the raw
      // bytes as well so nothing is skipped silently.
    }
  }
  return raw.toString('latin1');
}

if (skip) test('test_e2e_needs_chromium_and_uitraild', { skip }, () => {});

describe('uitraild end to end', { skip: skip || false }, () => {
  let daemon;
  let browser;
  let allEvents;

  before(async () => {
    daemon = await startDaemon();
    allEvents = captureEvents(`${daemon.url}/v1/events?tab=*`, daemon.token);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await allEvents?.stop();
    await daemon?.stop();
  });

  /** Opens the demo under a known tab id and waits for the table data. */
  async function openDemo(tab) {
    const page = await browser.newPage();
    const payloads = [];
    const sockets = [];
    page.on('websocket', (ws) => {
      sockets.push(ws.url());
      ws.on('framesent', (frame) => payloads.push(Buffer.from(frame.payload)));
    });
    page.on('request', (request) => {
      const body = request.postDataBuffer();
      if (body) payloads.push(body);
    });
    await page.addInitScript((id) => {
      if (!sessionStorage.getItem('uitrail.tab')) sessionStorage.setItem('uitrail.tab', JSON.stringify({ tab: id, seq: 0 }));
    }, tab);
    // The transport comes from /demo/config.json, so the URL, which the
    // trace prints, stays plain.
    await page.goto(`${daemon.url}/demo/`);
    await page.waitForFunction(() => window.uitrailDemo?.dataRenderedAt > 0 && window.uitrailDemo.tracker);
    assert.equal(await page.evaluate(() => window.uitrailDemo.tracker.tab), tab);
    assert.deepEqual(sockets, [`${daemon.url.replace(/^http/, 'ws')}/v1/ingest`], 'the sender ingests over the WebSocket');
    return { page, payloads };
  }

  const uniqueTab = (name) => `e2e-${name}-${Math.random().toString(36).slice(2, 10)}`;

  async function stable(tab, waitMs = STABLE_WAIT_MS) {
    const response = await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/stable?wait_ms=${waitMs}`);
    assert.equal(response.status, 200, `stable wait for ${tab}`);
    return response.json();
  }

  /** Waits until the event stream `events` carries `count` stable marks:
   *  all the daemon had made when a stable wait answered `marks: count`. */
  async function streamHasMarks(events, count, what) {
    const stableMarks = () => events.events.filter((e) => e.event === 'mark' && JSON.parse(e.data).state === 'stable');
    await waitFor(() => stableMarks().length >= count, 5000, what);
  }

  async function trace(tab, query = '') {
    const response = await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/trace${query}`);
    assert.equal(response.status, 200, `trace of ${tab}`);
    return response.text();
  }

  /** Polls the trace until `predicate` accepts it; returns that trace. */
  async function traceWith(tab, predicate, what) {
    let text = '';
    try {
      await waitFor(async () => {
        const response = await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/trace`);
        const body = await response.text();
        text = response.ok ? body : `${response.status} ${body}`;
        return response.ok && predicate(text);
      }, 5000, what);
    } catch (error) {
      throw new Error(`${error.message}; last trace:\n${text}`);
    }
    return text;
  }

  test('test_e2e_blue_widget_story', async () => {
    const tab = uniqueTab('story');
    const { page } = await openDemo(tab);
    await stable(tab);
    await page.click('text=Blue Widget');
    await traceWith(tab, (text) => text.includes('opened dialog "Blue Widget"'), 'the Blue Widget dialog');
    await page.keyboard.press('Escape');
    await traceWith(tab, (text) => text.includes('closed dialog "Blue Widget"'), 'the dialog closed');
    await page.locator('tr', { hasText: 'Blue Widget' }).getByRole('button', { name: 'Edit Item' }).click();
    await traceWith(tab, (text) => text.includes('"Edit Item"'), 'the Edit Item click');
    await stable(tab);
    const text = (await trace(tab)).replace(TIME_RE, 'HH:MM:SS').trimEnd();
    assert.equal(text, [
      'RECENT USER ACTIONS (newest first):',
      `- HH:MM:SS click button "Edit Item" (row: ${ROW}) → opened dialog "Edit Blue Widget"`,
      '- HH:MM:SS closed dialog "Blue Widget": Price: $24.99 · Status: Published',
      `- HH:MM:SS click link "Blue Widget" (same row) → opened dialog "Blue Widget"`,
      '- HH:MM:SS navigate /demo/ "Catalog"',
      'PAGE: stable since HH:MM:SS',
    ].join('\n'));
    // The panel tells the story: the newest action highlighted, and the
    // prompt for the sample question as the daemon frames it, no jargon.
    await page.waitForFunction(() => {
      const prompt = document.getElementById('panel-prompt')?.textContent || '';
      return prompt.includes('"Edit Item"') && prompt.includes('PAGE: stable');
    }, null, { timeout: 5000 });
    const panel = await page.evaluate(() => ({
      newestText: document.querySelector('#panel-trace .newest')?.textContent,
      prompt: document.getElementById('panel-prompt').textContent,
      words: document.querySelector('.panel').textContent,
    }));
    assert.match(panel.newestText, /^- (?:\d\d:\d\d)?:\d\d click button "Edit Item"/);
    assert.ok(panel.prompt.startsWith('--- Recent User Activity ---\n'), panel.prompt);
    assert.match(panel.prompt, /<user_activity>\nRECENT USER ACTIONS \(newest first\):\n- (?:\d\d:\d\d)?:\d\d click button "Edit Item"/);
    assert.ok(panel.prompt.endsWith("</user_activity>\n\nwhat's wrong with this item?"), panel.prompt);
    assert.doesNotMatch(panel.words, /marks \d|intensity/);
    await page.close();
  });

  test('test_e2e_filter_chips_burst_coalesced', async () => {
    const tab = uniqueTab('burst');
    const { page } = await openDemo(tab);
    const chips = ['Active', 'Draft', 'Retired', 'Archived', 'Pending review', 'Approved', 'Rejected', 'Scheduled'];
    for (const chip of chips) await page.click(`label.chip:has-text("${chip}")`);
    const text = await traceWith(tab, (t) => t.includes('clicked 8×'), 'the burst line');
    const lines = text.split('\n');
    assert.deepEqual(lines.filter((line) => line.includes(" checkbox ")).map((line) => line.replace(TIME_RE, 'HH:MM:SS')), [
      '- HH:MM:SS clicked 8× checkbox (checked) (group: Lifecycle filter): "Active", "Draft", "Retired" … (+5 more)',
    ]);
    await page.close();
  });

  test('test_e2e_secret_never_leaks', async () => {
    const tab = uniqueTab('secret');
    const events = captureEvents(`${daemon.url}/v1/events?tab=${tab}`, daemon.token);
    await events.ready;
    const { page, payloads } = await openDemo(tab);
    const secret = `Zq${Math.random().toString(36).slice(2)}Xw`;
    await page.locator('tr', { hasText: 'Blue Widget' }).getByRole('button', { name: 'Edit Item' }).click();
    await page.fill('#edit-secret', secret.slice(0, 5));
    await page.click('#edit-secret-toggle');
    await page.click('#edit-secret');
    await page.fill('#edit-secret', secret);
    await page.click('#edit-save');
    await traceWith(tab, (t) => t.includes('Saved Blue Widget'), 'the saved toast');
    const settled = await stable(tab);
    await streamHasMarks(events, settled.marks, 'the saved page\'s marks');
    await events.stop();

    const outputs = {
      'text trace': await trace(tab),
      'framed trace': await trace(tab, '?framed=1'),
      'JSON trace': await trace(tab, '?format=json'),
      'SSE stream of the tab': events.raw,
      'SSE stream of all tabs': allEvents.raw,
      '/v1/tabs': await (await daemon.get('/v1/tabs')).text(),
      '/metrics': await (await daemon.get('/metrics')).text(),
      'daemon stderr': daemon.stderr,
      'daemon stdout': daemon.stdout,
      'what the page sent': Buffer.concat(payloads).toString('latin1'),
    };
    for (const file of filesUnder(daemon.runtimeDir)) {
      if (!file.endsWith('.sock')) outputs[`runtime file ${file}`] = searchableContent(file);
    }
    assert.ok(outputs['text trace'].includes('(sensitive)'), 'the secret field shows as sensitive in the trace');
    for (const [where, content] of Object.entries(outputs)) {
      assert.ok(!content.includes(secret.slice(0, 5)), `the secret must not appear in ${where}`);
    }
    await page.close();
  });

  test('test_e2e_shadow_root_click', async () => {
    const tab = uniqueTab('shadow');
    const { page } = await openDemo(tab);
    await page.click('text=Contact support');
    const text = await traceWith(tab, (t) => t.includes('Contact support'), 'the shadow-root click');
    assert.match(text, /^- (?:\d\d:\d\d)?:\d\d click button "Contact support" \(region: Help\)/m);
    await page.close();
  });

  test('test_e2e_spa_navigation', async () => {
    const tab = uniqueTab('spa');
    const { page } = await openDemo(tab);
    await page.click('nav >> text=Settings');
    const text = await traceWith(tab, (t) => t.includes('/demo/settings'), 'the SPA navigation');
    // The click and the navigation it caused are one line.
    assert.match(text, /^- (?:\d\d:\d\d)?:\d\d click link "Settings" \(navigation: Main\) → navigated (\(in-app\) )?to \/demo\/settings "Settings"$/m);
    assert.doesNotMatch(text, /navigate (\(in-app\) )?\/demo\/settings/);
    await page.close();
  });

  test('test_e2e_skeleton_then_one_stable_mark', async () => {
    const tab = uniqueTab('skeleton');
    const events = captureEvents(`${daemon.url}/v1/events?tab=${tab}`, daemon.token);
    await events.ready; // The subscription is in place before the page loads.
    const { page } = await openDemo(tab);
    const dataAt = await page.evaluate(() => window.uitrailDemo.dataRenderedAt);
    const settled = await stable(tab);
    await streamHasMarks(events, settled.marks, 'the marks up to the stable one');
    await events.stop();
    // Marks in the order of their own time (sender ms, the clock of
    // dataRenderedAt), not in the order they arrived.
    const marks = events.events
      .filter((event) => event.event === 'mark')
      .map((event) => JSON.parse(event.data))
      .sort((a, b) => a.time - b.time);
    for (const mark of marks) {
      assert.equal(mark.tab, tab, `a mark of this tab: ${JSON.stringify(mark)}`);
      assert.ok(Number.isFinite(mark.time), `a mark has its time: ${JSON.stringify(mark)}`);
    }
    const stableMarks = marks.filter((mark) => mark.state === 'stable');
    assert.deepEqual(stableMarks.filter((mark) => mark.time < dataAt), [],
      `no stable mark while the skeleton shows: ${events.raw}`);
    assert.equal(stableMarks.length, 1, `one stable mark after the data: ${events.raw}`);
    assert.equal(marks.at(-1).state, 'stable', `the page ends stable: ${events.raw}`);
    await page.close();
  });

  test('test_e2e_ticking_clock_does_not_prevent_stability', async () => {
    const tab = uniqueTab('clock');
    const events = captureEvents(`${daemon.url}/v1/events?tab=${tab}`, daemon.token);
    await events.ready;
    const { page } = await openDemo(tab);
    const first = await stable(tab);
    assert.equal(first.stable, true, `the page settles although the clock ticks: ${JSON.stringify(first)}`);
    // Four ticks, as the daemon received them: four more mutation records.
    const mutations = () => events.events.filter((e) => e.event === 'event' && JSON.parse(e.data).kind === 'mutation').length;
    const before = mutations();
    await waitFor(() => mutations() >= before + 4, 15000, 'four ticks of the clock');
    await events.stop();
    const later = await stable(tab, 0);
    assert.equal(later.stable, true, `still stable after four ticks: ${JSON.stringify(later)}`);
    assert.equal(later.marks, first.marks, 'the ticks made no new stable state');
    await page.close();
  });

  test('test_e2e_static_page_gets_a_stable_mark', async () => {
    // A page that never changes sends only the sender's first mutation
    // record; that is enough for the daemon to score it and mark it stable.
    const tab = uniqueTab('static');
    const page = await browser.newPage();
    await page.goto(`${daemon.url}/demo/cases/static_page.html?tab=${encodeURIComponent(tab)}`);
    await traceWith(tab, (text) => text.includes('navigate '), 'the page load');
    const answer = await stable(tab);
    assert.equal(answer.stable, true, `a static page settles: ${JSON.stringify(answer)}`);
    assert.ok(answer.marks >= 1, `with a stable mark: ${JSON.stringify(answer)}`);
    assert.match(await trace(tab), /^PAGE: stable since \d\d:\d\d:\d\d$/m);
    await page.close();
  });

  test('test_e2e_foreign_origin_cannot_open_websocket', async () => {
    assert.equal(await websocketOpens(daemon.url, daemon.url), true, 'the daemon\'s own origin opens the ingest socket');
    const foreign = await startStaticServer({ pages: { '/foreign.html': '<!doctype html><title>Foreign</title>' } });
    try {
      const page = await browser.newPage();
      await page.goto(`${foreign.origin}/foreign.html`);
      const outcome = await page.evaluate((url) => new Promise((done) => {
        const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/ingest`, ['uitrail.v1']);
        ws.onopen = () => done('open');
        ws.onerror = () => done('error');
        ws.onclose = () => done('closed');
      }), daemon.url);
      assert.notEqual(outcome, 'open', 'a page on an origin off the allowlist cannot open the ingest socket');
      assert.equal(await websocketOpens(daemon.url, foreign.origin), false, 'nor can a client claiming that origin');
      await page.close();
    } finally {
      await foreign.close();
    }
  });

  test('test_e2e_no_page_can_read_a_trace', async () => {
    const tab = uniqueTab('read');
    const { page } = await openDemo(tab);
    await traceWith(tab, (t) => t.includes('navigate'), 'the first navigation');
    const foreign = await startStaticServer({ pages: { '/foreign.html': '<!doctype html><title>Foreign</title>' } });
    try {
      const other = await browser.newPage();
      await other.goto(`${foreign.origin}/foreign.html`);
      const readFromForeign = await other.evaluate(async (url) => {
        try {
          const response = await fetch(url);
          return `read ${response.status}: ${await response.text()}`;
        } catch (error) {
          return `refused: ${error.name}`;
        }
      }, `${daemon.url}/v1/tabs/${encodeURIComponent(tab)}/trace`);
      assert.match(readFromForeign, /^refused/, 'no CORS: another origin cannot read a trace');
      await other.close();
    } finally {
      await foreign.close();
    }
    // The demo page is on the daemon's own origin: without the token the read
    // is refused there too.
    const status = await page.evaluate(async (path) => (await fetch(path)).status,
      `/v1/tabs/${encodeURIComponent(tab)}/trace`);
    assert.equal(status, 401, 'the daemon\'s own origin cannot read a trace without the token');
    await page.close();
  });
});
