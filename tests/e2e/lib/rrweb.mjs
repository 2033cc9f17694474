// rrweb's record() (npm rrweb, pinned in tests/e2e/package.json) beside
// the live sender (issue 26): what tests/e2e/record-rrweb.mjs (the
// fixtures of fixtures/rrweb) and corpus-rrweb.test.mjs (every corpus
// page) record with. One copy of the recorder's setup.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { REPO } from './harness.mjs';

const RRWEB_BUNDLE = join(REPO, 'tests', 'e2e', 'node_modules', 'rrweb', 'dist', 'rrweb.umd.cjs');
// The page's binding that hands each event to Node as rrweb emits it: the
// events of a page that goes away (a multi-page session) are kept.
const BINDING = '__uitrailRrwebEmit';

/** rrweb's UMD bundle and its record() call, as an init script: it starts
 *  before the page's scripts, the way a team's snippet in <head> does. */
export function recorderScript(options) {
  const bundle = readFileSync(RRWEB_BUNDLE, 'utf8');
  // Top window only: rrweb records same-origin frames from the top (its
  // iframe manager), makes a blank iframe of its own for clean
  // prototypes, and an init script runs in every frame, rrweb's included.
  return `(() => {
    if (window !== window.top) return;
    const module = { exports: {} };
    (function (module, exports) { ${bundle} })(module, module.exports);
    module.exports.record({ emit: (event) => window.${BINDING}(JSON.stringify(event)), ...${JSON.stringify(options)} });
  })();`;
}

/**
 * Records `page` with rrweb's record(`options`) from its next load on;
 * call before the page's first navigation. Returns the events as rrweb
 * emitted them, all of the page's loads in order, and `flush()`, which
 * resolves once every event the page emitted so far has arrived.
 */
export async function recordRrweb(page, options = {}) {
  const events = [];
  await page.exposeFunction(BINDING, (json) => { events.push(JSON.parse(json)); });
  await page.addInitScript(recorderScript(options));
  return {
    events,
    // A binding's calls reach Node in order, before the answer of a later
    // evaluate in the same page.
    async flush() { await page.evaluate(() => 0); },
  };
}
