// The sender's model of a user action, in real Chromium: a gesture (a
// press and its release, wherever the click lands; a key that activates a
// custom widget), attributed to the element it started on, ordered before
// whatever the page did in answer (whoever's handler ran first), sent at
// once, and marked with its actor. The widgets here take actions the way
// real libraries do (choose on mousedown, an invisible backdrop that takes
// the mouseup, a delegated capture handler on document, a custom select
// that sets its hidden native select). Records go to window.records
// through onRecord; the transport points at a closed port.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, launchBrowser, startStaticServer } from './lib/harness.mjs';

const IMPORT_MAP = '<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>';

const GESTURE_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Gestures</title>
<link rel="icon" href="data:,">${IMPORT_MAP}
<style>
  #backdrop { position: fixed; inset: 0; display: none; }
  #backdrop.on { display: block; }
  [role="listbox"], [role="dialog"], [role="menu"] { position: relative; z-index: 2; background: white; }
  [role="option"], button, [role="button"] { display: block; padding: 4px; margin: 2px; }
</style>
<script>
  // A CSS framework's delegated handler: on document, in the capture
  // phase, registered before the sender, opening its panel synchronously.
  document.addEventListener('click', (event) => {
    const toggle = event.target.closest && event.target.closest('[data-toggle="panel"]');
    if (toggle) document.getElementById('panel').hidden = false;
  }, true);
</script>
</head><body>
<main>
  <h1>Gestures</h1>
  <!-- A select that opens on mousedown; its backdrop takes the mouseup, so
       the click lands on the backdrop, not on the trigger. -->
  <div id="country" role="combobox" aria-haspopup="listbox" aria-expanded="false" tabindex="0" aria-label="Ship to country">France</div>
  <div id="country-list" role="listbox" aria-label="Countries" hidden>
    <div role="option" id="opt-fr">France</div><div role="option" id="opt-de">Germany</div>
  </div>
  <div id="backdrop"></div>
  <!-- A listbox that chooses on mousedown and goes away before any click. -->
  <button id="size" aria-haspopup="listbox">Size</button>
  <div id="size-list" role="listbox" aria-label="Sizes" hidden><div role="option" id="opt-l">Large</div></div>
  <!-- The framework's toggle and the panel it opens. -->
  <button id="cart" data-toggle="panel">Cart (2)</button>
  <div id="panel" role="dialog" aria-label="Your cart" hidden><p>Blue Widget × 1</p></div>
  <!-- A custom button and a listbox with an active descendant, for keys. -->
  <div id="archive" role="button" tabindex="0">Archive</div>
  <div id="fruit" role="listbox" tabindex="0" aria-label="Fruit" aria-activedescendant="fruit-b">
    <div role="option" id="fruit-a">Apple</div><div role="option" id="fruit-b">Banana</div>
  </div>
  <!-- A menu that stays open, and a button beside it. -->
  <div id="menu" role="menu" aria-label="More"><div role="menuitem">Export</div></div>
  <button id="beside">Refresh</button>
  <!-- A custom select over a hidden native one: it sets the native select
       and dispatches change itself, in answer to the user's click. -->
  <select id="native-status" aria-label="Status" hidden><option>Draft</option><option>Paid</option></select>
  <button id="status-paid">Mark paid</button>
  <button id="assist">Send reminder</button>
  <button id="scripted">Refresh totals</button>
</main>
<script>
  const $ = (id) => document.getElementById(id);
  $('country').addEventListener('mousedown', () => {
    $('country-list').hidden = false;
    $('country').setAttribute('aria-expanded', 'true');
    $('backdrop').classList.add('on');
  });
  $('backdrop').addEventListener('click', () => {
    $('country-list').hidden = true;
    $('country').setAttribute('aria-expanded', 'false');
    $('backdrop').classList.remove('on');
  });
  $('size').addEventListener('click', () => { $('size-list').hidden = false; });
  $('opt-l').addEventListener('mousedown', (event) => {
    event.preventDefault();
    $('size').textContent = 'Size: Large';
    $('size-list').hidden = true;
    $('size-list').remove();
  });
  $('archive').addEventListener('keydown', (event) => {
    if (event.key === 'Enter') { event.preventDefault(); $('archive').click(); }
  });
  $('archive').addEventListener('click', () => { $('archive').textContent = 'Archived'; });
  $('status-paid').addEventListener('click', () => {
    $('native-status').value = 'Paid';
    $('native-status').dispatchEvent(new Event('change', { bubbles: true }));
  });
</script>
<script type="module">
  import uitrail from '/sender/uitrail.js';
  window.records = [];
  window.tracker = uitrail.start({
    url: 'http://127.0.0.1:9', transport: 'http',
    onRecord: (tag, record) => window.records.push({ tag, record: JSON.parse(JSON.stringify(record)), at: performance.now() }),
  });
</script></body></html>`;

const skip = chromiumMissing();

describe('sender: gestures', { skip: skip || false }, () => {
  let server;
  let browser;
  let page;

  before(async () => {
    server = await startStaticServer({ pages: { '/test/gestures.html': GESTURE_PAGE } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Opens the page afresh; records start empty of actions. */
  async function open() {
    page = await browser.newPage();
    await page.goto(`${server.origin}/test/gestures.html`);
    await page.waitForFunction(() => window.tracker && window.records.some((r) => r.tag === 'uitrail.nav'));
  }
  /** The records of `tag` once `count` of them are there. */
  async function recordsOf(tag, count) {
    await page.waitForFunction(([t, n]) => window.records.filter((r) => r.tag === t).length >= n, [tag, count]);
    return (await page.evaluate(() => window.records)).filter((r) => r.tag === tag).map((r) => r.record);
  }

  test('test_gesture_click_on_a_backdrop_is_the_pressed_trigger_s', async () => {
    await open();
    await page.click('#country'); // Opens on mousedown; the click lands on the backdrop.
    const [click] = await recordsOf('uitrail.click', 1);
    assert.deepEqual([click.role, click.name], ['combobox', 'Ship to country']);
    const [opened] = await recordsOf('uitrail.dialog', 1);
    assert.deepEqual([opened.state, opened.name], ['open', 'Countries']);
    assert.ok(click.seq < opened.seq, 'the listbox the press opened comes after the press');
    await page.close();
  });

  test('test_gesture_option_chosen_on_mousedown_is_recorded', async () => {
    await open();
    await page.click('#size');
    await recordsOf('uitrail.dialog', 1);
    await page.click('#opt-l'); // Chosen and gone on mousedown: the click lands elsewhere.
    const clicks = await recordsOf('uitrail.click', 2);
    assert.deepEqual(clicks.map((c) => [c.role, c.name]), [['button', 'Size'], ['option', 'Large']]);
    assert.deepEqual(clicks[1].ctx, { kind: 'list', name: 'Sizes' }, 'named as it was when pressed');
    await page.close();
  });

  test('test_gesture_outcome_of_a_handler_that_ran_first_comes_after', async () => {
    await open();
    await page.click('#cart');
    const [opened] = await recordsOf('uitrail.dialog', 1);
    const [click] = await recordsOf('uitrail.click', 1);
    assert.equal(opened.name, 'Your cart');
    assert.equal(click.name, 'Cart (2)');
    assert.ok(click.seq < opened.seq, `the panel (seq ${opened.seq}) answers the click (seq ${click.seq})`);
    await page.close();
  });

  test('test_gesture_keys_activate_custom_widgets', async () => {
    await open();
    await page.focus('#archive');
    await page.keyboard.press('Enter'); // The widget answers with archive.click(): one action.
    await page.focus('#fruit');
    await page.keyboard.press('Enter');
    const clicks = await recordsOf('uitrail.click', 2);
    await page.evaluate(() => new Promise((done) => setTimeout(done, 50)));
    const all = (await page.evaluate(() => window.records)).filter((r) => r.tag === 'uitrail.click').map((r) => r.record);
    assert.deepEqual(all.map((c) => [c.role, c.name, c.trusted]), [
      ['button', 'Archive', undefined], ['option', 'Banana', undefined],
    ], JSON.stringify(clicks));
    await page.close();
  });

  test('test_gesture_click_beside_an_open_menu_is_not_held', async () => {
    await open();
    // The menu stays open. The page notes how many clicks the sender had
    // completed when its own timer, started by the click, fires.
    await page.evaluate(() => {
      document.getElementById('beside').addEventListener('click', () => {
        setTimeout(() => { window.clicksAtTimer = window.records.filter((r) => r.tag === 'uitrail.click').length; }, 150);
      });
    });
    await page.click('#beside');
    await page.waitForFunction(() => window.clicksAtTimer !== undefined);
    assert.equal(await page.evaluate(() => window.clicksAtTimer), 1, 'the click was complete before the page\'s 150 ms timer');
    await page.close();
  });

  test('test_gesture_actor_user_script_assistant', async () => {
    await open();
    await page.click('#status-paid'); // The custom select answers the user's click.
    await page.evaluate(() => window.tracker.actor('assistant', () => document.getElementById('assist').click()));
    await page.evaluate(() => setTimeout(() => document.getElementById('scripted').click(), 10));
    const clicks = await recordsOf('uitrail.click', 3);
    const [change] = await recordsOf('uitrail.change', 1);
    assert.deepEqual([change.name, change.value, change.trusted, change.actor], ['Status', 'Paid', undefined, undefined],
      'the change the page made in answer to the user is the user\'s');
    assert.deepEqual(clicks.map((c) => [c.name, c.trusted, c.actor]), [
      ['Mark paid', undefined, undefined], ['Send reminder', undefined, 'assistant'], ['Refresh totals', false, undefined],
    ]);
    const refused = await page.evaluate(() => { try { window.tracker.actor('robot', () => {}); return 'ran'; } catch (e) { return e.name; } });
    assert.equal(refused, 'TypeError');
    await page.close();
  });
});
