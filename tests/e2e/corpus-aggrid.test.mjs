// ag-grid (ag-grid-community), a native <dialog> and notyf toasts: an
// orders grid as an app team builds it. Filter, sort a column, open an
// order's details from its row, close them, refund the same order and hit
// the server's error, click a row. Through the real uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_aggrid_needs_chromium_and_uitraild', { skip }, () => {});

describe('corpus: ag-grid, native dialog, notyf', { skip: skip || false }, () => {
  let run;
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  const ROW_4411 = '4411 | Ann Lee | [email] | $120.00 | Paid';

  test('test_corpus_aggrid_orders_story', async () => {
    const tab = uniqueTab('aggrid');
    const { page, consoleLines } = await run.open('/corpus/orders-aggrid.html', tab);
    await page.waitForSelector('[row-id="4411"] [col-id="customer"]');
    await run.until(tab, 'navigate /corpus/orders-aggrid.html');
    await run.stable(tab);

    await STORIES.aggrid.drive(run, tab, page);

    assert.deepEqual(await run.lines(tab), [
      `- HH:MM:SS click row "4411" (row: ${ROW_4411})`,
      '- HH:MM:SS app error "order.refund_failed": "Refund of $150.00 exceeds the captured amount of $120.00" (order: 4411, status: 422)',
      `- HH:MM:SS click button "Refund" (same row) → status "Refund of $150.00 exceeds the captured amount of $120.00"`,
      '- HH:MM:SS closed dialog "Order 4411": Customer: Ann Lee · Phone: [phone] · Total: $120.00 · Status: Paid',
      '- HH:MM:SS click button "Close" (dialog: Order 4411)',
      `- HH:MM:SS click button "Details" (same row) → opened dialog "Order 4411"`,
      '- HH:MM:SS click columnheader "Total" (sorted ascending) (region: Orders) → page changed',
      '- HH:MM:SS typed 19 chars into searchbox "Filter orders"',
      '- HH:MM:SS navigate /corpus/orders-aggrid.html "Orders · Acme Admin"',
    ], consoleLines.join('\n'));

    const json = await run.json(tab);
    const [row, app, refund, closed, , details, sort] = json.events;
    assert.deepEqual(row.ctx, { kind: 'row', cells: ['4411', 'Ann Lee', '[email]', '$120.00', 'Paid'] });
    assert.equal(row.role, 'row');
    assert.deepEqual([app.kind, app.name, app.level, app.data], ['app', 'order.refund_failed', 'error', { order: '4411', status: '422' }]);
    // An outcome names the seq of the event that answered, later than its action's.
    const { seq: refundAnswer, ...refundOutcome } = refund.outcome;
    assert.deepEqual(refundOutcome, { kind: 'alert', role: 'status', text: 'Refund of $150.00 exceeds the captured amount of $120.00' });
    assert.ok(refundAnswer > refund.seq, `refund answered by seq ${refundAnswer}, after its own ${refund.seq}`);
    assert.deepEqual([closed.kind, closed.state, closed.role, closed.name], ['dialog', 'close', 'dialog', 'Order 4411']);
    const { seq: detailsAnswer, ...detailsOutcome } = details.outcome;
    assert.deepEqual(detailsOutcome, { kind: 'opened', role: 'dialog', name: 'Order 4411' });
    assert.ok(detailsAnswer > details.seq, `details answered by seq ${detailsAnswer}, after its own ${details.seq}`);
    assert.deepEqual([sort.role, sort.name, sort.sort], ['columnheader', 'Total', 'ascending']);
    assert.equal(json.page.state, 'stable');
    await run.assertNoPii(tab);
    await page.close();
  });
  // Issue 20 item 12: a click on a search box, then typing that filters the
  // grid. The filtering answers the typing, not the click: the click has no
  // outcome of its own (the field took the focus).
  test('test_corpus_aggrid_search_click_then_typing', async () => {
    const tab = uniqueTab('aggrid-search');
    const { page, consoleLines } = await run.open('/corpus/orders-aggrid.html', tab);
    await page.waitForSelector('[row-id="4411"] [col-id="customer"]');
    await run.until(tab, 'navigate /corpus/orders-aggrid.html');
    await run.stable(tab);

    await page.click('#quick-filter');
    // A person types: the grid filters at each key, the first one well
    // within the click's outcome window.
    await page.keyboard.type('ann', { delay: 60 });
    await page.waitForFunction(() => !document.querySelector('[row-id="4412"]'));
    await page.keyboard.press('Tab');
    await run.until(tab, 'typed 3 chars');
    await run.stable(tab);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS typed 3 chars into searchbox "Filter orders"',
      '- HH:MM:SS click searchbox "Filter orders" (region: Orders)',
      '- HH:MM:SS navigate /corpus/orders-aggrid.html "Orders · Acme Admin"',
    ], consoleLines.join('\n'));
    const json = await run.json(tab);
    const click = json.events.find((event) => event.kind === 'click');
    assert.equal(click.outcome, null, `the click's outcome: ${JSON.stringify(click.outcome)}`);
    await run.assertNoPii(tab);
    await page.close();
  });
});
