// Ant Design 5 on React 18 (UMD builds, htm for JSX): an orders Table
// with a status Select (rc-select opens on mousedown and renders a
// zero-size accessibility listbox), a refund Modal whose body exists only
// while an order is selected, Form rules shown under the fields, and a
// message on success. By mouse, then by keyboard only. Through the real
// uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';
import { SENTINELS, assertJsonLinks, tabTo } from './lib/story.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_antd_needs_chromium_and_uitraild', { skip }, () => {});

const ROW_4411 = '4411 | Ann Lee | [email] | $120.00 | Paid';

describe('corpus: Ant Design', { skip: skip || false }, () => {
  let run;
  const tabs = {};
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  async function openPage(name) {
    const tab = tabs[name] = uniqueTab(`antd-${name}`);
    const opened = await run.open('/corpus/orders-antd.html', tab);
    await opened.page.waitForSelector('tr[data-row-key="4411"]');
    await run.until(tab, 'navigate /corpus/orders-antd.html');
    await run.stable(tab);
    return { tab, ...opened };
  }

  test('test_corpus_antd_mouse_story', async () => {
    const { tab, page, consoleLines } = await openPage('mouse');
    await STORIES.antd.drive(run, tab, page);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS closed dialog "Refund order 4411": Customer: Ann Lee · Paid: $120.00 · $ · Damaged in transit',
      '- HH:MM:SS click button "Refund" (dialog: Refund order 4411) → page changed',
      '- HH:MM:SS typed 17 chars into textbox "Note to customer"',
      '- HH:MM:SS closed listbox "Reason": Damaged in transit · Arrived late · Other',
      '- HH:MM:SS click option "Damaged in transit" (selected) (list: Reason) → page changed',
      '- HH:MM:SS click combobox "Reason" (expanded) (same dialog) → opened listbox "Reason"',
      '- HH:MM:SS typed 2 chars into spinbutton "Amount"',
      '- HH:MM:SS click button "Refund" (same dialog) → invalid: spinbutton "Amount": "Enter an amount" · combobox "Reason": "Choose a reason"',
      `- HH:MM:SS click button "Refund" (row: ${ROW_4411}) → opened dialog "Refund order 4411"`,
      '- HH:MM:SS closed listbox "Status": All statuses · Paid · Shipped',
      '- HH:MM:SS click option "Paid" (selected) (list: Status) → page changed',
      '- HH:MM:SS click combobox "Status" (expanded) → opened listbox "Status"',
      '- HH:MM:SS navigate /corpus/orders-antd.html "Orders · Acme Back Office"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_antd_keyboard_story', async () => {
    const { tab, page, consoleLines } = await openPage('keyboard');
    await tabTo(page, '.ant-select-selection-search-input');
    await run.act(tab, () => page.keyboard.press('ArrowDown'));
    await page.getByRole('option', { name: 'Paid' }).waitFor({ state: 'attached' });
    await page.keyboard.press('ArrowDown');
    await run.act(tab, () => page.keyboard.press('Enter'));
    await page.waitForSelector('tr[data-row-key="4412"]', { state: 'detached' });
    await run.until(tab, 'closed listbox "Status"');

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS closed listbox "Status": All statuses · Paid · Shipped',
      '- HH:MM:SS click option "Paid" (selected) (list: Status) → page changed',
      '- HH:MM:SS opened listbox "Status"',
      '- HH:MM:SS navigate /corpus/orders-antd.html "Orders · Acme Back Office"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_antd_json_links', async () => {
    assertJsonLinks(await run.json(tabs.mouse), {});
    assertJsonLinks(await run.json(tabs.keyboard), {});
  });

  test('test_corpus_antd_no_personal_data', async () => {
    for (const tab of Object.values(tabs)) await run.assertNoPii(tab, SENTINELS);
  });
});
