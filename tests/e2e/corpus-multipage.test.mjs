// A server-rendered multi-page flow: full page loads through links, a form
// post answered with a redirect to a page showing the server's error, a
// reload and a way back. One browser tab keeps one history across every
// page (the tab id lives in sessionStorage; pagehide sends unload, not
// close). Through the real uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_multipage_needs_chromium_and_uitraild', { skip }, () => {});

describe('corpus: multi-page flow', { skip: skip || false }, () => {
  let run;
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  const ROW = '4411 | Ann Lee | [email] | $120.00 | Paid | View order 4411';
  const ERROR = 'Refund of $150.00 exceeds the captured amount of $120.00';

  test('test_corpus_multipage_history_survives_page_loads', async () => {
    const tab = uniqueTab('shop');
    const { page, consoleLines } = await run.open('/shop/orders', tab);
    await run.until(tab, 'navigate /shop/orders');
    await run.stable(tab);

    await STORIES.multipage.drive(run, tab, page);
    const page4 = await run.stable(tab);
    assert.equal(page4.stable, true);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS click link "Back to orders" → navigated to /shop/orders "Orders · Acme Shop"',
      `- HH:MM:SS error alert "${ERROR}"`,
      '- HH:MM:SS navigate (reload) /shop/orders/4411?error= "Order 4411 · Acme Shop"',
      `- HH:MM:SS error alert "${ERROR}"`,
      '- HH:MM:SS click button "Refund" (form: Refund) → navigated to /shop/orders/4411?error= "Order 4411 · Acme Shop"',
      '- HH:MM:SS typed 49 chars into textbox "Note to customer"',
      '- HH:MM:SS typed 3 chars into textbox "Amount"',
      `- HH:MM:SS click link "View order 4411" (row: ${ROW}) → navigated to /shop/orders/4411 "Order 4411 · Acme Shop"`,
      '- HH:MM:SS navigate /shop/orders "Orders · Acme Shop"',
    ], consoleLines.join('\n'));

    const json = await run.json(tab);
    assert.equal(json.events.length, 12, 'one history across five page loads');
    // A navigation outcome names the seq of the nav event it caused, later than the click's.
    for (const [at, path] of [[6, '/shop/orders/4411?error='], [10, '/shop/orders/4411']]) {
      const { seq, ...outcome } = json.events[at].outcome;
      assert.deepEqual(outcome, { kind: 'navigated', path });
      assert.ok(seq > json.events[at].seq, `event ${at}: navigation seq ${seq} after the click's ${json.events[at].seq}`);
    }
    const unloads = run.events.events.filter((e) => e.event === 'event' && JSON.parse(e.data).tab === tab &&
      JSON.parse(e.data).kind === 'unload');
    assert.equal(unloads.length, 4, 'each page that went away said so');
    assert.ok(!run.events.raw.includes(`"kind":"close","tab":"${tab}"`), 'and none closed the tab');
    await run.assertNoPii(tab, ['+1 415 555 0134']);
    await page.close();
  });
});
