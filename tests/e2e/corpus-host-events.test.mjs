// Host events and whose action it was. A checkout page that switches the
// DOM source off and reports its own events (tracker.emit) alone; and the
// Grid.js page driven by a script, as an in-app assistant's executor acts
// for the user: those clicks and changes are marked. Through the real
// uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing, sleep } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_host_events_need_chromium_and_uitraild', { skip }, () => {});

describe('corpus: host events, whose action', { skip: skip || false }, () => {
  let run;
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  test('test_corpus_host_events_only', async () => {
    const tab = uniqueTab('checkout');
    const { page, sent, consoleLines } = await run.open('/corpus/checkout-host-events.html', tab);
    await run.until(tab, 'checkout.started');
    await STORIES.hostEvents.drive(run, tab, page);
    await sleep(500);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS app warning "checkout.payment_declined": "Card declined for [email]" (code: do_not_honor, retry: true)',
      '- HH:MM:SS app event "checkout.payment_submitted" (method: card, last4: 1111, receipt: [email])',
      '- HH:MM:SS app event "checkout.started" (items: 3, total: 120.00)',
      '- HH:MM:SS navigate /corpus/checkout-host-events.html "Checkout · Acme Shop"',
    ], consoleLines.join('\n'));
    assert.match(await run.trace(tab), /^PAGE: no DOM activity reported$/m, 'no mutation records: the DOM source is off');
    const kinds = new Set(run.events.events.filter((e) => e.event === 'event' && JSON.parse(e.data).tab === tab)
      .map((e) => JSON.parse(e.data).kind));
    assert.deepEqual([...kinds].sort(), ['app', 'nav']);
    const json = await run.json(tab);
    assert.deepEqual(json.events[0].data, { code: 'do_not_honor', retry: 'true' });
    assert.equal(json.events[0].level, 'warning');
    // The page sent the receipt address (the app chose to), the daemon
    // redacted it before anything else saw it.
    assert.ok(Buffer.concat(sent).toString('latin1').includes('ann.lee@example.com'));
    await run.assertNoPii(tab);
    await page.close();
  });

  test('test_corpus_script_actions_are_marked', async () => {
    const tab = uniqueTab('script');
    const { page, consoleLines } = await run.open('/corpus/customers-gridjs.html', tab);
    await page.waitForSelector('.gridjs-tbody .open-customer');
    await run.until(tab, 'navigate /corpus/customers-gridjs.html');
    await run.stable(tab);
    // The user ticks a segment; then the assistant's executor opens a
    // customer and ticks another segment for the user.
    await page.getByLabel('VIP').click();
    await run.until(tab, '"VIP"');
    await page.evaluate(() => {
      document.querySelectorAll('.gridjs-tbody tr')[1].querySelector('button').click();
    });
    await run.until(tab, 'opened dialog "Bo Chen"');
    await run.stable(tab);
    await page.evaluate(() => document.querySelector('#customer-modal button[data-micromodal-close]').click());
    await run.until(tab, 'closed dialog "Bo Chen"');
    await page.evaluate(() => {
      const box = document.querySelector('input[value="churned"]');
      box.checked = true;
      box.dispatchEvent(new Event('change', { bubbles: true }));
    });
    await run.until(tab, '"At risk" (by script)');
    await run.stable(tab);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS set checkbox "At risk" (by script) = checked',
      '- HH:MM:SS closed dialog "Bo Chen": Segment: Wholesale · Orders: 48 · E-mail: [email]',
      '- HH:MM:SS click button "Close" (by script) (dialog: Bo Chen) → page changed',
      '- HH:MM:SS click button "Open" (by script) (row: C-102 | Bo Chen | [email] | Wholesale | 48) → opened dialog "Bo Chen"',
      '- HH:MM:SS click checkbox "VIP" (checked) (group: Segments)',
      '- HH:MM:SS navigate /corpus/customers-gridjs.html "Customers · Acme Admin"',
    ], consoleLines.join('\n'));
    const json = await run.json(tab);
    assert.deepEqual(json.events.map((e) => e.trusted), [false, undefined, false, false, undefined, undefined]);
    await page.close();
  });
});
