// The sender as one classic script, bundled by esbuild
// (tools/import/sender-bundle.mjs): the script must do what Node's own
// module loader does with the same files (the same namespace, the same
// order of evaluation, live bindings, strict code), including the forms a
// hand-written translation could not carry; the real sender must load
// through it into a rebuilt page's realm; and `uitrail import` of both
// rrweb fixtures must give, byte for byte, the recordings the importer gave
// before the bundle (fixtures/rrweb/*.imported.uitrail, made by the
// importer of commit 1187fc0, which translated the modules by hand).
//
// Run by tests/import/run with UITRAIL set to the build's `uitrail`.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'node:test';
import vm from 'node:vm';

import { createPage } from '../../tools/import/page.mjs';
import { createClock } from '../../tools/import/virtual-time.mjs';
import { senderScriptSource } from '../../tools/import/sender-bundle.mjs';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Writes `files` ({path: text}) under a new directory; returns it. */
function tree(files) {
  const dir = mkdtempSync(join(tmpdir(), 'uitrail-sender-script-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Runs the bundled script of `dir` in a fresh context: its namespace (as
 *  JSON, after `poke` ran on it), its keys, and the order the modules ran
 *  in (each pushes its name on globalThis.log). */
function bundled(dir, poke) {
  const context = vm.createContext({ log: [] });
  const ns = new vm.Script(senderScriptSource(dir)).runInContext(context);
  poke(ns);
  return { ns: JSON.parse(JSON.stringify(Object.entries(ns))), log: [...context.log], keys: Object.keys(ns) };
}

/** The same through Node's module loader (the oracle). */
async function native(dir, poke) {
  globalThis.log = [];
  const ns = await import(pathToFileURL(join(dir, 'uitrail.js')).href);
  poke(ns);
  const log = globalThis.log;
  delete globalThis.log;
  return { ns: JSON.parse(JSON.stringify(Object.entries(ns))), log, keys: Object.keys(ns) };
}

// The module forms the sender uses, and those the hand-written translation
// refused (a cycle, exported let and var reassigned later, namespace and
// default imports, export *, export default of a declaration, a
// destructuring export): each must mean here what it means to Node.
const GRAPH = {
  'package.json': '{"type": "module"}\n',
  'uitrail.js': `log.push('entry');
export { c as sea, b } from './lib/c.js';
import { A, twice as double, count, bump } from './lib/a.js';
import { B } from './lib/b.js';
import * as all from './lib/d.js';
import fromD from './lib/d.js';
export * from './lib/e.js';
export const total = double(A) + B;
export function f() { return total; }
export class K {}
export { A, count, bump };
export const names = Object.keys(all);
export const defaultName = fromD.name;
export const strict = (function () { return this === undefined; })();
export default { A, B, total };
`,
  'lib/a.js': `import { B } from './b.js';
log.push('a');
export let count = 0;
export function bump() { count++; return B; }
export const A = 2;
export function twice(x) { return x * 2; }
`,
  'lib/b.js': `import { A } from './a.js';
log.push('b');
export var B = 3;
export function later() { return A; }
export { B as b2 };
`,
  'lib/c.js': `import { B } from './b.js';
log.push('c');
export const c = 'c' + B;
export const b = 'bee';
`,
  'lib/d.js': `log.push('d');
export const { d1, d2 } = { d1: 1, d2: 2 };
export default function named() { return 0; }
`,
  'lib/e.js': `log.push('e');
export const e1 = 'e';
`,
};

test('a graph of module forms: the namespace, order and live bindings of Node\'s loader', async () => {
  const dir = tree(GRAPH);
  try {
    // A live binding: the namespace shows `count` after bump() ran.
    const poke = (ns) => { ns.bump(); ns.bump(); };
    const mine = bundled(dir, poke);
    const theirs = await native(dir, poke);
    assert.deepEqual(mine.log, theirs.log);
    assert.deepEqual(mine.log, ['a', 'b', 'c', 'd', 'e', 'entry']); // the cycle: a before b
    assert.deepEqual(mine.keys, theirs.keys);
    assert.deepEqual(mine.ns, theirs.ns);
    const got = Object.fromEntries(mine.ns);
    assert.equal(got.count, 2);
    assert.equal(got.strict, true);
    assert.deepEqual(got.names, ['d1', 'd2', 'default']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a module esbuild cannot resolve is refused at import start, with esbuild\'s reason', () => {
  const dir = tree({ ...GRAPH, 'lib/e.js': "import { x } from 'left-pad';\nexport const e1 = x;\n" });
  try {
    assert.throws(() => senderScriptSource(dir), /esbuild could not bundle the sender.*left-pad/s);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the real sender loads as one classic script in a rebuilt page\'s realm, msgpack bundled in', async () => {
  const page = await createPage({ url: 'http://example.test/', clock: createClock(1e12), startMs: 1e12, onBytes: () => {} });
  try {
    assert.equal(typeof page.sender.start, 'function');
    assert.equal(page.sender.default.start, page.sender.start);
    assert.ok(page.sender.start instanceof page.window.Function, 'the sender\'s functions belong to the page\'s realm');
    // The entry module's namespace, as a module loader lists it.
    assert.deepEqual(Object.keys(page.sender), ['EventTime', 'LIMITS', 'accessibleName', 'contextOf', 'decodeEntries', 'default',
      'extensionCodec', 'roleOf', 'snapshotText', 'start']);
    assert.equal(page.window.uitrailSender, undefined, 'the bundle leaves no global in the page');
    page.document.body.innerHTML = '<table><tr><td>Blue Widget</td><td><button aria-pressed="true">Add</button></td></tr></table>';
    const button = page.document.querySelector('button');
    assert.equal(page.sender.roleOf(button), 'button');
    assert.equal(page.sender.accessibleName(button), 'Add');
  } finally {
    page.close();
  }
});

// The whole path: the recordings of both fixtures are what the importer
// wrote before the sender was bundled. When the sender or the importer
// changes what it emits on purpose, check the change with `uitrail replay`
// and remake the pinned file (fixtures/rrweb/README.md says how).
for (const name of ['checkout-bootstrap', 'checkout-bootstrap-masked']) {
  test(`uitrail import of ${name}: byte for byte the recording pinned in fixtures/rrweb`, () => {
    const out = mkdtempSync(join(tmpdir(), 'uitrail-sender-script-out-'));
    try {
      const result = spawnSync(process.env.UITRAIL, ['import', '--out', out, join(REPO, 'fixtures', 'rrweb', `${name}.rrweb.json.gz`)],
        { encoding: 'utf8', timeout: 300000 });
      assert.equal(result.error, undefined, String(result.error));
      assert.equal(result.status, 0, result.stderr);
      const files = readdirSync(out).filter((file) => file.endsWith('.uitrail'));
      assert.equal(files.length, 1, `one recording: ${files}`);
      const got = readFileSync(join(out, files[0]));
      const pinned = readFileSync(join(REPO, 'fixtures', 'rrweb', `${name}.imported.uitrail`));
      assert.ok(got.equals(pinned), `${files[0]} (${got.length} bytes) differs from ${name}.imported.uitrail (${pinned.length} bytes)`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
}
