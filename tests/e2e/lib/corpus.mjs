// The corpus of real-library pages (tests/e2e/corpus/): a server that
// serves them the way an app's own server would, with the libraries
// installed from npm under /vendor/ and the sender under /sender/, plus the
// server-side pages of the multi-page flow (real form posts and redirects);
// and what every corpus test needs: the real uitraild accepting this
// origin, a browser, traces read back, and the check that no personal data
// reaches any output.
//
// UITRAIL_SENDER_DIR runs the pages with another copy of the sender (to
// check a test fails on an older one); UITRAILD picks the daemon.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { extname, join, resolve, sep } from 'node:path';

import {
  REPO, captureEvents, launchBrowser, startDaemon, waitFor,
} from './harness.mjs';

export const CORPUS_DIR = join(REPO, 'tests', 'e2e', 'corpus');
// The WAI-ARIA APG examples, a pinned unmodified copy (fixtures/apg/README.md).
const APG_DIR = join(REPO, 'fixtures', 'apg', 'content');
/** What an app adds to its pages' <head> to track them; the APG pages get
 *  it as they are served, so that their files stay as published. */
const SETUP_HEAD = '<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>'
  + '<script type="module" src="/corpus/uitrail-setup.js"></script>';
const NODE_MODULES = join(REPO, 'tests', 'e2e', 'node_modules');
const SENDER_DIR = resolve(process.env.UITRAIL_SENDER_DIR || join(REPO, 'tools', 'sender'));
// The packages a page may load, by the name it uses under /vendor/.
const VENDOR_PACKAGES = [
  'ag-grid-community', 'gridjs', '@shoelace-style/shoelace', 'preact', 'htm', 'preact-router',
  'micromodal', 'notyf', 'react', 'react-dom', 'dayjs', 'antd', 'vue', 'element-plus', 'bootstrap',
  'htmx.org', 'sweetalert2', 'tom-select', 'downshift',
];
const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.map': 'application/json',
  '.woff2': 'font/woff2', '.png': 'image/png',
};

// A clock (HH:MM:SS), or its ":SS" under the minute of the time before it
// (protocol §4): an entry line's, or one of a repeat's "(also …)".
export const TIME_RE = /\b\d\d:\d\d:\d\d\b|(?<=^- |\(also |, ):\d\d\b/gm;

/** The personal data the corpus pages show or the tests type: none of it
 *  may reach an output (fixtures/pii/corpus.txt lists more of its kinds). */
export const PII = {
  emails: ['ann.lee@example.com', 'bo.chen@example.org', 'carla.diaz@example.net', 'dan.eze@example.com',
    'support-typed@example.com'],
  phones: ['+1 415 555 0134', '(415) 555-0199', '+44 20 7946 0958'],
  cards: ['4111 1111 1111 1111', '5555555555554444'],
};
export const PII_VALUES = [...PII.emails, ...PII.phones, ...PII.cards];

function fileUnder(base, rest) {
  let decoded;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    return null;
  }
  const file = resolve(base, decoded);
  if (!file.startsWith(base + sep)) return null;
  try {
    return statSync(file).isFile() ? file : null;
  } catch {
    return null;
  }
}

/** Maps a GET path to a file of the corpus, a vendored package or the
 *  sender; null for anything else. */
function staticFile(pathname) {
  if (pathname.startsWith('/corpus/')) return fileUnder(CORPUS_DIR, pathname.slice('/corpus/'.length));
  if (pathname.startsWith('/apg/')) return fileUnder(APG_DIR, pathname.slice('/apg/'.length));
  if (pathname.startsWith('/vendor/')) {
    const rest = pathname.slice('/vendor/'.length);
    const name = VENDOR_PACKAGES.find((pkg) => rest.startsWith(`${pkg}/`));
    return name ? fileUnder(join(NODE_MODULES, name), rest.slice(name.length + 1)) : null;
  }
  if (pathname === '/sender/uitrail.js' || pathname.startsWith('/sender/lib/') ||
      pathname.startsWith('/sender/node_modules/@msgpack/msgpack/dist.esm/')) {
    return fileUnder(SENDER_DIR, pathname.slice('/sender/'.length));
  }
  return null;
}

// ------------------------------------------------------------ the shop (multi-page flow)

const ORDERS = [
  { id: '4411', customer: 'Ann Lee', email: 'ann.lee@example.com', phone: '+1 415 555 0134', total: '120.00', status: 'Paid' },
  { id: '4412', customer: 'Bo Chen', email: 'bo.chen@example.org', phone: '(415) 555-0199', total: '64.50', status: 'Shipped' },
  { id: '4413', customer: 'Carla Diaz', email: 'carla.diaz@example.net', phone: '+44 20 7946 0958', total: '310.00', status: 'Paid' },
];

const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function shopPage(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/corpus/shop.css">
<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>
<script type="module" src="/corpus/uitrail-setup.js"></script></head>
<body><header><a href="/shop/orders">Acme Shop admin</a></header><main>${body}</main></body></html>`;
}

function shopOrders() {
  const rows = ORDERS.map((o) => `<tr><td>${o.id}</td><td>${escapeHtml(o.customer)}</td><td>${escapeHtml(o.email)}</td>
<td>$${o.total}</td><td>${o.status}</td><td><a href="/shop/orders/${o.id}">View order ${o.id}</a></td></tr>`).join('');
  return shopPage('Orders · Acme Shop', `<h1>Orders</h1>
<table data-track-row-context="true" aria-label="Orders"><thead><tr><th>Order</th><th>Customer</th><th>E-mail</th><th>Total</th><th>Status</th><th></th></tr></thead>
<tbody>${rows}</tbody></table>`);
}

function shopOrder(order, message) {
  const alert = message ? `<div role="alert" class="error">${escapeHtml(message)}</div>` : '';
  return shopPage(`Order ${order.id} · Acme Shop`, `<h1>Order ${order.id}</h1>${alert}
<dl><dt>Customer</dt><dd>${escapeHtml(order.customer)}</dd><dt>Phone</dt><dd>${escapeHtml(order.phone)}</dd>
<dt>Total</dt><dd>$${order.total}</dd><dt>Status</dt><dd>${order.status}</dd></dl>
<form method="post" action="/shop/orders/${order.id}/refund" aria-label="Refund">
<label>Amount <input name="amount" inputmode="decimal"></label>
<label>Note to customer <textarea name="note"></textarea></label>
<button type="submit">Refund</button></form>
<p><a href="/shop/orders">Back to orders</a></p>`);
}

function readBody(request) {
  return new Promise((done) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
  });
}

/** The shop's server side: a list, an order page, a refund form post that
 *  fails (the amount exceeds the total) and redirects to the order page
 *  with the error, as a server-rendered app does (post/redirect/get). */
async function shopRoute(request, response, url) {
  const send = (status, html, headers = {}) => {
    response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers });
    response.end(html);
  };
  if (url.pathname === '/shop/orders') return send(200, shopOrders()), true;
  const match = /^\/shop\/orders\/(\d+)(\/refund)?$/.exec(url.pathname);
  const order = match && ORDERS.find((o) => o.id === match[1]);
  if (!order) return false;
  if (match[2] && request.method === 'POST') {
    const form = new URLSearchParams(await readBody(request));
    const amount = Number(form.get('amount'));
    const error = !(amount > 0) ? 'Enter an amount to refund' : amount > Number(order.total)
      ? `Refund of $${amount.toFixed(2)} exceeds the captured amount of $${order.total}` : '';
    response.writeHead(303, { location: `/shop/orders/${order.id}?error=${encodeURIComponent(error || 'none')}` });
    response.end();
    return true;
  }
  if (!match[2]) {
    const error = url.searchParams.get('error');
    return send(200, shopOrder(order, error && error !== 'none' ? error : '')), true;
  }
  return false;
}

/** The data endpoints of the stability pages (issue 21): /api/slow
 *  answers ?ms=N milliseconds later with ?rows=R rows, /api/fail answers
 *  500 then, /api/poll is a long poll answered ?ms=N later (or never
 *  while the page is open, with no ms). */
function stabilityApiRoute(response, url) {
  const ms = Number(url.searchParams.get('ms'));
  const answer = (status, body) => {
    if (response.destroyed || response.writableEnded) return;
    response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(JSON.stringify(body));
  };
  const rows = Math.min(50, Number(url.searchParams.get('rows')) || 8);
  if (url.pathname === '/api/slow') {
    setTimeout(() => answer(200, { rows: Array.from({ length: rows }, (_, i) => ({ id: 4400 + i, customer: `Customer ${i}`, total: `${(i + 1) * 10}.00` })) }), ms || 0);
    return true;
  }
  if (url.pathname === '/api/fail') {
    setTimeout(() => answer(500, { error: 'The report service is unavailable' }), ms || 0);
    return true;
  }
  if (url.pathname === '/api/poll') {
    if (ms) setTimeout(() => answer(200, { messages: 1 }), ms);
    return true;
  }
  return false;
}

/** The JSON API the single-page corpus apps call: a refund fails when the
 *  amount exceeds the order's total (422 with the reason). */
async function apiRoute(request, response, url) {
  if (request.method === 'GET' && stabilityApiRoute(response, url)) return true;
  const match = /^\/api\/orders\/(\d+)\/refund$/.exec(url.pathname);
  const order = match && ORDERS.find((o) => o.id === match[1]);
  if (!order || request.method !== 'POST') return false;
  let body = {};
  try { body = JSON.parse(await readBody(request) || '{}'); } catch { body = {}; }
  const amount = Number(body.amount);
  const ok = amount > 0 && amount <= Number(order.total);
  response.writeHead(ok ? 200 : 422, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(ok ? { refunded: amount.toFixed(2) }
    : { error: `Refund of $${amount.toFixed(2)} exceeds the captured amount of $${order.total}` }));
  return true;
}

// ------------------------------------------------------------ the htmx contacts app

// A server-rendered contacts app made interactive with htmx: hx-boost turns
// its links and forms into AJAX swaps of <body> with history entries, and
// htmx restores a page from its history cache on Back. The sender and the
// app's setup are loaded by every full page, as the shop's are.
const CONTACTS = [
  { id: '1', name: 'Ann Lee', email: 'ann.lee@example.com' },
  { id: '2', name: 'Bo Chen', email: 'bo.chen@example.org' },
];

function htmxPage(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/corpus/shop.css">
<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>
<script src="/vendor/htmx.org/dist/htmx.min.js"></script>
<script type="module" src="/corpus/uitrail-setup.js"></script></head>
<body hx-boost="true"><header><a href="/htmx/contacts">Acme Contacts</a></header><main>${body}</main></body></html>`;
}

function htmxContacts(flash) {
  const rows = CONTACTS.map((c) => `<tr><td>${escapeHtml(c.name)}</td><td>${escapeHtml(c.email)}</td>
<td><a href="/htmx/contacts/${c.id}/edit">Edit ${escapeHtml(c.name)}</a></td></tr>`).join('');
  const note = flash ? `<div role="status" class="flash">${escapeHtml(flash)}</div>` : '';
  return htmxPage('Contacts · Acme Contacts', `<h1>Contacts</h1>${note}
<table aria-label="Contacts" data-track-row-context="true"><thead><tr><th>Name</th><th>E-mail</th><th></th></tr></thead>
<tbody>${rows}</tbody></table>`);
}

function htmxEdit(contact, error) {
  const alert = error ? `<div role="alert" class="error">${escapeHtml(error)}</div>` : '';
  return htmxPage(`Edit ${contact.name} · Acme Contacts`, `<h1>Edit ${escapeHtml(contact.name)}</h1>${alert}
<form method="post" action="/htmx/contacts/${contact.id}/edit" aria-label="Contact">
<label>Name <input name="name" value="${escapeHtml(contact.name)}"></label>
<label>Phone <input name="phone" type="tel"></label>
<button type="submit">Save</button></form>
<p><a href="/htmx/contacts">Back to contacts</a></p>`);
}

/** Boosted requests answer the same full pages (htmx swaps their body);
 *  a save posts, fails on a phone without digits and otherwise redirects
 *  to the list with a flash message. */
async function htmxRoute(request, response, url) {
  const send = (status, html) => {
    response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', vary: 'HX-Request' });
    response.end(html);
  };
  if (url.pathname === '/htmx/contacts') {
    const saved = CONTACTS.find((c) => c.id === url.searchParams.get('saved'));
    return send(200, htmxContacts(saved ? `Saved ${saved.name}` : '')), true;
  }
  const match = /^\/htmx\/contacts\/(\d+)\/edit$/.exec(url.pathname);
  const contact = match && CONTACTS.find((c) => c.id === match[1]);
  if (!contact) return false;
  if (request.method === 'POST') {
    const form = new URLSearchParams(await readBody(request));
    if (!/\d/.test(form.get('phone') || '')) return send(200, htmxEdit(contact, 'Enter a phone number')), true;
    response.writeHead(303, { location: `/htmx/contacts?saved=${contact.id}` });
    response.end();
    return true;
  }
  return send(200, htmxEdit(contact, '')), true;
}

// ------------------------------------------------------------ server

/** Starts the corpus server on a free port; `config` is served as
 *  /corpus/config.json (the daemon URL the pages send to). */
export async function startCorpusServer(config) {
  const sockets = new Set();
  const server = createServer(async (request, response) => {
    const url = new URL(request.url, 'http://localhost');
    if (url.pathname === '/corpus/config.json') {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(config));
      return;
    }
    if (url.pathname.startsWith('/shop/') && await shopRoute(request, response, url)) return;
    if (url.pathname.startsWith('/api/') && await apiRoute(request, response, url)) return;
    if (url.pathname.startsWith('/htmx/') && await htmxRoute(request, response, url)) return;
    let file = request.method === 'GET' ? staticFile(url.pathname) : null;
    // The SPA's routes are all its one page, as its server would have it.
    if (!file && request.method === 'GET' && url.pathname.startsWith('/corpus/spa/')) file = join(CORPUS_DIR, 'spa.html');
    if (!file) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found\n');
      return;
    }
    response.writeHead(200, {
      'content-type': MIME_TYPES[extname(file)] || 'application/octet-stream', 'cache-control': 'no-store',
    });
    let body = readFileSync(file);
    if (url.pathname.startsWith('/apg/') && extname(file) === '.html') {
      body = body.toString('utf8').replace(/<head>/i, (head) => head + SETUP_HEAD);
    }
    response.end(body);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

// ------------------------------------------------------------ a corpus run

export function senderMissing() {
  return existsSync(join(SENDER_DIR, 'node_modules', '@msgpack', 'msgpack'))
    ? '' : `the sender's npm packages are missing: npm ci --prefix ${SENDER_DIR}`;
}

/**
 * Starts what a corpus test needs: the daemon (accepting the corpus
 * origin, with `daemonArgs` besides), the corpus server, an SSE capture
 * of every tab and a browser.
 */
export async function startCorpus({ daemonArgs = [] } = {}) {
  const config = {};
  const site = await startCorpusServer(config);
  const daemon = await startDaemon({ demo: false, extraArgs: ['--allow-origin', site.origin, ...daemonArgs] });
  config.daemon = daemon.url;
  const events = captureEvents(`${daemon.url}/v1/events?tab=*`, daemon.token);
  const browser = await launchBrowser();
  const run = {
    site, daemon, events, browser,
    /** Opens `path` in a new page whose tab id is `tab`; collects what the
     *  page sends (WebSocket frames, request bodies) and its console.
     *  `beforeLoad(page)` runs before anything else is set up on the page
     *  (rrweb's recorder starts before the sender, as record-rrweb.mjs). */
    async open(path, tab, { beforeLoad } = {}) {
      const page = await browser.newPage();
      await beforeLoad?.(page);
      // A loaded machine, on a quiet one (corpus README).
      const slowdown = Number(process.env.UITRAIL_CORPUS_CPU_SLOWDOWN || 1);
      if (slowdown > 1) {
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Emulation.setCPUThrottlingRate', { rate: slowdown });
      }
      const sent = [];
      const consoleLines = [];
      page.on('websocket', (ws) => ws.on('framesent', (frame) => sent.push(Buffer.from(frame.payload))));
      page.on('request', (request) => { const body = request.postDataBuffer(); if (body) sent.push(body); });
      page.on('console', (message) => consoleLines.push(message.text()));
      page.on('pageerror', (error) => consoleLines.push(`pageerror: ${error.message}`));
      await page.addInitScript(({ id, daemon }) => {
        if (window === window.top && !sessionStorage.getItem('uitrail.tab')) {
          sessionStorage.setItem('uitrail.tab', JSON.stringify({ tab: id, seq: 0 }));
        }
        // The daemon's address as the app's build would have it: the
        // sender then starts before the page's own scripts run at load
        // (a request the page starts then is one the sender sees).
        window.uitrailCorpusConfig = { daemon };
      }, { id: tab, daemon: daemon.url });
      // The APG pages link a stylesheet on www.w3.org: the tests run offline.
      if (path.startsWith('/apg/')) await page.route(/^https:/, (route) => route.abort());
      await page.goto(`${site.origin}${path}`);
      return { page, sent, consoleLines };
    },
    async trace(tab, query = '') {
      const response = await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/trace${query}`);
      assert.equal(response.status, 200, `trace of ${tab}: ${response.status}`);
      return response.text();
    },
    async json(tab) {
      return JSON.parse(await run.trace(tab, '?format=json'));
    },
    async stable(tab, waitMs = 5000) {
      const response = await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/stable?wait_ms=${waitMs}`);
      assert.equal(response.status, 200);
      return response.json();
    },
    /** Runs `act` (a user action on the page) and waits until the daemon
     *  says the page settled after it (the action's event is waited for
     *  up to `waitMs`: a sender that loses the action only costs time). */
    async act(tab, act, waitMs = 2500) {
      const since = Date.now();
      await act();
      const response = await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/stable?wait_ms=${waitMs}&after_ms=${since}`);
      assert.equal(response.status, 200);
      return response.json();
    },
    /** The event lines of the text trace, times as HH:MM:SS, newest first. */
    async lines(tab) {
      const text = await run.trace(tab);
      return text.replace(TIME_RE, 'HH:MM:SS').trimEnd().split('\n').filter((line) => line.startsWith('- '));
    },
    /** Waits until the trace has a line matching `pattern`. With
     *  UITRAIL_CORPUS_COMPARE=1 (running a story against an older sender
     *  or daemon, to see where it fails) a wait that times out only goes
     *  on, so that the final assertion shows the whole trace. */
    async until(tab, pattern, what = String(pattern)) {
      if (process.env.UITRAIL_CORPUS_COMPARE === '1') {
        await waitFor(async () => {
          const text = await (await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/trace`)).text();
          return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
        }, 3000, what).catch(() => {});
        return;
      }
      let last = '';
      try {
        await waitFor(async () => {
          const response = await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/trace`);
          last = await response.text();
          return response.ok && (typeof pattern === 'string' ? last.includes(pattern) : pattern.test(last));
        }, 8000, what);
      } catch (error) {
        throw new Error(`${error.message}; last trace:\n${last}`);
      }
    },
    /** No personal data shown on or typed into the page reaches an output:
     *  the text, framed and JSON traces, the SSE stream, the tab list, the
     *  daemon's logs. What the page sent may hold it only where the sender
     *  may send page text (the daemon redacts it before anything else). */
    async assertNoPii(tab, extra = []) {
      const outputs = {
        'text trace': await run.trace(tab),
        'framed trace': await run.trace(tab, '?framed=1'),
        'JSON trace': await run.trace(tab, '?format=json'),
        'SSE stream': events.raw,
        '/v1/tabs': await (await daemon.get('/v1/tabs')).text(),
        'daemon stderr': daemon.stderr,
        'daemon stdout': daemon.stdout,
      };
      for (const [where, content] of Object.entries(outputs)) {
        for (const value of [...PII_VALUES, ...extra]) {
          assert.ok(!content.includes(value), `${JSON.stringify(value)} must not appear in the ${where}`);
          const digits = value.replace(/\D/g, '');
          if (digits.length >= 10) {
            assert.ok(!content.replace(/\D/g, ' ').includes(digits), `the digits of ${JSON.stringify(value)} must not appear in the ${where}`);
          }
        }
      }
    },
    /** Stops everything; the daemon must exit cleanly (under a sanitizer
     *  build, a leak or an error report makes its exit status non-zero). */
    async close() {
      await browser.close();
      await events.stop();
      const status = await daemon.stop();
      await site.close();
      assert.equal(status, 0, `uitraild exited with ${status}:\n${daemon.stderr.slice(-4000)}`);
    },
  };
  return run;
}

export const uniqueTab = (name) => `corpus-${name}-${Math.random().toString(36).slice(2, 10)}`;
