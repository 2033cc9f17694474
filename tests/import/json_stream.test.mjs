// The importer's streaming JSON reader (tools/import/json-path-stream.mjs):
// for each of its uses (an rrweb array's elements, the values at PostHog's
// paths, JSON lines) a table of good, hostile and truncated inputs, each fed
// whole and one byte at a time (a chunk boundary anywhere must not matter).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { jsonArrayElements, jsonLines, jsonValuesAt } from '../../tools/import/json-path-stream.mjs';

const LIMITS = { maxElementBytes: 64, maxDepth: 4 };

async function split(text, chunkBytes) {
  const bytes = Buffer.from(text, 'utf8');
  const chunks = [];
  for (let i = 0; i < bytes.length; i += chunkBytes) chunks.push(bytes.subarray(i, i + chunkBytes));
  const values = [];
  let error = null;
  for await (const element of jsonArrayElements(chunks, LIMITS)) {
    if (element.error) { error = element.error; break; }
    values.push(element.value);
  }
  return { values, error };
}

const CASES = [
  // [name, input, values read, error pattern or null]
  ['empty array', '[]', [], null],
  ['spaces around', ' \n[ {"a":1} ,\t{"b":[2,3]} ]\n', [{ a: 1 }, { b: [2, 3] }], null],
  ['scalars', '[1,"x",true,null,-2.5e3]', [1, 'x', true, null, -2500], null],
  ['brackets and quotes inside strings', '[{"s":"]},{\\"["},{"t":"\\\\"}]', [{ s: ']},{"[' }, { t: '\\' }], null],
  ['unicode', '[{"n":"Blue Widget × 1 — €"}]', [{ n: 'Blue Widget × 1 — €' }], null],
  ['not an array', '{"type":2}', [], /not a JSON array/],
  ['empty input', '', [], /truncated/],
  ['truncated inside an event', '[{"a":1},{"b":', [{ a: 1 }], /truncated/],
  ['truncated after a comma', '[{"a":1},', [{ a: 1 }], /truncated/],
  ['truncated inside a string', '[{"a":"x', [], /truncated/],
  ['bad JSON inside an event', '[{"a":1},{"b":tru}]', [{ a: 1 }], /not valid JSON/],
  ['missing comma', '[{"a":1}{"b":2}]', [{ a: 1 }], /expected ','/],
  ['data after the array', '[{"a":1}] x', [{ a: 1 }], /after the end/],
  ['nesting at the limit', '[[[[1]]]]', [[[[1]]]], null],
  ['nesting over the limit', '[{"a":[[[[1]]]]}]', [], /nested deeper than 4/],
  ['nesting one over the limit, the array counted', '[[[[[1]]]]]', [], /nested deeper than 4/],
  ['a trailing comma', '[1,]', [1], /not valid JSON|a value was expected/],
  ['a scalar document', ' 5', [], /not a JSON array/],
  ['event over the size limit', `[{"a":"${'x'.repeat(100)}"}]`, [], /larger than 64 bytes/],
];

for (const [name, input, values, error] of CASES) {
  test(`json stream: ${name}`, async () => {
    for (const chunkBytes of [1 << 20, 1, 3]) {
      const got = await split(input, chunkBytes);
      assert.deepEqual(got.values, values, `chunks of ${chunkBytes}`);
      if (error) assert.match(String(got.error), error, `chunks of ${chunkBytes}`);
      else assert.equal(got.error, null, `chunks of ${chunkBytes}`);
    }
  });
}

test('json stream: a recording cut at every offset reads its whole events and says it was cut', async () => {
  const events = [{ type: 4, data: { href: 'https://a.test/' }, timestamp: 1 }, { type: 3, data: { s: '],"' }, timestamp: 2 }];
  const text = JSON.stringify(events);
  for (let cut = 0; cut < text.length; cut++) {
    const got = await split(text.slice(0, cut), 7);
    assert.ok(got.error, `cut at ${cut}: no error`);
    assert.ok(got.values.length <= events.length);
    assert.deepEqual(got.values, events.slice(0, got.values.length), `cut at ${cut}`);
  }
});

// ---- The path scanner (PostHog's export) and the JSON-lines splitter ----

const SNAPSHOTS = (path) => (path.length === 3 && path[0] === 'data' && path[1] === 'snapshots') ||
  (path.length === 1 && path[0] === 'version');

async function collect(generator, text, chunkBytes, options) {
  const bytes = Buffer.from(text, 'utf8');
  const chunks = [];
  for (let i = 0; i < bytes.length; i += chunkBytes) chunks.push(bytes.subarray(i, i + chunkBytes));
  const values = [];
  let error = null;
  for await (const element of generator(chunks, options)) {
    if (element.error) { error = element.error; break; }
    values.push('path' in element ? [element.path.join('.'), element.value] : element.value);
  }
  return { values, error };
}

const PATH_CASES = [
  ['an export', '{"version":"2023-04-28","data":{"id":"s","person":{"p":["]","}{"]},"snapshots":[{"a":1},{"b":"}"}]}}',
    [['version', '2023-04-28'], ['data.snapshots.0', { a: 1 }], ['data.snapshots.1', { b: '}' }]], null],
  ['keys with escapes and spaces', ' { "da\\u0074a" : { "snapshots" : [ 7 , "x" ] } , "version" : 2 } ',
    [['data.snapshots.0', 7], ['data.snapshots.1', 'x'], ['version', 2]], null],
  ['nothing chosen', '{"other":[1,2,{"snapshots":[1]}]}', [], null],
  ['empty containers', '{"data":{"snapshots":[]},"e":{}}', [], null],
  ['truncated inside a chosen value', '{"data":{"snapshots":[{"a":1},{"b":', [['data.snapshots.0', { a: 1 }]], /truncated/],
  ['truncated outside', '{"data":{"snapshots":[{"a":1}]', [['data.snapshots.0', { a: 1 }]], /truncated/],
  ['empty input', '', [], /truncated/],
  ['bad chosen value', '{"data":{"snapshots":[{"a":tru}]}}', [], /not valid JSON/],
  ['a trailing comma', '{"data":{"snapshots":[1,]}}', [['data.snapshots.0', 1]], /not valid JSON|a value was expected/],
  ['a missing colon', '{"data" {"snapshots":[1]}}', [], /expected ':'/],
  ['data after the document', '{"version":1} {', [['version', 1]], /after the end/],
  ['nesting over the limit', '{"a":[[[[[1]]]]]}', [], /nested deeper than 4/],
  ['chosen nesting over the limit', '{"data":{"snapshots":[[[1]]]}}', [], /nested deeper than 4/],
  ['chosen value over the size limit', `{"data":{"snapshots":["${'x'.repeat(100)}"]}}`, [], /larger than 64 bytes/],
];

for (const [name, input, values, error] of PATH_CASES) {
  test(`json path stream: ${name}`, async () => {
    for (const chunkBytes of [1 << 20, 1, 3]) {
      const got = await collect(jsonValuesAt, input, chunkBytes, { ...LIMITS, select: SNAPSHOTS });
      assert.deepEqual(got.values, values, `chunks of ${chunkBytes}`);
      if (error) assert.match(String(got.error), error, `chunks of ${chunkBytes}`);
      else assert.equal(got.error, null, `chunks of ${chunkBytes}`);
    }
  });
}

const LINE_CASES = [
  ['lines', '["w",{"a":1}]\n\n["w",2]\n', [['w', { a: 1 }], ['w', 2]], null],
  ['no last newline', '[1]\n[2]', [[1], [2]], null],
  ['a bad line', '[1]\n[2,\n[3]\n', [[1]], /line 2: not valid JSON/],
  ['truncated last line', '[1]\n["w",{"a"', [[1]], /truncated/],
  ['a line over the size limit', `[1]\n"${'x'.repeat(100)}"\n`, [[1]], /longer than 64 bytes/],
];

for (const [name, input, values, error] of LINE_CASES) {
  test(`json lines: ${name}`, async () => {
    for (const chunkBytes of [1 << 20, 1, 3]) {
      const got = await collect(jsonLines, input, chunkBytes, LIMITS);
      assert.deepEqual(got.values, values, `chunks of ${chunkBytes}`);
      if (error) assert.match(String(got.error), error, `chunks of ${chunkBytes}`);
      else assert.equal(got.error, null, `chunks of ${chunkBytes}`);
    }
  });
}

test('json path stream: an export cut at every offset reads its whole events and says it was cut', async () => {
  const text = JSON.stringify({ version: '2023-04-28', data: { id: 'x', snapshots: [{ type: 4, s: '],"' }, { type: 3 }] } });
  for (let cut = 0; cut < text.length; cut++) {
    const got = await collect(jsonValuesAt, text.slice(0, cut), 5, { maxElementBytes: 1000, maxDepth: 10, select: SNAPSHOTS });
    assert.ok(got.error, `cut at ${cut}: no error`);
  }
});
