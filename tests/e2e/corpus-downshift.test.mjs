// Downshift's useCombobox on React 18 (UMD builds, htm for JSX), the
// headless combobox as its README builds it: the user types part of a
// team's name and picks a suggestion (Downshift then writes the whole name
// into the input), opens the menu with its toggle button, and picks by
// keyboard only. Through the real uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { STORIES } from './lib/stories.mjs';
import { SENTINELS, assertJsonLinks, pastDebounce, tabTo } from './lib/story.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_downshift_needs_chromium_and_uitraild', { skip }, () => {});

describe('corpus: Downshift', { skip: skip || false }, () => {
  let run;
  const tabs = {};
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  async function openPage(name) {
    const tab = tabs[name] = uniqueTab(`downshift-${name}`);
    const opened = await run.open('/corpus/ticket-downshift.html', tab);
    await opened.page.waitForSelector('input[role="combobox"]');
    await run.until(tab, 'navigate /corpus/ticket-downshift.html');
    await run.stable(tab);
    return { tab, ...opened };
  }

  test('test_corpus_downshift_mouse_story', async () => {
    const { tab, page, consoleLines } = await openPage('mouse');
    await STORIES.downshift.drive(run, tab, page);
    await run.act(tab, () => page.getByRole('button', { name: 'Show teams' }).click());
    await page.getByRole('option', { name: 'Support' }).waitFor();
    await pastDebounce(run, tab, page);
    await run.act(tab, () => page.getByRole('button', { name: 'Show teams' }).click());
    await page.getByRole('option').waitFor({ state: 'detached' });
    await run.until(tab, /closed listbox[^\n]*\n[^\n]*\(not expanded\)/);

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS closed listbox "Assign to team": Support',
      '- HH:MM:SS click button "Show teams" (not expanded) (form: Ticket)',
      '- HH:MM:SS click button "Show teams" (expanded) (same form) → opened listbox "Assign to team"',
      '- HH:MM:SS typed 3 chars into combobox "Assign to team"',
      '- HH:MM:SS closed listbox "Assign to team": Support',
      '- HH:MM:SS click option "Support" (selected) (list: Assign to team) → status "Routed to Support"',
      '- HH:MM:SS click combobox "Assign to team" (expanded) (same form) → opened listbox "Assign to team"',
      '- HH:MM:SS navigate /corpus/ticket-downshift.html "New ticket · Acme Helpdesk"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_downshift_keyboard_story', async () => {
    const { tab, page, consoleLines } = await openPage('keyboard');
    await tabTo(page, 'input[role="combobox"]');
    await run.act(tab, () => page.keyboard.press('ArrowDown'));
    await page.getByRole('option', { name: 'Billing' }).waitFor();
    await page.keyboard.press('ArrowDown');
    await run.act(tab, () => page.keyboard.press('Enter'));
    await run.until(tab, 'Routed to Logistics');
    await run.until(tab, 'closed listbox "Assign to team"');

    assert.deepEqual(await run.lines(tab), [
      '- HH:MM:SS closed listbox "Assign to team": Billing · Logistics · Returns · Sales · Support',
      '- HH:MM:SS click option "Logistics" (selected) (list: Assign to team) → status "Routed to Logistics"',
      '- HH:MM:SS opened listbox "Assign to team"',
      '- HH:MM:SS navigate /corpus/ticket-downshift.html "New ticket · Acme Helpdesk"',
    ], consoleLines.join('\n'));
  });

  test('test_corpus_downshift_json_links', async () => {
    assertJsonLinks(await run.json(tabs.mouse), {});
    assertJsonLinks(await run.json(tabs.keyboard), {});
  });

  test('test_corpus_downshift_no_personal_data', async () => {
    for (const tab of Object.values(tabs)) await run.assertNoPii(tab, SENTINELS);
  });

  // Issue 20 item 12: the user typed 3 characters and picked a suggestion
  // (Downshift then writes "Support" into the input): `typed` counts the
  // user's keys, not the 7 characters of the name the widget wrote.
  test('test_corpus_downshift_typed_counts_the_users_keys', async () => {
    const { tab, page } = await openPage('typed');
    await run.act(tab, () => page.getByRole('combobox').click());
    await page.keyboard.type('sup');
    await run.act(tab, () => page.getByRole('option', { name: 'Support' }).click());
    await page.waitForFunction(() => document.querySelector('input[role="combobox"]').value === 'Support');
    await page.keyboard.press('Tab');
    await run.until(tab, 'typed 3 chars into combobox "Assign to team"');
    const changes = (await run.json(tab)).events.filter((event) => event.kind === 'change');
    assert.deepEqual(changes.map((change) => [change.role, change.name, change.len]), [['combobox', 'Assign to team', 3]]);
    await run.assertNoPii(tab, SENTINELS);
  });
});
