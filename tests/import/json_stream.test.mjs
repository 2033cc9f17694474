// The importer's JSON array splitter (tools/import/json-array-stream.mjs):
// a table of good, hostile and truncated inputs, each fed whole and one
// byte at a time (a chunk boundary anywhere must not matter).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { jsonArrayElements } from '../../tools/import/json-array-stream.mjs';

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
