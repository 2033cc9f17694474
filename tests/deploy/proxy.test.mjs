// uitraild behind the real HAProxy with tools/deploy/haproxy.cfg: TLS
// terminated with a certificate made here by openssl, the app and the
// sender's WebSocket ingest on one public origin (wss://), every read on
// the internal side only. Headless Chromium loads the app through the
// proxy, the user edits a price and saves, and the app's backend reads
// the trace through the internal frontend.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';
import WebSocket from 'ws';

import { mintToken } from '../../tools/examples/mint-token.mjs';
import { haveDaemon, httpGet, startDaemon, traceLines, until } from '../interop/lib/uitraild.mjs';
import { freePort, makeCertificate, startApp, startHaproxy } from './lib/deploy.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// uitrail.test is a second name of the proxy, for a page of another origin.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--ignore-certificate-errors',
  '--host-resolver-rules=MAP uitrail.test 127.0.0.1'];

// One Chromium for every case of the file, started by the first that needs it.
let sharedBrowser = null;
const launchBrowser = () => {
  sharedBrowser = sharedBrowser || chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  return sharedBrowser;
};
after(async () => {
  if (sharedBrowser) await (await sharedBrowser).close();
});

// The app, as its team wrote it: a form with a validation message, and
// the sender started with its defaults (the page's own origin, wss://).
const APP_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Catalog admin</title>
  <script type="importmap">{ "imports": { "@msgpack/msgpack": "/assets/msgpack/index.mjs" } }</script>
</head>
<body>
  <main>
    <h1>Blue Widget</h1>
    <form id="edit" aria-label="Edit item">
      <label>Price <input id="price" name="price" inputmode="decimal"></label>
      <button type="submit">Save</button>
    </form>
    <p id="message" role="alert"></p>
  </main>
  <script type="module">
    import uitrail from '/assets/uitrail.js';
    window.tracker = uitrail.start();
    document.getElementById('edit').addEventListener('submit', (e) => {
      e.preventDefault();
      const price = Number(document.getElementById('price').value);
      document.getElementById('message').textContent = price > 0 ? 'Saved' : 'Price must be positive';
    });
  </script>
</body>
</html>`;

/** An HTTPS request to the public side (the test's own certificate). */
function httpsRequest(port, path, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (s) => { body += s; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a WebSocket on the public side; resolves with the HTTP status it got (101 when open). */
function wsStatus(port, path, headers = {}) {
  return new Promise((resolve) => {
    const ws = new WebSocket(`wss://127.0.0.1:${port}${path}`, ['uitrail.v1'], { rejectUnauthorized: false, headers });
    ws.on('open', () => { ws.close(); resolve(101); });
    ws.on('unexpected-response', (req, res) => { resolve(res.statusCode); req.destroy(); });
    ws.on('error', () => resolve(0));
  });
}

describe('behind HAProxy with TLS', { skip: !haveDaemon() && 'uitraild is not built' }, () => {
  let dir, daemon, proxy, app, browser, ports;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'uitrail-proxy-'));
    const cert = makeCertificate(dir);
    ports = { public: await freePort(), internal: await freePort(), daemon: await freePort() };
    app = await startApp(APP_PAGE);
    daemon = await startDaemon([
      '--http', `127.0.0.1:${ports.daemon}`,
      '--allow-origin', `https://127.0.0.1:${ports.public}`,
      '--log-level', 'debug',
    ], { dir });
    proxy = await startHaproxy('haproxy.cfg', {
      UITRAIL_PUBLIC_BIND: `127.0.0.1:${ports.public}`,
      UITRAIL_TLS_CERT: cert,
      UITRAIL_INTERNAL_BIND: `127.0.0.1:${ports.internal}`,
      UITRAIL_APP: `127.0.0.1:${app.port}`,
      UITRAIL_DAEMON: `127.0.0.1:${ports.daemon}`,
    }, [ports.public, ports.internal]);
    browser = await launchBrowser();
  });

  after(async () => {
    if (proxy) await proxy.stop();
    if (daemon) await daemon.stop();
    if (app) await app.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the sender reaches uitraild over wss:// and the backend reads the trace inside', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const origin = `https://127.0.0.1:${ports.public}`;
    await page.goto(`${origin}/`);
    const tab = await page.evaluate(() => window.tracker.tab);
    await page.getByLabel('Price').fill('-5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'Price must be positive' }).waitFor();

    const auth = { authorization: `Bearer ${daemon.token}` };
    const trace = await until('the trace through the internal frontend', async () => {
      const res = await httpGet(ports.internal, `/v1/tabs/${encodeURIComponent(tab)}/trace`, auth);
      return res.status === 200 && res.body.includes('→ alert') ? res.body : null;
    });
    const lines = traceLines(trace);
    assert.deepEqual(lines.slice(0, 3), [
      'click button "Save" (form: Edit item) → alert "Price must be positive"',
      'typed 2 chars into textbox "Price"',
      'navigate / "Catalog admin"',
    ], trace);
    assert.match(trace, /^PAGE: /m);
    await context.close();

    // The daemon saw the browser's origin and the client's address the
    // proxy passed on.
    assert.match(daemon.log(), new RegExp(`WebSocket ingest open \\(origin "${origin.replace(/[.:/]/g, '\\$&')}", forwarded for "127\\.0\\.0\\.1"\\)`));
  });

  test('only the ingest is public: reads, metrics and POST ingest are not', async () => {
    const auth = { authorization: `Bearer ${daemon.token}` };
    for (const path of ['/v1/tabs', '/v1/tabs/any/trace', '/v1/tabs/any/stable', '/v1/events?tab=*']) {
      const res = await httpsRequest(ports.public, path, { headers: auth });
      assert.equal(res.status, 404, `${path} must not be reachable from the internet`);
    }
    // /metrics and /healthz are the app's paths on the public side.
    const metrics = await httpsRequest(ports.public, '/metrics', { headers: auth });
    assert.doesNotMatch(metrics.body, /uitrail_/);
    // POST without an Origin (not a browser), even with the daemon's token.
    const post = await httpsRequest(ports.public, '/v1/ingest', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' } });
    assert.equal(post.status, 403);
    // A GET that is no WebSocket upgrade, and a method no browser ingest uses.
    const origin = { origin: `https://127.0.0.1:${ports.public}` };
    assert.equal((await httpsRequest(ports.public, '/v1/ingest', { headers: origin })).status, 403);
    assert.equal((await httpsRequest(ports.public, '/v1/ingest', { method: 'PUT', headers: origin })).status, 403);
    // A WebSocket without an Origin (not a browser) or of a foreign origin.
    assert.equal(await wsStatus(ports.public, '/v1/ingest'), 403);
    assert.equal(await wsStatus(ports.public, '/v1/ingest', { origin: 'https://evil.test' }), 403);
    assert.equal(await wsStatus(ports.public, '/v1/ingest', { origin: `https://127.0.0.1:${ports.public}` }), 101);
    // Inside, reads need uitraild's bearer token like on its own listener.
    assert.equal((await httpGet(ports.internal, '/v1/tabs')).status, 401);
    assert.equal((await httpGet(ports.internal, '/v1/tabs', auth)).status, 200);
    assert.equal((await httpGet(ports.internal, '/healthz')).body.trim(), 'ok');
    assert.equal((await httpGet(ports.internal, '/some/app/page')).status, 404);
  });
});


// The app's page as a team with a separate ingest host writes it: the
// sender posts to another origin, with the tab and the signed per-tab
// tokens the app's backend gives the page (here, written into it): the
// first has expired, as a page left open past its token's life would
// find, and the token function gives the next one when asked again.
function httpTransportPage(ingestUrl, tab, tokens) {
  const options = `{ url: ${JSON.stringify(ingestUrl)}, transport: 'http', tab: ${JSON.stringify(tab)}, `
    + `token: ((tokens) => () => tokens.length > 1 ? tokens.shift() : tokens[0])(${JSON.stringify(tokens)}) }`;
  return APP_PAGE.replace('uitrail.start()', `uitrail.start(${options})`);
}

describe('the HTTP transport from another origin, behind HAProxy, in signed mode', { skip: !haveDaemon() && 'uitraild is not built' }, () => {
  const SECRET = '0123456789abcdef0123456789abcdef-proxy-http';
  let dir, daemon, proxy, app, browser, ports, pageOrigin, ingestOrigin;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'uitrail-proxy-http-'));
    const cert = makeCertificate(dir);
    const secretFile = join(dir, 'ingest-secret');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    ports = { public: await freePort(), internal: await freePort(), daemon: await freePort() };
    // Two names of the one proxy: the page's origin and the ingest's differ.
    pageOrigin = `https://uitrail.test:${ports.public}`;
    ingestOrigin = `https://127.0.0.1:${ports.public}`;
    app = await startApp(APP_PAGE);
    daemon = await startDaemon([
      '--http', `127.0.0.1:${ports.daemon}`, '--allow-origin', pageOrigin,
      '--ingest-secret-file', secretFile, '--log-level', 'debug',
    ], { dir });
    proxy = await startHaproxy('haproxy.cfg', {
      UITRAIL_PUBLIC_BIND: `127.0.0.1:${ports.public}`,
      UITRAIL_TLS_CERT: cert,
      UITRAIL_INTERNAL_BIND: `127.0.0.1:${ports.internal}`,
      UITRAIL_APP: `127.0.0.1:${app.port}`,
      UITRAIL_DAEMON: `127.0.0.1:${ports.daemon}`,
    }, [ports.public, ports.internal]);
    browser = await launchBrowser();
  });

  after(async () => {
    if (proxy) await proxy.stop();
    if (daemon) await daemon.stop();
    if (app) await app.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a page of the allowed origin posts its tab cross-origin, past an expired token; the backend reads the trace inside', async () => {
    const tab = 'proxy-http-tab';
    app.setPage(httpTransportPage(ingestOrigin, tab, [mintToken(SECRET, tab, -1, pageOrigin), mintToken(SECRET, tab, 600, pageOrigin)]));
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${pageOrigin}/`);
    await page.getByLabel('Price').fill('-5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'Price must be positive' }).waitFor();

    const auth = { authorization: `Bearer ${daemon.token}` };
    const trace = await until('the trace through the internal frontend', async () => {
      const res = await httpGet(ports.internal, `/v1/tabs/${tab}/trace`, auth);
      return res.status === 200 && res.body.includes('→ alert') ? res.body : null;
    });
    assert.deepEqual(traceLines(trace).slice(0, 3), [
      'click button "Save" (form: Edit item) → alert "Price must be positive"',
      'typed 2 chars into textbox "Price"',
      'navigate / "Catalog admin"',
    ], trace);
    // The page read every answer (CORS granted): the batch refused for its
    // expired token was sent again with a fresh one, and none was lost.
    const stats = await until('every batch acknowledged', async () => {
      const s = await page.evaluate(() => ({ ...window.tracker.stats }));
      return s.acked === s.queued ? s : null;
    });
    assert.equal(stats.rejected || 0, 0, JSON.stringify(stats));
    const metrics = await httpGet(ports.internal, '/metrics', auth);
    assert.match(metrics.body, /^uitrail_ingest_tokens_refused_total\{reason="expired"\} [1-9]/m, 'the expired token was tried');
    await context.close();
  });

  test('a page of another origin is refused at its preflight and writes nothing', async () => {
    const tab = 'proxy-http-foreign';
    // A token that names no origin: only CORS keeps the foreign page out.
    const token = mintToken(SECRET, tab, 600);
    app.setPage('<!doctype html><title>elsewhere</title>');
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${ingestOrigin}/`); // an origin uitraild does not allow
    const body = JSON.stringify(['uitrail.nav', 1700000000, { tab, url: 'https://x.test/', title: 'X', how: 'load', seq: 1 }]);
    const outcome = await page.evaluate(async ([url, token, body]) => {
      try {
        const res = await fetch(url, {
          method: 'POST', body, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        });
        return `read ${res.status}`;
      } catch (err) {
        return `refused: ${err.name}`;
      }
    }, [`${pageOrigin}/v1/ingest`, token, body]);
    assert.equal(outcome, 'refused: TypeError');
    await context.close();
    // The preflight failed, so the POST was never sent.
    const res = await httpGet(ports.internal, `/v1/tabs/${tab}/trace`, { authorization: `Bearer ${daemon.token}` });
    assert.equal(res.status, 404, res.body);
  });
});
