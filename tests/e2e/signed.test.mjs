// Signed per-tab ingest in real Chromium: the sender on an app's page
// (another origin than the daemon's) feeds uitraild --ingest-secret-file
// with tokens the test mints as the app's backend would
// (tools/examples/mint-token.mjs), through the sender's `token` function.
// A token writes its own tab; an expired one is replaced by a fresh one
// without losing an event; a token for another tab writes nothing.

import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { mintToken } from '../../tools/examples/mint-token.mjs';
import {
  chromiumMissing, daemonMissing, launchBrowser, sleep, startDaemon, startStaticServer, tempDir, waitFor,
} from './lib/harness.mjs';

const SECRET = '7d1e5b0c9a3f4e2d8c6b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d';
const IMPORT_MAP = '<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>';

// The app's page: two buttons and the sender, whose token comes from the
// backend (window.mintToken, exposed by the test) before each connection.
const APP_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Orders</title>
<link rel="icon" href="data:,">${IMPORT_MAP}</head><body>
<main><button id="save">Save</button> <button id="again">Again</button></main>
<script type="module">
  import uitrail from '/sender/uitrail.js';
  const params = new URLSearchParams(location.search);
  window.tracker = uitrail.start({
    url: params.get('daemon'), tab: params.get('tab'),
    token: (tab) => window.mintToken(params.get('tokenTab') || tab),
  });
</script></body></html>`;

const skip = chromiumMissing() || daemonMissing();

if (skip) test('test_e2e_signed_needs_chromium_and_uitraild', { skip }, () => {});

describe('signed per-tab ingest in Chromium', { skip: skip || false }, () => {
  let daemon;
  let app;
  let browser;
  let secretDir;

  before(async () => {
    secretDir = tempDir('secret');
    const secretFile = join(secretDir, 'ingest-secret');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    app = await startStaticServer({ pages: { '/app.html': APP_PAGE } });
    daemon = await startDaemon({
      demo: false,
      extraArgs: ['--ingest-secret-file', secretFile, '--allow-origin', app.origin, '--reorder-ms', '0'],
    });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await daemon?.stop();
    if (secretDir) rmSync(secretDir, { recursive: true, force: true });
  });

  /** Opens the app page for `tab`; its backend mints tokens of `ttl(n)`
   *  seconds for the n-th request (for `tokenTab` instead when given). */
  async function openApp(tab, { ttl = () => 600, tokenTab } = {}) {
    const page = await browser.newPage();
    const minted = [];
    await page.exposeFunction('mintToken', (forTab) => {
      const token = mintToken(SECRET, forTab, ttl(minted.length), app.origin);
      minted.push(token);
      return token;
    });
    const query = new URLSearchParams({ daemon: daemon.url, tab, ...(tokenTab ? { tokenTab } : {}) });
    await page.goto(`${app.origin}/app.html?${query}`);
    await page.waitForFunction(() => window.tracker);
    return { page, minted };
  }

  async function trace(tab) {
    const response = await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/trace`);
    return { status: response.status, text: await response.text() };
  }

  async function metric(sample) {
    const text = await (await daemon.get('/metrics')).text();
    const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
    return line ? Number(line.slice(sample.length + 1)) : NaN;
  }

  test('test_e2e_signed_token_writes_its_tab', async () => {
    const tab = `signed-${Date.now()}`;
    const { page, minted } = await openApp(tab);
    await page.click('#save');
    await waitFor(async () => (await trace(tab)).text.includes('click button "Save"'), 10000, 'the click in the trace');
    assert.match((await trace(tab)).text, /navigate \/app\.html\?daemon=&tab= "Orders"/);
    assert.equal(minted.length, 1, 'one token for one connection');
    assert.match(daemon.stderr, /ingest: signed mode/);
    await page.close();
  });

  test('test_e2e_signed_expired_token_is_replaced_without_losing_events', async () => {
    const tab = `expiring-${Date.now()}`;
    // The first token lives 4 s (time to load the page and connect on a
    // loaded machine); every later one 10 minutes.
    const { page, minted } = await openApp(tab, { ttl: (n) => (n === 0 ? 4 : 600) });
    await page.click('#save');
    await waitFor(async () => (await trace(tab)).text.includes('"Save"'), 10000, 'the first click');
    assert.equal(minted.length, 1, 'the first token was still good');
    const expiredBefore = await metric('uitrail_ingest_unbound_total{reason="expired"}');
    const { exp } = JSON.parse(Buffer.from(minted[0].split('.')[1], 'base64url').toString());
    await sleep(Math.max(0, exp * 1000 + 500 - Date.now())); // past the first token's expiry
    await page.click('#again');
    await waitFor(async () => (await trace(tab)).text.includes('click button "Again"'), 15000,
      'the click after the expiry, resent with a fresh token');
    assert.ok(minted.length >= 2, 'the sender asked the backend for a new token');
    assert.ok(await metric('uitrail_ingest_unbound_total{reason="expired"}') > expiredBefore,
      'the daemon refused the event the expired token carried');
    await page.close();
  });

  test('test_e2e_signed_token_for_another_tab_writes_nothing', async () => {
    const victim = `victim-${Date.now()}`;
    const { page } = await openApp(victim, { tokenTab: `attacker-${Date.now()}` });
    await page.click('#save');
    await waitFor(async () => (await metric('uitrail_ingest_unbound_total{reason="other_tab"}')) >= 2, 10000,
      'the events refused by the binding');
    assert.equal((await trace(victim)).status, 404);
    await page.close();
  });
});
