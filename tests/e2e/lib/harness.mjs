// Shared pieces of the e2e suite: headless Chromium, a small static server
// for the demo and the sender (optionally capturing what the sender sends),
// and the real uitraild (serving the demo with --demo) on a private runtime
// directory and a free port.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, get as httpGet } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { decodeMulti, ExtensionCodec } from '@msgpack/msgpack';
import { chromium } from 'playwright-core';
import { WebSocketServer } from 'ws';

export const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
export const DEMO_DIR = join(REPO, 'fixtures', 'demo');
// UITRAIL_SENDER_DIR serves another copy of the sender (to compare with
// an older one, as tools/bench-sender.mjs --sender does).
export const SENDER_DIR = resolve(process.env.UITRAIL_SENDER_DIR || join(REPO, 'tools', 'sender'));

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const DAEMON_START_TIMEOUT_MS = 10000;
const DAEMON_STOP_TIMEOUT_MS = 5000;

const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.png': 'image/png', '.map': 'application/json',
};

// ------------------------------------------------------------ msgpack

/** Decodes Forward entries; EventTime (ext 0) becomes milliseconds. */
const extensionCodec = new ExtensionCodec();
extensionCodec.register({
  type: 0,
  encode: () => null,
  decode(data) {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    return view.getUint32(0) * 1000 + view.getUint32(4) / 1e6;
  },
});

export function decodeForward(bytes) {
  return Array.from(decodeMulti(bytes, { extensionCodec }));
}

// ------------------------------------------------------------ ports and files

export async function freePort() {
  const server = createNetServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), `uitrail-e2e-${prefix}-`));
}

/**
 * Maps a request path to a file: /demo/... to fixtures/demo (any path
 * without an extension answers index.html, as the daemon does for the
 * demo's routes), /sender/uitrail.js, its modules under /sender/lib/ and the msgpack ESM build to
 * tools/sender. Returns null for anything else or anything outside them.
 */
export function staticFileFor(pathname) {
  let base;
  let rest;
  if (pathname === '/demo' || pathname.startsWith('/demo/')) {
    base = DEMO_DIR;
    rest = pathname.slice('/demo/'.length);
    if (!rest || !extname(rest)) rest = 'index.html';
  } else if (pathname === '/sender/uitrail.js' || pathname.startsWith('/sender/lib/') ||
             pathname.startsWith('/sender/node_modules/@msgpack/msgpack/dist.esm/')) {
    base = SENDER_DIR;
    rest = pathname.slice('/sender/'.length);
  } else {
    return null;
  }
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

function serveStatic(response, file) {
  response.writeHead(200, {
    'content-type': MIME_TYPES[extname(file)] || 'application/octet-stream',
    'cache-control': 'no-store',
  });
  response.end(readFileSync(file));
}

// ------------------------------------------------------------ static server

/**
 * Starts an HTTP server on a free loopback port serving the demo and the
 * sender, plus /demo/config.json from `config`. Modes:
 *  - capture: POST /v1/ingest and WebSocket /v1/ingest decode what the
 *    sender sends into `records` ({tag, time, record, option, via, at: the
 *    arrival, ms since the epoch}); the
 *    WebSocket acks each chunk unless `ackChunks` is false.
 *  - page: extra HTML pages by path (for the foreign-origin test).
 */
export async function startStaticServer({ config = {}, capture = false, pages = {} } = {}) {
  const records = [];
  const sockets = new Set();
  const state = { ackChunks: true, connections: 0, protocols: [], payloads: [] };
  const server = createServer((request, response) => {
    const url = new URL(request.url, 'http://localhost');
    if (typeof pages[url.pathname] === 'function') {
      pages[url.pathname](url, response);
      return;
    }
    if (url.pathname in pages) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(pages[url.pathname]);
      return;
    }
    if (url.pathname === '/demo/config.json') {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(config));
      return;
    }
    if (capture && url.pathname === '/v1/ingest' && request.method === 'POST') {
      const chunks = [];
      request.on('data', (chunk) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        state.payloads.push(body);
        for (const [tag, time, record, option] of decodeForward(body)) {
          records.push({ tag, time, record, option, via: 'http', at: Date.now() });
        }
        response.writeHead(202, { 'content-type': 'application/json' });
        response.end('{"accepted":true}');
      });
      return;
    }
    const file = request.method === 'GET' ? staticFileFor(url.pathname) : null;
    if (!file) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found\n');
      return;
    }
    serveStatic(response, file);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  let wss = null;
  if (capture) {
    wss = new WebSocketServer({
      noServer: true,
      handleProtocols: (protocols) => (protocols.has('uitrail.v1') ? 'uitrail.v1' : false),
    });
    wss.on('connection', (ws, request) => {
      state.connections++;
      state.protocols.push(request.headers['sec-websocket-protocol'] || '');
      ws.on('message', (data) => {
        state.payloads.push(Buffer.from(data));
        for (const [tag, time, record, option] of decodeForward(new Uint8Array(data))) {
          records.push({ tag, time, record, option, via: 'websocket', at: Date.now() });
          if (option && option.chunk !== undefined && state.ackChunks) {
            ws.send(JSON.stringify({ ack: option.chunk }));
          }
        }
      });
    });
  }
  server.on('upgrade', (request, socket, head) => {
    const url = new URL(request.url, 'http://localhost');
    if (wss && url.pathname === '/v1/ingest') {
      wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
    } else {
      socket.destroy();
    }
  });

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    records,
    state,
    /** Closes every WebSocket the server accepted (the sender reconnects). */
    dropConnections() {
      if (wss) for (const client of wss.clients) client.terminate();
    },
    async close() {
      if (wss) { for (const client of wss.clients) client.terminate(); wss.close(); }
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

// ------------------------------------------------------------ browser

/** Launches headless Chromium with a fresh profile; close() removes it. */
export async function launchBrowser() {
  const profile = tempDir('profile');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
    headless: true,
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    async newPage() { return context.newPage(); },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export function chromiumMissing() {
  return existsSync(CHROMIUM) ? '' : `Chromium not found at ${CHROMIUM}: run tools/deps test (or set CHROMIUM)`;
}

// ------------------------------------------------------------ daemon

export function daemonPath() {
  return process.env.UITRAILD || join(REPO, 'build', 'src', 'daemon', 'uitraild');
}

export function daemonMissing() {
  const path = daemonPath();
  return existsSync(path)
    ? ''
    : `uitraild not found at ${path}: build it (meson setup build && ninja -C build) or set UITRAILD`;
}

/**
 * Starts the real uitraild (with --demo unless `demo` is false) on a private
 * runtime directory and a free loopback port. Resolves once /healthz answers. The returned object
 * has the base URL, the read token, the captured stderr and stop().
 */
export async function startDaemon({ demo = true, extraArgs = [] } = {}) {
  const runtimeDir = tempDir('runtime');
  const port = await freePort();
  const args = ['--runtime-dir', runtimeDir, '--http', `127.0.0.1:${port}`, ...(demo ? ['--demo'] : []), ...extraArgs];
  const child = spawn(daemonPath(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + DAEMON_START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) {
      rmSync(runtimeDir, { recursive: true, force: true });
      throw new Error(`uitraild exited with ${child.exitCode} at start (args: ${args.join(' ')}):\n${stderr}`);
    }
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`uitraild did not answer /healthz within ${DAEMON_START_TIMEOUT_MS} ms:\n${stderr}`);
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  const tokenFile = join(runtimeDir, 'token');
  const token = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : '';
  return {
    url, port, runtimeDir, token, args,
    get stderr() { return stderr; },
    get stdout() { return stdout; },
    /** Authorized GET against the daemon's TCP listener. */
    async get(path) {
      return fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), DAEMON_STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      rmSync(runtimeDir, { recursive: true, force: true });
      return child.exitCode;
    },
  };
}

/**
 * Reads a Server-Sent Events stream in the background, keeping each event
 * as {event, data, at} (at: Date.now() on arrival) and the raw text.
 * Over node:http, not fetch: on Node 18 (Debian 12's) aborting a fetch
 * whose body is being read leaves its connection open, and whatever waits
 * for the daemon to close it (a test's after()) hangs; `stop` destroys the
 * request and its socket.
 */
export function captureEvents(url, token) {
  const captured = { events: [], raw: '', error: null };
  let request;
  let stopped = false;
  // `ready`: the response's headers are in, so the daemon has the stream
  // subscribed: every event after this is on it (or the request failed).
  let resolveReady;
  captured.ready = new Promise((resolve) => { resolveReady = resolve; });
  const done = new Promise((resolveDone) => {
    request = httpGet(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    }, (response) => {
      resolveReady();
      if (response.statusCode !== 200) {
        captured.error = new Error(`GET ${url}: ${response.statusCode}`);
        response.resume();
      }
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (text) => {
        if (captured.error) return;
        captured.raw += text;
        buffer += text;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = 'message';
          const data = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          captured.events.push({ event, data: data.join('\n'), at: Date.now() });
        }
      });
      response.on('error', () => {}); // the stream ends by stop(): not an error
      response.on('close', resolveDone);
    });
    request.on('error', (error) => {
      if (!stopped) captured.error = error;
      resolveReady();
      resolveDone();
    });
    request.on('close', resolveDone);
  });
  captured.stop = async () => {
    stopped = true;
    request.destroy();
    await done;
  };
  return captured;
}

export const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** Polls `check` until it returns a truthy value or `timeoutMs` runs out. */
export async function waitFor(check, timeoutMs = 5000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}
