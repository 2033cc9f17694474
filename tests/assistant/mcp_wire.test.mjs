// `uitrail mcp` on the wire: JSON-RPC 2.0 over MCP's stdio transport,
// written and read as raw lines, for what an SDK client never sends
// (malformed JSON, batches, bad ids, requests before initialize, a message
// over the size limit) and for the transport's rules: stdout carries only
// JSON-RPC messages, one per line; notifications get no answer; the
// server ends when stdin closes, after answering what is in flight. The
// daemon is the real uitraild, except where a test needs a peer that
// misbehaves (an oversized answer, no answer): there a socket server of
// the test's own stands in the daemon's place.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  BLUEWIDGET, BLUEWIDGET_TAB, UITRAIL, busySession, run, startDaemon, stopAllDaemons, tempDir,
} from './lib/daemon.mjs';

const servers = new Set();
after(async () => {
  for (const server of servers) server.child.kill(); // left running by a failed test
  await stopAllDaemons();
});

const MESSAGE_MAX_BYTES = 1 << 20; // UT_MCP_MESSAGE_MAX_BYTES
const ANSWER_MAX_BYTES = 4 << 20; // UT_MCP_ANSWER_MAX_BYTES
const DAEMON_TIMEOUT_MS = 10000; // UT_MCP_DAEMON_TIMEOUT_MS
const BUSY_TAB = 'tab-busy-wire';

const INITIALIZE = {
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'wire-test', version: '1' } },
};

/** `uitrail mcp ARGS` with raw stdio: send lines, take answers in order. */
function startServer(args) {
  const child = spawn(UITRAIL, ['mcp', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let buffer = '';
  let stderr = '';
  const lines = [];
  const waiting = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (waiting.length) waiting.shift()(line);
      else lines.push(line);
    }
  });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const closed = once(child, 'close');
  closed.then(() => servers.delete(server));
  const server = {
    child,
    all: [], // every line stdout carried
    get stderr() { return stderr; },
    get trailing() { return buffer; },
    write(text) { child.stdin.write(text); },
    send(message) { child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`); },
    /** The next line on stdout, parsed; it must be a JSON-RPC 2.0 message. */
    async next() {
      const line = lines.length ? lines.shift() : await new Promise((done) => waiting.push(done));
      server.all.push(line);
      const message = JSON.parse(line);
      assert.equal(message.jsonrpc, '2.0', line);
      assert.ok('result' in message !== 'error' in message, `a result or an error: ${line}`);
      return message;
    },
    async ask(message) {
      server.send(message);
      return server.next();
    },
    async end() {
      child.stdin.end();
      const [status] = await closed;
      return status;
    },
    pending: () => lines.length,
  };
  servers.add(server);
  return server;
}

async function initialized(args) {
  const server = startServer(args);
  const answer = await server.ask(INITIALIZE);
  assert.equal(answer.result.protocolVersion, '2025-11-25');
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return server;
}

function errorOf(message, code, pattern) {
  assert.ok(message.error, `an error: ${JSON.stringify(message)}`);
  assert.equal(message.error.code, code, JSON.stringify(message));
  if (pattern) assert.match(message.error.message, pattern);
}

describe('uitrail mcp on the wire', () => {
  let daemon;
  before(async () => {
    daemon = await startDaemon({ extraArgs: ['--stab-busy-cap-ms', '600000'] });
    await daemon.send(BLUEWIDGET);
    await daemon.send('-', busySession(BUSY_TAB));
  });
  after(async () => { await daemon?.stop(); });

  it('answers ping before initialize, and nothing else', async () => {
    const server = startServer(['--runtime-dir', daemon.runtimeDir]);
    assert.deepEqual((await server.ask({ jsonrpc: '2.0', id: 1, method: 'ping' })).result, {});
    errorOf(await server.ask({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), -32600, /send initialize first/);
    errorOf(await server.ask({ jsonrpc: '2.0', id: 3, method: 'initialize', params: {} }), -32602, /protocolVersion/);
    assert.equal((await server.ask(INITIALIZE)).id, 0);
    errorOf(await server.ask(INITIALIZE), -32600, /already initialized/);
    assert.equal((await server.ask({ jsonrpc: '2.0', id: 4, method: 'tools/list' })).result.tools.length, 3);
    assert.equal(await server.end(), 0);
    assert.match(server.stderr, /^uitrail mcp: /, 'logs go to stderr');
  });

  it('negotiates the protocol version', async () => {
    for (const [asked, answered] of [['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'],
      ['2025-03-26', '2025-03-26'], ['2024-11-05', '2024-11-05'], ['1999-01-01', '2025-11-25']]) {
      const server = startServer(['--runtime-dir', daemon.runtimeDir]);
      const answer = await server.ask({ ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: asked } });
      assert.equal(answer.result.protocolVersion, answered, asked);
      assert.equal(answer.result.serverInfo.name, 'uitrail');
      assert.equal(await server.end(), 0);
    }
  });

  it('answers malformed messages with the JSON-RPC error they deserve', async () => {
    const server = await initialized(['--runtime-dir', daemon.runtimeDir]);
    const cases = [
      ['{"jsonrpc":"2.0","id":1,"method":', -32700, /^Parse error/, null],
      ['not json', -32700, /^Parse error/, null],
      ['{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', -32700, /duplicate/, null],
      ['1', -32600, /a message is a JSON object/, null],
      ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, /batches/, null],
      ['{"jsonrpc":"1.0","id":5,"method":"ping"}', -32600, /"jsonrpc" must be "2.0"/, 5],
      ['{"id":6,"method":"ping"}', -32600, /"jsonrpc" must be "2.0"/, 6],
      ['{"jsonrpc":"2.0","id":7}', -32600, /"method" must be a string/, 7],
      ['{"jsonrpc":"2.0","id":8,"method":42}', -32600, /"method" must be a string/, 8],
      ['{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, /"id" must be a string or a number/, null],
      ['{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, /"id" must be a string or a number/, null],
      ['{"jsonrpc":"2.0","id":9,"method":"resources/list"}', -32601, /Method not found: resources\/list/, 9],
      ['{"jsonrpc":"2.0","id":10,"method":"tools/list","params":[1]}', -32602, /"params" must be an object/, 10],
      ['{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"cursor":"abc"}}', -32602, /invalid cursor/, 11],
      ['{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{}}', -32602, /needs params.name/, 12],
      ['{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"x"}}', -32602, /Unknown tool: x/, 13],
      ['{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"list_tabs","arguments":[]}}', -32602,
        /arguments must be an object/, 14],
      // A number out of range inside a well-formed request: that request's
      // fault, answered with its id; numbers inside strings are not numbers.
      ['{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"recent_activity",'
        + '"arguments":{"tab":"t","max_tokens":9223372036854775808}}}', -32602, /^Invalid params: too big integer/, 15],
      ['{"jsonrpc":"2.0","id":"r","method":"ping","params":{"x":1e999}}', -32602, /real number overflow/, 'r'],
      ['{"jsonrpc":"2.0","id":16,"method":"ping","params":{"s":"1e999 \\" 9223372036854775808","n":-9223372036854775809}}',
        -32602, /too big negative integer/, 16],
      // ...unless the id itself is the number: then no id can be echoed.
      ['{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}', -32700, /^Parse error: too big integer/, null],
      ['{"jsonrpc":"2.0","id":17,"method":"ping","params":{"x":1e999}', -32700, /^Parse error/, null],
    ];
    for (const [line, code, pattern, id] of cases) {
      const answer = await server.ask(line);
      errorOf(answer, code, pattern);
      assert.equal(answer.id, id, line);
    }
    assert.equal(await server.end(), 0);
  });

  it('echoes ids as they came, answers no notification, ignores blank lines and responses', async () => {
    const server = await initialized(['--runtime-dir', daemon.runtimeDir]);
    server.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } });
    server.send({ jsonrpc: '2.0', method: 'notifications/progress', params: [1] });
    server.send('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1e999}}');
    server.send({ jsonrpc: '2.0', id: 'from-a-server-request', result: {} });
    server.write('\n   \r\n');
    assert.deepEqual(await server.ask({ jsonrpc: '2.0', id: 'abc', method: 'ping' }), { jsonrpc: '2.0', id: 'abc', result: {} });
    assert.deepEqual(await server.ask({ jsonrpc: '2.0', id: 7.5, method: 'ping' }), { jsonrpc: '2.0', id: 7.5, result: {} });
    server.write('{"jsonrpc":"2.0","id":8,"method":"ping"}\r\n');
    assert.equal((await server.next()).id, 8, 'CRLF line endings');
    // A last message without its newline is still read at the end of stdin.
    server.write('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_tabs"}}');
    assert.equal(await server.end(), 0);
    const last = await server.next();
    assert.equal(last.id, 9);
    assert.equal(last.result.structuredContent.tabs.length, 2);
    assert.equal(server.pending(), 0, 'one answer per request, none for notifications or responses');
    assert.equal(server.trailing, '', 'every message ends with a newline');
    for (const line of server.all) assert.ok(!line.includes('\r') && line.trim() === line, line);
  });

  it('answers the calls in flight before it ends at the end of stdin', async () => {
    const server = await initialized(['--runtime-dir', daemon.runtimeDir]);
    server.send({
      jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name: 'wait_until_stable', arguments: { tab: BUSY_TAB, timeout_ms: 500 } },
    });
    const status = await server.end();
    const answer = await server.next();
    assert.equal(answer.id, 1);
    assert.equal(answer.result.structuredContent.stable, false);
    assert.equal(status, 0);
  });

  it('a tool error is a result with isError, not a JSON-RPC error', async () => {
    const server = await initialized(['--runtime-dir', daemon.runtimeDir]);
    const answer = await server.ask({
      jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recent_activity', arguments: { tab: 'nope' } },
    });
    assert.equal(answer.result.isError, true);
    assert.match(answer.result.content[0].text, /^unknown tab 'nope'/);
    const trace = await server.ask({
      jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'recent_activity', arguments: { tab: BLUEWIDGET_TAB } },
    });
    assert.equal(trace.result.isError, undefined);
    assert.match(trace.result.content[0].text, /^--- Recent User Activity ---\n/);
    assert.equal(await server.end(), 0);
  });

  it(`reads a message of ${MESSAGE_MAX_BYTES} bytes and refuses one byte more`, async () => {
    const server = await initialized(['--runtime-dir', daemon.runtimeDir]);
    const padded = (bytes, id) => {
      const head = `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"_meta":{"pad":"`;
      const tail = '"}}}';
      return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
    };
    assert.equal(padded(MESSAGE_MAX_BYTES, 1).length, MESSAGE_MAX_BYTES);
    assert.deepEqual((await server.ask(padded(MESSAGE_MAX_BYTES, 1))).result, {});
    errorOf(await server.ask(padded(MESSAGE_MAX_BYTES + 1, 2)), -32700, new RegExp(`at most ${MESSAGE_MAX_BYTES} bytes`));
    assert.equal((await server.ask({ jsonrpc: '2.0', id: 3, method: 'ping' })).id, 3, 'the next line is read again');
    assert.equal(await server.end(), 0);
  });
});

describe('uitrail mcp against a peer that misbehaves', () => {
  let base;
  let runtimeDir;
  let peer;
  let behaviour;
  before(async () => {
    base = tempDir('peer');
    runtimeDir = join(base, 'rt');
    mkdirSync(runtimeDir, { mode: 0o700 });
    peer = createServer((socket) => {
      socket.once('data', () => behaviour(socket));
      socket.on('error', () => {});
    });
    peer.listen(join(runtimeDir, 'http.sock'));
    await once(peer, 'listening');
  });
  after(async () => {
    peer.close();
    rmSync(base, { recursive: true, force: true });
  });

  const answerWith = (body) => (socket) => {
    socket.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  };
  const tabList = (bytes) => {
    const head = '[{"tab":"';
    const tail = '"}]';
    return head + 't'.repeat(bytes - head.length - tail.length) + tail;
  };

  it(`takes an answer of ${ANSWER_MAX_BYTES} bytes and refuses one byte more`, async () => {
    const server = await initialized(['--runtime-dir', runtimeDir]);
    behaviour = answerWith(tabList(ANSWER_MAX_BYTES));
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_tabs' } };
    const taken = await server.ask(call);
    assert.equal(taken.result.structuredContent.tabs[0].tab.length, ANSWER_MAX_BYTES - 12);
    behaviour = answerWith(tabList(ANSWER_MAX_BYTES + 1));
    const refused = await server.ask({ ...call, id: 2 });
    assert.equal(refused.result.isError, true);
    assert.match(refused.result.content[0].text, new RegExp(`larger than ${ANSWER_MAX_BYTES} bytes`));
    behaviour = answerWith('{"not":"a list"}');
    assert.match((await server.ask({ ...call, id: 3 })).result.content[0].text, /not a JSON array/);
    behaviour = (socket) => socket.end(Buffer.concat([
      Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n'), Buffer.from([0x61, 0xff, 0x62])]));
    const bad = await server.ask({
      jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'recent_activity', arguments: { tab: 't' } },
    });
    assert.match(bad.result.content[0].text, /not valid UTF-8/);
    behaviour = (socket) => socket.end('garbage\r\n\r\n');
    assert.match((await server.ask({ ...call, id: 5 })).result.content[0].text, /malformed answer/);
    behaviour = (socket) => socket.end();
    assert.match((await server.ask({ ...call, id: 6 })).result.content[0].text, /closed the connection before answering/);
    assert.equal(await server.end(), 0);
  });

  it(`gives up on a daemon that does not answer within ${DAEMON_TIMEOUT_MS} ms`, async () => {
    const server = await initialized(['--runtime-dir', runtimeDir]);
    behaviour = () => {}; // holds the connection, says nothing
    const started = Date.now();
    const answer = await server.ask({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_tabs' } });
    assert.ok(Date.now() - started >= DAEMON_TIMEOUT_MS - 50, 'not before its time');
    assert.match(answer.result.content[0].text, new RegExp(`did not answer within ${DAEMON_TIMEOUT_MS} ms`));
    assert.equal(await server.end(), 0);
  });
});

describe('uitrail mcp arguments', () => {
  it('refuses what it cannot use, before speaking MCP', async () => {
    const cases = [
      [['--http', '192.0.2.1:7317'], /not a loopback address/],
      [['--http', '7317'], /use ADDR:PORT/],
      [['--token-file', '/tmp/x'], /--token-file goes with --http/],
      [['--runtime-dir', `/tmp/${'d'.repeat(120)}`], /longer than a socket path may be/],
      [['extra'], /unexpected argument 'extra'/],
      [['--bogus'], /unknown option/],
    ];
    for (const [args, pattern] of cases) {
      const r = await run(UITRAIL, ['mcp', ...args]);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, pattern);
      assert.equal(r.stdout, '', 'nothing on stdout');
    }
    const help = await run(UITRAIL, ['mcp', '--help']);
    assert.equal(help.status, 0);
    for (const tool of ['list_tabs', 'recent_activity', 'wait_until_stable', '2025-11-25']) {
      assert.ok(help.stdout.includes(tool), tool);
    }
    const ipv6 = await run(UITRAIL, ['mcp', '--http', '[::1]:1', '--runtime-dir', '/nonexistent'], {
      input: `${JSON.stringify(INITIALIZE)}\n`,
    });
    assert.equal(ipv6.status, 0);
    assert.match(ipv6.stderr, /uitraild at tcp:\[::1\]:1/);
  });
});
