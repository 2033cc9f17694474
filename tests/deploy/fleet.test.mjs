// A fleet: three uitraild behind the real HAProxy with
// tools/deploy/haproxy-fleet.cfg, hashing consistently on the tab id for
// ingest (?tab= on the WebSocket URL, the sender's tabInUrl) and reads
// (/v1/tabs/{tab}/...). A few hundred tabs send their events through the
// public wss:// side; every trace must come back whole through the
// internal side. Then one daemon is killed: only its share of the tabs
// loses its history, the others are untouched; it comes back: about a
// third of the tabs (its share) move back to it.
//
// The figures (tabs per daemon, tabs lost, tabs moved) are printed for
// DEPLOYING.md, "A fleet".

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { encode } from '@msgpack/msgpack';
import { chromium } from 'playwright-core';
import WebSocket from 'ws';

import { haveDaemon, httpGet, startDaemon, traceLines, until } from '../interop/lib/uitraild.mjs';
import { freePort, makeCertificate, startApp, startHaproxy } from './lib/deploy.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// A page of the app that starts the real sender with tabInUrl, as a team
// running a fleet must (the proxy refuses an ingest without ?tab=).
const FLEET_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Orders</title>
  <script type="importmap">{ "imports": { "@msgpack/msgpack": "/assets/msgpack/index.mjs" } }</script>
</head>
<body>
  <main><h1>Orders</h1><button type="button" id="export">Export</button><p role="status" id="s"></p></main>
  <script type="module">
    import uitrail from '/assets/uitrail.js';
    window.tracker = uitrail.start({ tabInUrl: true });
    document.getElementById('export').addEventListener('click', () => {
      document.getElementById('s').textContent = 'Export started';
    });
  </script>
</body>
</html>`;

const DAEMONS = 3;
const TABS = 300;
const CONCURRENCY = 25;

/** The Forward messages of one tab's session, seq from `seq`. */
function session(tab, seq, t0) {
  const events = [
    ['uitrail.nav', { url: `https://shop.example.com/orders/${tab}`, title: `Order ${tab}`, how: 'load' }],
    ['uitrail.click', { role: 'button', name: 'Refund', el: 'refund' }],
    ['uitrail.alert', { role: 'status', text: `Refund of ${tab} queued`, level: 'info' }],
  ];
  return events.map(([tag, record], i) => [tag, t0 + i * 0.2, { ...record, tab, seq: seq + i }]);
}

/** Sends `messages` over one WebSocket through the public side and waits for the last ack. */
function sendTab(port, origin, tab, messages) {
  return new Promise((resolve, reject) => {
    const url = `wss://127.0.0.1:${port}/v1/ingest?tab=${encodeURIComponent(tab)}`;
    const ws = new WebSocket(url, ['uitrail.v1'], { rejectUnauthorized: false, origin });
    const chunk = `${tab}-end`;
    ws.on('open', () => {
      const last = messages.length - 1;
      const bytes = messages.map((m, i) => encode(i === last ? [...m, { chunk }] : m));
      ws.send(Buffer.concat(bytes.map((b) => Buffer.from(b))));
    });
    ws.on('message', (data) => {
      if (String(data).includes(chunk)) {
        ws.close();
        resolve();
      }
    });
    ws.on('unexpected-response', (req, res) => reject(new Error(`${tab}: HTTP ${res.statusCode}`)));
    ws.on('error', reject);
  });
}

async function inBatches(items, fn) {
  for (let i = 0; i < items.length; i += CONCURRENCY) await Promise.all(items.slice(i, i + CONCURRENCY).map(fn));
}

describe('a fleet of three behind HAProxy', { skip: !haveDaemon() && 'uitraild is not built' }, () => {
  let dir, proxy, app, ports, daemons, origin, tokenFile, auth;
  const tabs = Array.from({ length: TABS }, (_, i) => `tab-${String(i).padStart(4, '0')}-${(i * 2654435761) % 100000}`);

  const startOne = (i) => {
    mkdirSync(join(dir, `d${i + 1}`), { recursive: true });
    return startDaemon([
    '--http', `127.0.0.1:${ports.daemons[i]}`,
    '--allow-origin', origin,
    '--token-file', tokenFile,
    ], { dir: join(dir, `d${i + 1}`) });
  };

  /** Reads every tab's trace through the internal side: { tab: { status, server, lines } }. */
  async function readAll() {
    const out = {};
    await inBatches(tabs, async (tab) => {
      const res = await httpGet(ports.internal, `/v1/tabs/${encodeURIComponent(tab)}/trace`, auth);
      out[tab] = { status: res.status, server: res.headers['x-uitrail-server'], lines: res.status === 200 ? traceLines(res.body) : [] };
    });
    return out;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'uitrail-fleet-'));
    const cert = makeCertificate(dir);
    tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'fleet-test-token-0123456789abcdef\n', { mode: 0o600 });
    auth = { authorization: 'Bearer fleet-test-token-0123456789abcdef' };
    ports = { public: await freePort(), internal: await freePort(), daemons: [] };
    for (let i = 0; i < DAEMONS; i++) ports.daemons.push(await freePort());
    origin = `https://127.0.0.1:${ports.public}`;
    app = await startApp(FLEET_PAGE);
    daemons = [];
    for (let i = 0; i < DAEMONS; i++) daemons.push(await startOne(i));
    const env = {
      UITRAIL_PUBLIC_BIND: `127.0.0.1:${ports.public}`,
      UITRAIL_TLS_CERT: cert,
      UITRAIL_INTERNAL_BIND: `127.0.0.1:${ports.internal}`,
      UITRAIL_APP: `127.0.0.1:${app.port}`,
    };
    for (let i = 0; i < DAEMONS; i++) env[`UITRAIL_DAEMON_${i + 1}`] = `127.0.0.1:${ports.daemons[i]}`;
    proxy = await startHaproxy('haproxy-fleet.cfg', env, [ports.public, ports.internal]);
  });

  after(async () => {
    if (proxy) await proxy.stop();
    for (const d of daemons || []) await d.stop();
    if (app) await app.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('every trace whole; one daemon dies and comes back', async () => {
    const t0 = Date.now() / 1000 - 60;
    await inBatches(tabs, (tab) => sendTab(ports.public, origin, tab, session(tab, 1, t0)));

    // 1. Every tab's trace is whole, and served by one daemon.
    const first = await readAll();
    const share = {};
    for (const tab of tabs) {
      const r = first[tab];
      assert.equal(r.status, 200, `${tab}: ${r.status}`);
      assert.deepEqual(r.lines, [
        `click button "Refund" → info status "Refund of ${tab} queued"`,
        `navigate /orders/${tab} "Order ${tab}"`,
      ], tab);
      share[r.server] = (share[r.server] || 0) + 1;
    }
    assert.equal(Object.keys(share).length, DAEMONS, JSON.stringify(share));
    // GET /v1/tabs is per daemon: asked of each by name, they add up, and no tab is on two.
    const listed = new Set();
    for (let i = 1; i <= DAEMONS; i++) {
      const res = await httpGet(ports.internal, '/v1/tabs', { ...auth, 'x-uitrail-server': `uitraild${i}` });
      assert.equal(res.headers['x-uitrail-server'], `uitraild${i}`);
      const list = JSON.parse(res.body);
      assert.equal(list.length, share[`uitraild${i}`]);
      for (const t of list) {
        assert.ok(!listed.has(t.tab), `${t.tab} on two daemons`);
        listed.add(t.tab);
      }
    }
    assert.equal(listed.size, TABS);

    // 2. uitraild2 dies (kill -9). Once HAProxy has seen it, its tabs are
    // hashed to the others, which never saw them: 404. The rest: untouched.
    const victim = 'uitraild2';
    const victimTab = tabs.find((t) => first[t].server === victim);
    await daemons[1].kill();
    await until('HAProxy to take uitraild2 out', async () => {
      const res = await httpGet(ports.internal, `/v1/tabs/${encodeURIComponent(victimTab)}/trace`, auth);
      return res.status === 404 && res.headers['x-uitrail-server'] !== victim;
    });
    const down = await readAll();
    let lost = 0, untouched = 0;
    for (const tab of tabs) {
      if (first[tab].server === victim) {
        assert.equal(down[tab].status, 404, `${tab} was on the dead daemon`);
        assert.notEqual(down[tab].server, victim);
        lost++;
      } else {
        assert.equal(down[tab].status, 200, tab);
        assert.equal(down[tab].server, first[tab].server, `${tab} moved though its daemon lives`);
        assert.deepEqual(down[tab].lines, first[tab].lines);
        untouched++;
      }
    }
    assert.equal(lost, share[victim]);

    // While it is down, every tab goes on: the lost ones start again
    // where they are hashed now.
    await inBatches(tabs, (tab) => sendTab(ports.public, origin, tab, [
      ['uitrail.click', t0 + 10, { role: 'button', name: 'Print', el: 'print', tab, seq: 4 }],
    ]));

    // 3. It comes back (empty, as a restarted daemon is). Its share moves
    // back to it: exactly the tabs it had, about 1/N of them.
    daemons[1] = await startOne(1);
    await until('HAProxy to take uitraild2 back', async () => {
      const res = await httpGet(ports.internal, `/v1/tabs/${encodeURIComponent(victimTab)}/trace`, auth);
      return res.headers['x-uitrail-server'] === victim;
    });
    const back = await readAll();
    let moved = 0;
    for (const tab of tabs) {
      if (back[tab].server !== down[tab].server) moved++;
      assert.equal(back[tab].server, first[tab].server, `${tab} is not home`);
      if (first[tab].server === victim) {
        assert.equal(back[tab].status, 404, `${tab}: what it sent during the outage stayed on ${down[tab].server}`);
      } else {
        assert.deepEqual(back[tab].lines, [`click button "Print"`, ...first[tab].lines], tab);
      }
    }
    assert.equal(moved, lost);
    // An ingest without its tab in the URL could land anywhere: refused.
    const refused = await new Promise((resolve) => {
      const ws = new WebSocket(`wss://127.0.0.1:${ports.public}/v1/ingest`, ['uitrail.v1'], { rejectUnauthorized: false, origin });
      ws.on('open', () => { ws.close(); resolve(101); });
      ws.on('unexpected-response', (req, res) => { resolve(res.statusCode); req.destroy(); });
      ws.on('error', () => resolve(0));
    });
    assert.equal(refused, 400);

    // A browser tab through the fleet: the sender's tabInUrl puts the tab
    // where the proxy hashes it; its trace is read where it was written.
    const browser = await chromium.launch({ executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--ignore-certificate-errors'] });
    try {
      const page = await (await browser.newContext({ ignoreHTTPSErrors: true })).newPage();
      await page.goto(`${origin}/`);
      const tab = await page.evaluate(() => window.tracker.tab);
      await page.getByRole('button', { name: 'Export' }).click();
      const trace = await until('the browser tab\'s trace', async () => {
        const res = await httpGet(ports.internal, `/v1/tabs/${encodeURIComponent(tab)}/trace`, auth);
        return res.status === 200 && res.body.includes('Export started') ? res : null;
      });
      assert.deepEqual(traceLines(trace.body).slice(0, 2),
        ['click button "Export" → status "Export started"', 'navigate / "Orders"']);
    } finally {
      await browser.close();
    }

    console.log(`fleet: ${TABS} tabs over ${DAEMONS} daemons ${JSON.stringify(share)}; ` +
      `${victim} killed: ${lost} tabs lost their history (${(100 * lost / TABS).toFixed(1)} %), ` +
      `${untouched} untouched; back: ${moved} tabs moved (${(100 * moved / TABS).toFixed(1)} %, 1/N = ${(100 / DAEMONS).toFixed(1)} %)`);
  });
});
