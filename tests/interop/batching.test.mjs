// A Forward client that batches per tag and flushes on an interval, as
// log forwarders do (npm fluent-logger's PackedForward mode sends one tag's
// buffer per flush interval): a tab's dialogs, changes and alerts reach
// the daemon seconds after its later clicks. Each late event must keep its
// own time, sit in event order among the tab's lines, link to the click it
// followed, and the newest event must be applied within --reorder-ms of
// its arrival; a recording of it replays to the same trace (issue 21).
//
// The flush interval is 1.5 s, the shortest that still batches past the
// daemon's 1 s window: the story's five tags arrive 1.5 s apart, so the
// test stays short.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { REPO, UITRAILD, haveDaemon, metric, sleep, startDaemon, until } from './lib/uitraild.mjs';

const UITRAIL = join(dirname(dirname(dirname(UITRAILD))), 'tools', 'uitrail', 'uitrail');
const require = createRequire(import.meta.url);
const { createFluentSender, EventTime } = require('fluent-logger');
const STORY = JSON.parse(readFileSync(new URL('./story.json', import.meta.url), 'utf8')).events;
const FLUSH_INTERVAL_MS = 1500;
const REORDER_MS = 1000;

// The story in event order, newest first, every outcome linked.
const EXPECTED = [
  'RECENT USER ACTIONS (newest first):',
  'closed dialog "Edit Blue Widget": Price: $24.99 · Status: Published',
  'click button "Cancel" (dialog: Edit Blue Widget) → info status "Changes discarded"',
  'set combobox "Status" = "Draft"',
  'click button "Save" (same dialog) → error alert "Price must be positive"',
  'typed 4 chars into textbox "Price"',
  'click button "Edit" (toolbar: Item) → opened dialog "Edit Blue Widget"',
  'navigate /catalog/1234 "Blue Widget"',
  'PAGE: no DOM activity reported',
].join('\n');

const untimed = (text) => text.trimEnd().split('\n').map((l) => l.replace(/^- (?:\d\d:\d\d)?:\d\d /, '')).join('\n');

/** Tells the story through a batching fluent-logger; resolves with the
 *  event time (ms) of each story event once every batch was acked. */
async function tellBatched(port, tab, withSeq) {
  const logger = createFluentSender('uitrail', {
    host: '127.0.0.1', port, timeout: 3.0, reconnectInterval: 600000, ackResponseTimeout: 20000,
    eventMode: 'PackedForward', requireAckResponse: true, flushInterval: FLUSH_INTERVAL_MS,
    internalLogger: { info() {}, error() {}, warn() {} },
  });
  const errors = [];
  logger.on('error', (err) => errors.push(err));
  const start = Date.now();
  const times = [];
  const acked = [];
  for (const [i, e] of STORY.entries()) {
    const wait = start + e.at_ms - Date.now();
    if (wait > 0) await sleep(wait);
    const record = { ...e.record, tab };
    if (withSeq) record.seq = i + 1;
    const now = Date.now();
    times.push(now);
    acked.push(new Promise((resolve, reject) => {
      logger.emit(e.kind, record, new EventTime(Math.floor(now / 1000), (now % 1000) * 1e6), (err) => (err ? reject(err) : resolve(Date.now())));
    }));
  }
  const ackTimes = await Promise.all(acked);
  logger.end();
  assert.deepEqual(errors, []);
  return { times, lastAck: Math.max(...ackTimes) };
}

describe('a batching Forward client (flush interval 1.5 s)', { skip: !haveDaemon() && 'uitraild is not built' }, () => {
  let d;
  let dir;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'uitrail-interop-batch-'));
    d = await startDaemon(['--forward-tcp', '127.0.0.1:0', '--reorder-ms', String(REORDER_MS), '--record', join(dir, 'rec')]);
  });
  after(async () => {
    if (d) await d.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("test_interop_batched_python_fluent_logger_memory_handler", async () => {
    // Debian's python3-fluent-logger behind the standard library's
    // MemoryHandler, one buffer per tag flushed 1.5 s apart.
    const tab = 'batch-python';
    const child = spawn('/usr/bin/python3', [join(REPO, 'tests', 'interop', 'python_batched_sender.py'), '127.0.0.1', String(d.forward), tab,
      String(FLUSH_INTERVAL_MS / 1000)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (s) => { out += s; });
    child.stderr.on('data', (s) => { out += s; });
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, out);
    await until('the last tag to arrive', async () => (await d.get(`/v1/tabs/${tab}/trace`)).body.includes('Changes discarded'));
    await until('the reorder windows to empty', async () => (await metric(d, 'uitrail_events_held')) === 0);
    const text = (await d.get(`/v1/tabs/${tab}/trace`)).body;
    assert.equal(untimed(text), EXPECTED, `the story in event order, each outcome linked (${out})`);
    // No acks from this client: the recorder writes the last frame within
    // --record-frame-ms; then the recording replays to the live trace.
    const file = readdirSync(join(dir, 'rec')).find((f) => f.endsWith(`-${tab}.uitrail`));
    assert.ok(file, 'no recording of the tab');
    const replay = () => execFileSync(UITRAIL, ['replay', join(dir, 'rec', file), '--tab', tab], { encoding: 'utf8' });
    await until('the last frame on disk', async () => replay().includes('Changes discarded'));
    assert.equal(replay().trimEnd(), text.trimEnd());
  });

  for (const withSeq of [true, false]) {
    test(`test_interop_batched_late_events_keep_their_time_${withSeq ? 'with' : 'without'}_seq`, async () => {
      const tab = `batch-${withSeq ? 'seq' : 'noseq'}`;
      const { times, lastAck } = await tellBatched(d.forward, tab, withSeq);
      // The newest event is applied within the window of its arrival, not
      // at the 10 s wait cap (a generous bound: the daemon's window is 1 s).
      await until('the reorder windows to empty', async () => (await metric(d, 'uitrail_events_held')) === 0);
      assert.ok(Date.now() - lastAck < REORDER_MS + 2000, `the last events waited ${Date.now() - lastAck} ms after their arrival`);

      const text = (await d.get(`/v1/tabs/${tab}/trace`)).body;
      assert.equal(untimed(text), EXPECTED, 'the story in event order, each outcome linked');
      // Each line keeps its event's own time (JSON: ms), not the time the
      // daemon applied it.
      const json = JSON.parse((await d.get(`/v1/tabs/${tab}/trace?format=json`)).body);
      const sentAt = (kind, name) => times[STORY.findIndex((e) => e.kind === kind && (e.record.name === name || e.record.title === name))];
      const want = [
        ['dialog', 'Edit Blue Widget', sentAt('dialog', 'Edit Blue Widget') + (STORY[8].at_ms - STORY[2].at_ms)],
        ['click', 'Cancel', sentAt('click', 'Cancel')],
        ['change', 'Status', sentAt('change', 'Status')],
        ['click', 'Save', sentAt('click', 'Save')],
        ['change', 'Price', sentAt('change', 'Price')],
        ['click', 'Edit', sentAt('click', 'Edit')],
        ['nav', 'Blue Widget', sentAt('nav', 'Blue Widget')],
      ];
      assert.equal(json.events.length, want.length);
      json.events.forEach((ev, i) => {
        assert.equal(ev.kind, want[i][0]);
        if (i === 0) return; // the close's own time: checked by order below
        assert.equal(ev.ms, want[i][2], `${ev.kind} ${want[i][1]} keeps its own time`);
      });
      assert.equal(json.events[0].ms, times[8], 'the dialog close keeps its own time');
      const save = json.events[3];
      assert.equal(save.outcome.kind ?? save.outcome, save.outcome.kind ?? save.outcome);
      assert.match(JSON.stringify(save.outcome), /Price must be positive/);

      // The recording replays to the trace the daemon served.
      const file = readdirSync(join(dir, 'rec')).find((f) => f.endsWith(`-${tab}.uitrail`));
      assert.ok(file, 'no recording of the tab');
      const replayed = execFileSync(UITRAIL, ['replay', join(dir, 'rec', file), '--tab', tab], { encoding: 'utf8' });
      assert.equal(replayed.trimEnd(), text.trimEnd());
    });
  }
});
