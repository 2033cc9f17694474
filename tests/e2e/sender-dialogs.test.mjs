// The sender reads dialogs, names and snapshots the way the accessibility
// tree has them, on widgets built the way real libraries build them: a
// menu host that stays displayed while its surface inside its shadow root
// is hidden, an offcanvas that loses its role and goes visibility:hidden,
// a closed popover, a dialog whose content is gone during its exit
// transition, a modal alert that is also a live region, a web component's
// <button role="listitem">, a custom select that took its native select's
// label. Records go to window.records through onRecord.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromiumMissing, launchBrowser, startStaticServer } from './lib/harness.mjs';

const IMPORT_MAP = '<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>';

const DIALOGS_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Dialogs</title>
<link rel="icon" href="data:,">${IMPORT_MAP}
<style>
  .offcanvas { position: fixed; top: 0; right: 0; width: 200px; height: 200px; visibility: hidden; }
  .offcanvas.show { visibility: visible; }
  .d-none { display: none !important; }
  .visually-gone { display: none; }
</style>
<script>
  // A menu as a web component: the host keeps role=listbox and stays
  // displayed; its surface inside the shadow root is shown or hidden.
  customElements.define('x-menu', class extends HTMLElement {
    constructor() {
      super();
      this.attachShadow({ mode: 'open' }).innerHTML =
        '<div part="surface" style="display:none"><slot></slot></div>';
    }
    set open(on) { this.shadowRoot.firstElementChild.style.display = on ? 'block' : 'none'; }
  });
  // A list whose items are native buttons given role=listitem.
  customElements.define('x-list', class extends HTMLElement {
    constructor() {
      super();
      this.attachShadow({ mode: 'open' }).innerHTML =
        '<div role="list" aria-label="Invoices"><button role="listitem" id="inv">INV-9 Ann Lee</button></div>';
    }
  });
</script>
</head><body>
<main>
  <button id="menu-trigger" aria-haspopup="listbox">Sort by</button>
  <x-menu id="menu" role="listbox" aria-label="Sort options"><div role="option">Newest</div><div role="option">Oldest</div></x-menu>
  <button id="cart">Cart</button>
  <div id="offcanvas" class="offcanvas" tabindex="-1" aria-label="Your cart">
    <p>Blue Widget × 1</p>
    <div class="d-none"><label><input type="checkbox"> Express shipping</label></div>
    <label><input type="checkbox" checked><span aria-hidden="true"></span></label>
    <label><input class="visually-gone" type="checkbox"> Gift wrap</label>
    <button id="offcanvas-close">Close</button>
  </div>
  <div id="tip" popover aria-label="Hint" role="tooltip">Press S to search</div>
  <button id="details">Details</button>
  <div id="react-host"></div>
  <button id="swal">Delete</button>
  <x-list></x-list>
  <label for="country-ts-control">Ship to country</label>
  <select id="country" placeholder="Pick a country…" style="display:none"><option value="">Pick a country…</option><option>France</option></select>
  <input id="country-ts-control" role="combobox" aria-expanded="false">
  <button id="pick-france">France</button>
  <div id="swap"></div>
  <ul role="tree" aria-label="Files"><li role="treeitem" id="folder" aria-expanded="true"><span>Projects</span>
    <ul role="group"><li role="treeitem">project-1.docx</li><li role="treeitem">project-2.docx</li></ul></li></ul>
  <table role="grid" aria-label="Transactions"><thead><tr><th aria-sort="none"><span role="button" id="sort-amount" tabindex="0">Amount</span></th></tr></thead>
    <tbody><tr><td>$10.00</td></tr></tbody></table>
</main>
<script>
  const $ = (id) => document.getElementById(id);
  $('menu-trigger').addEventListener('click', () => { $('menu').open = true; });
  $('menu').addEventListener('click', () => { $('menu').open = false; });
  // The framework's offcanvas: role and aria-modal only while shown.
  $('cart').addEventListener('click', () => {
    $('offcanvas').setAttribute('role', 'dialog');
    $('offcanvas').setAttribute('aria-modal', 'true');
    $('offcanvas').classList.add('show');
  });
  $('offcanvas-close').addEventListener('click', () => {
    $('offcanvas').classList.remove('show');
    $('offcanvas').removeAttribute('role');
    $('offcanvas').removeAttribute('aria-modal');
  });
  // A dialog rendered only while open; on close its content goes at once
  // and the empty frame stays for its exit transition.
  $('details').addEventListener('click', () => {
    $('react-host').innerHTML = '<div role="dialog" aria-label="Order 4411" id="rd"><p>Total: $120.00</p><p>Status: Paid</p><button id="rd-close">Close</button></div>';
    $('rd-close').addEventListener('click', () => {
      $('rd').replaceChildren();
      $('rd').style.height = '20px';
      setTimeout(() => { $('react-host').replaceChildren(); }, 150);
    });
  });
  // A modal-alert library's popup: role=dialog and aria-live at once.
  $('swal').addEventListener('click', () => {
    const popup = document.createElement('div');
    popup.setAttribute('role', 'dialog');
    popup.setAttribute('aria-live', 'assertive');
    popup.setAttribute('aria-label', 'Are you sure?');
    popup.innerHTML = '<p>This cannot be undone.</p>';
    document.body.append(popup);
  });
  $('pick-france').addEventListener('click', () => {
    $('country').value = 'France';
    $('country').dispatchEvent(new Event('change', { bubbles: true }));
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

describe('sender: dialogs as the accessibility tree has them', { skip: skip || false }, () => {
  let server;
  let browser;
  let page;

  before(async () => {
    server = await startStaticServer({ pages: { '/test/dialogs.html': DIALOGS_PAGE } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function open() {
    page = await browser.newPage();
    await page.goto(`${server.origin}/test/dialogs.html`);
    await page.waitForFunction(() => window.tracker && window.records.some((r) => r.tag === 'uitrail.nav'));
  }
  async function recordsOf(tag, count) {
    await page.waitForFunction(([t, n]) => window.records.filter((r) => r.tag === t).length >= n, [tag, count]);
    return (await page.evaluate(() => window.records)).filter((r) => r.tag === tag).map((r) => r.record);
  }
  const dialogLine = (d) => [d.state, d.role, d.name, d.text];

  test('test_dialogs_menu_host_with_hidden_surface_opens_and_closes', async () => {
    await open();
    await page.click('#menu-trigger');
    await page.click('#menu [role="option"]');
    const dialogs = await recordsOf('uitrail.dialog', 2);
    assert.deepEqual(dialogs.map(dialogLine), [
      ['open', 'listbox', 'Sort options', 'Newest · Oldest'],
      ['close', 'listbox', 'Sort options', 'Newest · Oldest'],
    ]);
    await page.close();
  });

  test('test_dialogs_offcanvas_losing_its_role_closes_and_snapshot_skips_hidden', async () => {
    await open();
    await page.click('#cart');
    await recordsOf('uitrail.dialog', 1);
    await page.click('#offcanvas-close');
    const dialogs = await recordsOf('uitrail.dialog', 2);
    // The hidden row and the CSS-hidden check box are not read; the box
    // with an empty label gives no ": checked".
    assert.deepEqual(dialogs.map(dialogLine), [
      ['open', 'dialog', 'Your cart', 'Blue Widget × 1'],
      ['close', 'dialog', 'Your cart', 'Blue Widget × 1'],
    ]);
    await page.close();
  });

  test('test_dialogs_closing_dialog_keeps_its_last_contents', async () => {
    await open();
    await page.click('#details');
    await recordsOf('uitrail.dialog', 1);
    await page.click('#rd-close');
    const dialogs = await recordsOf('uitrail.dialog', 2);
    await page.evaluate(() => new Promise((done) => setTimeout(done, 300)));
    const all = (await page.evaluate(() => window.records)).filter((r) => r.tag === 'uitrail.dialog').map((r) => r.record);
    assert.deepEqual(all.map(dialogLine), [
      ['open', 'dialog', 'Order 4411', 'Total: $120.00 · Status: Paid'],
      ['close', 'dialog', 'Order 4411', 'Total: $120.00 · Status: Paid'],
    ], JSON.stringify(dialogs));
    await page.close();
  });

  test('test_dialogs_modal_alert_is_a_dialog_only_and_closed_popover_is_not_open', async () => {
    await open();
    await page.click('#swal');
    const [opened] = await recordsOf('uitrail.dialog', 1);
    assert.deepEqual(dialogLine(opened), ['open', 'dialog', 'Are you sure?', 'This cannot be undone.']);
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 100))));
    const records = await page.evaluate(() => window.records);
    assert.equal(records.filter((r) => r.tag === 'uitrail.alert').length, 0, 'no alert for the dialog');
    assert.equal(records.filter((r) => r.tag === 'uitrail.dialog').length, 1, 'the closed popover was never open');
    await page.close();
  });

  test('test_dialogs_native_button_with_other_role_and_stand_in_label', async () => {
    await open();
    await page.click('#inv');
    await page.click('#pick-france');
    const clicks = await recordsOf('uitrail.click', 2);
    assert.deepEqual([clicks[0].role, clicks[0].name, clicks[0].ctx], ['button', 'INV-9 Ann Lee', { kind: 'list', name: 'Invoices' }]);
    const [change] = await recordsOf('uitrail.change', 1);
    assert.deepEqual([change.role, change.name, change.value], ['combobox', 'Ship to country', 'France']);
    await page.close();
  });

  test('test_dialogs_history_restore_is_not_a_new_alert', async () => {
    await open();
    // A server-driven library: a boosted navigation shows a flash; Back
    // swaps the cached page back in, flash included.
    await page.evaluate(() => {
      const show = (html) => { document.getElementById('swap').innerHTML = html; };
      window.addEventListener('popstate', () => show('<div role="status">Saved Ann Lee</div>'));
      show('<div role="status">Saved Ann Lee</div>');
      history.pushState({}, '', '?contact=1');
      setTimeout(() => show('<p>Contact</p>'), 50);
    });
    await recordsOf('uitrail.alert', 1);
    await page.waitForFunction(() => !document.querySelector('#swap [role="status"]'));
    await page.evaluate(() => new Promise((done) => setTimeout(done, 100)));
    await page.goBack();
    await page.waitForFunction(() => document.querySelector('#swap [role="status"]'));
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 200))));
    const alerts = (await page.evaluate(() => window.records)).filter((r) => r.tag === 'uitrail.alert');
    assert.equal(alerts.length, 1, JSON.stringify(alerts));
    await page.close();
  });

  test('test_dialogs_tree_item_own_label_and_header_sort_button', async () => {
    await open();
    await page.click('#folder > span');
    await page.click('#sort-amount');
    const clicks = await recordsOf('uitrail.click', 2);
    assert.deepEqual(clicks.map((c) => [c.role, c.name]), [['treeitem', 'Projects'], ['button', 'Amount']]);
    await page.close();
  });
});
