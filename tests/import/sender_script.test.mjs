// The sender as one classic script (tools/import/sender-script.mjs): on the
// module forms it translates, the script must do what Node's own module
// loader does with the same files (the same namespace, the same order of
// evaluation); every other form must be refused at import start, never
// translated into something that means another thing. And the real sender
// must load through it.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import vm from 'node:vm';

import { createPage } from '../../tools/import/page.mjs';
import { createClock } from '../../tools/import/virtual-time.mjs';
import { senderScriptSource } from '../../tools/import/sender-script.mjs';

/** Writes `files` ({path: text}) under a new directory; returns it. */
function tree(files) {
  const dir = mkdtempSync(join(tmpdir(), 'uitrail-sender-script-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Runs the classic script of `dir` in a fresh context; its namespace and
 *  the order the modules ran in (each pushes its name on globalThis.log). */
function classic(dir) {
  const context = vm.createContext({ log: [] });
  const msgpack = { marker: 'msgpack' };
  const ns = new vm.Script(senderScriptSource(dir)).runInContext(context)(msgpack);
  return { ns: JSON.parse(JSON.stringify(Object.entries(ns))), log: [...context.log], keys: Object.keys(ns) };
}

/** The same through Node's module loader (the oracle). */
async function native(dir) {
  globalThis.log = [];
  const ns = await import(pathToFileURL(join(dir, 'uitrail.js')).href);
  const log = globalThis.log;
  delete globalThis.log;
  return { ns: JSON.parse(JSON.stringify(Object.entries(ns))), log, keys: Object.keys(ns) };
}

const GOOD = {
  'uitrail.js': `log.push('entry');
export { c as sea, b } from './lib/c.js';
import { A, twice as double } from './lib/a.js';
import { B } from './lib/b.js';
export const total = double(A) + B;
export function f() { return total; }
export class K {}
export { A };
export default { A, B, total };
`,
  'lib/a.js': `log.push('a');
export const A = 2;
export function twice(x) { return x * 2; }
`,
  'lib/b.js': `import { A } from './a.js';
log.push('b');
export const B = A + 1;
export { B as b2 };
`,
  'lib/c.js': `import { B } from './b.js';
log.push('c');
export const c = 'c' + B;
export const b = 'bee';
`,
};

test('a graph of the translated forms: the namespace and order of Node\'s loader', async () => {
  const dir = tree(GOOD);
  try {
    const mine = classic(dir);
    const theirs = await native(dir);
    assert.deepEqual(mine.log, theirs.log);
    assert.deepEqual(mine.log, ['a', 'b', 'c', 'entry']);
    assert.deepEqual(mine.keys, theirs.keys);
    assert.deepEqual(mine.ns, theirs.ns);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const REFUSED = [
  // [name, files changed from GOOD, error pattern]
  ['a cycle', { 'lib/a.js': "import { B } from './b.js';\nexport const A = 1;\n" }, /import cycle/],
  ['an exported let', { 'lib/a.js': 'export let A = 2;\nexport function twice(x) { return x; }\n' }, /module syntax "export let A/],
  ['an exported var', { 'lib/a.js': 'export var A = 2;\nexport function twice(x) { return x; }\n' }, /module syntax "export var A/],
  ['an exported function reassigned', { 'lib/a.js': 'export const A = 2;\nexport function twice(x) { return x; }\ntwice = null;\n' }, /twice may be reassigned/],
  ['an exported class reassigned', { 'lib/a.js': 'export const A = 2;\nexport function twice(x) { return x; }\nexport class Q {}\nQ += 1;\n' }, /Q may be reassigned/],
  ['a local binding exported by list, then reassigned', { 'lib/a.js': 'let A = 2;\nexport function twice(x) { return x; }\nexport { A };\n' }, /A may be reassigned/],
  ['an export incremented', { 'lib/a.js': 'export const A = 2;\nexport function twice(x) { return x; }\nexport { A as Z };\nfunction g() { A++; }\n' }, /A may be reassigned/],
  ['a namespace import', { 'lib/a.js': "import * as b from './b.js';\nexport const A = 2;\nexport function twice(x) { return x; }\n" }, /module syntax "import \* as b/],
  ['a default import', { 'lib/a.js': "import b from './b.js';\nexport const A = 2;\nexport function twice(x) { return x; }\n" }, /module syntax "import b from/],
  ['a dynamic import', { 'lib/a.js': "export const A = 2;\nexport function twice(x) { return import('./b.js'); }\n" }, /import\(\) or import\.meta/],
  ['import.meta', { 'lib/a.js': 'export const A = 2;\nexport function twice(x) { return import.meta.url; }\n' }, /import\(\) or import\.meta/],
  ['export default of a declaration', { 'lib/a.js': 'export const A = 2;\nexport default function twice(x) { return x; }\n' }, /export default of a declaration/],
  ['a package other than msgpack', { 'lib/a.js': "import { x } from 'left-pad';\nexport const A = 2;\nexport function twice(x) { return x; }\n" }, /imports left-pad/],
  ['a name not exported', { 'lib/b.js': "import { A, nope } from './a.js';\nexport const B = A;\n" }, /nope is not exported/],
  ['a destructuring export', { 'lib/a.js': 'export const { A } = { A: 2 };\nexport function twice(x) { return x; }\n' }, /module syntax "export const \{ A \}/],
  // Only a declaration's first name is exported: importing another is refused.
  ['a second declarator imported', { 'lib/a.js': 'export const A = 2, C = 3;\nexport function twice(x) { return x; }\n', 'lib/b.js': "import { A, C } from './a.js';\nexport const B = A + C;\n" }, /C is not exported/],
  ['export star', { 'uitrail.js': "export * from './lib/a.js';\n" }, /module syntax "export \* from/],
];

for (const [name, change, pattern] of REFUSED) {
  test(`refused at import start: ${name}`, () => {
    const dir = tree({ ...GOOD, ...change });
    try {
      assert.throws(() => senderScriptSource(dir), pattern);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('the real sender loads as one classic script in a rebuilt page\'s realm, with msgpack\'s own classic build', async () => {
  const page = await createPage({ url: 'http://example.test/', clock: createClock(1e12), startMs: 1e12, onBytes: () => {} });
  try {
    assert.equal(typeof page.sender.start, 'function');
    assert.equal(page.sender.default.start, page.sender.start);
    assert.ok(page.sender.start instanceof page.window.Function, 'the sender\'s functions belong to the page\'s realm');
    // The entry module's namespace, as a module loader lists it.
    assert.deepEqual(Object.keys(page.sender), ['EventTime', 'LIMITS', 'accessibleName', 'contextOf', 'decodeEntries', 'default',
      'extensionCodec', 'roleOf', 'snapshotText', 'start']);
    page.document.body.innerHTML = '<table><tr><td>Blue Widget</td><td><button aria-pressed="true">Add</button></td></tr></table>';
    const button = page.document.querySelector('button');
    assert.equal(page.sender.roleOf(button), 'button');
    assert.equal(page.sender.accessibleName(button), 'Add');
  } finally {
    page.close();
  }
});
