// Hostile page text through ingest and out of every tool of `uitrail mcp`,
// on the raw wire: for each string of fixtures/hostile/corpus.json, a tab
// whose every printed field carries it (as tests/cli/escape_test.py builds
// it) is sent into the real uitraild; then list_tabs, recent_activity
// (framed text, json, compact) and wait_until_stable are called for it.
// What a model reads is each message's content text, and each message
// line as a whole: none may carry a character of PROTOCOL.md §4.5's table
// raw (the JSON column: escaped), and the framed trace keeps the structure
// of the same session with "x" in every field (one frame, no forged
// line, quote, arrow or tag).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { REPO, UITRAIL, startDaemon, stopAllDaemons, tempDir } from './lib/daemon.mjs';

const CORPUS = JSON.parse(readFileSync(join(REPO, 'fixtures', 'hostile', 'corpus.json'), 'utf8')).strings;

// PROTOCOL.md §4.5, restated here rather than read from the code, so that
// the test checks the table.
const DROPPED = '\u0080-\u0084\u0086-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f'
  + '\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb'
  + '\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}';
const LOOKALIKES = '\u02c2\u02c3\u1433\u1438\u2329\u232a\u276c\u276d\u2770\u2771\u27e8\u27e9'
  + '\u29fc\u29fd\u3008\u3009\ufe64\ufe65\uff1c\uff1e';
// Raw in JSON (a message line, or a JSON document a tool gives as text):
// nothing of the table, no '<' '>', no control character.
const JSON_RAW = new RegExp(`[${DROPPED}${LOOKALIKES}\u0085\u2028\u2029<>\u0000-\u001f\u007f]`, 'u');
// Printed in the text trace: no invisible character, no look-alike bracket.
const TEXT_RAW = new RegExp(`[${DROPPED}${LOOKALIKES}\u0085\u2028\u2029\r\u000b\u000c]`, 'u');

/** The session of escape_test.py: `s` in every printed field of tab `tab`. */
function session(tab, s) {
  const recs = [
    ['nav', { url: `https://shop.test/${s}`, title: s, how: 'load' }],
    ['click', { role: s.slice(0, 32), name: s, el: `k1${s.slice(0, 40)}`, ctx: { kind: 'row', cells: [s, s] } }],
    ['dialog', { state: 'open', role: 'dialog', name: s, el: 'd1', text: '' }],
    ['alert', { role: 'alert', text: s, level: 'error' }],
    ['app', { name: 'evt', text: s, level: 'info', data: { k: s } }],
    ['change', { role: 'combobox', name: s, el: 'k2', value: s }],
    ['dialog', { state: 'close', role: 'dialog', name: s, el: 'd1', text: s }],
  ];
  const times = [0, 5, 5.2, 20, 25, 30, 40];
  return recs.map(([kind, r], i) => [`uitrail.${kind}`, 1715693490 + times[i], { tab, seq: i + 1, ...r }]);
}

/** What the text trace's structure is made of: quotes, tags, lines, arrows. */
const skeleton = (trace) => trace.replaceAll('->', '').replace(/[^"<\n\u2192]|(?<!-)>/gu, '');

/** `uitrail mcp` on raw stdio: requests by id, every stdout line kept. */
function startMcp(runtimeDir) {
  const child = spawn(UITRAIL, ['mcp', '--runtime-dir', runtimeDir], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [];
  const waiting = new Map();
  let buffer = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      const message = JSON.parse(line);
      waiting.get(message.id)?.({ line, message });
      waiting.delete(message.id);
    }
  });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const closed = once(child, 'close');
  let nextId = 1;
  return {
    child, lines,
    get stderr() { return stderr; },
    ask(method, params) {
      const id = nextId++;
      const answer = new Promise((done) => waiting.set(id, done));
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return answer;
    },
    notify(method) { child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`); },
    async end() {
      child.stdin.end();
      const [status] = await closed;
      return status;
    },
  };
}

describe('hostile page text through uitrail mcp', () => {
  let daemon, dir, mcp;
  const tabs = CORPUS.map((_, i) => `hostile-${i}`);

  before(async () => {
    daemon = await startDaemon();
    dir = tempDir('hostile');
    const file = join(dir, 'sessions.json');
    writeFileSync(file, JSON.stringify([
      ...session('hostile-ref', 'x'), ...CORPUS.flatMap((s, i) => session(tabs[i], s)),
    ]));
    await daemon.send(file);
    mcp = startMcp(daemon.runtimeDir);
    const init = await mcp.ask('initialize', {
      protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hostile-test', version: '1' },
    });
    assert.ok(init.message.result, init.line);
    mcp.notify('notifications/initialized');
  });

  after(async () => {
    if (mcp) mcp.child.kill();
    await stopAllDaemons();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Calls a tool; checks its message line and returns its content text. */
  async function call(name, args) {
    const { line, message } = await mcp.ask('tools/call', { name, arguments: args });
    const what = `${name} ${JSON.stringify(args)}`;
    assert.ok(message.result && !message.result.isError, `${what}: ${line}`);
    const raw = JSON_RAW.exec(line);
    assert.equal(raw, null, `${what}: ${JSON.stringify(raw?.[0])} raw in the message:\n${line}`);
    return message.result.content.map((c) => c.text).join('');
  }

  /** A JSON document given as text: nothing raw in it either. */
  function jsonText(what, text) {
    const raw = JSON_RAW.exec(text.replace(/\n$/, ''));
    assert.equal(raw, null, `${what}: ${JSON.stringify(raw?.[0])} raw in the text:\n${text}`);
    return JSON.parse(text);
  }

  it('every tool escapes it in every format, and the frame keeps its structure', async () => {
    const reference = await call('recent_activity', { tab: 'hostile-ref' });
    assert.equal(reference.split('\n').filter((l) => /^- (\d\d:\d\d)?:\d\d /.test(l)).length, 6, reference);
    const failures = [];
    for (const [i, s] of CORPUS.entries()) {
      const tab = tabs[i];
      try {
        const framed = await call('recent_activity', { tab });
        assert.equal(framed.split('<user_activity>').length, 2, 'one opening tag');
        assert.equal(framed.split('</user_activity>').length, 2, 'one closing tag');
        assert.equal(framed.split('--- Recent User Activity ---').length, 2, 'one section header');
        assert.equal(skeleton(framed), skeleton(reference), `page text added structure:\n${framed}`);
        const printed = TEXT_RAW.exec(framed);
        assert.equal(printed, null, `${JSON.stringify(printed?.[0])} printed:\n${framed}`);
        for (const format of ['json', 'compact']) {
          const doc = jsonText(format, await call('recent_activity', { tab, format }));
          assert.equal(doc.events.length, 6, `${format}: the events`);
        }
        const stable = jsonText('wait_until_stable', await call('wait_until_stable', { tab, timeout_ms: 1000 }));
        assert.equal(typeof stable.stable, 'boolean');
      } catch (err) {
        failures.push(`corpus[${i}] ${JSON.stringify(s)}: ${err.message}`);
      }
    }
    const listed = jsonText('list_tabs', await call('list_tabs', {}));
    assert.deepEqual(listed.tabs.map((t) => t.tab).sort(), [...tabs, 'hostile-ref'].sort());
    assert.deepEqual(failures, []);
    assert.equal(await mcp.end(), 0, mcp.stderr);
  });
});
