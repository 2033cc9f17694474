// htmx 2 (hx-boost on <body>): a server-rendered contacts app whose links
// and form posts become AJAX swaps with history entries; the server answers
// a failed save with the form and its error, a good one with a redirect to
// the list and a flash message; Back restores the list from htmx's history
// cache, flash message included. By mouse, then by keyboard only. Through
// the real uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';
import { SENTINELS, assertJsonLinks, tabTo } from './lib/story.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_htmx_needs_chromium_and_uitraild', { skip }, () => {});

describe('corpus: htmx', { skip: skip || false }, () => {
  let run;
  const tabs = {};
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  async function openPage(name) {
    const tab = tabs[name] = uniqueTab(`htmx-${name}`);
    const opened = await run.open('/htmx/contacts', tab);
    await run.until(tab, 'navigate /htmx/contacts');
    await run.stable(tab);
    return { tab, ...opened };
  }

  test('test_corpus_htmx_mouse_story', async () => {
    const { tab, page, consoleLines } = await openPage('mouse');
    await STORIES.htmx.drive(run, tab, page);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS navigate (back/forward) /htmx/contacts?saved= "Contacts · Acme Contacts"',
      '- HH:MM:SS click link "Edit Bo Chen" (row: Bo Chen | [email] | Edit Bo Chen) → navigated (in-app) to /htmx/contacts/2/edit "Edit Bo Chen · Acme Contacts"',
      '- HH:MM:SS status "Saved Ann Lee"',
      '- HH:MM:SS click button "Save" (form: Contact) → navigated (in-app) to /htmx/contacts?saved= "Contacts · Acme Contacts"',
      '- HH:MM:SS typed 15 chars into textbox "Phone"',
      '- HH:MM:SS click button "Save" (same form) → error alert "Enter a phone number"',
      '- HH:MM:SS typed 17 chars into textbox "Phone"',
      '- HH:MM:SS click link "Edit Ann Lee" (row: Ann Lee | [email] | Edit Ann Lee) → navigated (in-app) to /htmx/contacts/1/edit "Edit Ann Lee · Acme Contacts"',
      '- HH:MM:SS navigate /htmx/contacts "Contacts · Acme Contacts"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_htmx_keyboard_story', async () => {
    const { tab, page, consoleLines } = await openPage('keyboard');
    await tabTo(page, 'a[href="/htmx/contacts/2/edit"]');
    await run.act(tab, () => page.keyboard.press('Enter'));
    await run.until(tab, '"Edit Bo Chen · Acme Contacts"');
    await tabTo(page, 'input[name="phone"]');
    await page.keyboard.type(SENTINELS[2]);
    await run.act(tab, () => page.keyboard.press('Enter'));
    await run.until(tab, 'Enter a phone number');

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS click button "Save" (form: Contact) → error alert "Enter a phone number"',
      '- HH:MM:SS typed 17 chars into textbox "Phone"',
      '- HH:MM:SS click link "Edit Bo Chen" (row: Bo Chen | [email] | Edit Bo Chen) → navigated (in-app) to /htmx/contacts/2/edit "Edit Bo Chen · Acme Contacts"',
      '- HH:MM:SS navigate /htmx/contacts "Contacts · Acme Contacts"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_htmx_json_links', async () => {
    assertJsonLinks(await run.json(tabs.mouse), {});
    assertJsonLinks(await run.json(tabs.keyboard), {});
  });

  test('test_corpus_htmx_no_personal_data', async () => {
    for (const tab of Object.values(tabs)) await run.assertNoPii(tab, SENTINELS);
  });
});
