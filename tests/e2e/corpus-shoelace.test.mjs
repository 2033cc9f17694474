// Shoelace (web components with open shadow roots, defined lazily by the
// autoloader): an invoices page with a dropdown menu, a dialog whose
// content is slotted, an expanding details panel and an error toast
// (sl-alert), through the real uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_shoelace_needs_chromium_and_uitraild', { skip }, () => {});

describe('corpus: Shoelace', { skip: skip || false }, () => {
  let run;
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  test('test_corpus_shoelace_invoices_story', async () => {
    const tab = uniqueTab('shoelace');
    const { page, consoleLines } = await run.open('/corpus/invoices-shoelace.html', tab);
    await page.waitForFunction(() => customElements.get('sl-dialog') && customElements.get('sl-button'));
    await run.until(tab, 'navigate /corpus/invoices-shoelace.html');
    await run.stable(tab);

    await STORIES.shoelace.drive(run, tab, page);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS closed menu "More actions": Export CSV · Archive paid',
      '- HH:MM:SS click button "New invoice" (toolbar: Invoices)',
      '- HH:MM:SS click button "More" (expanded) (same toolbar) → opened menu "More actions"',
      '- HH:MM:SS error alert "Reminder for INV-9 not sent: the mail service is down"',
      '- HH:MM:SS closed dialog "Invoice INV-9": Customer: Ann Lee · E-mail: [email] · Amount: $120.00 · Due: 2024-06-01',
      '- HH:MM:SS click button "Send reminder" (dialog: Invoice INV-9)',
      '- HH:MM:SS click button "View" (row: INV-9 | Ann Lee | $120.00 | 2024-06-01) → opened dialog "Invoice INV-9"',
      '- HH:MM:SS navigate /corpus/invoices-shoelace.html "Invoices · Acme Billing"',
    ], consoleLines.join('\n'));

    const json = await run.json(tab);
    const [closedMenu, newInvoice, , alert, closedDialog, remind] = json.events;
    // The click on its item closed the menu: the effect after its cause
    // (sent at once, the click no longer waits to see the menu close).
    assert.ok(closedMenu.ms >= newInvoice.ms, 'the menu closed after the click that closed it');
    assert.deepEqual([alert.role, alert.level], ['alert', 'error']);
    assert.equal(closedDialog.text, 'Customer: Ann Lee · E-mail: [email] · Amount: $120.00 · Due: 2024-06-01');
    assert.equal(remind.outcome, null, 'the spinner inside the button answered the click: no dead click');
    await run.assertNoPii(tab);
    await page.close();
  });
});
