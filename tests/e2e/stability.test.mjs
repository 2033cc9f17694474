// Page stability in real Chromium through the real uitraild: each page of
// tests/e2e/corpus/stability/ signals its true transitions itself
// (truth.js); the daemon's marks must be the same transitions, a changing
// mark within 100 ms and a stable mark within 250 ms of the truth, a
// static page's stable mark within 160 ms of the later of its load and the
// sender's start (load_quiet_ms after the sender's `loaded` record); all
// on the sender's clock, so a loaded machine delays neither. A page that misses
// is run up to twice more before it fails: the machine is shared, and a browser
// starved for a few hundred ms shifts its own timers, not the scorer.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus } from './lib/corpus.mjs';
import { PAGES, mismatches, runPage } from './lib/stability.mjs';

const ATTEMPTS = 3;
const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_stability_needs_chromium_and_uitraild', { skip }, () => {});

describe('page stability against each page\'s own truth', { skip: skip || false }, () => {
  let run;
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  for (const spec of PAGES) {
    test(`test_stability_${spec.name.replace(/-/g, '_')}`, async () => {
      let report = '';
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        const { truth, marks, trace, senderReady } = await runPage(run, spec);
        const problems = mismatches(truth, marks, { loadSettle: spec.loadSettle, senderReady });
        if (spec.name === 'tabs' && trace.includes('no response')) problems.push('a tab click read "no response"');
        if (!problems.length) return;
        report += `attempt ${attempt}:\n  ${problems.join('\n  ')}\n  truth ${JSON.stringify(truth.map((x) => [x.state, Math.round(x.t - truth[0].t)]))}` +
          `\n  marks ${JSON.stringify(marks.map((x) => [x.state, Math.round(x.t - (truth[0]?.t ?? 0))]))}\n`;
      }
      assert.fail(`${spec.name}:\n${report}`);
    });
  }
});
