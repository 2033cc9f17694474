// The WAI-ARIA Authoring Practices examples (fixtures/apg, a pinned
// unmodified copy) as the reference patterns: each driven once by mouse and
// once by keyboard only, its trace read back through the real uitraild.
// UITRAIL_APG_PRINT=1 prints each story's lines instead of comparing them.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, daemonMissing } from './lib/harness.mjs';
import { senderMissing, startCorpus, uniqueTab } from './lib/corpus.mjs';
import { SENTINELS, assertJsonLinks, pastDebounce, tabTo } from './lib/story.mjs';

const skip = chromiumMissing() || daemonMissing() || senderMissing();
if (skip) test('test_corpus_apg_needs_chromium_and_uitraild', { skip }, () => {});

const PRINT = process.env.UITRAIL_APG_PRINT === '1';
const EX = '/apg/patterns';
const FRUITS = 'Choose a Fruit · Apple · Banana · Blueberry · Boysenberry · Cherry · Cranberry · Durian · Eggplant · Fig · Grape · Guava · Huckleberry';

/** One pattern: its page, a mouse story and a keyboard story, each with
 *  the trace lines it must give (newest first, after the navigate line)
 *  and, while the sender does not give them yet, why. */
const PATTERNS = [
  {
    name: 'combobox_select_only', path: `${EX}/combobox/examples/combobox-select-only.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.locator('#combo1').click());
        await run.act(tab, () => page.getByRole('option', { name: 'Banana' }).click());
      },
      lines: [
        `closed listbox "Favorite Fruit": ${FRUITS}`,
        'click option "Banana" (selected) (list: Favorite Fruit)',
        'click combobox "Favorite Fruit" (expanded) → opened listbox "Favorite Fruit"',
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, '#combo1');
        await run.act(tab, () => page.keyboard.press('Enter'));
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowDown');
        await run.act(tab, () => page.keyboard.press('Enter'));
      },
      lines: [
        `closed listbox "Favorite Fruit": ${FRUITS}`,
        'click option "Banana" (selected) (list: Favorite Fruit)',
        'click combobox "Favorite Fruit" (expanded) → opened listbox "Favorite Fruit"',
      ],
    },
  },
  {
    name: 'combobox_autocomplete_list', path: `${EX}/combobox/examples/combobox-autocomplete-list.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.locator('#cb1-input').click());
        await page.keyboard.type('ala');
        await run.act(tab, () => page.getByRole('option', { name: 'Alaska' }).click());
        await run.act(tab, () => page.locator('#cb1-button').click());
        await pastDebounce(run, tab, page);
        await run.act(tab, () => page.locator('#cb1-button').click());
      },
      lines: [
        "closed listbox \"States\": Alaska",
        "click button \"States\" (not expanded)",
        "click button \"States\" (expanded) → opened listbox \"States\"",
        "closed listbox \"States\": Alabama · Alaska",
        "click option \"Alaska\" (list: States)",
        "typed 3 chars into combobox \"State\"",
        "click combobox \"State\" (expanded) → opened listbox \"States\"",
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, '#cb1-input');
        await page.keyboard.type('new');
        await page.keyboard.press('ArrowDown');
        await run.act(tab, () => page.keyboard.press('Enter'));
        await run.act(tab, () => page.keyboard.press('Tab'));
      },
      lines: [
        "typed 3 chars into combobox \"State\"",
        "closed listbox \"States\": New Hampshire · New Jersey · New Mexico · New York",
        "click option \"New Hampshire\" (list: States)",
        "opened listbox \"States\"",
      ],
    },
  },
  {
    name: 'listbox_scrollable', path: `${EX}/listbox/examples/listbox-scrollable.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.getByRole('option', { name: 'Curium' }).click());
      },
      lines: [
        "click option \"Curium\" (selected) (list: Transuranium elements:)",
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, '#ss_elem_list');
        await run.act(tab, () => page.keyboard.press('ArrowDown'));
        await run.act(tab, () => page.keyboard.press('ArrowDown'));
      },
      lines: [
        "click option \"Plutonium\" (selected) (list: Transuranium elements:)",
        "click option \"Neptunium\" (selected) (same list)",
      ],
    },
  },
  {
    name: 'menu_button', path: `${EX}/menu-button/examples/menu-button-actions.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.locator('#menubutton1').click());
        await run.act(tab, () => page.getByRole('menuitem', { name: 'Action 2' }).click());
      },
      lines: [
        "closed menu \"Actions\": Action 1 · Action 2 · Action 3 · Action 4",
        "click menuitem \"Action 2\" (menu: Actions)",
        "click button \"Actions\" (expanded) → opened menu \"Actions\"",
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, '#menubutton1');
        await run.act(tab, () => page.keyboard.press('Enter'));
        await page.keyboard.press('ArrowDown');
        await run.act(tab, () => page.keyboard.press('Enter'));
      },
      lines: [
        "closed menu \"Actions\": Action 1 · Action 2 · Action 3 · Action 4",
        "click menuitem \"Action 2\" (menu: Actions)",
        "click button \"Actions\" (expanded) → opened menu \"Actions\"",
      ],
    },
  },
  {
    name: 'menubar', path: `${EX}/menubar/examples/menubar-navigation.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.getByRole('menuitem', { name: 'About' }).click());
        await run.act(tab, () => page.getByRole('menuitem', { name: 'Overview' }).click());
      },
      lines: [
        "closed menu \"About\": Overview · Administration · Facts · Campus Tours",
        "click menuitem \"Overview\" (menu: About)",
        "click menuitem \"About\" (expanded) (menu: Mythical University) → opened menu \"About\"",
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, '.menubar-navigation [role="menuitem"]');
        await page.keyboard.press('ArrowRight');
        await run.act(tab, () => page.keyboard.press('ArrowDown'));
        await page.keyboard.press('ArrowDown');
        await run.act(tab, () => page.keyboard.press('Enter'));
      },
      lines: [
        "closed menu \"About\": Overview · Administration · Facts · Campus Tours",
        "click menuitem \"Administration\" (menu: About)",
        "opened menu \"About\"",
      ],
    },
  },
  {
    name: 'dialog', path: `${EX}/dialog-modal/examples/dialog.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.getByRole('button', { name: 'Add Delivery Address' }).click());
        await page.locator('#dialog1 .wide_input').first().fill(SENTINELS[1]);
        await run.act(tab, () => page.locator('#dialog1').getByRole('button', { name: 'Cancel' }).click());
      },
      lines: [
        "closed dialog \"Add Delivery Address\": For example, gate code or other information to help the driver find you",
        "click button \"Cancel\" (dialog: Add Delivery Address) → page changed",
        "typed 19 chars into textbox \"Street:\"",
        "click button \"Add Delivery Address\" → opened dialog \"Add Delivery Address\"",
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, 'button[onclick^="openDialog(\'dialog1\'"]');
        await run.act(tab, () => page.keyboard.press('Enter'));
        await page.keyboard.type(SENTINELS[1]);
        await run.act(tab, () => page.keyboard.press('Escape'));
      },
      lines: [
        "closed dialog \"Add Delivery Address\": For example, gate code or other information to help the driver find you",
        "typed 19 chars into textbox \"Street:\"",
        "click button \"Add Delivery Address\" → opened dialog \"Add Delivery Address\"",
      ],
    },
  },
  {
    name: 'grid', path: `${EX}/grid/examples/data-grids.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.locator('#ex2-grid [role="button"]', { hasText: 'Amount' }).click());
        await run.act(tab, () => page.locator('#ex1-grid').getByRole('link', { name: 'Down Town Grocery' }).click());
      },
      lines: [
        "click link \"Down Town Grocery\" → navigated (in-page anchor) to /apg/patterns/grid/examples/data-grids.html \"Data Grid Examples\"",
        "click button \"Amount\" → page changed",
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, '#ex1-grid');
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowRight');
        await page.keyboard.press('ArrowRight');
        await run.act(tab, () => page.keyboard.press('Enter'));
      },
      lines: [
        "click link \"Down Town Grocery\" → navigated (in-page anchor) to /apg/patterns/grid/examples/data-grids.html \"Data Grid Examples\"",
      ],
    },
  },
  {
    name: 'tabs', path: `${EX}/tabs/examples/tabs-automatic.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.getByRole('tab', { name: 'Carl Andersen' }).click());
      },
      lines: [
        "click tab \"Carl Andersen\" (selected) (tablist: Danish Composers)",
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, '[role="tab"][aria-selected="true"]');
        await run.act(tab, () => page.keyboard.press('ArrowRight'));
      },
      lines: [
        "click tab \"Carl Andersen\" (selected) (tablist: Danish Composers)",
      ],
    },
  },
  {
    name: 'disclosure', path: `${EX}/disclosure/examples/disclosure-faq.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.getByRole('button', { name: 'Is there free parking on holidays?' }).click());
      },
      lines: [
        "click button \"Is there free parking on holidays?\" (expanded)",
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, 'button[aria-controls="faq2_desc"]');
        await run.act(tab, () => page.keyboard.press('Enter'));
        await pastDebounce(run, tab, page);
        await run.act(tab, () => page.keyboard.press('Space'));
      },
      lines: [
        "click button \"What do I do if I lose my permit or if my permit is stolen?\" (not expanded)",
        "click button \"What do I do if I lose my permit or if my permit is stolen?\" (expanded)",
      ],
    },
  },
  {
    name: 'tree', path: `${EX}/treeview/examples/treeview-1b.html`,
    mouse: {
      async drive(run, tab, page) {
        await run.act(tab, () => page.getByRole('treeitem', { name: 'Projects' }).locator('span').first().click());
        await run.act(tab, () => page.getByRole('treeitem', { name: 'project-2.docx' }).click());
      },
      lines: [
        "click treeitem \"project-2.docx\" (selected)",
        "click treeitem \"Projects\" (expanded, selected)",
      ],
    },
    keyboard: {
      async drive(run, tab, page) {
        await tabTo(page, '[role="tree"]');
        await run.act(tab, () => page.keyboard.press('ArrowRight'));
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowDown');
        await run.act(tab, () => page.keyboard.press('Enter'));
      },
      lines: [
        "click treeitem \"project-2.docx\" (selected)",
      ],
    },
  },
];

describe('corpus: WAI-ARIA APG examples', { skip: skip || false }, () => {
  let run;
  const tabs = [];
  before(async () => { run = await startCorpus(); });
  after(async () => { await run?.close(); });

  for (const pattern of PATTERNS) {
    for (const how of ['mouse', 'keyboard']) {
      const story = pattern[how];
      test(`test_corpus_apg_${pattern.name}_${how}`, { todo: (!PRINT && story.todo) || false }, async () => {
        const tab = uniqueTab(`apg-${pattern.name}-${how}`);
        tabs.push(tab);
        const { page, consoleLines } = await run.open(pattern.path, tab);
        await run.until(tab, `navigate ${pattern.path}`);
        await run.stable(tab);
        await story.drive(run, tab, page);
        await run.stable(tab);
        const lines = (await run.lines(tab)).map((line) => line.replace(/^- HH:MM:SS /, ''));
        assert.match(lines.pop(), new RegExp(`^navigate ${pattern.path} "`));
        if (PRINT) {
          console.log(`== ${pattern.name} ${how}\n${JSON.stringify(lines, null, 2)}`);
          return;
        }
        assert.deepEqual(lines, story.lines, consoleLines.join('\n'));
        await page.close();
      });
    }
  }

  test('test_corpus_apg_json_links', async () => {
    for (const tab of tabs) assertJsonLinks(await run.json(tab), {});
  });

  test('test_corpus_apg_no_personal_data', async () => {
    for (const tab of tabs) await run.assertNoPii(tab, SENTINELS);
  });
});
