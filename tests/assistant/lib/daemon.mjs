// Shared pieces of the assistant-facing tests: the real uitraild on a
// private runtime directory and a free loopback port, the `uitrail` of the
// build, and plain HTTP reads of the daemon (over its http.sock and over
// TCP with the token) to compare what the MCP server and the examples say
// with what the daemon itself serves. Node's standard library only.
//
// The programs come from the environment (tests/assistant/run sets them
// from meson's arguments): UITRAIL, UITRAILD.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
// Absolute: meson hands them relative to the build directory, and some
// tests run commands from the repository.
export const UITRAIL = resolve(process.env.UITRAIL || join(REPO, 'build', 'tools', 'uitrail', 'uitrail'));
export const UITRAILD = resolve(process.env.UITRAILD || join(REPO, 'build', 'src', 'daemon', 'uitraild'));
export const BLUEWIDGET = join(REPO, 'fixtures', 'sessions', 'bluewidget.json');
export const BLUEWIDGET_TAB = 'tab-bluewidget';
// The seq of the Blue Widget session's last action (its last event that is
// not a mutation record): `stable?after=` it answers once the page answered
// that action and settled, whenever the request comes. A plain `stable`
// asked right after the send may answer from the state before the last
// action's marks (seen under valgrind), and a trace read then says
// "changing since 14:32:05" where a later one says "stable since 14:32:06".
export const BLUEWIDGET_LAST_ACTION = JSON.parse(readFileSync(BLUEWIDGET, 'utf8'))
  .filter(([tag]) => tag !== 'uitrail.mutation').at(-1)[2].seq;

const DAEMON_START_TIMEOUT_MS = 20000; // generous: under valgrind the daemon starts slowly
const DAEMON_STOP_TIMEOUT_MS = 10000;
const SETTLE_TIMEOUT_MS = 10000;

export const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), `uitrail-${prefix}-`));
}

export async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** Runs a program to its end: {status, signal, stdout, stderr}. */
export function run(command, args, { input, env, cwd } = {}) {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { env: env ?? process.env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('error', fail);
    child.on('close', (status, signal) => done({ status, signal, stdout, stderr }));
    child.stdin.on('error', () => {}); // a program that exits before reading all of it
    child.stdin.end(input ?? '');
  });
}

/** GET over a Unix socket or TCP: {status, headers, body}. */
export function httpGet({ socketPath, port, token }, path) {
  return new Promise((done, fail) => {
    // One connection per request, closed after it: the daemon's connection
    // gauge then counts only what is in flight.
    const headers = { connection: 'close', ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const options = { path, headers, agent: false, ...(socketPath ? { socketPath } : { host: '127.0.0.1', port }) };
    const req = request(options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => done({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

const running = new Set();

/** Stops every daemon a test left running (a failed assertion skips its stop()). */
export async function stopAllDaemons() {
  await Promise.all([...running].map((d) => d.stop()));
}

/**
 * Starts the real uitraild on a private runtime directory (made by the
 * daemon, inside a fresh temporary directory) and a free loopback port.
 * Resolves once its http.sock answers /healthz.
 */
export async function startDaemon({ extraArgs = [], runtimeDir } = {}) {
  const base = runtimeDir ? null : tempDir('assistant');
  const dir = runtimeDir ?? join(base, 'rt');
  const port = await freePort();
  const args = ['--runtime-dir', dir, '--http', `127.0.0.1:${port}`, ...extraArgs];
  const child = spawn(UITRAILD, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (chunk) => { log += chunk; });
  child.stderr.on('data', (chunk) => { log += chunk; });
  const exited = once(child, 'exit');
  const socketPath = join(dir, 'http.sock');
  const deadline = Date.now() + DAEMON_START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`uitraild exited with ${child.exitCode} at start:\n${log}`);
    try {
      const r = await httpGet({ socketPath }, '/healthz');
      if (r.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`uitraild did not answer /healthz within ${DAEMON_START_TIMEOUT_MS} ms:\n${log}`);
    }
    await sleep(50);
  }
  const daemon = {
    runtimeDir: dir,
    socketPath,
    port,
    tokenFile: join(dir, 'token'),
    get token() { return readFileSync(join(dir, 'token'), 'utf8').trim(); },
    get log() { return log; },
    /** GET over http.sock. */
    get(path) { return httpGet({ socketPath }, path); },
    /** GET over TCP with the bearer token. */
    getTcp(path) { return httpGet({ port, token: daemon.token }, path); },
    /** `uitrail send FILE` into this daemon. */
    async send(file, input) {
      const r = await run(UITRAIL, ['send', '--runtime-dir', dir, file], { input });
      if (r.status !== 0) throw new Error(`uitrail send ${file} exited ${r.status}:\n${r.stderr}`);
      return r;
    },
    /**
     * Waits until `tab`'s page answered the action `after` (a seq) and
     * settled: then every read of its trace says the same.
     */
    async settled(tab = BLUEWIDGET_TAB, after = BLUEWIDGET_LAST_ACTION) {
      const path = `/v1/tabs/${tab}/stable?wait_ms=${SETTLE_TIMEOUT_MS}&after=${after}`;
      const r = await httpGet({ socketPath }, path);
      const answer = r.status === 200 ? JSON.parse(r.body) : null;
      if (answer?.after !== 'settled') throw new Error(`GET ${path}: ${r.status} ${r.body}`);
      return answer;
    },
    /** Open connections, from the daemon's own gauge (this request included). */
    async connections() {
      const r = await httpGet({ socketPath }, '/metrics');
      const m = /^uitrail_connections (\d+)$/m.exec(r.body);
      if (!m) throw new Error('no uitrail_connections gauge in /metrics');
      return Number(m[1]);
    },
    async stop() {
      running.delete(daemon);
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), DAEMON_STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      if (base) rmSync(base, { recursive: true, force: true });
      return child.exitCode;
    },
  };
  running.add(daemon);
  return daemon;
}

/**
 * A session whose page stays busy (a loading indicator that never goes
 * away), as JSON Forward messages with the current time: a daemon started
 * with a long --stab-busy-cap-ms keeps it "changing", so a wait on it
 * lasts as long as it is allowed to.
 */
export function busySession(tab) {
  const now = Date.now() / 1000;
  return JSON.stringify([
    ['uitrail.nav', now, { tab, seq: 1, url: 'https://shop.example.com/reports', title: 'Reports', how: 'load' }],
    ['uitrail.mutation', now + 0.05, { tab, seq: 2, dom: [300, 9], recs: [['app', 0, 2, 280, 260, 30000]], busy: 1 }],
  ]);
}

/** The daemon's own answers, parsed, for comparisons. */
export async function daemonJson(daemon, path) {
  const r = await daemon.get(path);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.body}`);
  return JSON.parse(r.body);
}
