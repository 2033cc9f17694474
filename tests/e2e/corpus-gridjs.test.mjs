// Grid.js and micromodal: a customers table as an app team builds it, with
// row context asked for on the wrapper the team owns (Grid.js renders the
// table inside it), a search box, sortable headers, a modal with a
// customer's details, and segment filters clicked in a run. Through the
// real uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_gridjs_needs_chromium_and_uitraild', { skip }, () => {});

describe('corpus: Grid.js, micromodal', { skip: skip || false }, () => {
  let run;
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  test('test_corpus_gridjs_customers_story', async () => {
    const tab = uniqueTab('gridjs');
    const { page, consoleLines } = await run.open('/corpus/customers-gridjs.html', tab);
    await page.waitForSelector('.gridjs-tbody .open-customer');
    await run.until(tab, 'navigate /corpus/customers-gridjs.html');
    await run.stable(tab);

    await STORIES.gridjs.drive(run, tab, page);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS closed listbox "Rows per page": 10 · 25 · 50',
      '- HH:MM:SS click option "25" (selected) (list: Rows per page)',
      '- HH:MM:SS click combobox "Rows per page" (expanded) → opened listbox "Rows per page"',
      '- HH:MM:SS clicked 3× checkbox (group: Segments): "VIP" (checked), "New this month" (not checked), "At risk" (checked)',
      '- HH:MM:SS closed dialog "Bo Chen": Segment: Wholesale · Orders: 48 · E-mail: [email]',
      '- HH:MM:SS click button "Close" (dialog: Bo Chen) → page changed',
      '- HH:MM:SS click button "Open" (row: C-102 | Bo Chen | [email] | Wholesale | 48) → opened dialog "Bo Chen"',
      '- HH:MM:SS click columnheader "Orders" → page changed',
      '- HH:MM:SS typed 19 chars into searchbox "Type a keyword..."',
      '- HH:MM:SS navigate /corpus/customers-gridjs.html "Customers · Acme Admin"',
    ], consoleLines.join('\n'));

    const json = await run.json(tab);
    const [, , trigger, burst, , , open, sort] = json.events;
    assert.deepEqual([trigger.role, trigger.name, trigger.state], ['combobox', 'Rows per page', { expanded: true }]);
    assert.deepEqual(burst.members.map((member) => [member.name, member.state]), [
      ['VIP', { checked: true }], ['New this month', { checked: false }], ['At risk', { checked: true }],
    ]);
    assert.deepEqual(open.ctx, { kind: 'row', cells: ['C-102', 'Bo Chen', '[email]', 'Wholesale', '48'] });
    assert.deepEqual([sort.role, sort.name, sort.ctx], ['columnheader', 'Orders', undefined]);
    await run.assertNoPii(tab);
    await page.close();
  });
});
