// Pieces of the deployment tests: a certificate made with openssl, the
// real HAProxy running a configuration of tools/deploy, and the "app" a
// team would put behind it (a page that loads the real sender).

import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

import { REPO, sleep } from '../../interop/lib/uitraild.mjs';

export const HAPROXY = process.env.HAPROXY || '/usr/sbin/haproxy';

export async function freePort() {
  const server = createNetServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** A self-signed certificate for 127.0.0.1 and its key, in one PEM file (as HAProxy wants it). */
export function makeCertificate(dir) {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', '/CN=uitrail.test', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:uitrail.test',
  ], { stdio: 'ignore' });
  const pem = join(dir, 'uitrail.test.pem');
  writeFileSync(pem, readFileSync(cert, 'utf8') + readFileSync(key, 'utf8'), { mode: 0o600 });
  return pem;
}

/** Waits until something accepts TCP connections on `port`. */
export async function waitListening(port, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.on('connect', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port}`);
    await sleep(50);
  }
}

/**
 * Runs HAProxy on tools/deploy/<config> with `env` (the UITRAIL_* settings
 * the configuration reads). Checks the configuration first (haproxy -c).
 */
export async function startHaproxy(config, env, ports) {
  const file = join(REPO, 'tools', 'deploy', config);
  const fullEnv = { ...process.env, ...env };
  execFileSync(HAPROXY, ['-c', '-q', '-f', file], { env: fullEnv, stdio: 'pipe' });
  const child = spawn(HAPROXY, ['-db', '-f', file], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (s) => { log += s; });
  child.stderr.on('data', (s) => { log += s; });
  let exited = false;
  child.on('exit', () => { exited = true; });
  try {
    for (const port of ports) await waitListening(port);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${err.message}; HAProxy said:\n${log}`);
  }
  return {
    log: () => log,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript' };

/**
 * The app behind the proxy: GET / is `page` (HTML; setPage(html) changes
 * it); /assets/uitrail.js and /assets/lib/ are the real sender and its
 * modules, and /assets/msgpack/ its msgpack module, as an app would ship
 * them.
 */
export async function startApp(page) {
  const senderDir = join(REPO, 'tools', 'sender');
  const msgpackDir = join(senderDir, 'node_modules', '@msgpack', 'msgpack', 'dist.esm');
  /** The file `rel` below `dir`, or null when it would lead out of it. */
  const below = (dir, rel) => {
    const clean = normalize(rel);
    return clean.startsWith('..') || clean.includes(`${sep}..`) ? null : join(dir, clean);
  };
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://app').pathname;
    let file = null;
    if (path === '/') {
      res.writeHead(200, { 'content-type': MIME['.html'] });
      res.end(page);
      return;
    }
    if (path === '/assets/uitrail.js') file = join(senderDir, 'uitrail.js');
    if (path.startsWith('/assets/lib/')) file = below(join(senderDir, 'lib'), path.slice('/assets/lib/'.length));
    if (path.startsWith('/assets/msgpack/')) file = below(msgpackDir, path.slice('/assets/msgpack/'.length));
    try {
      if (!file) throw new Error('not found');
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': MIME[extname(file)] || 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found\n');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: server.address().port,
    setPage: (html) => { page = html; },
    close: () => new Promise((r) => server.close(r)),
  };
}
