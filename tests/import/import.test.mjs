// `uitrail import` then `uitrail replay` (issue 26): an rrweb recording of
// the Blue Widget checkout story (fixtures/rrweb, recorded by
// tests/e2e/record-rrweb.mjs with rrweb beside the live sender) gives the
// story's facts line for line as the live trace did, but for the gaps
// named below; masked inputs stay masked; hostile files give what could be
// read and exit 1, never a crash.
//
// Run by tests/import/run with UITRAIL set to the build's `uitrail`.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = join(REPO, 'fixtures', 'rrweb');
const UITRAIL = process.env.UITRAIL;
// As tests/e2e/lib/corpus.mjs: full times and the `- :SS` of a line in the
// same minute as the one above it (PROTOCOL §4.1).
const TIME_RE = /\b\d\d:\d\d:\d\d\b|(?<=^- |\(also |, ):\d\d\b/gm;
const work = mkdtempSync(join(tmpdir(), 'uitrail-import-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** Where the imported trace and the fixture's live trace differ, and why.
 *  Each maps a live line to the lines the import gives instead. */
const JSDOM_INVALID = 'textbox "E-mail for the receipt": "Constraints not satisfied" · textbox "Card number": "Constraints not satisfied" · checkbox "I accept the terms": "Constraints not satisfied"';
const GAPS = [
  {
    live: '- HH:MM:SS click button "Done" (dialog: Order placed) → page changed',
    imported: ['- HH:MM:SS click button "Done" (dialog: Order placed)'],
    why: 'the fixture\'s rrweb events end when the dialog closed; the live sender saw the backdrop go after that',
  },
  {
    live: '- HH:MM:SS click button "Close" (dialog: Your cart) → page changed',
    imported: [`- HH:MM:SS click button "Close" (dialog: Your cart) → invalid: ${JSDOM_INVALID}`,
      `- HH:MM:SS invalid: ${JSDOM_INVALID}`],
    why: 'jsdom: required fields are :invalid with its generic message before the form was validated, and without layout their messages read as shown (issue 26, open)',
  },
];

function run(args, options = {}) {
  const result = spawnSync(UITRAIL, args, { encoding: 'utf8', timeout: 300000, ...options });
  assert.equal(result.error, undefined, String(result.error));
  return result;
}

/** Imports `file` into a fresh directory; returns {status, stdout, stderr, recording}. */
const memo = new Map();
function importFixture(name, extra = []) {
  const key = `${name} ${extra.join(' ')}`;
  if (!memo.has(key)) memo.set(key, importFile(join(FIXTURES, `${name}.rrweb.json.gz`), extra));
  return memo.get(key);
}

function importFile(file, extra = []) {
  const out = mkdtempSync(join(work, 'out-'));
  const result = run(['import', '--out', out, ...extra, file]);
  const files = readdirSync(out).filter((name) => name.endsWith('.uitrail'));
  assert.ok(files.length <= 1, `one recording per file: ${files}`);
  return { ...result, recording: files.length ? join(out, files[0]) : null };
}

function replayLines(recording) {
  const result = run(['replay', recording]);
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.replace(TIME_RE, 'HH:MM:SS').trimEnd().split('\n').filter((line) => line.startsWith('- '));
}

/** Never a crash: the importer's own errors would print a stack. */
function assertNoCrash(result) {
  assert.ok(result.status === 0 || result.status === 1, `exit status ${result.status}: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /\n\s+at .+:\d+:\d+\)?\n|Uncaught|the importer failed/, result.stderr);
}

for (const name of ['checkout-bootstrap']) {
  test(`import: the Blue Widget story recorded by rrweb (${name}) replays as the live trace`, () => {
    const result = importFixture(name);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /events written \(nav 1, click 6, change 2, dialog 4, mutation \d+, invalid \d+\)/);
    const live = readFileSync(join(FIXTURES, `${name}.live.txt`), 'utf8').trimEnd().split('\n');
    const expected = live.flatMap((line) => GAPS.find((gap) => gap.live === line)?.imported ?? [line]);
    assert.deepEqual(replayLines(result.recording), expected);
    // The story's facts: the row, the dialog's contents, the outcome.
    const text = run(['replay', result.recording]).stdout;
    assert.match(text, /closed dialog "Your cart": Blue Widget × 1 — \$20\.00 · Red Gadget × 2 — \$45\.00/);
    assert.match(text, /click button "Place order" \((?:form: Payment|same form)\) → opened dialog "Order placed"/);
    // What rrweb lacks is said in the recording, not guessed.
    const info = run(['info', result.recording]);
    assert.match(info.stdout, /imported from: rrweb \(.*\.rrweb\.json\.gz\); it lacks: isTrusted.*time zone/);
    const json = run(['replay', result.recording, '--format', 'json']).stdout;
    assert.match(json, /"tz":null/, 'the time zone is unknown without --tz');
  });
}

test('import: typed values never reach the recording or the trace, masked or not', () => {
  for (const name of ['checkout-bootstrap', 'checkout-bootstrap-masked']) {
    const source = gunzipSync(readFileSync(join(FIXTURES, `${name}.rrweb.json.gz`))).toString('utf8');
    const result = importFixture(name);
    const outputs = [run(['replay', result.recording]).stdout, run(['replay', result.recording, '--format', 'json']).stdout];
    for (const secret of ['sentinel.q7z@example.com', '4111 1111 1111 1111']) {
      assert.equal(source.includes(secret), name === 'checkout-bootstrap', `${name}: rrweb ${name.includes('masked') ? 'masked' : 'kept'} ${secret}`);
      for (const output of outputs) assert.ok(!output.includes(secret), `${name}: ${secret} in an output`);
    }
  }
});

test('import: --tz gives nav records the zone on the session\'s date; a zone that does not exist is refused', () => {
  const result = importFixture('checkout-bootstrap', ['--tz', 'Asia/Kolkata']);
  assert.equal(result.status, 0, result.stderr);
  assert.match(run(['replay', result.recording, '--format', 'json']).stdout, /"tz":330/);
  assert.doesNotMatch(run(['info', result.recording]).stdout, /time zone:/);
  const bad = run(['import', '--out', work, '--tz', 'Mars/Olympus', join(FIXTURES, 'checkout-bootstrap.rrweb.json.gz')]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--tz 'Mars\/Olympus': not a time zone/);
});

test('import: usage errors say what is wrong', () => {
  assert.equal(run(['import', '--help']).status, 0);
  const cases = [
    [['import', 'x.json'], /missing --out DIR/],
    [['import', '--out', work], /missing FILE/],
    [['import', '--format', 'har', '--out', work, 'x'], /--format 'har': use auto, rrweb or posthog/],
    [['import', '-j', '0', '--out', work, 'x'], /-j '0': use a number from 1 to/],
    [['import', '--shard', '3/3', '--out', work, 'x'], /--shard '3\/3': use I\/N/],
    [['import', '--shard', '1', '--out', work, 'x'], /--shard '1': use I\/N/],
  ];
  for (const [args, message] of cases) {
    const result = run(args);
    assert.equal(result.status, 2, args.join(' '));
    assert.match(result.stderr, message);
  }
  const missing = run(['import', '--out', work, join(work, 'no-such-file.json')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /no-such-file\.json: No such file or directory/);
});

/** A small good recording to damage: the fixture's first events. */
function storyEvents() {
  return JSON.parse(gunzipSync(readFileSync(join(FIXTURES, 'checkout-bootstrap.rrweb.json.gz'))));
}

test('import: hostile files give what could be read and exit 1, never a crash', () => {
  const events = storyEvents();
  const full = JSON.stringify(events);
  const firstSnapshot = events.findIndex((event) => event.type === 2);
  const snapshotEnd = JSON.stringify(events.slice(0, firstSnapshot + 1)).length - 1;
  const nested = `[${'['.repeat(5000)}${']'.repeat(5000)}]`;
  const wrongTypes = JSON.stringify([events[2], events[3], 5, 'x', null, { type: '3' }, { type: 3, data: 'no', timestamp: events[3].timestamp + 1 },
    { type: 3, data: { source: 2, type: 2, id: 'x' }, timestamp: events[3].timestamp + 2 }, { type: 2, data: { node: 7 }, timestamp: 'soon' }]);
  const nowhere = JSON.stringify([events[2], events[3],
    { type: 3, data: { source: 2, type: 2, id: 99999 }, timestamp: events[3].timestamp + 10 },
    { type: 3, data: { source: 0, texts: [{ id: 99998, value: 'x' }], attributes: [{ id: 99997, attributes: { a: 'b' } }], removes: [{ parentId: 1, id: 99996 }], adds: [{ parentId: 99995, nextId: null, node: { type: 3, id: 99994, textContent: 'y' } }] }, timestamp: events[3].timestamp + 20 },
    ...events.slice(4)]);
  const cases = [
    ['truncated.json', full.slice(0, full.length - Math.floor((full.length - snapshotEnd) / 2)), /truncated/, true],
    ['cut-after-snapshot.json', full.slice(0, snapshotEnd + 1), /truncated/, true],
    ['wrong-types.json', wrongTypes, /event without a numeric type|could not apply|points nowhere/, true],
    ['deep.json', nested, /nested deeper than/, false],
    ['nowhere.json', nowhere, /node id that points nowhere/, true],
    ['not-an-array.json', '{"type":4}', /not a JSON array/, false],
    ['binary.json', Buffer.from([0, 1, 2, 0xff, 0xfe]), /not a JSON array/, false],
  ];
  for (const [name, content, message, writesSome] of cases) {
    const file = join(work, name);
    writeFileSync(file, content);
    const result = importFile(file);
    assertNoCrash(result);
    assert.equal(result.status, 1, `${name}: ${result.stderr}`);
    assert.match(result.stderr, message, name);
    if (writesSome) {
      assert.ok(result.recording, `${name}: what could be read is written`);
      assert.equal(run(['replay', result.recording]).status, 0, name);
    }
  }
});

test('import: a gzip bomb is cut, not inflated to the end', () => {
  const file = join(work, 'bomb.json.gz');
  writeFileSync(file, gzipSync(Buffer.concat([Buffer.from('['), Buffer.alloc(64 * 1024 * 1024, ' ')]), { level: 9 }));
  assert.ok(statSync(file).size < 1024 * 1024);
  const result = importFile(file);
  assertNoCrash(result);
  assert.equal(result.status, 1);
  assert.match(result.stderr, /gzip bomb/);
});

// ---- Small sessions built here, rrweb's event format written by hand ----

const T0 = 1700000000000;
let nextId = 1;
const el = (tagName, attributes, childNodes = [], extra = {}) => ({ type: 2, id: nextId++, tagName, attributes, childNodes, ...extra });
const text = (textContent) => ({ type: 3, id: nextId++, textContent });

/** A page's meta and full snapshot (node ids from 1, as at each load). */
function page(href, at, body) {
  nextId = 1;
  const doc = { type: 0, id: nextId++, childNodes: [] };
  doc.childNodes.push({ type: 1, id: nextId++, name: 'html', publicId: '', systemId: '' });
  doc.childNodes.push(el('html', {}, [el('head', {}, [el('title', {}, [text('Orders')])]), el('body', {}, body())]));
  return [{ type: 4, data: { href, width: 800, height: 600 }, timestamp: at },
    { type: 2, data: { node: doc, initialOffset: { left: 0, top: 0 } }, timestamp: at + 5 }];
}
const click = (id, at) => [0, 1, 2].map((step) => ({
  type: 3, data: { source: 2, type: [1, 0, 2][step], id, x: 1, y: 1 }, timestamp: at + step * 40,
}));

function importEvents(name, events) {
  const file = join(work, `${name}.json`);
  writeFileSync(file, JSON.stringify(events));
  const result = importFile(file);
  assertNoCrash(result);
  return result;
}

test('import: a session of two pages (node ids restart at each load) is one tab with both', () => {
  let refund;
  const rows = () => [el('table', {}, [el('tbody', {}, [el('tr', {}, [
    el('td', {}, [text('Blue Widget')]), el('td', {}, [refund = el('button', {}, [text('Refund')])])])])])];
  const first = page('https://shop.test/orders?id=5', T0, rows);
  const firstRefund = refund.id;
  const second = page('https://shop.test/refunds', T0 + 5000, rows);
  const events = [...first, ...click(firstRefund, T0 + 1000), ...second, ...click(refund.id, T0 + 6000),
    { type: 5, data: { tag: 'refund.failed', payload: { text: 'Refund exceeds captured amount', level: 'error' } }, timestamp: T0 + 6500 }];
  const result = importEvents('two-pages', events);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /nav 2, click 2, .*unload 1, app 1/);
  const lines = replayLines(result.recording);
  assert.match(lines.join('\n'), /Refund exceeds captured amount/);
  assert.deepEqual(lines.filter((line) => /navigate|click/.test(line)), [
    '- HH:MM:SS click button "Refund"',
    '- HH:MM:SS navigate /refunds "Orders"',
    '- HH:MM:SS click button "Refund" → no response',
    '- HH:MM:SS navigate /orders?id= "Orders"',
  ]);
});

test('import: a button inside an open shadow root is named as live', () => {
  let inner;
  const events = page('https://shop.test/', T0, () => [el('order-card', {}, [
    el('div', {}, [inner = el('button', { 'aria-label': 'Cancel order A-1009' }, [text('×')])], { isShadow: true }),
  ], { isShadowHost: true })]);
  const result = importEvents('shadow', [...events, ...click(inner.id, T0 + 1000)]);
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(replayLines(result.recording).filter((line) => line.includes('click')),
    ['- HH:MM:SS click button "Cancel order A-1009" → no response']);
});

// rrweb's maskAllInputs turns the typed e-mail address into "****", which
// jsdom's constraint validation (type=email) reads as invalid: the story's
// facts stay, its validation lines do not (issue 26, open: validation over
// masked values).
test('import: the masked recording keeps the story\'s facts', () => {
  const result = importFixture('checkout-bootstrap-masked');
  assert.equal(result.status, 0, result.stderr);
  const text = replayLines(result.recording).join('\n');
  assert.match(text, /closed dialog "Your cart": Blue Widget × 1 — \$20\.00 · Red Gadget × 2 — \$45\.00/);
  assert.match(text, /opened dialog "Order placed"/);
  assert.match(text, /closed dialog "Order placed": Order A-1009 for \$65\.00 is confirmed/);
  assert.match(text, /typed 24 chars into textbox "E-mail for the receipt"/);
});

// ---- PostHog (issue 26): its exports and blobs, built from the rrweb
// fixture by posthog-shapes.mjs since PostHog cannot run here ----

import * as posthog from './posthog-shapes.mjs';

/** Imports every file of `dir` in one run; returns {status, stdout,
 *  stderr, recordings: {file name: [recording paths]}}. */
function importDir(dir, extra = []) {
  const out = mkdtempSync(join(work, 'out-'));
  const result = run(['import', '-j', '2', '--out', out, ...extra, dir]);
  assertNoCrash(result);
  const recordings = {};
  for (const match of result.stdout.matchAll(/^.*\/([^/\s]+)(?: \[window \d+ of \d+\])? -> (\S+):/gm)) {
    (recordings[match[1]] ||= []).push(match[2]);
  }
  return { ...result, recordings };
}

test('import: PostHog\'s exports and JSON-lines blobs (compressed fields, gzip) of the story replay as its rrweb import', () => {
  const dir = mkdtempSync(join(work, 'posthog-'));
  const windows = { '0190a8e2-window': posthog.readRrweb(join(FIXTURES, 'checkout-bootstrap.rrweb.json.gz')) };
  writeFileSync(join(dir, 'story.export.json'), posthog.exportV2(windows));
  writeFileSync(join(dir, 'story.blob.jsonl.gz'), gzipSync(posthog.jsonLines(windows)));
  assert.match(posthog.jsonLines(windows), /"cv":"2024-10"/, 'the blob has compressed fields');
  const result = importDir(dir);
  assert.equal(result.status, 0, result.stderr);
  const expected = replayLines(importFixture('checkout-bootstrap').recording);
  for (const name of ['story.export.json', 'story.blob.jsonl.gz']) {
    assert.equal(result.recordings[name]?.length, 1, `${name}: one recording\n${result.stdout}`);
    assert.deepEqual(replayLines(result.recordings[name][0]), expected, name);
  }
  assert.match(run(['info', result.recordings['story.blob.jsonl.gz'][0]]).stdout, /imported from: posthog \(story\.blob\.jsonl\.gz\); it lacks: isTrusted/);
  const wrong = run(['import', '--format', 'rrweb', '--out', work, join(dir, 'story.export.json')]);
  assert.equal(wrong.status, 1);
  assert.match(wrong.stderr, /not an rrweb recording .*reads as posthog/);
});

test('import: a PostHog session of two windows gives a recording each; $url_changed navigates; PostHog\'s own events are not the page\'s', () => {
  let refund;
  const rows = () => [el('table', {}, [el('tbody', {}, [el('tr', {}, [
    el('td', {}, [text('Blue Widget')]), el('td', {}, [refund = el('button', {}, [text('Refund')])])])])])];
  const first = [...page('https://shop.test/orders', T0, rows), ...click(refund.id, T0 + 1000)];
  let heading;
  const second = [...page('https://shop.test/app', T0 + 200, () => [heading = el('h1', {}, [text('Home')])]),
    { type: 5, data: { tag: '$posthog_config', payload: { sessionRecording: { endpoint: '/s/' } } }, timestamp: T0 + 300 },
    { type: 5, data: { tag: 'sessionIdle', payload: { reason: 'user inactive' } }, timestamp: T0 + 350 },
    { type: 5, data: { tag: '$url_changed', payload: { href: 'https://shop.test/app/settings' } }, timestamp: T0 + 1500 },
    { type: 3, data: { source: 0, texts: [{ id: heading.childNodes[0].id, value: 'Settings' }], attributes: [], removes: [], adds: [] }, timestamp: T0 + 1510 }];
  const dir = mkdtempSync(join(work, 'windows-'));
  // The same session in the older shapes (uncompressed) gives the same.
  writeFileSync(join(dir, 'two-windows.jsonl'), posthog.jsonLines({ 'window-a': first, 'window-b': second }));
  writeFileSync(join(dir, 'two-windows-v1.json'), posthog.exportV1({ 'window-a': first, 'window-b': second }));
  writeFileSync(join(dir, 'two-windows-v1.jsonl'), posthog.jsonLinesV1({ 'window-a': first, 'window-b': second }));
  const result = importDir(dir);
  assert.equal(result.status, 0, result.stderr);
  for (const name of ['two-windows-v1.json', 'two-windows-v1.jsonl']) {
    assert.deepEqual(result.recordings[name].map(replayLines), result.recordings['two-windows.jsonl'].map(replayLines), name);
  }
  const [a, b] = result.recordings['two-windows.jsonl'] ?? [];
  assert.ok(a && b, result.stdout);
  assert.match(result.stdout, /two-windows\.jsonl \[window 1 of 2\] -> .*\n.*two-windows\.jsonl \[window 2 of 2\] -> /);
  assert.match(replayLines(a).join('\n'), /click button "Refund"/);
  const lines = replayLines(b).join('\n');
  assert.match(lines, /navigate \(in-app\) \/app\/settings "Orders"/);
  assert.doesNotMatch(lines, /posthog|sessionIdle|Refund/);
  assert.match(result.stderr, /PostHog's own custom event \(no trace record\)/);
});

test('import: hostile PostHog files give what could be read and exit 1, never a crash', () => {
  const events = storyEvents();
  const windows = { w: events };
  const blob = posthog.jsonLines(windows);
  const exported = posthog.exportV2(windows);
  const head = blob.split('\n').slice(0, 4).join('\n');
  const bomb = gzipSync(Buffer.concat([Buffer.from('"'), Buffer.alloc(70 * 1024 * 1024, ' '), Buffer.from('"')]), { level: 9 }).toString('latin1');
  const line = (event) => JSON.stringify(['w', event]);
  const after = events[3].timestamp;
  const cases = {
    // Cut among the last events, past the full snapshot.
    'truncated.jsonl': [blob.slice(0, blob.length - 300), /truncated: line \d+ ends without its end/],
    'truncated-export.json': [exported.slice(0, exported.length - 2000), /truncated: the data ends inside the document/],
    'wrong-types.jsonl': [`${head}\n5\n["w"]\n{"window_id":1,"data":[]}\n`, /neither \[window_id, event\] nor \{window_id, data\}/],
    'unknown-cv.jsonl': [`${head}\n${line({ type: 3, cv: '2031-01', data: { source: 0, adds: 'x' }, timestamp: after + 1 })}\n`, /unknown version \(cv 2031-01\)/],
    'not-gzip.jsonl': [`${head}\n${line({ type: 3, cv: '2024-10', data: { source: 0, adds: 'not gzip', removes: [], texts: [], attributes: [] }, timestamp: after + 1 })}\n`, /compressed field that does not inflate to JSON/],
    'field-bomb.jsonl': [`${head}\n${line({ type: 2, cv: '2024-10', data: bomb, timestamp: after + 1 })}\n`, /compressed field that inflates past \d+ bytes/],
    'deep-export.json': [`{"data":{"snapshots":[${'['.repeat(5000)}${']'.repeat(5000)}]}}`, /nested deeper than/],
  };
  const dir = mkdtempSync(join(work, 'hostile-posthog-'));
  for (const [name, [content]] of Object.entries(cases)) writeFileSync(join(dir, name), content);
  const result = importDir(dir);
  assert.equal(result.status, 1, result.stderr);
  for (const [name, [, message]] of Object.entries(cases)) {
    const said = result.stderr.split('\n').filter((l) => l.includes(`/${name}`)).join('\n');
    assert.match(said, message, `${name}:\n${said}`);
    assert.match(said, /damaged/, name);
  }
  for (const name of ['truncated.jsonl', 'truncated-export.json', 'wrong-types.jsonl', 'field-bomb.jsonl']) {
    assert.equal(result.recordings[name]?.length, 1, `${name}: what could be read is written`);
    assert.equal(run(['replay', result.recordings[name][0]]).status, 0, name);
  }
});

// ---- Many inputs (issue 26): --shard I/N splits them so that N runs,
// here in turn and under GNU parallel, write what one run writes ----

/** A few small sessions in a directory of their own. */
function shardInputs() {
  const dir = mkdtempSync(join(work, 'shard-in-'));
  for (let i = 0; i < 5; i++) {
    let button;
    const events = page(`https://shop.test/orders/${i}`, T0 + i * 10000, () => [el('main', {}, [
      el('h1', {}, [text(`Order ${i}`)]), button = el('button', {}, [text(`Cancel order ${i}`)])])]);
    writeFileSync(join(dir, `session-${i}.json`), JSON.stringify([...events, ...click(button.id, T0 + i * 10000 + 1000)]));
  }
  return dir;
}

/** Every recording of `dirs`, by name: its bytes. */
function recordingsOf(dirs) {
  const found = {};
  for (const dir of dirs) {
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.uitrail'))) {
      assert.equal(found[name], undefined, `${name} written by two shards`);
      found[name] = readFileSync(join(dir, name)).toString('base64');
    }
  }
  return found;
}

const SHARDS = 3;
let shardSetup = null;
function shardBaseline() {
  if (!shardSetup) {
    const inputs = shardInputs();
    const out = mkdtempSync(join(work, 'shard-one-'));
    const one = run(['import', '-j', '2', '--out', out, inputs]);
    assert.equal(one.status, 0, one.stderr);
    shardSetup = { inputs, expected: recordingsOf([out]) };
    assert.equal(Object.keys(shardSetup.expected).length, 5);
  }
  return shardSetup;
}

test('import: --shard I/N runs in turn write, together, exactly what one run writes', () => {
  const { inputs, expected } = shardBaseline();
  const outs = [];
  for (let i = 0; i < SHARDS; i++) {
    const out = mkdtempSync(join(work, `shard-${i}-`));
    const result = run(['import', '--shard', `${i}/${SHARDS}`, '--out', out, inputs]);
    assert.equal(result.status, 0, result.stderr);
    outs.push(out);
  }
  assert.deepEqual(recordingsOf(outs), expected);
  assert.ok(outs.filter((out) => readdirSync(out).length > 0).length > 1, 'the inputs are spread over shards');
});

const hasParallel = spawnSync('parallel', ['--version'], { encoding: 'utf8' }).stdout?.includes('GNU parallel');
test('import: the sharded import under GNU parallel writes what one run writes', {
  skip: hasParallel ? false : 'GNU parallel is not installed (Debian package `parallel`): the sharded run under it is not tested',
}, () => {
  const { inputs, expected } = shardBaseline();
  const out = mkdtempSync(join(work, 'shard-parallel-'));
  const result = spawnSync('parallel', ['--will-cite', '--halt', 'now,fail=1', UITRAIL, 'import', '--shard', `{}/${SHARDS}`,
    '--out', out, inputs, ':::', ...Array.from({ length: SHARDS }, (_, i) => String(i))], { encoding: 'utf8', timeout: 300000 });
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(recordingsOf([out]), expected);
});
