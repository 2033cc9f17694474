// A Preact + htm single-page app with preact-router: a customer list with
// a search box, a page per customer whose title the route sets after it
// renders, the app's own "All customers" button and the browser's back
// button. Through the real uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_spa_needs_chromium_and_uitraild', { skip }, () => {});

describe('corpus: Preact SPA', { skip: skip || false }, () => {
  let run;
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  test('test_corpus_spa_titles_and_routes', async () => {
    const tab = uniqueTab('spa');
    const { page, consoleLines } = await run.open('/corpus/spa/', tab);
    await page.waitForSelector('text=Bo Chen');
    await run.until(tab, 'navigate /corpus/spa/');
    await run.stable(tab);

    await STORIES.spa.drive(run, tab, page);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS navigate (back/forward) /corpus/spa/customers/102 "Bo Chen · Customers"',
      '- HH:MM:SS click button "All customers" → navigated (in-app) to /corpus/spa/ "Customers · Acme CRM"',
      '- HH:MM:SS click link "Bo Chen" (list: Customer list) → navigated (in-app) to /corpus/spa/customers/102 "Bo Chen · Customers"',
      '- HH:MM:SS typed 19 chars into searchbox "Search customers"',
      '- HH:MM:SS navigate /corpus/spa/ "Customers · Acme CRM"',
    ], consoleLines.join('\n'));
    const json = await run.json(tab);
    assert.deepEqual(json.events.filter((e) => e.kind === 'nav').map((e) => [e.how, e.path, e.title]), [
      ['pop', '/corpus/spa/customers/102', 'Bo Chen · Customers'],
      ['push', '/corpus/spa/', 'Customers · Acme CRM'],
      ['push', '/corpus/spa/customers/102', 'Bo Chen · Customers'],
      ['load', '/corpus/spa/', 'Customers · Acme CRM'],
    ]);
    assert.equal(json.title, 'Bo Chen · Customers');
    await run.assertNoPii(tab);
    await page.close();
  });
});
