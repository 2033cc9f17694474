// Makes the rrweb fixtures of fixtures/rrweb/ (issue 26): the Blue Widget
// checkout story of the Bootstrap corpus page, played in headless Chromium
// with rrweb's record() (npm rrweb, pinned in package.json) running beside
// the live sender feeding the real uitraild. Writes, for rrweb's defaults
// and once with maskAllInputs:
//   fixtures/rrweb/checkout-bootstrap[-masked].rrweb.json.gz  rrweb's events
//   fixtures/rrweb/checkout-bootstrap[-masked].live.txt        the live trace
//   fixtures/rrweb/checkout-bootstrap[-masked].live.uitrail    the live events
// (the daemon's text trace, times as HH:MM:SS), which tests/cli's import
// test compares the imported trace with.
//
// Usage: node tests/e2e/record-rrweb.mjs
// Environment: UITRAILD, CHROMIUM as for the e2e suite. The recorder and
// the story are tests/e2e/lib's (rrweb.mjs, stories.mjs), as corpus-rrweb's.

import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { REPO } from './lib/harness.mjs';
import { startCorpus, uniqueTab } from './lib/corpus.mjs';
import { recordRrweb } from './lib/rrweb.mjs';
import { STORIES } from './lib/stories.mjs';

const OUT = join(REPO, 'fixtures', 'rrweb');

async function record(run, name, options) {
  const tab = uniqueTab(`rrweb-${name}`);
  const story = STORIES.bootstrap;
  let rrweb;
  const { page, consoleLines } = await run.open(story.path, tab, {
    beforeLoad: async (p) => { rrweb = await recordRrweb(p, options); },
  });
  page.setDefaultTimeout(120000);
  process.stdout.write(`${name}: page loaded\n`);
  await story.ready(run, tab, page);
  await story.drive(run, tab, page);
  // The page settled after the last action (the modal's backdrop removed,
  // the body restored): rrweb has emitted those mutations too by then.
  await run.stable(tab);
  await rrweb.flush();
  const { events } = rrweb;
  await page.close();
  if (consoleLines.length) process.stderr.write(`${name} console:\n${consoleLines.join('\n')}\n`);
  const lines = await run.lines(tab);
  writeFileSync(join(OUT, `${name}.rrweb.json.gz`), gzipSync(JSON.stringify(events), { level: 9 }));
  writeFileSync(join(OUT, `${name}.live.txt`), `${lines.join('\n')}\n`);
  // The live events as the daemon recorded them, to compare event by event.
  const live = readdirSync(recorded).find((file) => file.endsWith(`-${tab}.uitrail`));
  if (live) copyFileSync(join(recorded, live), join(OUT, `${name}.live.uitrail`));
  process.stdout.write(`${name}: ${events.length} rrweb events, ${lines.length} live lines\n`);
}

const recorded = mkdtempSync(join(tmpdir(), 'uitrail-rrweb-live-'));
const run = await startCorpus({ daemonArgs: ['--record', recorded] });
try {
  await record(run, 'checkout-bootstrap', {});
  await record(run, 'checkout-bootstrap-masked', { maskAllInputs: true });
} finally {
  await run.close();
  rmSync(recorded, { recursive: true, force: true });
}
