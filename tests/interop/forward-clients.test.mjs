// uitraild fed by Forward clients it did not write: Fluentd's official
// Node.js client (npm fluent-logger) in each of its modes, and Debian's
// python3-fluent-logger, over the daemon's loopback Forward listener
// (--forward-tcp, as Fluent Bit's out_forward uses it). A backend reports
// what one tab did (story.json) as it happens; the test reads the whole
// trace back and compares it with what the story must give.
//
// fluent-logger's PackedForward modes buffer per tag and send one tag's
// buffer at a time, a flush interval apart: the Save click reaches the
// daemon before the dialog, the change and the alert that came before
// and after it. The daemon must put them back in order (protocol changes:
// CHANGELOG.md).

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { REPO, UITRAILD, haveDaemon, metric, sleep, startDaemon, until } from './lib/uitraild.mjs';

// The uitrail command of the same build as the daemon.
const UITRAIL = join(dirname(dirname(dirname(UITRAILD))), 'tools', 'uitrail', 'uitrail');

const require = createRequire(import.meta.url);
const { createFluentSender, EventTime } = require('fluent-logger');

const STORY = JSON.parse(readFileSync(new URL('./story.json', import.meta.url), 'utf8')).events;
const PYTHON = '/usr/bin/python3'; // Debian's, where python3-fluent-logger is installed

// What the story must give, newest first, with the times taken off.
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

function untimed(text) {
  return text.trimEnd().split('\n').map((l) => l.replace(/^- (?:\d\d:\d\d)?:\d\d /, '')).join('\n');
}

/** Emits the story for `tab` through `emit(kind, record, eventTime)` at its pace. */
async function tellStory(tab, emit, { withSeq = true } = {}) {
  const start = Date.now();
  for (const [i, e] of STORY.entries()) {
    const wait = start + e.at_ms - Date.now();
    if (wait > 0) await sleep(wait);
    const record = { ...e.record, tab };
    if (withSeq) record.seq = i + 1;
    const now = Date.now();
    await emit(e.kind, record, new EventTime(Math.floor(now / 1000), (now % 1000) * 1e6));
  }
}

/** A fluent-logger sender, its emit as a promise (resolved on the ack when asked for). */
function fluent(port, options, tagPrefix = 'uitrail') {
  const logger = createFluentSender(tagPrefix, {
    host: '127.0.0.1', port, timeout: 3.0, reconnectInterval: 600000, ackResponseTimeout: 10000,
    internalLogger: quietLogger, ...options,
  });
  const errors = [];
  logger.on('error', (err) => errors.push(err));
  const emit = (label, record, time) =>
    new Promise((resolve, reject) => {
      // With acks, the callback runs when the daemon answers the chunk;
      // without, once written. Batched modes call it for the whole batch.
      const cb = (err) => (err ? reject(err) : resolve());
      if (label === null) logger.emit(record, time, cb);
      else logger.emit(label, record, time, cb);
    });
  return { logger, emit, errors };
}

const quietLogger = { info() {}, error() {}, warn() {} };

/** The trace of `tab` once nothing is held any more (events without seq wait the window). */
async function finalTrace(d, tab) {
  // (A daemon without reorder windows has no such gauge: nothing to wait for.)
  await until('the reorder windows to empty', async () => {
    const held = await metric(d, 'uitrail_events_held');
    return held === 0 || Number.isNaN(held);
  });
  const res = await d.get(`/v1/tabs/${encodeURIComponent(tab)}/trace`);
  assert.equal(res.status, 200, res.body);
  return res.body;
}

async function counters(d) {
  // A counter the daemon does not have (an older one) counts as 0.
  const get = async (name) => (await metric(d, name)) || 0;
  return {
    duplicates: await get('uitrail_events_duplicate_total'),
    reordered: await get('uitrail_events_reordered_total'),
    late: await get('uitrail_events_late_total'),
    clicks: await get('uitrail_events_applied_total{kind="click"}'),
  };
}

describe('real Forward clients', { skip: !haveDaemon() && 'uitraild is not built' }, () => {
  let d;
  before(async () => {
    d = await startDaemon(['--forward-tcp', '127.0.0.1:0']);
  });
  after(async () => {
    if (d) await d.stop();
  });

  const modes = [
    { name: 'fluent-logger, Message mode, acks, EventTime', tab: 'fl-message', options: { requireAckResponse: true } },
    {
      name: 'fluent-logger, PackedForward (batched per tag), acks, EventTime',
      tab: 'fl-batched-acks',
      options: { eventMode: 'PackedForward', requireAckResponse: true },
      batched: true,
    },
    {
      name: 'fluent-logger, PackedForward (batched per tag), no acks',
      tab: 'fl-batched',
      options: { eventMode: 'PackedForward' },
      batched: true,
    },
    {
      name: 'fluent-logger, PackedForward (batched per tag), no seq',
      tab: 'fl-batched-noseq',
      options: { eventMode: 'PackedForward', requireAckResponse: true },
      batched: true,
      withSeq: false,
    },
    {
      name: 'fluent-logger, CompressedPackedForward (gzip), acks',
      tab: 'fl-gzip',
      options: { eventMode: 'CompressedPackedForward', requireAckResponse: true },
      batched: true,
    },
    {
      name: 'fluent-logger, one tag for all kinds, PackedForward, acks',
      tab: 'fl-one-tag',
      options: { eventMode: 'PackedForward', requireAckResponse: true },
      oneTag: true,
    },
  ];

  for (const mode of modes) {
    test(mode.name, async () => {
      const before = await counters(d);
      const { logger, emit, errors } = fluent(d.forward, mode.options);
      const send = mode.oneTag ? (kind, record, time) => emit(null, { ...record, kind }, time) : emit;
      const pending = [];
      await tellStory(mode.tab, (kind, record, time) => {
        const p = send(kind, record, time);
        if (mode.batched || mode.oneTag) pending.push(p);
        else return p; // message mode: one ack per event, in turn
        return undefined;
      }, { withSeq: mode.withSeq !== false });
      await Promise.all(pending);
      const trace = await finalTrace(d, mode.tab);
      logger.end();
      assert.deepEqual(errors, []);
      assert.equal(untimed(trace), EXPECTED);
      const now = await counters(d);
      assert.equal(now.duplicates - before.duplicates, 0, 'no event taken for a duplicate');
      assert.equal(now.late - before.late, 0, 'no event applied out of order');
      assert.equal(now.clicks - before.clicks, 3);
      if (mode.batched) {
        // The client did send them out of order: the window had work.
        assert.ok(now.reordered - before.reordered > 0, 'per-tag batching reordered nothing: the test proves nothing');
      }
    });
  }

  test("Debian's python3-fluent-logger, EventTime (nanosecond_precision)", async () => {
    const child = spawn(PYTHON, [join(REPO, 'tests', 'interop', 'python_sender.py'), '127.0.0.1', String(d.forward), 'py-message'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (s) => { out += s; });
    child.stderr.on('data', (s) => { out += s; });
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, out);
    // No acks in this client: wait until the last event is in.
    await until('the story to arrive', async () => {
      const res = await d.get('/v1/tabs/py-message/trace');
      return res.status === 200 && res.body.includes('Changes discarded');
    });
    assert.equal(untimed(await finalTrace(d, 'py-message')), EXPECTED);
  });
});

// What the daemon recorded of an out-of-order batch replays to the trace
// the daemon served: the recording holds the events as they arrived, and
// `uitrail replay` holds and applies them as the daemon did.
describe('a recording of a batching client replays as it was live', { skip: !haveDaemon() && 'uitraild is not built' }, () => {
  let d, dir;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'uitrail-interop-rec-'));
    d = await startDaemon(['--forward-tcp', '127.0.0.1:0', '--record', join(dir, 'rec')]);
  });
  after(async () => {
    if (d) await d.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const withSeq of [true, false]) {
    test(`PackedForward ${withSeq ? 'with' : 'without'} seq`, async () => {
      const tab = withSeq ? 'rec-batched-seq' : 'rec-batched';
      const { logger, emit } = fluent(d.forward, { eventMode: 'PackedForward', requireAckResponse: true });
      const pending = [];
      await tellStory(tab, (kind, record, time) => { pending.push(emit(kind, record, time)); }, { withSeq });
      await Promise.all(pending);
      const live = await finalTrace(d, tab);
      logger.end();
      assert.equal(untimed(live), EXPECTED);
      // The recording is written whole when the tab's frame is cut: by the
      // acks here (an ack means written).
      const file = readdirSync(join(dir, 'rec')).find((f) => f.endsWith(`-${tab}.uitrail`));
      assert.ok(file, 'no recording of the tab');
      const replayed = execFileSync(UITRAIL, ['replay', join(dir, 'rec', file), '--tab', tab], { encoding: 'utf8' });
      assert.equal(replayed.trimEnd(), live.trimEnd());
    });
  }
});
