// uitrail's rrweb importer (run by `uitrail import`, which owns the
// recording format): reads one recording, rrweb's (a JSON array of
// {type, data, timestamp}, rrweb 1.x or 2.x) or PostHog's (posthog.mjs:
// its export JSON or its JSON-lines blobs, one window of it), plain or
// gzip, one event at a time; rebuilds each page's DOM in jsdom, runs the
// real sender over it (page.mjs) on the recording's time, and writes the
// sender's Forward entries to stdout. A summary goes to stderr.
//
//   node --max-old-space-size=128 --no-warnings tools/import/rrweb.mjs
//        [--format auto|rrweb|posthog] [--window K] --tab TAB FILE
//   node ... tools/import/rrweb.mjs [--format F] --list FILE
//
// --list prints `FORMAT WINDOWS` (rrweb or posthog, and how many windows
// the file holds: one recording each) and imports nothing; --window K
// imports the K-th window (0-based, in order of first appearance).
//
// Exit status: 0 read to the end; 1 damaged (what could be read was
// written); 2 usage. The semantics (roles, names, row context, click
// state, dialogs, alerts, mutation records) are the sender's: nothing here
// names or judges an element.

import { once } from 'node:events';
import { parseArgs } from 'node:util';

import { openInput } from './input.mjs';
import { decompress, detectFormat, isSdkTag, peek, windowEvents } from './posthog.mjs';
import { createRebuild } from './rebuild.mjs';
import { createClock, drainJobs } from './virtual-time.mjs';

// Importer limits: an event (a full snapshot with its inlined stylesheets
// is the largest), the nesting of the file's JSON (an rrweb event is one
// level in, a PostHog export's three) and of the rebuilt tree.
export const EVENT_MAX_BYTES = 64 * 1024 * 1024;
export const JSON_DEPTH_MAX = 1100;
export const TREE_DEPTH_MAX = 500;
// Windows of one PostHog file imported (each is a recording); the events
// of windows past this are counted as skipped.
export const WINDOWS_MAX = 64;
// After the last event the virtual clock runs on this long, so that what
// the sender had pending (a flush, a click's state, a title) goes out.
const END_SETTLE_MS = 5000;
// The longest a click's handlers and rrweb's record of what they changed
// take, for that record to count as the click's own task (above).
const CLICK_TASK_MS = 50;
const FALLBACK_URL = 'http://unknown-page.invalid/';

const EVENT_TYPE = { 0: 'dom-content-loaded', 1: 'load', 2: 'full-snapshot', 3: 'incremental', 4: 'meta', 5: 'custom', 6: 'plugin' };
const SOURCE = {
  0: 'mutation', 1: 'mouse-move', 2: 'mouse-interaction', 3: 'scroll', 4: 'viewport-resize', 5: 'input',
  6: 'touch-move', 7: 'media-interaction', 8: 'style-sheet-rule', 9: 'canvas', 10: 'font', 11: 'log',
  12: 'drag', 13: 'style-declaration', 14: 'selection', 15: 'adopted-style-sheet', 16: 'custom-element',
};
const MOUSE = { MOUSE_UP: 0, MOUSE_DOWN: 1, CLICK: 2, FOCUS: 5, BLUR: 6, TOUCH_START: 7, TOUCH_END: 9, TOUCH_CANCEL: 10 };

// Skips that mean the file contradicts itself (an event of the wrong
// shape, a node id that points nowhere, a tree too deep): the import goes
// on, and the file counts as damaged (exit status 1).
const DAMAGE_RE = /points nowhere|damaged|does not inflate|inflates past|unknown version|not an object|without a numeric type|bad tag name|nested deeper|could not apply|before the first full snapshot|without a document node/;

function createCounter() {
  const counts = new Map();
  return {
    damaged: false,
    add(key, n = 1) {
      counts.set(key, (counts.get(key) || 0) + n);
      if (DAMAGE_RE.test(key) && !/^(dom-content-loaded|load|meta) event/.test(key)) this.damaged = true;
    },
    text() { return [...counts].map(([key, n]) => `${n} ${key}`).join(', ') || 'none'; },
  };
}

/** The import of one recording: pages in turn, one at a time. */
function createSession({ tab, out, skipped }) {
  const clock = { current: null };
  let page = null;
  let rebuild = null;
  let href = null;
  let seq = 0;
  let pendingChange = null; // a text field whose value changed, until it loses focus
  // A release waits for the next event: the browser dispatches `click` in
  // the same task as the release (rrweb stamps it a moment later), before
  // any timer the sender set on the release can run.
  let pendingRelease = null;
  // The time of a click just dispatched, until the next event: what the
  // page's click handlers changed, rrweb's MutationObserver records in the
  // click's own task (its microtask), before any timer the sender set on
  // the click (the state it reads after it) can run.
  let clickAt = null;

  const savedSeq = () => {
    try {
      const saved = JSON.parse(page.window.sessionStorage.getItem('uitrail.tab') || 'null');
      if (saved && Number.isSafeInteger(saved.seq)) seq = saved.seq;
    } catch { /* an opaque origin has no storage: the seq is kept below */ }
  };

  const dispatch = (el, type) => {
    const { window } = page;
    const event = type === 'change'
      ? new window.Event('change', { bubbles: true })
      : new window.MouseEvent(type, { bubbles: true, cancelable: true, composed: true, button: 0, buttons: type.endsWith('down') ? 1 : 0 });
    el.dispatchEvent(event);
  };

  const commitChange = () => {
    if (!pendingChange || !page) return;
    const el = pendingChange;
    pendingChange = null;
    if (el.isConnected) dispatch(el, 'change');
  };

  const release = () => {
    const el = pendingRelease;
    pendingRelease = null;
    if (el && page && el.isConnected) dispatch(el, 'pointerup');
  };

  const endPage = async () => {
    if (!page) return;
    release();
    commitChange();
    page.window.dispatchEvent(new page.window.PageTransitionEvent('pagehide', { persisted: false }));
    await drainJobs();
    if (page.tracker) page.tracker.stop();
    await drainJobs();
    savedSeq();
    page.close();
    page = null;
    rebuild = null;
  };

  const startPage = async (event) => {
    await endPage();
    if (!clock.current) clock.current = createClock(event.timestamp);
    page = await createPage({ url: href || FALLBACK_URL, clock: clock.current, startMs: clock.current.now(), onBytes: out });
    if (!href) skipped.add('page without a meta event (its URL is unknown)');
    rebuild = createRebuild(page.document, { maxDepth: TREE_DEPTH_MAX, skip: (why) => skipped.add(why) });
    rebuild.snapshot(event.data && event.data.node);
    page.changed();
    try {
      page.window.sessionStorage.setItem('uitrail.tab', JSON.stringify({ tab, seq }));
    } catch { /* see savedSeq */ }
    page.start({ tab });
  };

  // PostHog's `$url_changed` (and `$pageview`): the page's URL changed in
  // place (history.pushState), which rrweb does not record. The URL moves
  // in the rebuilt page the same way; the sender, as in a browser without
  // the Navigation API, reports it at its next flush.
  const urlChanged = (href) => {
    const { location, history } = page.window;
    let next;
    try {
      next = new URL(href, location.href);
    } catch {
      skipped.add('URL change to an address that does not parse');
      return;
    }
    if (next.href === location.href) return;
    if (next.origin !== location.origin) { skipped.add('URL change to another origin without a full snapshot'); return; }
    history.pushState(null, '', next.href);
  };

  const custom = (data) => {
    const payload = data.payload && typeof data.payload === 'object' ? data.payload : {};
    if ((data.tag === '$url_changed' || data.tag === '$pageview') && typeof payload.href === 'string') {
      urlChanged(payload.href);
      return;
    }
    if (isSdkTag(data.tag)) { skipped.add('PostHog\'s own custom event (no trace record)'); return; }
    try {
      page.tracker.emit(String(data.tag), payload);
    } catch {
      skipped.add('custom event the sender refuses as a host event');
    }
  };

  const mouse = (data) => {
    const el = rebuild.node(data.id);
    if (!el || el.nodeType !== 1) { skipped.add('mouse interaction on a node id that points nowhere'); return; }
    switch (data.type) {
      case MOUSE.MOUSE_DOWN: case MOUSE.TOUCH_START:
        if (pendingChange && pendingChange !== el) commitChange();
        dispatch(el, 'pointerdown');
        if (typeof el.focus === 'function') el.focus();
        break;
      case MOUSE.MOUSE_UP: case MOUSE.TOUCH_END: release(); pendingRelease = el; break;
      case MOUSE.TOUCH_CANCEL: dispatch(el, 'pointercancel'); break;
      case MOUSE.CLICK:
        release();
        if (pendingChange && pendingChange !== el) commitChange();
        dispatch(el, 'click');
        clickAt = clock.current.now();
        break;
      case MOUSE.BLUR: if (pendingChange === el) commitChange(); break;
      case MOUSE.FOCUS: break; // the sender reads focus from the document
      default: skipped.add('mouse interaction other than press, release, click or blur');
    }
  };

  const input = (data) => {
    const el = rebuild.node(data.id);
    if (!el || el.nodeType !== 1) { skipped.add('input on a node id that points nowhere'); return; }
    if (pendingChange && pendingChange !== el) commitChange();
    if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      // A click on it already toggled it, as the browser does; a change
      // made otherwise (a label, a script) is dispatched now.
      if (typeof data.isChecked === 'boolean' && el.checked !== data.isChecked) {
        el.checked = data.isChecked;
        dispatch(el, 'change');
      }
      return;
    }
    if (typeof data.text === 'string') el.value = data.text;
    if (el.localName === 'select') dispatch(el, 'change');
    else pendingChange = el;
  };

  const incremental = (data) => {
    const source = SOURCE[data.source] || `source ${data.source}`;
    if (data.source === 0) { rebuild.mutate(data); page.changed(); return; }
    if (data.source === 2) { mouse(data); return; }
    if (data.source === 5) { input(data); return; }
    skipped.add(`${source} (no trace record)`);
  };

  return {
    async apply(event) {
      if (!event || typeof event !== 'object' || !Number.isFinite(event.timestamp) || typeof event.type !== 'number') {
        skipped.add('event without a numeric type and timestamp');
        return;
      }
      const data = event.data && typeof event.data === 'object' ? event.data : {};
      // What the page's release handlers did (a mutation, a focus move)
      // comes between the release and its click; anything else ends it.
      const inRelease = event.type === 3 && (data.source === 0 ||
        (data.source === 2 && (data.type === MOUSE.CLICK || data.type === MOUSE.FOCUS || data.type === MOUSE.BLUR)));
      if (pendingRelease && !inRelease) release();
      const inClick = clickAt !== null && event.type === 3 && data.source === 0 &&
        event.timestamp - clickAt <= CLICK_TASK_MS;
      clickAt = null;
      if (clock.current && !inClick) await clock.current.advanceTo(event.timestamp);
      if (event.type === 4) {
        const next = typeof data.href === 'string' ? data.href : null;
        if (next !== href) { await endPage(); href = next; }
        return;
      }
      if (event.type === 2) {
        // rrweb numbers a page's nodes from 1 at each load; a snapshot that
        // does not start there is a re-snapshot of the same page.
        const fresh = !page || !data.node || data.node.id === 1;
        if (fresh) await startPage(event);
        else { rebuild.snapshot(data.node); page.changed(); skipped.add('re-snapshot of the same page (applied as a rebuild)'); }
        return;
      }
      if (!page) { skipped.add(`${EVENT_TYPE[event.type] || 'unknown'} event before the first full snapshot`); return; }
      if (event.type === 3) incremental(data);
      else if (event.type === 5) custom(data);
      else skipped.add(`${EVENT_TYPE[event.type] || `type ${event.type}`} event (no trace record)`);
      await drainJobs();
    },
    async finish() {
      if (!clock.current || !page) return;
      release();
      commitChange();
      await clock.current.advanceTo(clock.current.now() + END_SETTLE_MS);
      if (page.tracker) page.tracker.stop();
      await drainJobs();
      page.close();
      page = null;
    },
  };
}

let createPage = null; // page.mjs's, loaded by main() when it imports

const USAGE = 'usage: rrweb.mjs [--format auto|rrweb|posthog] [--window K] --tab TAB FILE\n' +
  '       rrweb.mjs [--format auto|rrweb|posthog] --list FILE\n';

function parseOptions() {
  let parsed;
  try {
    parsed = parseArgs({
      options: { tab: { type: 'string' }, format: { type: 'string', default: 'auto' }, window: { type: 'string', default: '0' }, list: { type: 'boolean' } },
      allowPositionals: true,
    });
  } catch (error) {
    process.stderr.write(`${error.message}\n${USAGE}`);
    process.exit(2);
  }
  const { values, positionals } = parsed;
  const window = Number(values.window);
  if (positionals.length !== 1 || (!values.tab && !values.list) || !['auto', 'rrweb', 'posthog'].includes(values.format) ||
      !Number.isInteger(window) || window < 0 || window >= WINDOWS_MAX) {
    process.stderr.write(USAGE);
    process.exit(2);
  }
  return { tab: values.tab, format: values.format, window, list: Boolean(values.list), file: positionals[0] };
}

/** Opens the file and tells its shape; exits 1 when it cannot be read or
 *  is not the format asked for. Returns {input, chunks, shape, format}. */
async function openRecording(options) {
  const fail = (message) => {
    process.stderr.write(`uitrail import: ${options.file}: ${message}\n`);
    process.exit(1);
  };
  let input;
  try {
    input = await openInput(options.file);
  } catch (error) {
    fail(error.message);
  }
  const { head, chunks } = await peek(input.chunks);
  let shape = detectFormat(head);
  if (!shape && input.error()) fail(`damaged: ${input.error()}`);
  // A file that is none of the shapes is read as the format asked for (or
  // rrweb), so that its damage is said where it is.
  if (!shape) shape = options.format === 'posthog' ? 'posthog-export' : 'rrweb';
  const format = shape === 'rrweb' ? 'rrweb' : 'posthog';
  if (options.format !== 'auto' && options.format !== format) {
    fail(`not a${options.format === 'rrweb' ? 'n rrweb recording (a JSON array of events)' : ' PostHog export or JSON-lines blob'}: it reads as ${format} (use --format auto)`);
  }
  return { input, chunks, shape, format };
}

async function main() {
  const options = parseOptions();
  const { input, chunks, shape, format } = await openRecording(options);
  const pendingOut = [];
  const flushOut = async () => {
    for (const bytes of pendingOut.splice(0)) {
      if (!process.stdout.write(bytes)) await once(process.stdout, 'drain');
    }
  };
  const skipped = createCounter();
  const read = createCounter();
  if (options.list && format === 'rrweb') {
    // An rrweb file is one window: nothing to read.
    process.stdout.write('rrweb 1\n');
    process.exit(0);
  }
  // jsdom (page.mjs) is loaded only for an import: a list is quick.
  if (!options.list) {
    try {
      ({ createPage } = await import('./page.mjs'));
    } catch (error) {
      // The importer itself cannot run here (esbuild, jsdom): no event is read.
      process.stderr.write(`uitrail import: ${options.file}: ${error.message}\n`);
      process.exit(1);
    }
  }
  const session = options.list ? null : createSession({ tab: options.tab, out: (bytes) => pendingOut.push(Buffer.from(bytes)), skipped });
  const windows = new Map(); // window id -> index, in order of first appearance
  let damage = null;
  let events = 0;
  for await (const element of windowEvents(chunks, shape, { maxElementBytes: EVENT_MAX_BYTES, maxDepth: JSON_DEPTH_MAX })) {
    if (element.error) { damage = element.error; break; }
    if (element.skip) { skipped.add(element.skip); continue; }
    let index = windows.get(element.window);
    if (index === undefined) {
      index = windows.size;
      if (index < WINDOWS_MAX) windows.set(element.window, index);
    }
    if (index >= WINDOWS_MAX) { skipped.add(`event of a window past the first ${WINDOWS_MAX}`); continue; }
    if (options.list || index !== options.window) continue;
    events++;
    const { event, skip } = decompress(element.value, EVENT_MAX_BYTES);
    if (skip) { skipped.add(skip); continue; }
    read.add(EVENT_TYPE[event && event.type] || 'other');
    try {
      await session.apply(event);
    } catch (error) {
      // Hostile or unforeseen data must not end the import: the event is
      // counted, the rest goes on.
      skipped.add(`event the importer could not apply (${String(error && error.message).slice(0, 80)})`);
    }
    await flushOut();
  }
  if (input.error()) damage = input.error();
  const name = `${options.file}${format === 'posthog' && !options.list ? ` [window ${options.window + 1}]` : ''}`;
  if (options.list) {
    process.stdout.write(`${format} ${Math.max(windows.size, 1)}\n`);
  } else {
    await session.finish();
    await flushOut();
    process.stderr.write(`uitrail import: ${name}: ${events} ${format === 'posthog' ? 'PostHog' : 'rrweb'} events read (${read.text()}); skipped: ${skipped.text()}\n`);
  }
  // A list is followed by the import of each window, which says the damage.
  if (damage && !options.list) process.stderr.write(`uitrail import: ${name}: damaged: ${damage}; what came before was imported\n`);
  else if (skipped.damaged && !damage) {
    damage = 'events that contradict the recording were skipped (listed above)';
    if (!options.list) process.stderr.write(`uitrail import: ${name}: damaged: ${damage}\n`);
  }
  // jsdom leaves handles of its own (a closed window's timers) that would keep
  // Node up for seconds; stdout is a pipe, written synchronously on Linux.
  process.exit(damage ? 1 : 0);
}

await main();
