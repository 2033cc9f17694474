// The sender reports form validation messages (uitrail.invalid) when the
// page shows them, and before what the user does next: a message that
// opens from height 0 with a transition (rc-motion, Vue's <transition>)
// and changes nothing more in the DOM, and a message that a style sheet
// reveals without a DOM change, found at the flush of the user's next
// keystroke. Records go to window.records through onRecord.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, launchBrowser, startStaticServer } from './lib/harness.mjs';

const IMPORT_MAP = '<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>';

const FORM_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Refund</title>
<link rel="icon" href="data:,">${IMPORT_MAP}
<style id="sheet">
  .grow { height: 0; overflow: hidden; transition: height 1s linear; }
  .quiet { height: 0; overflow: hidden; }
</style>
</head><body>
<form id="form" novalidate>
  <div><label for="amount">Amount</label><input id="amount"><div id="amount-field"></div></div>
  <button id="grow" type="button">Refund</button>
  <button id="quiet" type="button">Refund quietly</button>
</form>
<script>
  const $ = (id) => document.getElementById(id);
  const message = (cls) => {
    $('amount').setAttribute('aria-invalid', 'true');
    const el = document.createElement('div');
    el.className = cls;
    el.textContent = 'Enter an amount';
    $('amount-field').append(el);
    return el;
  };
  // Opens from height 0: one style change a frame later, then only the
  // transition runs.
  $('grow').addEventListener('click', () => {
    const el = message('grow');
    requestAnimationFrame(() => requestAnimationFrame(() => { el.style.height = '20px'; }));
  });
  // Revealed later by the style sheet alone (CSSOM: no DOM mutation).
  $('quiet').addEventListener('click', () => {
    message('quiet');
    setTimeout(() => { $('sheet').sheet.cssRules[1].style.height = '20px'; window.revealed = true; }, 150);
  });
</script>
<script type="module">
  import uitrail from '/sender/uitrail.js';
  window.records = [];
  window.tracker = uitrail.start({
    url: 'http://127.0.0.1:9', transport: 'http',
    onRecord: (tag, record) => window.records.push({ tag, record: JSON.parse(JSON.stringify(record)) }),
  });
</script></body></html>`;

const skip = chromiumMissing();

describe('sender: validation messages as the page shows them', { skip: skip || false }, () => {
  let server;
  let browser;
  let page;

  before(async () => {
    server = await startStaticServer({ pages: { '/test/form.html': FORM_PAGE } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  /** Each test opens its own page: a fresh baseline and queue. */
  async function open() {
    page = await browser.newPage();
    await page.goto(`${server.origin}/test/form.html`);
    await page.waitForFunction(() => window.tracker && window.records.some((r) => r.tag === 'uitrail.nav'));
  }
  const records = () => page.evaluate(() => window.records);

  test('test_validation_message_growing_from_no_size_is_reported_as_it_opens', async () => {
    await open();
    await page.click('#grow');
    // The transition runs for a second; nothing else changes in the DOM.
    await page.waitForFunction(() => window.records.some((r) => r.tag === 'uitrail.invalid'), null, { timeout: 700 });
    const invalid = (await records()).filter((r) => r.tag === 'uitrail.invalid').map((r) => r.record.fields);
    assert.deepEqual(invalid, [[{ role: 'textbox', name: 'Amount', text: 'Enter an amount' }]]);
    await page.close();
  });

  test('test_validation_message_found_at_a_keystroke_goes_out_before_it', async () => {
    await open();
    await page.click('#quiet');
    await page.waitForFunction(() => window.revealed);
    await page.focus('#amount');
    await page.keyboard.type('3');
    await page.waitForFunction(() => window.records.some((r) => r.tag === 'uitrail.invalid'));
    const tags = (await records())
      .filter((r) => r.tag === 'uitrail.invalid' || (r.tag === 'uitrail.mutation' && r.record.input))
      .map((r) => r.tag);
    assert.deepEqual(tags.slice(0, 2), ['uitrail.invalid', 'uitrail.mutation']);
    await page.close();
  });
});
