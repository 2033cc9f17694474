// The sender's page activity in real Chromium (issue 21): requests in
// flight (fetch and XMLHttpRequest, wrapped transparently) and loading
// indicators that only animate. The page's own results must not change:
// the same battery of requests runs before the sender starts, with one
// and two senders, under a page that wraps fetch itself, and after stop.
// Runs without the daemon (records captured through onRecord).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, launchBrowser, startStaticServer } from './lib/harness.mjs';

const IMPORT_MAP = '<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>';

// The requests of the battery, each answering what the page saw.
const BATTERY = `
window.battery = async () => {
  const out = {};
  const r1 = await fetch('/net/slow?ms=50&v=1');
  out.json = [r1.status, r1.ok, r1.headers.get('content-type'), await r1.json()];
  const req = new Request('/net/echo', { method: 'POST', body: 'hello', headers: { 'x-a': 'b' } });
  const r2 = await fetch(req, { headers: { 'x-c': 'd' } });
  out.request = [r2.status, await r2.text(), req.bodyUsed];
  try { await fetch('/net/reset'); out.fail = 'resolved'; } catch (e) { out.fail = [e.name, e instanceof TypeError]; }
  const r404 = await fetch('/net/missing');
  out.notFound = [r404.status, r404.ok];
  const ac = new AbortController();
  const pending = fetch('/net/slow?ms=2000', { signal: ac.signal });
  setTimeout(() => ac.abort(), 30);
  try { await pending; out.abort = 'resolved'; } catch (e) { out.abort = [e.name]; }
  const r3 = await fetch('/net/stream');
  const reader = r3.body.getReader();
  const chunks = [];
  for (;;) { const { done, value } = await reader.read(); if (done) break; chunks.push(new TextDecoder().decode(value)); }
  out.stream = [chunks.join(''), r3.bodyUsed];
  const r4 = await fetch('/net/slow?ms=10&v=4');
  const clone = r4.clone();
  out.clone = [await clone.text() === await r4.text()];
  out.fetchName = [typeof fetch, fetch.length];
  out.xhr = await new Promise((resolve) => {
    const x = new XMLHttpRequest();
    const events = [];
    for (const type of ['loadstart', 'load', 'loadend', 'error', 'abort']) x.addEventListener(type, () => events.push(type));
    x.onreadystatechange = () => { if (x.readyState === 4) events.push('ready4'); };
    x.open('GET', '/net/slow?ms=20&v=x');
    x.responseType = 'json';
    x.onloadend = () => resolve([x.status, x.response, events]);
    x.send();
  });
  out.xhrAbort = await new Promise((resolve) => {
    const x = new XMLHttpRequest();
    const events = [];
    for (const type of ['load', 'loadend', 'error', 'abort']) x.addEventListener(type, () => events.push(type));
    x.open('GET', '/net/slow?ms=2000');
    x.onloadend = () => resolve([x.status, x.readyState, events]);
    x.send();
    setTimeout(() => x.abort(), 20);
  });
  out.xhrError = await new Promise((resolve) => {
    const x = new XMLHttpRequest();
    x.open('GET', '/net/reset');
    x.onloadend = () => resolve([x.status, x.readyState]);
    x.send();
  });
  out.xhrSync = (() => { const x = new XMLHttpRequest(); x.open('GET', '/net/slow?ms=0&v=s', false); x.send(); return [x.status, x.responseText]; })();
  try { const x = new XMLHttpRequest(); x.send(); out.xhrThrows = 'sent'; } catch (e) { out.xhrThrows = e.name; }
  return out;
};`;

const page = (body, script) => `<!doctype html><html><head><meta charset="utf-8"><title>Network</title>
<link rel="icon" href="data:,">${IMPORT_MAP}<script>${BATTERY}</script>
<style>@keyframes spin { to { transform: rotate(360deg); } } .ring { width: 24px; height: 24px; border: 3px solid #ccc; border-top-color: #333; border-radius: 50%; animation: spin 1s linear infinite; }
.pulse { width: 600px; height: 40px; animation: spin 3s linear infinite; }</style></head>
<body>${body}<script type="module">
  import uitrail from '/sender/uitrail.js';
  window.uitrail = uitrail;
  window.records = [];
  window.startSender = (extra = {}) => uitrail.start({
    url: 'http://127.0.0.1:9', transport: 'http',
    onRecord: (tag, record) => window.records.push({ tag, record: JSON.parse(JSON.stringify(record)), at: performance.now() }),
    ...extra,
  });
  ${script}
  window.ready = true;
</script></body></html>`;

function netRoute(url, response) {
  const send = (status, type, body) => {
    response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    response.end(body);
  };
  switch (url.pathname) {
    case '/net/slow':
      setTimeout(() => send(200, 'application/json', JSON.stringify({ v: url.searchParams.get('v') })), Number(url.searchParams.get('ms')) || 0);
      return;
    case '/net/echo': {
      const chunks = [];
      response.req.on('data', (c) => chunks.push(c));
      response.req.on('end', () => send(201, 'text/plain', `${response.req.method} ${Buffer.concat(chunks)} ${response.req.headers['x-a'] || '-'} ${response.req.headers['x-c'] || '-'}`));
      return;
    }
    case '/net/reset':
      response.req.socket.destroy();
      return;
    case '/net/stream': {
      response.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
      let i = 0;
      const timer = setInterval(() => {
        response.write(`part${i} `);
        if (++i === 4) { clearInterval(timer); response.end('end'); }
      }, 40);
      return;
    }
    case '/net/never':
      return; // a long poll that never answers
    default:
      send(404, 'text/plain', 'not found');
  }
}

const skip = chromiumMissing();

describe('sender page activity', { skip: skip || false }, () => {
  let server;
  let browser;

  before(async () => {
    const pages = {
      '/test/net.html': page('<main><p>Network</p></main>', ''),
      '/test/net-app-wraps.html': page('<main><p>Network</p></main>', `
        // The app's own fetch wrapper (an SDK's, a retry layer's), installed
        // before or after the sender as the query says.
        window.wrapFetch = () => { const inner = window.fetch; window.appCalls = 0; window.fetch = function appFetch(...args) { window.appCalls++; return inner.apply(this, args); }; window.appFetch = window.fetch; };
        if (location.search.includes('before')) window.wrapFetch();`),
      '/test/anim.html': page('<main><div class="pulse"></div><p>Animations</p></main>', ''),
    };
    // Every /net/ path is served by netRoute.
    for (const path of ['/net/slow', '/net/echo', '/net/reset', '/net/stream', '/net/never', '/net/missing']) {
      pages[path] = (url, response) => netRoute(url, response);
    }
    server = await startStaticServer({ pages });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function open(path) {
    const p = await browser.newPage();
    await p.goto(`${server.origin}${path}`);
    await p.waitForFunction(() => window.ready === true);
    return p;
  }
  const nets = (p) => p.evaluate(() => window.records.filter((r) => r.tag === 'uitrail.mutation').map((r) => r.record.net));

  test('test_sender_network_transparent_to_the_page', async () => {
    const p = await open('/test/net.html');
    const bare = await p.evaluate(() => window.battery());
    const originals = await p.evaluate(() => { window.origFetch = window.fetch; window.origSend = XMLHttpRequest.prototype.send; window.origOpen = XMLHttpRequest.prototype.open; return true; });
    assert.ok(originals);
    await p.evaluate(() => { window.t1 = window.startSender(); });
    const one = await p.evaluate(() => window.battery());
    assert.deepEqual(one, bare, 'one sender changes nothing the page sees');
    // A second sender (another bundle) shares the wrapping: not wrapped twice.
    const wrappedOnce = await p.evaluate(() => { const f = window.fetch; window.t2 = window.startSender({ tab: 'second' }); return window.fetch === f; });
    assert.ok(wrappedOnce, 'a second sender does not wrap fetch again');
    const two = await p.evaluate(() => window.battery());
    assert.deepEqual(two, bare, 'two senders change nothing the page sees');
    const restored = await p.evaluate(() => {
      window.t1.stop();
      const wrappedWhileOneRuns = window.fetch !== window.origFetch;
      window.t2.stop();
      return [wrappedWhileOneRuns, window.fetch === window.origFetch, XMLHttpRequest.prototype.send === window.origSend, XMLHttpRequest.prototype.open === window.origOpen];
    });
    assert.deepEqual(restored, [true, true, true, true], 'the last stop() restores fetch and XMLHttpRequest');
    assert.deepEqual(await p.evaluate(() => window.battery()), bare, 'and after stop()');
    // Every request of the battery ended: the count is back at zero.
    const counts = (await nets(p)).filter((n) => n !== undefined);
    assert.ok(counts.some((n) => n > 0), 'requests were counted');
    await p.close();
  });

  test('test_sender_network_under_an_app_fetch_wrapper', async () => {
    for (const when of ['before', 'after']) {
      const p = await open(`/test/net-app-wraps.html?${when}`);
      const bare = await p.evaluate(() => { if (!window.appFetch) window.wrapFetch(); return window.battery(); });
      await p.close();
      const q = await open(`/test/net-app-wraps.html?${when}`);
      const got = await q.evaluate(async () => {
        window.t = window.startSender();
        if (!window.appFetch) window.wrapFetch();
        const out = await window.battery();
        window.t.stop();
        // The app's wrapper is still the page's fetch, and still works.
        const kept = window.fetch === window.appFetch;
        const after = await (await fetch('/net/slow?ms=0&v=a')).json();
        return { out, kept, after, calls: window.appCalls > 0 };
      });
      assert.deepEqual(got.out, bare, `results unchanged with the app wrapping ${when} the sender`);
      assert.equal(got.kept, true);
      assert.deepEqual(got.after, { v: 'a' });
      assert.equal(got.calls, true);
      const counted = (await nets(q)).some((n) => n > 0);
      assert.ok(counted, `requests through the app's wrapper (${when}) are counted`);
      await q.close();
    }
  });

  test('test_sender_network_counts_in_flight', async () => {
    const p = await open('/test/net.html');
    await p.evaluate(() => { window.t = window.startSender(); });
    await p.evaluate(async () => {
      const x = new XMLHttpRequest();
      x.open('GET', '/net/slow?ms=300');
      const done = new Promise((r) => { x.onloadend = r; });
      x.send();
      await Promise.all([fetch('/net/slow?ms=300'), done]);
      await new Promise((r) => setTimeout(r, 100));
    });
    const counts = (await nets(p)).filter((n) => n !== undefined);
    assert.equal(counts[0], 0, 'the first record: nothing in flight');
    assert.ok(counts.includes(2), `both requests counted: ${counts}`);
    assert.equal(counts.at(-1), 0, 'both settled');
    // The sender's own requests (HTTP transport to its daemon) never count.
    assert.ok(!counts.some((n) => n > 2));
    await p.close();
  });

  test('test_sender_network_off_and_ignored', async () => {
    const p = await open('/test/net.html');
    const res = await p.evaluate(async () => {
      const before = window.fetch;
      const t = window.startSender({ network: false });
      const wrapped = window.fetch !== before;
      await fetch('/net/slow?ms=100');
      t.stop();
      return { wrapped, nets: window.records.filter((r) => r.tag === 'uitrail.mutation').map((r) => r.record.net) };
    });
    assert.equal(res.wrapped, false, 'network: false leaves fetch alone');
    assert.ok(res.nets.every((n) => n === undefined), 'and sends no net field');
    await p.close();
    const q = await open('/test/net.html');
    await q.evaluate(async () => {
      const t = window.startSender({ ignoreUrls: ['/net/slow', /never/, (u) => u.includes('stream')] });
      await fetch('/net/slow?ms=200');
      await (await fetch('/net/stream')).text();
      await new Promise((r) => setTimeout(r, 100));
      t.stop();
    });
    assert.ok((await nets(q)).every((n) => !n), 'ignored URLs never count');
    await q.close();
  });

  test('test_sender_network_long_request_stops_counting', async () => {
    const p = await open('/test/net.html');
    const res = await p.evaluate(async () => {
      window.startSender({ requestMaxMs: 300 });
      const t0 = performance.now();
      fetch('/net/never').catch(() => {});
      await new Promise((r) => setTimeout(r, 700));
      return { t0, recs: window.records.filter((r) => r.tag === 'uitrail.mutation').map((r) => [r.record.net, r.at]) };
    });
    const up = res.recs.find(([n]) => n === 1);
    const down = res.recs.find(([n, at]) => n === 0 && up && at > up[1]);
    assert.ok(up && down, `counted, then no longer: ${JSON.stringify(res.recs)}`);
    assert.ok(down[1] - res.t0 >= 300, 'not before the bound');
    await p.close();
  });

  test('test_sender_loaded_again_after_an_in_app_navigation', async () => {
    const p = await open('/test/net.html');
    const res = await p.evaluate(async () => {
      window.startSender();
      await new Promise((r) => setTimeout(r, 300));
      const before = window.records.filter((r) => r.record.loaded).length;
      // A route change whose data comes by fetch: `loaded` once it is in.
      history.pushState({}, '', '/test/net.html?route=orders');
      const data = fetch('/net/slow?ms=300');
      await data;
      await new Promise((r) => setTimeout(r, 300));
      const tags = window.records.map((r) => [r.tag, r.record.loaded === true, r.record.net, r.at]);
      return { before, tags };
    });
    assert.equal(res.before, 1, 'one loaded record for the document');
    const navs = res.tags.filter(([tag]) => tag === 'uitrail.nav');
    assert.equal(navs.length, 2, `the in-app navigation was reported: ${JSON.stringify(res.tags)}`);
    const again = res.tags.filter(([tag, loaded]) => tag === 'uitrail.mutation' && loaded);
    assert.equal(again.length, 2, `loaded again after the route change: ${JSON.stringify(res.tags)}`);
    assert.equal(again[1][2], 0, 'once no request is in flight');
    await p.close();
  });

  test('test_sender_animated_indicator_is_busy', async () => {
    const p = await open('/test/anim.html');
    const res = await p.evaluate(async () => {
      window.startSender();
      await new Promise((r) => setTimeout(r, 100));
      const first = window.records.filter((r) => r.tag === 'uitrail.mutation').at(-1).record.busy;
      const ring = document.createElement('div');
      ring.className = 'ring';
      document.querySelector('main').append(ring);
      await new Promise((r) => setTimeout(r, 150));
      const spinning = window.records.filter((r) => r.tag === 'uitrail.mutation').at(-1).record.busy;
      ring.remove();
      await new Promise((r) => setTimeout(r, 150));
      const gone = window.records.filter((r) => r.tag === 'uitrail.mutation').at(-1).record.busy;
      return { first, spinning, gone };
    });
    assert.deepEqual(res, { first: 0, spinning: 1, gone: 0 }, 'a decorative loop present at start is not busy; a spinner added later is, until it goes');
    await p.close();
  });
});
