// `uitrail mcp` driven by the official MCP TypeScript SDK's client
// (@modelcontextprotocol/sdk: Client + StdioClientTransport, which spawns
// the server as an MCP host does), against a real uitraild on a private
// runtime directory. Each tool's result is checked against what the daemon
// itself serves for the Blue Widget session sent with `uitrail send`.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

import {
  BLUEWIDGET, BLUEWIDGET_TAB, REPO, UITRAIL, busySession, daemonJson, run, sleep, startDaemon, stopAllDaemons, tempDir,
} from './lib/daemon.mjs';

const connections = new Set();
after(async () => {
  for (const c of connections) c.transport._process?.kill(); // left open by a failed test
  await stopAllDaemons();
});

const BUSY_TAB = 'tab-busy-report';
const CALLS_MAX = 32; // UT_MCP_CALLS_MAX
const WAIT_MAX_MS = 30000; // UT_MCP_WAIT_MAX_MS

/**
 * Starts `uitrail mcp ARGS` through the SDK and connects a client. The
 * messages the server sends are kept (`received`), and so is its stderr.
 */
async function connect(args) {
  const transport = new StdioClientTransport({
    command: UITRAIL,
    args: ['mcp', ...args],
    env: { ...process.env }, // the sanitizer and valgrind settings of the suite
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk; });
  const received = [];
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler && ((message, extra) => { received.push(message); handler(message, extra); }),
    set: (h) => { handler = h; },
  });
  const client = new Client({ name: 'uitrail-test', version: '1.0.0' });
  await client.connect(transport);
  // The SDK keeps the child to itself; its exit status says whether the
  // server ended cleanly (a sanitizer or valgrind report makes it fail).
  const child = transport._process;
  const exited = new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
  const connection = {
    client, transport, received,
    get stderr() { return stderr; },
    /** Closes stdin, as hosts do, and checks that the server ended by itself, with 0. */
    async close() {
      connections.delete(connection);
      await client.close();
      const { code, signal } = await exited;
      assert.deepEqual({ code, signal }, { code: 0, signal: null }, `uitrail mcp ended badly:\n${stderr}`);
    },
  };
  connections.add(connection);
  return connection;
}

function text(result) {
  assert.equal(result.content.length, 1, 'one content block');
  assert.equal(result.content[0].type, 'text');
  return result.content[0].text;
}

function toolError(result) {
  assert.equal(result.isError, true, `expected a tool error, got ${JSON.stringify(result)}`);
  return text(result);
}

describe('uitrail mcp with the official MCP SDK client', () => {
  let daemon;
  let mcp;

  before(async () => {
    daemon = await startDaemon({ extraArgs: ['--stab-busy-cap-ms', '600000'] });
    await daemon.send(BLUEWIDGET);
    await daemon.send('-', busySession(BUSY_TAB));
    // The daemon marks the Blue Widget page stable 200 ms after its last
    // event arrives: compare traces once it has settled after the last action.
    await daemon.settled();
    mcp = await connect(['--runtime-dir', daemon.runtimeDir]);
  });

  after(async () => {
    await mcp?.close();
    await daemon?.stop();
  });

  it('negotiates the SDK\'s protocol version and says who it is', async () => {
    const init = mcp.received.find((m) => m.id !== undefined && m.result?.protocolVersion);
    assert.equal(init.result.protocolVersion, LATEST_PROTOCOL_VERSION);
    assert.deepEqual(mcp.client.getServerCapabilities(), { tools: { listChanged: false } });
    const version = (await run(UITRAIL, ['--version'])).stdout.trim();
    assert.equal(`uitrail ${mcp.client.getServerVersion().version}`, version);
    assert.equal(mcp.client.getServerVersion().name, 'uitrail');
    assert.match(mcp.client.getInstructions(), /recent_activity/);
    assert.match(mcp.client.getInstructions(), /never as instructions/);
    await mcp.client.ping();
  });

  it('lists three read-only tools with schemas a model can fill in', async () => {
    const { tools } = await mcp.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['list_tabs', 'recent_activity', 'wait_until_stable']);
    const validator = new AjvJsonSchemaValidator();
    for (const tool of tools) {
      assert.ok(tool.title && tool.description.length > 200, `${tool.name}: a title and a real description`);
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.inputSchema.additionalProperties, false);
      assert.equal(tool.annotations.readOnlyHint, true);
      for (const [name, prop] of Object.entries(tool.inputSchema.properties)) {
        assert.ok(prop.description?.length > 20, `${tool.name}.${name} is described`);
      }
      validator.getValidator(tool.inputSchema); // compiles
      if (tool.outputSchema) validator.getValidator(tool.outputSchema);
    }
    const [listTabs, recent, wait] = tools;
    assert.deepEqual(Object.keys(listTabs.inputSchema.properties), []);
    assert.ok(listTabs.outputSchema);
    assert.deepEqual(Object.keys(recent.inputSchema.properties), ['tab', 'max_tokens', 'format', 'framed']);
    assert.deepEqual(recent.inputSchema.required, ['tab']);
    assert.deepEqual(recent.inputSchema.properties.format.enum, ['text', 'json', 'compact']);
    assert.equal(recent.outputSchema, undefined, 'the trace is text');
    assert.deepEqual(Object.keys(wait.inputSchema.properties), ['tab', 'timeout_ms', 'after', 'after_ms']);
    assert.equal(wait.inputSchema.properties.timeout_ms.maximum, WAIT_MAX_MS);
    assert.ok(wait.outputSchema.properties.stable);
  });

  it('list_tabs gives the daemon\'s tab list', async () => {
    const result = await mcp.client.callTool({ name: 'list_tabs', arguments: {} });
    assert.equal(result.isError, undefined);
    const served = await daemonJson(daemon, '/v1/tabs');
    assert.deepEqual(result.structuredContent, { tabs: served });
    assert.deepEqual(JSON.parse(text(result)), result.structuredContent);
    assert.deepEqual(served.map((t) => t.tab).sort(), [BLUEWIDGET_TAB, BUSY_TAB].sort());
  });

  it('recent_activity gives the framed trace the daemon serves, byte for byte', async () => {
    const result = await mcp.client.callTool({ name: 'recent_activity', arguments: { tab: BLUEWIDGET_TAB } });
    const served = await daemon.get(`/v1/tabs/${BLUEWIDGET_TAB}/trace?format=text&framed=1`);
    assert.equal(text(result), served.body);
    const trace = readFileSync(join(REPO, 'fixtures', 'sessions', 'bluewidget.trace.txt'), 'utf8');
    assert.ok(text(result).includes(`<user_activity>\n${trace}</user_activity>`), text(result));
  });

  it('recent_activity passes max_tokens, format and framed through', async () => {
    const cases = [
      [{ max_tokens: 80 }, 'format=text&max_tokens=80&framed=1'],
      [{ framed: false }, 'format=text&framed=0'],
      [{ format: 'text', framed: true, max_tokens: 0 }, 'format=text&framed=1'],
    ];
    for (const [args, query] of cases) {
      const result = await mcp.client.callTool({ name: 'recent_activity', arguments: { tab: BLUEWIDGET_TAB, ...args } });
      const served = await daemon.get(`/v1/tabs/${BLUEWIDGET_TAB}/trace?${query}`);
      assert.equal(text(result), served.body, JSON.stringify(args));
    }
    const short = await mcp.client.callTool({ name: 'recent_activity', arguments: { tab: BLUEWIDGET_TAB, max_tokens: 80 } });
    const full = await mcp.client.callTool({ name: 'recent_activity', arguments: { tab: BLUEWIDGET_TAB } });
    assert.ok(text(short).split('\n').length < text(full).split('\n').length, 'the budget drops lines');

    const json = await mcp.client.callTool({ name: 'recent_activity', arguments: { tab: BLUEWIDGET_TAB, format: 'json' } });
    const served = await daemonJson(daemon, `/v1/tabs/${BLUEWIDGET_TAB}/trace?format=json`);
    assert.deepEqual(json.structuredContent, served);
    assert.deepEqual(JSON.parse(text(json)), served);
    assert.equal(served.events[2].name, 'Blue Widget');

    const compact = await mcp.client.callTool({ name: 'recent_activity', arguments: { tab: BLUEWIDGET_TAB, format: 'compact' } });
    const servedCompact = await daemonJson(daemon, `/v1/tabs/${BLUEWIDGET_TAB}/trace?format=compact`);
    assert.deepEqual(compact.structuredContent, servedCompact);
    assert.equal(servedCompact.events.length, served.events.length);
    assert.equal(servedCompact.events[0].time, '14:32:05');
    assert.equal(servedCompact.events[0].el, undefined);
  });

  it('wait_until_stable answers with the daemon\'s stability', async () => {
    const result = await mcp.client.callTool({ name: 'wait_until_stable', arguments: { tab: BLUEWIDGET_TAB, timeout_ms: 5000 } });
    assert.equal(result.structuredContent.stable, true);
    assert.deepEqual(result.structuredContent, await daemonJson(daemon, `/v1/tabs/${BLUEWIDGET_TAB}/stable`));
    assert.deepEqual(JSON.parse(text(result)), result.structuredContent);

    const busy = await mcp.client.callTool({ name: 'wait_until_stable', arguments: { tab: BUSY_TAB, timeout_ms: 300 } });
    assert.equal(busy.isError, undefined);
    assert.equal(busy.structuredContent.stable, false);
    assert.equal(busy.structuredContent.state, 'changing');
    assert.equal(busy.structuredContent.busy, 1);
  });

  it('keeps answering while a wait is in flight', async () => {
    const order = [];
    const baseline = await daemon.connections();
    const wait = mcp.client.callTool({ name: 'wait_until_stable', arguments: { tab: BUSY_TAB, timeout_ms: 3000 } })
      .then((r) => { order.push('wait'); return r; });
    // The wait is in flight once its request reached the daemon.
    for (let i = 0; (await daemon.connections()) < baseline + 1; i++) {
      assert.ok(i < 400, 'the wait reaches the daemon');
      await sleep(25);
    }
    await mcp.client.ping().then(() => order.push('ping'));
    await mcp.client.callTool({ name: 'list_tabs', arguments: {} }).then(() => order.push('list_tabs'));
    const waited = await wait;
    assert.deepEqual(order, ['ping', 'list_tabs', 'wait']);
    assert.equal(waited.structuredContent.stable, false);
  });

  it('a cancelled wait closes its request to the daemon', async () => {
    const baseline = await daemon.connections();
    const controller = new AbortController();
    const wait = mcp.client.callTool(
      { name: 'wait_until_stable', arguments: { tab: BUSY_TAB, timeout_ms: 20000 } },
      undefined, { signal: controller.signal },
    );
    for (let i = 0; (await daemon.connections()) < baseline + 1; i++) {
      assert.ok(i < 400, 'the wait reaches the daemon');
      await sleep(25);
    }
    controller.abort('the user moved on');
    await assert.rejects(wait);
    for (let i = 0; (await daemon.connections()) > baseline; i++) {
      assert.ok(i < 400, 'the wait\'s connection is closed after the cancellation');
      await sleep(25);
    }
    for (let i = 0; !/wait_until_stable cancelled by the client: the user moved on/.test(mcp.stderr); i++) {
      assert.ok(i < 400, `the cancellation is logged: ${mcp.stderr}`);
      await sleep(25);
    }
    const still = await mcp.client.callTool({ name: 'list_tabs', arguments: {} });
    assert.equal(still.structuredContent.tabs.length, 2);
  });

  it('wait_until_stable passes after / after_ms through to the daemon', async () => {
    for (const [name, value] of [['after', 3], ['after_ms', 1715693518000]]) {
      const direct = await daemon.get(`/v1/tabs/${BLUEWIDGET_TAB}/stable?wait_ms=1000&${name}=${value}`);
      const result = await mcp.client.callTool({
        name: 'wait_until_stable', arguments: { tab: BLUEWIDGET_TAB, timeout_ms: 1000, [name]: value },
      });
      assert.equal(direct.status, 200, direct.body);
      assert.ok(!result.isError, JSON.stringify(result));
      assert.deepEqual(result.structuredContent, JSON.parse(direct.body));
      // The Blue Widget session is long settled: the wait after its
      // third event (or its time) is over at once.
      assert.equal(result.structuredContent.after, 'settled');
      assert.equal(result.structuredContent.stable, true);
    }
    // A wait after an action that has not arrived runs out and says so.
    const unseen = await mcp.client.callTool({
      name: 'wait_until_stable', arguments: { tab: BLUEWIDGET_TAB, timeout_ms: 100, after: 1000000 },
    });
    assert.equal(unseen.structuredContent.after, 'unseen');
    assert.equal(unseen.structuredContent.stable, false);
    const both = await mcp.client.callTool({
      name: 'wait_until_stable', arguments: { tab: BLUEWIDGET_TAB, after: 3, after_ms: 1715693518000 },
    });
    assert.match(toolError(both), /either after .* or after_ms .*not both/);
  });

  it('an unknown tab is a tool error that points to list_tabs', async () => {
    for (const name of ['recent_activity', 'wait_until_stable']) {
      const result = await mcp.client.callTool({ name, arguments: { tab: 'tab-nobody-opened' } });
      const message = toolError(result);
      assert.match(message, /^unknown tab 'tab-nobody-opened'/);
      assert.match(message, /Call list_tabs/);
    }
  });

  it('an unknown tool is a JSON-RPC invalid-params error naming the tools', async () => {
    await assert.rejects(
      mcp.client.callTool({ name: 'delete_everything', arguments: {} }),
      (error) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.code, ErrorCode.InvalidParams);
        assert.match(error.message, /Unknown tool: delete_everything .*list_tabs, recent_activity, wait_until_stable/);
        return true;
      },
    );
  });

  it('bad arguments are tool errors, exactly where the input schema says no', async () => {
    const { tools } = await mcp.client.listTools();
    const validator = new AjvJsonSchemaValidator();
    const schemaOf = Object.fromEntries(tools.map((t) => [t.name, validator.getValidator(t.inputSchema)]));
    const tab = BLUEWIDGET_TAB;
    const cases = [
      ['list_tabs', {}], ['list_tabs', { tab }],
      ['recent_activity', { tab }], ['recent_activity', {}], ['recent_activity', { tab: '' }],
      ['recent_activity', { tab: 'x'.repeat(129) }], ['recent_activity', { tab: 42 }],
      ['recent_activity', { tab, max_tokens: 0 }], ['recent_activity', { tab, max_tokens: 100000 }],
      ['recent_activity', { tab, max_tokens: 100001 }], ['recent_activity', { tab, max_tokens: -1 }],
      ['recent_activity', { tab, max_tokens: 300.5 }], ['recent_activity', { tab, max_tokens: '300' }],
      ['recent_activity', { tab, max_tokens: null }], ['recent_activity', { tab, format: 'xml' }],
      ['recent_activity', { tab, format: 'json' }], ['recent_activity', { tab, framed: 'yes' }],
      ['recent_activity', { tab, framed: false }], ['recent_activity', { tab, budget: 300 }],
      ['wait_until_stable', { tab, timeout_ms: 0 }], ['wait_until_stable', { tab, timeout_ms: WAIT_MAX_MS + 1 }],
      ['wait_until_stable', { tab, timeout_ms: 1.5 }], ['wait_until_stable', { tab, after: -1 }],
      ['wait_until_stable', { tab, after_ms: 'now' }], ['wait_until_stable', { tab, after: [1] }],
    ];
    for (const [name, args] of cases) {
      const schemaSays = schemaOf[name](args).valid;
      const result = await mcp.client.callTool({ name, arguments: args });
      const what = `${name} ${JSON.stringify(args)}`;
      if (schemaSays) {
        assert.notEqual(result.isError, true, `${what}: ${JSON.stringify(result.content)}`);
      } else {
        const message = toolError(result);
        assert.match(message, /argument '[a-z_]+'/, `${what}: ${message}`);
        const key = Object.keys(args).find((k) => message.includes(`'${k}'`)) ?? 'tab';
        assert.ok(message.includes(`'${key}'`), `${what} names the argument: ${message}`);
      }
    }
  });

  it('refuses more than the calls-in-flight limit with a tool error', async () => {
    const calls = [];
    for (let i = 0; i < CALLS_MAX + 1; i++) {
      calls.push(mcp.client.callTool({ name: 'wait_until_stable', arguments: { tab: BUSY_TAB, timeout_ms: 2000 } }));
    }
    const results = await Promise.all(calls);
    const refused = results.filter((r) => r.isError);
    assert.equal(refused.length, 1);
    assert.match(text(refused[0]), new RegExp(`^${CALLS_MAX} tool calls are already waiting`));
    assert.equal(results.filter((r) => r.structuredContent?.stable === false).length, CALLS_MAX);
  });
});

describe('uitrail mcp without a daemon, and over TCP', () => {
  it('says the daemon is not running and how to start it, then works once it runs', async () => {
    const base = tempDir('no-daemon');
    const runtimeDir = join(base, 'rt');
    const mcp = await connect(['--runtime-dir', runtimeDir]);
    let daemon;
    try {
      for (const [name, args] of [['list_tabs', {}], ['recent_activity', { tab: BLUEWIDGET_TAB }],
        ['wait_until_stable', { tab: BLUEWIDGET_TAB }]]) {
        const message = toolError(await mcp.client.callTool({ name, arguments: args }));
        assert.match(message, /^uitraild is not running/);
        assert.ok(message.includes(join(runtimeDir, 'http.sock')), message);
        assert.match(message, /Tell the user to start it \(`uitraild`/);
      }
      daemon = await startDaemon({ runtimeDir });
      await daemon.send(BLUEWIDGET);
      await daemon.settled(); // else the two reads may straddle the page settling
      const result = await mcp.client.callTool({ name: 'recent_activity', arguments: { tab: BLUEWIDGET_TAB } });
      assert.equal(text(result), (await daemon.get(`/v1/tabs/${BLUEWIDGET_TAB}/trace?framed=1`)).body);
    } finally {
      await mcp.close();
      await daemon?.stop();
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('over TCP with the token gives the same answers, and explains a wrong token', async () => {
    const daemon = await startDaemon();
    const base = tempDir('tcp');
    try {
      await daemon.send(BLUEWIDGET);
      await daemon.settled();
      const mcp = await connect(['--http', `127.0.0.1:${daemon.port}`, '--runtime-dir', daemon.runtimeDir]);
      try {
        const tabs = await mcp.client.callTool({ name: 'list_tabs', arguments: {} });
        assert.deepEqual(tabs.structuredContent.tabs, JSON.parse((await daemon.getTcp('/v1/tabs')).body));
        const trace = await mcp.client.callTool({ name: 'recent_activity', arguments: { tab: BLUEWIDGET_TAB } });
        assert.equal(text(trace), (await daemon.getTcp(`/v1/tabs/${BLUEWIDGET_TAB}/trace?framed=1`)).body);
        const stable = await mcp.client.callTool({ name: 'wait_until_stable', arguments: { tab: BLUEWIDGET_TAB } });
        assert.equal(stable.structuredContent.stable, true);
      } finally {
        await mcp.close();
      }

      const wrong = join(base, 'wrong-token');
      writeFileSync(wrong, 'not-the-token\n', { mode: 0o600 });
      const refused = await connect(['--http', `127.0.0.1:${daemon.port}`, '--token-file', wrong]);
      try {
        const message = toolError(await refused.client.callTool({ name: 'list_tabs', arguments: {} }));
        assert.ok(message.startsWith(`uitraild refused the token in ${wrong} (401`), message);
        assert.match(message, /--token-file of the running daemon/);
      } finally {
        await refused.close();
      }
    } finally {
      await daemon.stop();
      rmSync(base, { recursive: true, force: true });
    }

    const gone = await connect(['--http', `127.0.0.1:${daemon.port}`, '--runtime-dir', daemon.runtimeDir]);
    try {
      const message = toolError(await gone.client.callTool({ name: 'list_tabs', arguments: {} }));
      assert.match(message, /^uitraild is not running/);
      assert.match(message, /token/);
    } finally {
      await gone.close();
    }
  });
});
