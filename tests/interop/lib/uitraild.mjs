// The real uitraild for the interop and deployment tests: started on a
// private runtime directory with free ports, read over its loopback HTTP
// listener with its bearer token, stopped (or killed) by the test.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
export const UITRAILD = process.env.UITRAILD || join(REPO, 'build', 'src', 'daemon', 'uitraild');

const START_TIMEOUT_MS = 10000;
const STOP_TIMEOUT_MS = 5000;

export function haveDaemon() {
  return existsSync(UITRAILD);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts uitraild (`bin`, default $UITRAILD) with `args` after
 * --runtime-dir and --http 127.0.0.1:0 (unless `args` names --http). Resolves once it printed its
 * token: { http, forward, token, dir, log(), get(path), stop(), kill() }.
 */
export async function startDaemon(args = [], { dir, bin = UITRAILD } = {}) {
  const own = !dir;
  dir = dir || mkdtempSync(join(tmpdir(), 'uitrail-interop-'));
  const runtimeDir = join(dir, 'rt');
  const full = ['--runtime-dir', runtimeDir];
  if (!args.includes('--http')) full.push('--http', '127.0.0.1:0');
  full.push(...args);
  const child = spawn(bin, full, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s) => { stderr += s; });
  const d = { child, dir, runtimeDir, http: 0, forward: 0, token: '', exited: false };
  child.on('exit', () => { d.exited = true; });
  const lines = createInterface({ input: child.stdout });
  const ready = new Promise((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`uitraild did not start:\n${stderr}`)), START_TIMEOUT_MS);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`uitraild exited (${code}):\n${stderr}`)); });
    lines.on('line', (line) => {
      const [kind, where] = line.trim().split(/\s+/);
      const port = where && where.startsWith('tcp:') ? Number(where.slice(where.lastIndexOf(':') + 1)) : 0;
      if (kind === 'http' && port) d.http = port;
      if (kind === 'ingest' && port) d.forward = port;
      if (kind === 'token') {
        d.token = readFileSync(where, 'utf8').trim();
        clearTimeout(timer);
        resolveReady();
      }
    });
  });
  await ready;
  d.log = () => stderr;
  d.get = (path, headers = {}) => httpGet(d.http, path, { authorization: `Bearer ${d.token}`, ...headers });
  d.kill = async () => {
    if (!d.exited) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  };
  d.stop = async () => {
    if (!d.exited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await once(child, 'exit');
      clearTimeout(timer);
    }
    if (own) rmSync(dir, { recursive: true, force: true });
  };
  return d;
}

/** GET over loopback TCP: { status, headers, body }. */
export function httpGet(port, path, headers = {}, host = '127.0.0.1') {
  return new Promise((resolveGet, reject) => {
    const req = request({ host, port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (s) => { body += s; });
      res.on('end', () => resolveGet({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.setTimeout(10000, () => req.destroy(new Error(`GET ${path}: timeout`)));
    req.end();
  });
}

/** One sample of GET /metrics, e.g. 'uitrail_events_held'; NaN when absent. */
export async function metric(d, sample) {
  const { body } = await d.get('/metrics');
  for (const line of body.split('\n')) {
    if (line.startsWith(sample + ' ')) return Number(line.slice(sample.length + 1));
  }
  return NaN;
}

/** Waits until `check()` returns a truthy value (polling), or fails. */
export async function until(what, check, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The event lines of a text trace without their "- HH:MM:SS " times. */
export function traceLines(text) {
  return text.split('\n').filter((l) => l.startsWith('- ')).map((l) => l.replace(/^- (?:\d\d:\d\d)?:\d\d /, ''));
}
