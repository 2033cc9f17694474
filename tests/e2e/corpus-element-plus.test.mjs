// Element Plus on Vue 3 (global builds, in-DOM template): a customers
// el-table, an el-dialog with an el-form whose rules show messages under
// the fields, an el-select whose dropdown is teleported to <body> inside a
// popper (role=tooltip) and an ElMessage. By mouse, then by keyboard only.
// Through the real uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';
import { SENTINELS, assertJsonLinks, tabTo } from './lib/story.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_element_plus_needs_chromium_and_uitraild', { skip }, () => {});

describe('corpus: Element Plus', { skip: skip || false }, () => {
  let run;
  const tabs = {};
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  async function openPage(name) {
    const tab = tabs[name] = uniqueTab(`element-${name}`);
    const opened = await run.open('/corpus/customers-element-plus.html', tab);
    await opened.page.waitForSelector('.el-table__row');
    await run.until(tab, 'navigate /corpus/customers-element-plus.html');
    await run.stable(tab);
    return { tab, ...opened };
  }

  test('test_corpus_element_plus_mouse_story', async () => {
    const { tab, page, consoleLines } = await openPage('mouse');
    await STORIES.elementPlus.drive(run, tab, page);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS closed dialog "Edit Carla Diaz": Partner',
      '- HH:MM:SS click button "Save" (dialog: Edit Carla Diaz) → info alert "Saved Carla Diaz"',
      '- HH:MM:SS typed 4 chars into textbox "Credit limit"',
      '- HH:MM:SS closed listbox "Segment": Retail · Wholesale · Partner',
      '- HH:MM:SS click option "Partner" (selected) (list: Segment)',
      '- HH:MM:SS click combobox "Segment" (expanded) (form: Customer) → opened listbox "Segment"',
      '- HH:MM:SS click button "Save" (same dialog) → invalid: textbox "Credit limit": "Enter a credit limit"',
      '- HH:MM:SS click button "Edit" (row: C-103 | Carla Diaz | [email] | Retail) → opened dialog "Edit Carla Diaz"',
      '- HH:MM:SS navigate /corpus/customers-element-plus.html "Customers · Acme CRM"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_element_plus_keyboard_story', async () => {
    const { tab, page, consoleLines } = await openPage('keyboard');
    await tabTo(page, '.el-table__row:nth-child(1) button');
    await run.act(tab, () => page.keyboard.press('Enter'));
    await run.until(tab, '"Edit Ann Lee"');
    await tabTo(page, '.el-dialog .el-select input, .el-dialog .el-select__wrapper');
    await run.act(tab, () => page.keyboard.press('Enter'));
    await page.locator('.el-select-dropdown__item', { hasText: 'Partner' }).waitFor();
    await page.keyboard.press('ArrowDown');
    await run.act(tab, () => page.keyboard.press('Enter'));
    // The list fades out after the choice; a user sees it gone before
    // moving on (on a loaded machine the fade outlasted the next press).
    await run.until(tab, 'closed listbox "Segment"');
    await tabTo(page, '.el-dialog__footer button');
    await run.act(tab, () => page.keyboard.press('Enter'));
    await run.until(tab, 'closed dialog "Edit Ann Lee"');

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS closed dialog "Edit Ann Lee": Wholesale',
      '- HH:MM:SS click button "Cancel" (dialog: Edit Ann Lee) → page changed',
      '- HH:MM:SS closed listbox "Segment": Retail · Wholesale · Partner',
      '- HH:MM:SS click option "Wholesale" (selected) (list: Segment)',
      '- HH:MM:SS click combobox "Segment" (expanded) (form: Customer) → opened listbox "Segment"',
      '- HH:MM:SS click button "Edit" (row: C-101 | Ann Lee | [email] | Retail) → opened dialog "Edit Ann Lee"',
      '- HH:MM:SS navigate /corpus/customers-element-plus.html "Customers · Acme CRM"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_element_plus_json_links', async () => {
    assertJsonLinks(await run.json(tabs.mouse), {});
    assertJsonLinks(await run.json(tabs.keyboard), {});
  });

  test('test_corpus_element_plus_no_personal_data', async () => {
    for (const tab of Object.values(tabs)) await run.assertNoPii(tab, SENTINELS);
  });
});
