// Tom Select (a custom select over a hidden native <select>: it moves the
// label to its own input, sets the select and dispatches its change) and
// SweetAlert2 (a confirm popup that is role=dialog and aria-live at once,
// with hidden inputs of its own). By mouse, then by keyboard only. Through
// the real uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';
import { SENTINELS, assertJsonLinks, tabTo } from './lib/story.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_tomselect_needs_chromium_and_uitraild', { skip }, () => {});

const COUNTRIES = 'Canada · Germany · Kenya · New Zealand';

describe('corpus: Tom Select, SweetAlert2', { skip: skip || false }, () => {
  let run;
  const tabs = {};
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  async function openPage(name) {
    const tab = tabs[name] = uniqueTab(`tomselect-${name}`);
    const opened = await run.open('/corpus/address-tomselect-sweetalert.html', tab);
    await run.until(tab, 'navigate /corpus/address-tomselect-sweetalert.html');
    await run.stable(tab);
    return { tab, ...opened };
  }

  test('test_corpus_tomselect_mouse_story', async () => {
    const { tab, page, consoleLines } = await openPage('mouse');
    await STORIES.tomselect.drive(run, tab, page);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS closed dialog "Deleted": The address was removed.',
      '- HH:MM:SS click button "OK" (dialog: Deleted) → page changed',
      '- HH:MM:SS closed dialog "Delete this address?": ! · You will not be able to undo this.',
      '- HH:MM:SS click button "Yes, delete it" (dialog: Delete this address?) → opened dialog "Deleted"',
      '- HH:MM:SS click button "Delete address" (form: Shipping address) → opened dialog "Delete this address?"',
      `- HH:MM:SS closed listbox "Ship to country": ${COUNTRIES}`,
      '- HH:MM:SS set combobox "Ship to country" = "Kenya"',
      '- HH:MM:SS click option "Kenya" (selected) (list: Ship to country) → status "Ships to Kenya in 3–5 days"',
      '- HH:MM:SS typed 19 chars into textbox "Street"',
      '- HH:MM:SS click combobox "Ship to country" (expanded) (same form) → opened listbox "Ship to country"',
      '- HH:MM:SS navigate /corpus/address-tomselect-sweetalert.html "Address book · Acme Store"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_tomselect_keyboard_story', async () => {
    const { tab, page, consoleLines } = await openPage('keyboard');
    await tabTo(page, '#country-ts-control');
    await run.act(tab, () => page.keyboard.press('ArrowDown'));
    await page.locator('.ts-dropdown .option').first().waitFor();
    await page.keyboard.press('ArrowDown');
    await run.act(tab, () => page.keyboard.press('Enter'));
    await run.until(tab, 'Ships to');
    await run.until(tab, 'closed listbox "Ship to country"');

    assert.deepEqual(await run.lines(tab), [
      `- HH:MM:SS closed listbox "Ship to country": ${COUNTRIES}`,
      '- HH:MM:SS set combobox "Ship to country" = "Kenya"',
      '- HH:MM:SS click option "Kenya" (selected) (list: Ship to country) → status "Ships to Kenya in 3–5 days"',
      '- HH:MM:SS opened listbox "Ship to country"',
      '- HH:MM:SS navigate /corpus/address-tomselect-sweetalert.html "Address book · Acme Store"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_tomselect_json_links', async () => {
    assertJsonLinks(await run.json(tabs.mouse), {});
    assertJsonLinks(await run.json(tabs.keyboard), {});
  });

  test('test_corpus_tomselect_no_personal_data', async () => {
    for (const tab of Object.values(tabs)) await run.assertNoPii(tab, SENTINELS);
  });
});
