#!/usr/bin/env node
// Assembles an assistant's prompt from what the user just did in a tab, the
// way the README recommends ("How an assistant uses it"): the system
// instructions (system-prompt.txt, next to this file), then a user message
// holding the framed trace (GET /v1/tabs/TAB/trace?framed=1, protocol §4)
// and after it the user's question. Node's standard library only; the
// Python twin, prompt.py, prints the same bytes.
//
//   node tools/examples/prompt.mjs TAB QUESTION [--max-tokens N] [--json]
//        [--runtime-dir DIR | --http ADDR:PORT [--token-file FILE]]
//
// Over the Unix socket (the default) it finds uitraild where the daemon
// puts it: $XDG_RUNTIME_DIR/uitrail, else /tmp/uitrail-UID (`uitrail paths`
// prints it). Over TCP it sends the bearer token from the daemon's token
// file. It prints the prompt as text, or with --json as chat messages
// ({"messages": [{"role": "system", ...}, {"role": "user", ...}]}) to hand
// to a chat-completion API.

import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const DEFAULT_MAX_TOKENS = 500;
const TIMEOUT_MS = 10000;
const SYSTEM_PROMPT = readFileSync(fileURLToPath(new URL('system-prompt.txt', import.meta.url)), 'utf8').replace(/\n+$/, '');

function fail(message) {
  process.stderr.write(`prompt.mjs: ${message}\n`);
  process.exit(1);
}

function usage(message) {
  process.stderr.write(`prompt.mjs: ${message}\nusage: node prompt.mjs TAB QUESTION [--max-tokens N] [--json] ` +
    '[--runtime-dir DIR | --http ADDR:PORT [--token-file FILE]]\n');
  process.exit(2);
}

function defaultRuntimeDir() {
  const xdg = process.env.XDG_RUNTIME_DIR;
  return xdg && xdg.startsWith('/') ? join(xdg, 'uitrail') : `/tmp/uitrail-${process.getuid()}`;
}

/** GET `path` from uitraild: {status, body}, or fail() with what to do. */
function get(where, path) {
  return new Promise((done) => {
    const headers = { connection: 'close' };
    let options;
    if (where.socketPath) {
      options = { socketPath: where.socketPath };
    } else {
      let token;
      try {
        token = readFileSync(where.tokenFile, 'utf8').trim();
      } catch (error) {
        fail(`cannot read uitraild's token file ${where.tokenFile} (${error.code}): is uitraild running? ` +
          'It writes the token when it starts; give --token-file if it lives elsewhere.');
      }
      headers.authorization = `Bearer ${token}`;
      options = { host: where.host, port: where.port };
    }
    const req = request({ ...options, path, headers, agent: false, timeout: TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => done({ status: res.statusCode, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on('error', (error) => fail(`cannot reach uitraild at ${where.text} (${error.code ?? error.message}): ` +
      'is it running? Start it with `uitraild` (or tools/run); `uitrail paths` prints where it listens.'));
    req.end();
  });
}

function reason(body) {
  try {
    return JSON.parse(body).error ?? body;
  } catch {
    return body;
  }
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        'max-tokens': { type: 'string' }, json: { type: 'boolean' },
        'runtime-dir': { type: 'string' }, http: { type: 'string' }, 'token-file': { type: 'string' },
      },
    });
  } catch (error) {
    usage(error.message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 2) usage('give a tab id and a question');
  const [tab, question] = positionals;
  const maxTokens = values['max-tokens'] ?? String(DEFAULT_MAX_TOKENS);
  if (!/^\d+$/.test(maxTokens)) usage(`--max-tokens ${maxTokens}: a number of tokens (0: no budget)`);
  if (values['token-file'] && !values.http) usage('--token-file goes with --http');

  const runtimeDir = values['runtime-dir'] ?? defaultRuntimeDir();
  let where;
  if (values.http) {
    const m = /^(.+):(\d+)$/.exec(values.http);
    if (!m) usage(`--http ${values.http}: use ADDR:PORT, e.g. 127.0.0.1:7317`);
    where = { host: m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]), text: values.http,
      tokenFile: values['token-file'] ?? join(runtimeDir, 'token') };
  } else {
    const socketPath = join(runtimeDir, 'http.sock');
    where = { socketPath, text: socketPath };
  }

  const path = `/v1/tabs/${encodeURIComponent(tab)}/trace?format=text&framed=1&max_tokens=${maxTokens}`;
  const { status, body } = await get(where, path);
  if (status === 404) fail(`unknown tab '${tab}': uitraild has no events for it (\`uitrail tabs\` lists the tabs it knows)`);
  if (status === 401) fail(`uitraild refused the request (401: ${reason(body)}): over TCP, the token must be the running daemon's`);
  if (status !== 200) fail(`uitraild answered ${status}: ${reason(body)}`);

  // The trace is page text: it goes in the user's message, inside its
  // <user_activity> frame, never in the system prompt.
  const messages = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: `${body.replace(/\n+$/, '')}\n\n${question}` },
  ];
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ messages }, null, 2)}\n`);
  } else {
    process.stdout.write(messages.map((m) => `=== ${m.role} ===\n${m.content}\n`).join('\n'));
  }
}

await main();
