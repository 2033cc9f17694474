// The sender in real Chromium, against a capture server that decodes what
// it sends: records, transports, acks, reconnects, privacy. These run
// without the daemon; daemon.test.mjs runs the same page against uitraild.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  chromiumMissing, launchBrowser, sleep, startStaticServer, waitFor,
} from './lib/harness.mjs';

const IMPORT_MAP = '<script type="importmap">{"imports":{"@msgpack/msgpack":"/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs"}}</script>';

// A page of small cases for names, roles, context and sensitivity. The
// sender reports into window.records through onRecord; its transport points
// at a closed port, so nothing leaves the page.
const CASES_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Cases</title>
<link rel="icon" href="data:,">${IMPORT_MAP}</head><body>
<main>
  <button id="labelledby" aria-labelledby="l1 l2">x</button><span id="l1">Delete</span> <span id="l2">order</span>
  <button id="aria-label" aria-label="Close dialog">×</button>
  <label for="label-for">Email address</label><input id="label-for" value="typed@example.com">
  <label>Quantity <input id="label-wrap" type="number" value="987654321"></label>
  <a id="alt" href="#"><img alt="Home page" src="data:,"></a>
  <button id="title" title="Settings"><i>\uE8B8</i></button>
  <input id="placeholder" placeholder="Search orders" value="private query">
  <input id="value-only" value="only a value">
  <button id="private-use">\uE001 Save \uF8FF</button>
  <div id="aria-role" role="button" tabindex="0">Archive</div>
  <input id="submit" type="submit" value="Send">
  <span id="plain">not actionable</span>
  <div data-no-track><button id="no-track">Hidden action</button></div>
  <table><tr><td>Row A</td><td><button id="row-not-opted">Open A</button></td></tr></table>
  <table data-track-row-context="true"><tr><td>Alpha</td><td data-no-track>skipped cell</td><td>$1.00</td><td><button id="row-opted">Open</button></td></tr></table>
  <div role="toolbar" aria-label="Formatting"><button id="in-toolbar">Bold</button></div>
  <fieldset><legend>Shipping</legend><input type="radio" id="express" name="ship"><label for="express">Express</label></fieldset>
  <input id="otp" autocomplete="one-time-code" aria-label="Code">
  <input id="card" autocomplete="billing cc-number" aria-label="Card">
  <div data-sensitive><button id="sensitive-subtree">Reveal balance</button></div>
  <input id="password" type="password" aria-label="Password">
  <button id="expand" aria-expanded="false">Menu</button>
  <input id="choice" type="checkbox" aria-label="Subscribe">
  <select id="select" aria-label="Status"><option>Draft</option><option>Published</option></select>
  <input id="tracked" data-track-value aria-label="Coupon">
  <input id="free-text" aria-label="Notes">
  <aside data-uitrail-ignore><button id="ignored">Assistant</button></aside>
</main>
<script>
  document.getElementById('expand').addEventListener('click', (event) => {
    event.currentTarget.setAttribute('aria-expanded', 'true');
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

// Each row: element id, then the click record expected (null: no record).
const CLICK_CASES = [
  ['labelledby', { role: 'button', name: 'Delete order' }],
  ['aria-label', { role: 'button', name: 'Close dialog' }],
  ['label-for', { role: 'textbox', name: 'Email address' }],
  ['label-wrap', { role: 'spinbutton', name: 'Quantity' }],
  ['alt', { role: 'link', name: 'Home page' }],
  ['title', { role: 'button', name: 'Settings' }],
  ['placeholder', { role: 'textbox', name: 'Search orders' }],
  ['value-only', null],
  ['private-use', { role: 'button', name: 'Save' }],
  ['aria-role', { role: 'button', name: 'Archive' }],
  ['submit', { role: 'button', name: 'Send' }],
  ['plain', null],
  ['no-track', null],
  ['ignored', null],
  ['row-not-opted', { role: 'button', name: 'Open A', ctx: undefined }],
  ['row-opted', { role: 'button', name: 'Open', ctx: { kind: 'row', cells: ['Alpha', '$1.00'] } }],
  ['in-toolbar', { role: 'button', name: 'Bold', ctx: { kind: 'toolbar', name: 'Formatting' } }],
  ['express', { role: 'radio', name: 'Express', ctx: { kind: 'group', name: 'Shipping' }, state: { checked: true } }],
  ['otp', { role: 'textbox', sens: true }],
  ['card', { role: 'textbox', sens: true }],
  ['sensitive-subtree', { role: 'button', sens: true }],
  ['password', { role: 'textbox', sens: true }],
  ['expand', { role: 'button', name: 'Menu', state: { expanded: true } }],
  ['choice', { role: 'checkbox', name: 'Subscribe', state: { checked: true } }],
];

// An SPA shell with an empty main landmark and no loading marker: the
// data fills it 400 ms after the sender started, unless ?stay (it stays
// empty). Records go to window.records as on CASES_PAGE.
const EMPTY_MAIN_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Shell</title>
<link rel="icon" href="data:,">${IMPORT_MAP}</head><body>
<nav><a href="#">Home</a></nav>
<main id="main">  </main>
<script type="module">
  import uitrail from '/sender/uitrail.js';
  window.records = [];
  window.tracker = uitrail.start({
    url: 'http://127.0.0.1:9', transport: 'http',
    onRecord: (tag, record) => window.records.push({ tag, record: JSON.parse(JSON.stringify(record)), at: performance.now() }),
  });
  if (!location.search.includes('stay')) {
    setTimeout(() => { document.getElementById('main').innerHTML = '<h2>Customers</h2><p>8 customers</p>'; }, 400);
  }
</script></body></html>`;
// A page whose load handler adds an image, served ?img=N ms later (none
// without ?img): the document is loaded with nothing pending only once
// that image is. The page notes when its load event and the image came.
const LOADED_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Loaded</title>
<link rel="icon" href="data:,">${IMPORT_MAP}</head><body>
<main><h1>Loaded</h1><p>A page with an image its load handler adds.</p><img id="late" alt=""></main>
<script>
  window.addEventListener('load', () => {
    window.loadAt = performance.now();
    const ms = new URLSearchParams(location.search).get('img');
    if (ms === null) return;
    const img = document.getElementById('late');
    img.addEventListener('load', () => { window.imageAt = performance.now(); });
    img.src = '/test/slow.svg?ms=' + ms;
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

/** A tiny SVG image, sent ?ms=N milliseconds after it was asked for. */
function slowImage(url, response) {
  setTimeout(() => {
    response.writeHead(200, { 'content-type': 'image/svg+xml', 'cache-control': 'no-store' });
    response.end('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>');
  }, Number(url.searchParams.get('ms')) || 0);
}

const isLoaded = (r) => r.tag === 'uitrail.mutation' && r.record.loaded === true;
const skip = chromiumMissing();

describe('sender', { skip: skip || false }, () => {
  let server;
  let browser;

  before(async () => {
    server = await startStaticServer({
      capture: true,
      config: { transport: 'websocket', ingestToken: 'ingest-secret-1' },
      pages: {
        '/test/cases.html': CASES_PAGE, '/test/empty-main.html': EMPTY_MAIN_PAGE,
        '/test/loaded.html': LOADED_PAGE, '/test/slow.svg': slowImage,
      },
    });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Opens the demo with a fresh tab id and waits for the table data. */
  async function openDemo(query = '') {
    const page = await browser.newPage();
    await page.goto(`${server.origin}/demo/${query}`);
    await page.waitForFunction(() => window.uitrailDemo?.dataRenderedAt > 0 && window.uitrailDemo.tracker);
    const tab = await page.evaluate(() => window.uitrailDemo.tracker.tab);
    return { page, tab };
  }

  const recordsOf = (tab, tag) => server.records.filter((entry) => entry.record.tab === tab && (!tag || entry.tag === tag));

  async function closePage(page) {
    await page.close();
  }

  test('test_sender_names_roles_and_context', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.origin}/test/cases.html`);
    await page.waitForFunction(() => window.tracker);
    for (const [id, expected] of CLICK_CASES) {
      const before = await page.evaluate(() => window.records.length);
      await page.click(`#${id}`);
      await sleep(20);
      const clicks = await page.evaluate((from) => window.records.slice(from).filter((r) => r.tag === 'uitrail.click'), before);
      if (expected === null) {
        assert.equal(clicks.length, 0, `#${id} must not be reported, got ${JSON.stringify(clicks)}`);
        continue;
      }
      assert.equal(clicks.length, 1, `#${id}: one click record`);
      const { record } = clicks[0];
      assert.equal(record.role, expected.role, `#${id} role`);
      if (expected.sens) {
        assert.equal(record.sens, true, `#${id} sensitive`);
        assert.equal(record.name, undefined, `#${id}: a sensitive element has no name`);
        assert.equal(record.ctx, undefined, `#${id}: a sensitive element has no context`);
        continue;
      }
      assert.equal(record.name, expected.name, `#${id} name`);
      if ('ctx' in expected) assert.deepEqual(record.ctx, expected.ctx, `#${id} ctx`);
      if ('state' in expected) assert.deepEqual(record.state, expected.state, `#${id} state`);
      assert.match(record.el, /^e[0-9a-z]+$/);
    }
    const all = JSON.stringify(await page.evaluate(() => window.records));
    for (const typed of ['typed@example.com', 'private query', 'only a value', '987654321']) {
      assert.ok(!all.includes(typed), `an input's value (${typed}) must never be sent`);
    }
    await closePage(page);
  });

  test('test_sender_change_sends_values_only_for_choices', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.origin}/test/cases.html`);
    await page.waitForFunction(() => window.tracker);
    await page.selectOption('#select', 'Published');
    await page.fill('#tracked', 'SPRING10');
    await page.fill('#free-text', 'call me at 555 0100 😀');
    await page.fill('#password', 'pw-never-sent');
    await page.click('#expand'); // Blurs the last field, which fires its change.
    await page.evaluate(() => { // A change no click caused is reported.
      const box = document.getElementById('choice');
      box.checked = true;
      box.dispatchEvent(new Event('change', { bubbles: true }));
    });
    await sleep(50);
    const changes = (await page.evaluate(() => window.records)).filter((r) => r.tag === 'uitrail.change').map((r) => r.record);
    const byName = (name) => changes.find((record) => record.name === name);
    assert.equal(byName('Status').value, 'Published');
    assert.equal(byName('Coupon').value, 'SPRING10');
    assert.equal(byName('Notes').value, undefined, 'free text is never sent');
    assert.equal(byName('Notes').len, 21, 'the length counts characters, an emoji as one');
    assert.equal(byName('Subscribe').checked, true);
    const password = changes.find((record) => record.sens);
    assert.ok(password, 'the password change is reported as sensitive');
    assert.equal(password.name, undefined);
    assert.equal(password.len, undefined, 'not even the length of a secret is sent');
    assert.ok(!JSON.stringify(changes).includes('pw-never-sent'));
    await closePage(page);
  });

  test('test_sender_blue_widget_story_records', async () => {
    const { page, tab } = await openDemo();
    await page.click('text=Blue Widget');
    await waitFor(() => recordsOf(tab, 'uitrail.dialog').length >= 1, 3000, 'dialog open');
    await page.keyboard.press('Escape');
    await waitFor(() => recordsOf(tab, 'uitrail.dialog').length >= 2, 3000, 'dialog close');
    const row = page.locator('tr', { hasText: 'Blue Widget' });
    await row.getByRole('button', { name: 'Edit Item' }).click();
    await waitFor(() => recordsOf(tab, 'uitrail.dialog').length >= 3, 3000, 'edit dialog');

    const cells = ['Blue Widget', 'SKU-1234', '$24.99', 'Published'];
    const clicks = recordsOf(tab, 'uitrail.click').map((entry) => entry.record);
    assert.deepEqual(clicks.map((c) => [c.role, c.name, c.ctx]), [
      ['link', 'Blue Widget', { kind: 'row', cells }],
      ['button', 'Edit Item', { kind: 'row', cells }],
    ]);
    const dialogs = recordsOf(tab, 'uitrail.dialog').map((entry) => entry.record);
    assert.deepEqual(dialogs.map((d) => [d.state, d.role, d.name, d.text]), [
      ['open', 'dialog', 'Blue Widget', 'Price: $24.99 · Status: Published'],
      ['close', 'dialog', 'Blue Widget', 'Price: $24.99 · Status: Published'],
      ['open', 'dialog', 'Edit Blue Widget', 'Status: Published'],
    ]);
    assert.equal(dialogs[0].el, dialogs[1].el, 'open and close name the same element');
    const nav = recordsOf(tab, 'uitrail.nav')[0].record;
    assert.equal(nav.how, 'load');
    assert.equal(new URL(nav.url).pathname, '/demo/');
    assert.equal(nav.title, 'Catalog');
    assert.equal(nav.tz, await page.evaluate(() => -new Date().getTimezoneOffset() || 0));
    const times = recordsOf(tab).map((entry) => entry.time);
    const now = Date.now();
    assert.ok(times.every((time) => time > now - 60000 && time <= now + 1000), 'EventTime carries the wall clock');
    await closePage(page);
  });

  test('test_sender_element_keys_are_stable', async () => {
    const { page, tab } = await openDemo();
    for (let i = 0; i < 2; i++) {
      await page.click('text=Blue Widget');
      await page.keyboard.press('Escape');
    }
    await page.click('text=Red Gadget');
    await waitFor(() => recordsOf(tab, 'uitrail.click').length >= 3, 3000, 'three clicks');
    const keys = recordsOf(tab, 'uitrail.click').map((entry) => entry.record.el);
    assert.equal(keys[0], keys[1], 'the same element keeps its key');
    assert.notEqual(keys[0], keys[2], 'another element has another key');
    await closePage(page);
  });

  test('test_sender_secret_never_leaves_the_page', async () => {
    const { page, tab } = await openDemo();
    const secret = `S3cret-${Math.random().toString(36).slice(2)}`;
    const card = '4111111111111111';
    await page.locator('tr', { hasText: 'Blue Widget' }).getByRole('button', { name: 'Edit Item' }).click();
    await page.fill('#edit-secret', secret.slice(0, 6));
    await page.click('#edit-secret-toggle'); // The field becomes type=text.
    await page.click('#edit-secret');
    await page.fill('#edit-secret', secret);
    await page.fill('#edit-card', card);
    await page.click('#edit-save');
    await waitFor(() => recordsOf(tab, 'uitrail.alert').length >= 1, 3000, 'saved toast');
    await sleep(100);
    const secretRecords = recordsOf(tab).filter((entry) =>
      (entry.tag === 'uitrail.click' || entry.tag === 'uitrail.change') && entry.record.sens);
    assert.ok(secretRecords.length >= 3, 'the secret and card fields are reported as sensitive');
    for (const { record } of secretRecords) {
      assert.equal(record.name, undefined);
      assert.equal(record.ctx, undefined);
      assert.equal(record.value, undefined);
    }
    const text = Buffer.concat(server.state.payloads).toString('latin1');
    assert.ok(!text.includes(secret) && !text.includes(secret.slice(0, 6)), 'the secret is in no byte sent');
    assert.ok(!text.includes(card), 'the card number is in no byte sent');
    assert.equal(recordsOf(tab, 'uitrail.alert')[0].record.text, 'Saved Blue Widget');
    await closePage(page);
  });

  test('test_sender_shadow_root_click', async () => {
    const { page, tab } = await openDemo();
    await page.click('text=Contact support');
    await waitFor(() => recordsOf(tab, 'uitrail.alert').length >= 1, 3000, 'support toast');
    const click = recordsOf(tab, 'uitrail.click')[0].record;
    assert.equal(click.role, 'button');
    assert.equal(click.name, 'Contact support');
    assert.deepEqual(click.ctx, { kind: 'region', name: 'Help' });
    assert.equal(recordsOf(tab, 'uitrail.alert')[0].record.text, 'Support will contact you shortly');
    await closePage(page);
  });

  test('test_sender_filter_chips_burst', async () => {
    const { page, tab } = await openDemo();
    const chips = ['Active', 'Draft', 'Retired', 'Archived', 'Pending review', 'Approved', 'Rejected', 'Scheduled'];
    for (const chip of chips) await page.click(`label.chip:has-text("${chip}")`);
    await waitFor(() => recordsOf(tab, 'uitrail.click').length >= chips.length, 3000, 'chip clicks');
    const clicks = recordsOf(tab, 'uitrail.click').map((entry) => entry.record);
    assert.deepEqual(clicks.map((c) => c.name), chips, 'a click on a chip label is reported once, on its checkbox');
    assert.equal(recordsOf(tab, 'uitrail.change').length, 0,
      'the change a click causes on a checkbox is not sent: the click carries state.checked');
    for (const click of clicks) {
      assert.equal(click.role, 'checkbox');
      assert.deepEqual(click.ctx, { kind: 'group', name: 'Lifecycle filter' });
      assert.deepEqual(click.state, { checked: true });
    }
    await closePage(page);
  });

  test('test_sender_spa_navigation', async () => {
    const { page, tab } = await openDemo();
    await page.click('nav >> text=Settings');
    await waitFor(() => recordsOf(tab, 'uitrail.nav').length >= 2, 3000, 'push navigation');
    await page.goBack();
    await waitFor(() => recordsOf(tab, 'uitrail.nav').length >= 3, 3000, 'back navigation');
    await page.evaluate(() => { location.hash = '#section'; });
    await waitFor(() => recordsOf(tab, 'uitrail.nav').length >= 4, 3000, 'hash navigation');
    const navs = recordsOf(tab, 'uitrail.nav').map((entry) => entry.record);
    assert.deepEqual(navs.map((nav) => [nav.how, new URL(nav.url).pathname + new URL(nav.url).hash, nav.title]), [
      ['load', '/demo/', 'Catalog'],
      ['push', '/demo/settings', 'Settings'],
      ['pop', '/demo/', 'Catalog'],
      ['hash', '/demo/#section', 'Catalog'],
    ]);
    const click = recordsOf(tab, 'uitrail.click')[0].record;
    assert.deepEqual([click.role, click.name, click.ctx], ['link', 'Settings', { kind: 'navigation', name: 'Main' }]);
    await closePage(page);
  });

  test('test_sender_empty_main_is_loading', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.origin}/test/empty-main.html`);
    // (The record that the document loaded is not one of them.)
    await page.waitForFunction(() => window.records?.filter((r) => r.tag === 'uitrail.mutation' && !r.record.loaded).length >= 2, null, { timeout: 3000 });
    const [initial, filled] = await page.evaluate(() => window.records.filter((r) => r.tag === 'uitrail.mutation' && !r.record.loaded).map((r) => r.record));
    assert.equal(initial.busy, 1, 'the empty main landmark counts as a loading indicator');
    assert.ok(filled.recs.length > 0);
    assert.equal(filled.busy, 0, 'not loading once the main landmark has content');
    await page.close();
  });

  test('test_sender_empty_main_stops_counting', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.origin}/test/empty-main.html?stay`);
    // EMPTY_MAIN_MAX_MS (5000) after the page started, a record says the
    // main landmark, still empty, no longer counts.
    await page.waitForFunction(() => window.records?.filter((r) => r.tag === 'uitrail.mutation' && !r.record.loaded).length >= 2, null, { timeout: 8000 });
    const mutations = await page.evaluate(() => window.records.filter((r) => r.tag === 'uitrail.mutation' && !r.record.loaded));
    assert.equal(mutations[0].record.busy, 1);
    assert.deepEqual(mutations[1].record.recs, []);
    assert.equal(mutations[1].record.busy, 0);
    assert.ok(mutations[1].at >= 5000, `the lapse came at ${mutations[1].at} ms`);
    await page.close();
  });

  test('test_sender_loaded_once_after_the_load_event', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.origin}/test/loaded.html`);
    await page.waitForFunction(() => window.records?.some((r) => r.tag === 'uitrail.mutation' && r.record.loaded), null, { timeout: 5000 });
    await sleep(300);
    const { records, loadAt } = await page.evaluate(() => ({ records: window.records, loadAt: window.loadAt }));
    const loaded = records.filter(isLoaded);
    assert.equal(loaded.length, 1, 'one loaded record per document');
    assert.deepEqual(loaded[0].record.recs, []);
    assert.equal(loaded[0].record.busy, 0);
    assert.ok(loaded[0].record.dom[0] > 1);
    assert.ok(loadAt !== undefined && loaded[0].at >= loadAt, 'sent after the load event');
    assert.ok(records.every((r) => r.tag !== 'uitrail.mutation' || r.record.loaded === undefined || r === loaded[0]));
    await page.close();
  });

  test('test_sender_loaded_waits_for_a_pending_image', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.origin}/test/loaded.html?img=700`);
    await page.waitForFunction(() => window.records?.some((r) => r.tag === 'uitrail.mutation' && r.record.loaded), null, { timeout: 5000 });
    const { records, imageAt } = await page.evaluate(() => ({ records: window.records, imageAt: window.imageAt }));
    const loaded = records.filter(isLoaded);
    assert.equal(loaded.length, 1);
    assert.ok(imageAt !== undefined && loaded[0].at >= imageAt, 'sent once the image the load handler added had loaded');
    // What the load handler changed (the image's src) was flushed before.
    const srcFlush = records.findIndex((r) => r.tag === 'uitrail.mutation' && r.record.recs.some((rec) => rec[1] === 1));
    assert.ok(srcFlush >= 0 && srcFlush < records.indexOf(loaded[0]), 'the load handler\'s change comes first');
    await page.close();
  });

  test('test_sender_mutations_skeleton_then_data', async () => {
    const { page, tab } = await openDemo();
    await sleep(1500); // A tick of the clock at least.
    const [initial, ...mutations] = recordsOf(tab, 'uitrail.mutation').map((entry) => entry.record);
    // The first record is the tree at start, with no change: it tells the
    // daemon that this tab reports mutations even if nothing ever changes.
    assert.deepEqual(initial.recs, []);
    assert.ok(initial.dom[0] > 1);
    assert.ok(mutations.length >= 2);
    assert.ok(mutations[0].busy > 0, 'the skeleton counts as busy');
    const dataFlush = mutations.findIndex((record) => record.recs.some(([, kind, , , nodes]) => kind === 0 && nodes >= 25));
    assert.ok(dataFlush > 0, 'the data arrives in a later flush');
    for (const record of mutations.slice(0, dataFlush)) assert.ok(record.busy > 0, 'busy until the data');
    for (const record of mutations.slice(dataFlush)) assert.equal(record.busy, 0, 'not busy after the data');
    const [elements, depth] = mutations[mutations.length - 1].dom;
    // Elements in open shadow roots are part of the page the sender observes.
    assert.equal(elements, await page.evaluate(() => {
      const count = (root) => Array.from(root.querySelectorAll('*'))
        .reduce((n, el) => n + 1 + (el.shadowRoot ? count(el.shadowRoot) : 0), 0);
      return count(document);
    }));
    assert.ok(depth >= 6);
    for (const record of mutations) {
      for (const rec of record.recs) {
        assert.equal(rec.length, 6);
        assert.ok([0, 1, 2].includes(rec[1]));
        assert.ok(rec[5] <= 50000);
      }
    }
    // The panel is the assistant's own: its updates are not the page's.
    const before = recordsOf(tab, 'uitrail.mutation').length;
    await page.evaluate(() => { document.getElementById('panel-trace').textContent = 'changed by the assistant'; });
    await sleep(100);
    const panelRecs = recordsOf(tab, 'uitrail.mutation').slice(before)
      .flatMap((entry) => entry.record.recs).filter(([, , , , nodes, bytes]) => bytes === 'changed by the assistant'.length && nodes === 2);
    assert.equal(panelRecs.length, 0, 'mutations under [data-uitrail-ignore] are not reported');
    await closePage(page);
  });

  test('test_sender_mutation_recs_cap', async () => {
    const { page, tab } = await openDemo();
    const targets = 600;
    await page.evaluate((count) => {
      const box = document.createElement('div');
      for (let i = 0; i < count; i++) box.append(document.createElement('span'));
      document.querySelector('main').append(box);
      return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {
        for (const span of box.children) span.textContent = 'x';
        done();
      })));
    }, targets);
    await waitFor(() => recordsOf(tab, 'uitrail.mutation').some((entry) => entry.record.dropped), 3000, 'a capped flush');
    const capped = recordsOf(tab, 'uitrail.mutation').find((entry) => entry.record.dropped).record;
    assert.equal(capped.recs.length, 512);
    // The demo's clock may tick in the same frame and add its own target.
    assert.ok(capped.recs.length + capped.dropped >= targets && capped.recs.length + capped.dropped <= targets + 2,
      `every mutated target is kept or counted as dropped: ${capped.recs.length} + ${capped.dropped}`);
    await closePage(page);
  });

  test('test_sender_websocket_token_acks_and_resend', async () => {
    const { page, tab } = await openDemo();
    assert.ok(server.state.protocols.includes('uitrail.v1, uitrail.token.ingest-secret-1'),
      `the token travels in Sec-WebSocket-Protocol: ${server.state.protocols}`);
    await waitFor(async () => {
      const stats = await page.evaluate(() => window.uitrailDemo.tracker.stats);
      return stats.acked === stats.queued;
    }, 3000, 'every event acknowledged');

    server.state.ackChunks = false;
    await page.click('text=Red Gadget');
    await waitFor(() => recordsOf(tab, 'uitrail.click').length === 1, 3000, 'unacknowledged click');
    const seq = recordsOf(tab, 'uitrail.click')[0].record.seq;
    server.state.ackChunks = true;
    server.dropConnections();
    await waitFor(() => recordsOf(tab, 'uitrail.click').length >= 2, 5000, 'the click sent again after reconnect');
    const resent = recordsOf(tab, 'uitrail.click');
    assert.equal(resent[1].record.seq, seq, 'a resend keeps its seq, so the daemon drops the duplicate');
    await waitFor(async () => {
      const stats = await page.evaluate(() => window.uitrailDemo.tracker.stats);
      return stats.acked === stats.queued && stats.reconnects >= 1;
    }, 5000, 'everything acknowledged after reconnect');
    await closePage(page);
  });

  test('test_sender_queue_is_bounded_while_disconnected', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.origin}/test/cases.html`);
    await page.waitForFunction(() => window.tracker);
    const stats = await page.evaluate(async () => {
      const { LIMITS } = await import('/sender/uitrail.js');
      const button = document.getElementById('aria-label');
      for (let i = 0; i < LIMITS.QUEUE_MAX_EVENTS + 200; i++) button.click();
      await new Promise((done) => setTimeout(done, 50));
      return { ...window.tracker.stats, max: LIMITS.QUEUE_MAX_EVENTS };
    });
    assert.ok(stats.queued >= stats.max + 200);
    assert.ok(stats.dropped >= 200, `the oldest events beyond the bound are dropped: ${JSON.stringify(stats)}`);
    await closePage(page);
  });

  test('test_sender_seq_survives_reload', async () => {
    const { page, tab } = await openDemo();
    await page.click('text=Blue Widget');
    await waitFor(() => recordsOf(tab, 'uitrail.click').length >= 1, 3000, 'click');
    const highest = Math.max(...recordsOf(tab).map((entry) => entry.record.seq));
    await page.reload();
    await page.waitForFunction(() => window.uitrailDemo?.tracker);
    assert.equal(await page.evaluate(() => window.uitrailDemo.tracker.tab), tab, 'the tab id lives in sessionStorage');
    await waitFor(() => recordsOf(tab, 'uitrail.nav').length >= 2, 3000, 'reload navigation');
    const reload = recordsOf(tab, 'uitrail.nav')[1].record;
    assert.equal(reload.how, 'reload');
    assert.ok(reload.seq > highest, `seq continues after a reload (${reload.seq} > ${highest})`);
    // A reload is no end of the tab: pagehide sends uitrail.unload, never
    // uitrail.close.
    assert.equal(recordsOf(tab, 'uitrail.close').length, 0, 'pagehide sends no uitrail.close');
    const unloads = recordsOf(tab, 'uitrail.unload').map((entry) => entry.record);
    assert.equal(unloads.length, 1, 'pagehide sends uitrail.unload');
    assert.equal(unloads[0].persisted, false);
    assert.ok(unloads[0].seq > highest && unloads[0].seq < reload.seq, 'the unload comes between the two pages');
    await closePage(page);
  });

  test('test_sender_http_transport', async () => {
    const { page, tab } = await openDemo('?transport=http');
    await page.click('text=Blue Widget');
    await waitFor(() => recordsOf(tab, 'uitrail.click').length >= 1, 3000, 'click over HTTP');
    const entries = recordsOf(tab);
    assert.ok(entries.every((entry) => entry.via === 'http'));
    assert.ok(entries.every((entry) => entry.option === undefined), 'HTTP needs no chunk: the answer is the ack');
    const seqs = entries.map((entry) => entry.record.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), 'HTTP keeps the order');
    await closePage(page);
  });
});
