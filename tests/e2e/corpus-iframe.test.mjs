// A same-origin iframe (a support chat widget, a page of the same site
// with the same uitrail setup) inside an orders page: one tracker per tab,
// the top page's, so the frame's clicks, changes and host events merge into
// the tab's one trace, nothing of the page's own is lost as a duplicate, and
// the frame's loads are no navigations of the tab. Through the real
// uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_iframe_needs_chromium_and_uitraild', { skip }, () => {});

describe('corpus: same-origin iframe', { skip: skip || false }, () => {
  let run;
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  test('test_corpus_iframe_one_trace_per_tab', async () => {
    const tab = uniqueTab('iframe');
    const { page, consoleLines } = await run.open('/corpus/orders-with-support.html', tab);
    const frame = page.frameLocator('#support');
    await frame.locator('text=Send').waitFor();
    await page.waitForFunction(() => document.getElementById('support').contentWindow.tracker?.tab);
    await run.until(tab, 'navigate /corpus/orders-with-support.html');
    await run.stable(tab);

    await STORIES.iframe.drive(run, tab, page);

    assert.equal(await page.evaluate(() => document.getElementById('support').contentWindow.tracker.tab), tab,
      'the frame hands off to the top page\'s tracker');
    // The link loads the FAQ into the frame; whether the new document's
    // first changes reach the daemon before the next click ends the
    // link's wait is a race of the story, and both readings are true. A
    // "no response" would be false: it is not accepted.
    const FAQ = '- HH:MM:SS click link "Read the FAQ"';
    const lines = (await run.lines(tab)).map((line) => (line === `${FAQ} → page changed` ? FAQ : line));
    assert.deepEqual(lines, [
      '- HH:MM:SS click button "Refresh orders" (toolbar: Orders) → status "Orders refreshed (2)"',
      '- HH:MM:SS click button "How long do refunds take?" (expanded)',
      '- HH:MM:SS click link "Read the FAQ"',
      '- HH:MM:SS app event "support.message_sent" (topic: Billing)',
      '- HH:MM:SS click button "Send" (form: Contact support) → status "Message sent: we answer within a day"',
      '- HH:MM:SS typed 45 chars into textbox "Message"',
      '- HH:MM:SS set combobox "Topic" = "Billing"',
      '- HH:MM:SS click button "Refresh orders" (same toolbar) → status "Orders refreshed (1)"',
      '- HH:MM:SS navigate /corpus/orders-with-support.html "Orders · Acme Admin"',
    ], consoleLines.join('\n'));
    const metrics = await (await run.daemon.get('/metrics')).text();
    assert.match(metrics, /^uitrail_events_duplicate_total 0$/m, 'no record of the tab was dropped as a duplicate');
    await run.assertNoPii(tab);
    await page.close();
  });
});
