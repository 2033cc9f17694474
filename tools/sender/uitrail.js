// uitrail sender: runs inside a web page, turns what the user does into the
// semantic records of protocol §1 (click, change, nav, dialog, alert,
// mutation, close) and streams them to uitraild as Forward Message-mode
// msgpack entries over a WebSocket (protocol §3) or, as a fallback, HTTP POST.
//
// Usage, without a build step (the page maps "@msgpack/msgpack" to the
// package's ESM build with an import map, see README.md):
//
//   import uitrail from '/sender/uitrail.js';
//   const tracker = uitrail.start({ url: 'http://127.0.0.1:7317' });
//   ...
//   tracker.stop();
//
// Privacy rules that every code path below keeps: an input's value is never
// read as a name; typed text is never sent (only its length), except for
// choice controls and fields the page opted in with data-track-value; a
// sensitive element (password field, [data-sensitive] subtree, card number,
// one-time code) yields a record with `sens: true` and neither name nor
// context; subtrees under [data-no-track] and [data-uitrail-ignore] are not
// reported.

import { Encoder, ExtensionCodec, decode, decodeMulti } from '@msgpack/msgpack';

/**
 * Every bound the sender keeps. The text maxima mirror protocol §1; they are
 * counted in UTF-16 code units (the daemon cuts again on UTF-8 bytes), so the
 * sender never ships much more than the daemon keeps.
 */
export const LIMITS = Object.freeze({
  ROLE_MAX_CHARS: 32,
  NAME_MAX_CHARS: 256,
  VALUE_MAX_CHARS: 256,
  URL_MAX_CHARS: 2048,
  TITLE_MAX_CHARS: 256,
  ALERT_TEXT_MAX_CHARS: 512,
  DIALOG_TEXT_MAX_CHARS: 2048,
  CELL_MAX_CHARS: 256,
  CTX_CELLS_MAX: 16,
  MUTATION_RECS_MAX: 512,
  MUTATION_BYTES_CAP: 50000,
  // An added subtree with more elements than this is not serialized to
  // measure its size: its bytes count as MUTATION_BYTES_CAP at once.
  MUTATION_MEASURE_ELEMENTS_MAX: 2000,
  // Events kept while the daemon is unreachable (queued plus unacknowledged);
  // beyond it the oldest queued events are dropped and counted.
  QUEUE_MAX_EVENTS: 1000,
  BATCH_MAX_EVENTS: 100,
  INFLIGHT_MAX_BATCHES: 4,
  ACK_TIMEOUT_MS: 10000,
  BACKOFF_INITIAL_MS: 250,
  BACKOFF_MAX_MS: 30000,
  // Mutations are flushed once per animation frame; a hidden tab gets no
  // frames, so a timer flushes them after this delay instead.
  FLUSH_FALLBACK_MS: 1000,
  // The element count and depth of the page are kept up to date from the
  // mutations themselves and re-measured exactly at most this often.
  DOM_RESYNC_MS: 2000,
  // fetch(keepalive) refuses bodies above 64 KiB.
  KEEPALIVE_BODY_MAX_BYTES: 60000,
});

const STORAGE_KEY = 'uitrail.tab';
const TAB_ID_BYTES = 16;

const ACTIONABLE_ROLES = new Set([
  'button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
  'checkbox', 'radio', 'combobox', 'textbox', 'searchbox', 'switch', 'row',
  'option', 'slider', 'spinbutton', 'listbox', 'treeitem',
]);

// Roles whose accessible name comes from their content (WAI-ARIA 1.2 "name
// from: contents").
const NAME_FROM_CONTENT_ROLES = new Set([
  'button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
  'checkbox', 'radio', 'switch', 'option', 'row', 'cell', 'gridcell',
  'columnheader', 'rowheader', 'treeitem', 'heading', 'tooltip',
]);

const INPUT_ROLES = {
  checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button',
  reset: 'button', image: 'button', range: 'slider', number: 'spinbutton',
  search: 'searchbox', hidden: '', file: 'button', color: 'button',
};

const CONTEXT_KINDS_BY_ROLE = {
  toolbar: 'toolbar', group: 'group', radiogroup: 'group', dialog: 'dialog',
  alertdialog: 'dialog', menu: 'menu', menubar: 'menu', tablist: 'tablist',
  form: 'form', navigation: 'navigation', region: 'region', list: 'list',
  listbox: 'list',
};

const SENSITIVE_AUTOCOMPLETE = new Set([
  'cc-number', 'cc-csc', 'cc-exp', 'cc-exp-month', 'cc-exp-year',
  'one-time-code', 'current-password', 'new-password',
]);

const CHOICE_INPUT_TYPES = new Set(['checkbox', 'radio']);
const BUTTON_INPUT_TYPES = new Set(['button', 'submit', 'reset']);
const TEXT_SKIPPED_ELEMENTS = new Set(['script', 'style', 'template', 'noscript', 'svg']);
const CONTROL_ELEMENTS = new Set(['button', 'input', 'select', 'textarea']);
const INLINE_ELEMENTS = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'em', 'i', 'kbd',
  'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time',
  'u', 'var', 'wbr',
]);

const IGNORE_SELECTOR = '[data-no-track],[data-uitrail-ignore]';
const DIALOG_SELECTOR =
  '[role="dialog"],[role="alertdialog"],dialog,[role="menu"],[role="listbox"],[role="tooltip"]';
const LIVE_REGION_SELECTOR = '[role="alert"],[role="status"],[role="log"]';
const BUSY_SELECTOR =
  '[aria-busy="true"],[role="progressbar"],progress,[class*="skeleton"],[class*="spinner"],[data-loading]';
const BUSY_ATTRIBUTES = new Set(['aria-busy', 'class', 'role', 'aria-valuenow', 'aria-valuemax', 'data-loading', 'value', 'max']);
const DIALOG_ROLES = new Set(['dialog', 'alertdialog', 'menu', 'listbox', 'tooltip']);

// Icon fonts draw glyphs from the Unicode private-use areas; they are not
// words and must not end up in a name.
const PRIVATE_USE_RE = /[\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}]/gu;
const SPACES_RE = /\s+/g;

const MUTATION_KIND = { childList: 0, attributes: 1, characterData: 2 };

// ---------------------------------------------------------------- text

/** Cuts text to at most max UTF-16 code units without splitting a pair. */
function cut(text, max) {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** Collapses white space, drops private-use glyphs and trims. */
function clean(text) {
  return text.replace(PRIVATE_USE_RE, '').replace(SPACES_RE, ' ').trim();
}

function isElement(node) {
  return node !== null && node !== undefined && node.nodeType === 1;
}

/** The parent element of el, crossing from a shadow root to its host. */
function composedParent(el) {
  if (el.parentElement) return el.parentElement;
  const parent = el.parentNode;
  return parent && parent.nodeType === 11 && parent.host ? parent.host : null;
}

/** Like Element.closest(), but continues into shadow hosts. */
function closestComposed(el, selector) {
  for (let node = el; node; ) {
    const found = node.closest(selector);
    if (found) return found;
    const root = node.getRootNode();
    node = root && root.host ? root.host : null;
  }
  return null;
}

/** True when the element is hidden by markup (not by style, which costs a
 *  style recalculation to read). */
function hiddenByMarkup(el) {
  return el.hidden || el.getAttribute('aria-hidden') === 'true' ||
    TEXT_SKIPPED_ELEMENTS.has(el.localName) ||
    (el.localName === 'dialog' && !el.open);
}

function isVisible(el) {
  if (!el.isConnected) return false;
  if (typeof el.checkVisibility === 'function') return el.checkVisibility();
  return el.getClientRects().length > 0;
}

/**
 * Appends the readable text under node to acc (an object with `parts` and
 * `length`), stopping once `max` characters are gathered. Skips hidden
 * markup, sensitive subtrees and the tracker's own ignored containers; with
 * skipControls it also skips form controls and buttons, so a cell or label
 * gives its data and not its actions. Never reads an input's value.
 */
function gatherText(node, acc, max, skipControls) {
  const start = node.shadowRoot ? node.shadowRoot : node;
  for (let child = start.firstChild; child && acc.length < max; child = child.nextSibling) {
    if (child.nodeType === 3) {
      acc.parts.push(child.data);
      acc.length += child.data.length;
    } else if (child.nodeType === 1) {
      if (hiddenByMarkup(child) || child.hasAttribute('data-sensitive') ||
          child.hasAttribute('data-uitrail-ignore')) continue;
      const tag = child.localName;
      if (skipControls && (CONTROL_ELEMENTS.has(tag) || child.getAttribute('role') === 'button')) continue;
      if (tag === 'img' || tag === 'area') {
        const alt = child.getAttribute('alt');
        if (alt) { acc.parts.push(' ', alt, ' '); acc.length += alt.length; }
        continue;
      }
      if (tag === 'slot') {
        for (const assigned of child.assignedNodes({ flatten: true })) {
          if (assigned.nodeType === 3) acc.parts.push(assigned.data);
          else if (assigned.nodeType === 1) gatherText(assigned, acc, max, skipControls);
        }
        continue;
      }
      const inline = INLINE_ELEMENTS.has(tag);
      if (!inline) acc.parts.push(' ');
      gatherText(child, acc, max, skipControls);
      if (!inline) acc.parts.push(' ');
    }
  }
}

/** The cleaned readable text of node, cut at max characters. */
function textOf(node, max, skipControls = false) {
  const acc = { parts: [], length: 0 };
  gatherText(node, acc, max * 2, skipControls);
  return cut(clean(acc.parts.join('')), max);
}

// ---------------------------------------------------------------- roles and names

/** The ARIA role of el: its explicit role, else the native one, else ''. */
function roleOf(el) {
  const explicit = el.getAttribute('role');
  if (explicit) return explicit.trim().split(' ')[0].toLowerCase();
  switch (el.localName) {
    case 'a': case 'area': return el.hasAttribute('href') ? 'link' : '';
    case 'button': case 'summary': return 'button';
    case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    case 'textarea': return 'textbox';
    case 'option': return 'option';
    case 'dialog': return 'dialog';
    case 'nav': return 'navigation';
    case 'form': return 'form';
    case 'fieldset': return 'group';
    case 'ul': case 'ol': case 'menu': return 'list';
    case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : '';
    case 'input': {
      const type = el.type;
      if (type in INPUT_ROLES) return INPUT_ROLES[type];
      return el.hasAttribute('list') ? 'combobox' : 'textbox';
    }
    default:
      return el.isContentEditable && el.contentEditable !== 'inherit' ? 'textbox' : '';
  }
}

/** True when a click on el is a user action worth reporting. A native table
 *  row is not: only an explicit role="row" makes a row clickable. */
function isActionable(el) {
  if (el.localName === 'tr' && !el.hasAttribute('role')) return false;
  return ACTIONABLE_ROLES.has(roleOf(el));
}

function textOfIds(el, ids) {
  const root = el.getRootNode();
  const parts = [];
  for (const id of ids.trim().split(SPACES_RE)) {
    const target = root.getElementById ? root.getElementById(id) : document.getElementById(id);
    if (target) {
      const label = target.getAttribute('aria-label');
      parts.push(label || textOf(target, LIMITS.NAME_MAX_CHARS));
    }
  }
  return clean(parts.join(' '));
}

/**
 * The accessible name of el, after the accessible-name computation in
 * simplified form: aria-labelledby, aria-label, associated <label>s, alt,
 * content for roles named from content, title, placeholder. Returns '' when
 * there is none. Never returns what the user typed into a field.
 */
function accessibleName(el, role = roleOf(el)) {
  const max = LIMITS.NAME_MAX_CHARS;
  const labelledBy = el.getAttribute('aria-labelledby');
  if (labelledBy) {
    const name = textOfIds(el, labelledBy);
    if (name) return cut(name, max);
  }
  const ariaLabel = el.getAttribute('aria-label');
  if (ariaLabel && clean(ariaLabel)) return cut(clean(ariaLabel), max);
  if (el.labels && el.labels.length) {
    const name = clean(Array.from(el.labels, (label) => textOf(label, max, true)).join(' '));
    if (name) return cut(name, max);
  }
  const tag = el.localName;
  if (tag === 'img' || tag === 'area' || (tag === 'input' && el.type === 'image')) {
    const alt = clean(el.getAttribute('alt') || '');
    if (alt) return cut(alt, max);
  }
  if (tag === 'fieldset') {
    const legend = el.querySelector(':scope > legend');
    if (legend) { const name = textOf(legend, max); if (name) return name; }
  }
  // A button-type input shows its value as its caption: it is the page's
  // text, not the user's, so it is the one value that may name an element.
  if (tag === 'input' && BUTTON_INPUT_TYPES.has(el.type)) {
    const caption = clean(el.value || '');
    if (caption) return cut(caption, max);
  }
  if (NAME_FROM_CONTENT_ROLES.has(role) && !(tag === 'input')) {
    const name = textOf(el, max);
    if (name) return name;
  }
  const title = clean(el.getAttribute('title') || '');
  if (title) return cut(title, max);
  const placeholder = clean(el.getAttribute('placeholder') || '');
  if (placeholder) return cut(placeholder, max);
  return '';
}

// ---------------------------------------------------------------- sensitivity

/**
 * Decides whether el must be reported as sensitive. `knownSecrets` is a
 * WeakSet of fields seen as password fields before: a field that was a
 * password once stays sensitive when a "show password" button makes it a
 * text field.
 */
function isSensitive(el, knownSecrets) {
  if (knownSecrets.has(el)) return true;
  if (el.localName === 'input' && el.type === 'password') {
    knownSecrets.add(el);
    return true;
  }
  const autocomplete = el.getAttribute('autocomplete');
  if (autocomplete) {
    for (const token of autocomplete.toLowerCase().split(SPACES_RE)) {
      if (SENSITIVE_AUTOCOMPLETE.has(token)) return true;
    }
  }
  return closestComposed(el, '[data-sensitive]') !== null;
}

/** Adds every password field under node (node included) to knownSecrets. */
function rememberPasswordFields(node, knownSecrets) {
  if (node.localName === 'input' && node.type === 'password') knownSecrets.add(node);
  if (node.firstElementChild) {
    for (const field of node.querySelectorAll('input[type="password"]')) knownSecrets.add(field);
  }
}

// ---------------------------------------------------------------- context

function contextKindOf(el) {
  if (el.localName === 'dialog') return 'dialog';
  const kind = CONTEXT_KINDS_BY_ROLE[roleOf(el)];
  return kind || '';
}

function rowCells(row) {
  const cells = row.localName === 'tr'
    ? row.cells
    : row.querySelectorAll(':scope > [role="cell"],:scope > [role="gridcell"],:scope > [role="rowheader"]');
  const texts = [];
  for (const cell of cells) {
    if (texts.length >= LIMITS.CTX_CELLS_MAX) break;
    if (cell.hasAttribute('data-no-track') || cell.hasAttribute('data-sensitive')) continue;
    const text = textOf(cell, LIMITS.CELL_MAX_CHARS, true);
    if (text) texts.push(text);
  }
  return texts;
}

/**
 * The context of a click or change on el: the table row it sits in (when
 * row context applies to that table) or the nearest named container of a
 * kind the protocol knows. Returns undefined when there is none.
 */
function contextOf(el, rowContext) {
  for (let node = composedParent(el); node; node = composedParent(node)) {
    if (rowContext !== 'never' && (node.localName === 'tr' || node.getAttribute('role') === 'row')) {
      const table = node.closest('table,[role="table"],[role="grid"],[role="treegrid"]');
      const optedIn = table && table.getAttribute('data-track-row-context') === 'true';
      if (rowContext === 'always' || optedIn) {
        const cells = rowCells(node);
        if (cells.length) return { kind: 'row', cells };
      }
      continue;
    }
    const kind = contextKindOf(node);
    if (!kind) continue;
    const name = accessibleName(node, 'none');
    if (name) return { kind, name: cut(name, LIMITS.CELL_MAX_CHARS) };
  }
  return undefined;
}

/** The state of el that a click may have changed, read after the click's
 *  default action and the page's own handlers; undefined when none applies. */
function clickStateOf(el) {
  let state;
  const put = (key, value) => { (state ||= {})[key] = value; };
  if (el.localName === 'input' && CHOICE_INPUT_TYPES.has(el.type)) {
    put('checked', el.checked);
  } else {
    const checked = el.getAttribute('aria-checked');
    if (checked === 'true' || checked === 'false') put('checked', checked === 'true');
  }
  const expanded = el.getAttribute('aria-expanded');
  if (expanded === 'true' || expanded === 'false') put('expanded', expanded === 'true');
  else if (el.localName === 'summary' && el.parentElement && el.parentElement.localName === 'details') {
    put('expanded', el.parentElement.open);
  }
  const selected = el.getAttribute('aria-selected');
  if (selected === 'true' || selected === 'false') put('selected', selected === 'true');
  else if (el.localName === 'option') put('selected', el.selected);
  const pressed = el.getAttribute('aria-pressed');
  if (pressed === 'true' || pressed === 'false') put('pressed', pressed === 'true');
  return state;
}

// ---------------------------------------------------------------- dialog snapshots

function choiceValueOf(control) {
  if (control.localName === 'select') {
    return clean(Array.from(control.selectedOptions, (option) => option.label || option.text).join(', '));
  }
  if (control.localName === 'input' && control.type === 'checkbox') return control.checked ? 'checked' : 'unchecked';
  if (control.localName === 'input' && control.type === 'radio') return control.checked ? 'selected' : '';
  return null;
}

/**
 * A compact text snapshot of what a dialog shows: its visible text in
 * segments, description lists and two-cell rows as "Label: value", choice
 * controls as "Label: choice", joined with " · " and cut at the protocol's
 * maximum. Leaves out the dialog's own name, buttons, text fields' values
 * and sensitive subtrees.
 */
function snapshotText(container, dialogName) {
  const max = LIMITS.DIALOG_TEXT_MAX_CHARS;
  const segments = [];
  let length = 0;
  let current = [];
  const handled = new Set();
  const push = (text) => {
    const segment = clean(text);
    if (segment && segment !== dialogName && length < max) {
      segments.push(segment);
      length += segment.length + 3;
    }
  };
  const endSegment = () => {
    if (current.length) { push(current.join('')); current = []; }
  };
  const walk = (node) => {
    for (let child = node.firstChild; child && length < max; child = child.nextSibling) {
      if (child.nodeType === 3) { current.push(child.data); continue; }
      if (child.nodeType !== 1) continue;
      const tag = child.localName;
      if (hiddenByMarkup(child) || child.hasAttribute('data-sensitive') ||
          child.hasAttribute('data-uitrail-ignore') || child.hasAttribute('data-no-track')) continue;
      if (tag === 'button' || child.getAttribute('role') === 'button') continue;
      if (tag === 'dl') {
        endSegment();
        let term = '';
        for (const item of child.children) {
          if (item.localName === 'dt') term = textOf(item, LIMITS.CELL_MAX_CHARS);
          else if (item.localName === 'dd') push(term ? `${term}: ${textOf(item, LIMITS.CELL_MAX_CHARS)}` : textOf(item, LIMITS.CELL_MAX_CHARS));
        }
        continue;
      }
      if (tag === 'tr') {
        endSegment();
        const cells = Array.from(child.cells, (cell) => textOf(cell, LIMITS.CELL_MAX_CHARS, true)).filter(Boolean);
        push(cells.length === 2 ? `${cells[0]}: ${cells[1]}` : cells.join(' | '));
        continue;
      }
      if (tag === 'label') {
        endSegment();
        const control = child.control;
        if (control && !isSensitiveField(control)) {
          handled.add(control);
          const value = choiceValueOf(control);
          if (value) push(`${textOf(child, LIMITS.CELL_MAX_CHARS, true)}: ${value}`);
        }
        continue;
      }
      if (CONTROL_ELEMENTS.has(tag)) {
        if (!handled.has(child) && !isSensitiveField(child)) {
          const value = choiceValueOf(child);
          const name = accessibleName(child);
          if (value && name) { endSegment(); push(`${name}: ${value}`); }
        }
        continue;
      }
      if (tag === 'img') {
        const alt = child.getAttribute('alt');
        if (alt) current.push(' ', alt, ' ');
        continue;
      }
      const inline = INLINE_ELEMENTS.has(tag);
      if (!inline) endSegment();
      walk(child.shadowRoot || child);
      if (!inline) endSegment();
    }
  };
  walk(container);
  endSegment();
  return cut(segments.join(' · '), max);
}

// Used where no tracker state is at hand (snapshots): the markup alone.
function isSensitiveField(el) {
  return (el.localName === 'input' && el.type === 'password') ||
    closestComposed(el, '[data-sensitive]') !== null;
}

// ---------------------------------------------------------------- encoding

/** A Forward EventTime: msgpack ext type 0, uint32 seconds, uint32 ns. */
class EventTime {
  constructor(ms) { this.ms = ms; }
}

const eventTimeBytes = new Uint8Array(8);
const eventTimeView = new DataView(eventTimeBytes.buffer);
const extensionCodec = new ExtensionCodec();
extensionCodec.register({
  type: 0,
  encode(value) {
    if (!(value instanceof EventTime)) return null;
    const seconds = Math.floor(value.ms / 1000);
    const nanoseconds = Math.min(999999999, Math.max(0, Math.round((value.ms - seconds * 1000) * 1e6)));
    eventTimeView.setUint32(0, seconds);
    eventTimeView.setUint32(4, nanoseconds);
    // The encoder copies the bytes at once, so one scratch buffer serves.
    return eventTimeBytes;
  },
  decode(data) {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    return new EventTime(view.getUint32(0) * 1000 + view.getUint32(4) / 1e6);
  },
});

/** Decodes a byte string of Forward entries sent back to back, as the
 *  sender sends them; for tests and tools. */
export function decodeEntries(bytes) {
  return Array.from(decodeMulti(bytes, { extensionCodec }));
}

// ---------------------------------------------------------------- storage

function randomTabId() {
  const bytes = new Uint8Array(TAB_ID_BYTES);
  crypto.getRandomValues(bytes);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function readSavedTab() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) || 'null');
    if (saved && typeof saved.tab === 'string' && Number.isSafeInteger(saved.seq)) return saved;
  } catch {
    // Storage can be disabled or full; the tab id then lives in memory only.
  }
  return null;
}

function writeSavedTab(tab, seq) {
  try {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ tab, seq }));
  } catch {
    // As above: without storage a reload starts a new tab id.
  }
}

// ---------------------------------------------------------------- tracker

function navigationHowAtLoad() {
  const entry = performance.getEntriesByType && performance.getEntriesByType('navigation')[0];
  if (entry && entry.type === 'reload') return 'reload';
  if (entry && entry.type === 'back_forward') return 'pop';
  return 'load';
}

/**
 * Starts tracking the page and streaming to the daemon.
 *
 * options:
 *  - url: the daemon's base URL (default: the page's origin).
 *  - token: the ingest token, sent in Sec-WebSocket-Protocol (optional).
 *  - tab: the tab id (default: a random id kept in sessionStorage).
 *  - rowContext: "opt-in" (default), "always" or "never".
 *  - root: the element observed (default: document.documentElement).
 *  - transport: "websocket" (default) or "http" (POST /v1/ingest).
 *  - measure: when true, each handler's cost is recorded with
 *    performance.measure() as "uitrail:click", "uitrail:change" and
 *    "uitrail:flush" (for tools/bench-sender.mjs).
 *  - onRecord: called with (tag, record) for each record queued (tests).
 *  - tabInUrl: when true, the ingest URL carries the tab id as ?tab=ID, so
 *    that a proxy in front of several daemons can send every event of a
 *    tab to the daemon that serves its trace (tools/deploy, "A fleet").
 *
 * Returns { tab, stats, stop(), flush() }. stop() removes every listener and
 * closes the connection after a last attempt to send what is queued.
 */
export function start(options = {}) {
  const root = options.root || document.documentElement;
  const rowContext = options.rowContext || 'opt-in';
  if (!['opt-in', 'always', 'never'].includes(rowContext)) {
    throw new TypeError(`uitrail.start: rowContext must be "opt-in", "always" or "never", not ${JSON.stringify(rowContext)}`);
  }
  const transportKind = options.transport || 'websocket';
  if (transportKind !== 'websocket' && transportKind !== 'http') {
    throw new TypeError(`uitrail.start: transport must be "websocket" or "http", not ${JSON.stringify(transportKind)}`);
  }
  const baseUrl = String(options.url || location.origin).replace(/\/+$/, '');
  const measure = options.measure === true;
  const onRecord = typeof options.onRecord === 'function' ? options.onRecord : null;

  const saved = readSavedTab();
  const tab = options.tab || (saved ? saved.tab : randomTabId());
  const ingestQuery = options.tabInUrl === true ? `?tab=${encodeURIComponent(tab)}` : '';
  let seq = saved && saved.tab === tab ? saved.seq : 0;
  writeSavedTab(tab, seq);

  const stats = { queued: 0, sent: 0, acked: 0, dropped: 0, rejected: 0, reconnects: 0 };
  const elementKeys = new WeakMap();
  let nextElementKey = 1;
  const knownSecrets = new WeakSet();
  const cleanups = [];
  let stopped = false;

  const keyOf = (el) => {
    let key = elementKeys.get(el);
    if (key === undefined) {
      key = `e${(nextElementKey++).toString(36)}`;
      elementKeys.set(el, key);
    }
    return key;
  };

  const listen = (target, type, handler, capture) => {
    target.addEventListener(type, handler, capture);
    cleanups.push(() => target.removeEventListener(type, handler, capture));
  };

  // ------------------------------------------------------------ transport

  const encoder = new Encoder({ extensionCodec });
  let batchBuffer = new Uint8Array(4096);
  const queue = [];        // entries not yet in a batch: {tag, ms, record}
  const inflight = [];     // batches sent and not acknowledged: {chunk, bytes, count}
  let inflightEvents = 0;
  let chunkCounter = 0;
  const chunkPrefix = randomTabId().slice(0, 8);
  let socket = null;
  let socketOpen = false;
  let httpBusy = false;
  let backoffMs = LIMITS.BACKOFF_INITIAL_MS;
  let reconnectTimer = 0;
  let ackTimer = 0;
  let sendTimer = 0;

  /** Queues a record. A pending entry (a click waiting for its after-click
   *  state) holds back the entries behind it until it is completed. */
  const enqueue = (tag, record, ms, pending = false) => {
    record.seq = ++seq;
    const entry = { tag, ms, record, pending };
    queue.push(entry);
    stats.queued++;
    if (onRecord && !pending) onRecord(tag, record);
    while (queue.length && queue.length + inflightEvents > LIMITS.QUEUE_MAX_EVENTS) {
      queue.shift();
      stats.dropped++;
    }
    scheduleSend();
    return entry;
  };

  const scheduleSend = () => {
    if (!sendTimer && !stopped) sendTimer = setTimeout(sendPending, 0);
  };

  /** Encodes entries into one message; the last entry carries the chunk. */
  const encodeBatch = (entries, chunk) => {
    let length = 0;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      const message = chunk !== undefined && i === entries.length - 1
        ? [entry.tag, new EventTime(entry.ms), entry.record, { chunk }]
        : [entry.tag, new EventTime(entry.ms), entry.record];
      const bytes = encoder.encodeSharedRef(message);
      if (length + bytes.length > batchBuffer.length) {
        const grown = new Uint8Array(Math.max(batchBuffer.length * 2, length + bytes.length));
        grown.set(batchBuffer.subarray(0, length));
        batchBuffer = grown;
      }
      batchBuffer.set(bytes, length);
      length += bytes.length;
    }
    return batchBuffer.slice(0, length);
  };

  /** Takes the next batch off the queue, or null when nothing is ready. A
   *  click waiting for its after-click state holds back what follows it. */
  const takeBatch = (withChunk) => {
    let count = 0;
    while (count < queue.length && count < LIMITS.BATCH_MAX_EVENTS && !queue[count].pending) count++;
    if (count === 0) return null;
    const entries = queue.splice(0, count);
    const chunk = withChunk ? `${chunkPrefix}.${(++chunkCounter).toString(36)}` : undefined;
    const t0 = measure ? performance.now() : 0;
    const bytes = encodeBatch(entries, chunk);
    if (measure) performance.measure('uitrail:encode', { start: t0, end: performance.now() });
    // The highest seq that may reach the daemon is saved before it is sent,
    // so a reloaded page never reuses a seq the daemon has applied.
    writeSavedTab(tab, entries[entries.length - 1].record.seq);
    return { chunk, bytes, count };
  };

  const armAckTimer = () => {
    clearTimeout(ackTimer);
    ackTimer = inflight.length ? setTimeout(onAckTimeout, LIMITS.ACK_TIMEOUT_MS) : 0;
  };

  const onAckTimeout = () => {
    ackTimer = 0;
    if (socket) socket.close(1000, 'ack timeout');
  };

  const scheduleReconnect = () => {
    if (stopped || reconnectTimer) return;
    // Full jitter keeps many tabs from reconnecting in step after a restart.
    const delay = backoffMs / 2 + Math.random() * (backoffMs / 2);
    backoffMs = Math.min(backoffMs * 2, LIMITS.BACKOFF_MAX_MS);
    reconnectTimer = setTimeout(() => {
      reconnectTimer = 0;
      if (transportKind === 'websocket') connect();
      else sendPending();
    }, delay);
  };

  const onAck = (chunk) => {
    const index = inflight.findIndex((batch) => batch.chunk === chunk);
    if (index < 0) return;
    const [batch] = inflight.splice(index, 1);
    inflightEvents -= batch.count;
    stats.acked += batch.count;
    backoffMs = LIMITS.BACKOFF_INITIAL_MS;
    armAckTimer();
    sendPending();
  };

  const onSocketMessage = (event) => {
    let reply;
    try {
      reply = typeof event.data === 'string' ? JSON.parse(event.data) : decode(new Uint8Array(event.data));
    } catch {
      return; // Not an ack; the daemon sends nothing else to a sender.
    }
    if (reply && typeof reply === 'object' && 'ack' in reply) onAck(reply.ack);
  };

  const connect = () => {
    if (stopped || socket) return;
    const protocols = ['uitrail.v1'];
    if (options.token) protocols.push(`uitrail.token.${options.token}`);
    let ws;
    try {
      ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/ingest${ingestQuery}`, protocols);
    } catch {
      scheduleReconnect();
      return;
    }
    ws.binaryType = 'arraybuffer';
    socket = ws;
    ws.onopen = () => {
      socketOpen = true;
      // Whatever was sent before and not acknowledged goes again, first and
      // in order; the daemon drops what it already applied by seq.
      for (const batch of inflight) ws.send(batch.bytes);
      stats.sent += inflightEvents;
      armAckTimer();
      sendPending();
    };
    ws.onmessage = onSocketMessage;
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = null;
      socketOpen = false;
      clearTimeout(ackTimer);
      ackTimer = 0;
      if (!stopped) {
        stats.reconnects++;
        scheduleReconnect();
      }
    };
  };

  const postBatch = (batch, keepalive) => {
    const headers = { 'content-type': 'application/msgpack' };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    return fetch(`${baseUrl}/v1/ingest${ingestQuery}`, {
      method: 'POST', headers, body: batch.bytes,
      keepalive: keepalive && batch.bytes.length <= LIMITS.KEEPALIVE_BODY_MAX_BYTES,
    });
  };

  const sendHttp = () => {
    if (httpBusy || reconnectTimer) return;
    const batch = inflight[0] || takeBatch(false);
    if (!batch) return;
    if (!inflight.length) { inflight.push(batch); inflightEvents += batch.count; }
    httpBusy = true;
    stats.sent += batch.count;
    postBatch(batch, false).then((response) => {
      httpBusy = false;
      if (response.ok || (response.status >= 400 && response.status < 500 &&
          response.status !== 408 && response.status !== 429)) {
        // A 4xx other than a throttle names a batch the daemon will never
        // take; retrying it would block every later event.
        if (!response.ok) stats.rejected += batch.count;
        inflight.shift();
        inflightEvents -= batch.count;
        if (response.ok) stats.acked += batch.count;
        backoffMs = LIMITS.BACKOFF_INITIAL_MS;
        sendPending();
      } else {
        scheduleReconnect();
      }
    }, () => {
      httpBusy = false;
      scheduleReconnect();
    });
  };

  function sendPending() {
    clearTimeout(sendTimer);
    sendTimer = 0;
    if (transportKind === 'http') { sendHttp(); return; }
    if (!socketOpen) { if (!socket && !reconnectTimer) connect(); return; }
    while (inflight.length < LIMITS.INFLIGHT_MAX_BATCHES) {
      const batch = takeBatch(true);
      if (!batch) break;
      inflight.push(batch);
      inflightEvents += batch.count;
      stats.sent += batch.count;
      socket.send(batch.bytes);
    }
    if (inflight.length && !ackTimer) armAckTimer();
  }

  /** Last-chance send when the page goes away: everything queued, at once,
   *  past the in-flight cap (there will be no later turn). */
  const sendNow = () => {
    for (const entry of queue) entry.pending = false;
    if (transportKind === 'http') {
      const pendingBatches = inflight.slice(httpBusy ? 1 : 0);
      for (let batch = takeBatch(false); batch; batch = takeBatch(false)) pendingBatches.push(batch);
      for (const batch of pendingBatches) postBatch(batch, true).catch(() => {});
      return;
    }
    if (!socketOpen) return;
    for (let batch = takeBatch(true); batch; batch = takeBatch(true)) {
      inflight.push(batch);
      inflightEvents += batch.count;
      socket.send(batch.bytes);
    }
  };

  const nowMs = () => performance.timeOrigin + performance.now();
  const eventMs = (event) => performance.timeOrigin + event.timeStamp;

  // ------------------------------------------------------------ navigation

  let lastUrl = '';
  const reportNavigation = (how) => {
    const url = location.href;
    if (url === lastUrl && how !== 'reload') return;
    lastUrl = url;
    enqueue('uitrail.nav', {
      tab, url: cut(url, LIMITS.URL_MAX_CHARS), title: cut(clean(document.title), LIMITS.TITLE_MAX_CHARS),
      how, tz: -new Date().getTimezoneOffset() || 0, // never -0
    }, nowMs());
  };

  const hasNavigationApi = typeof navigation !== 'undefined' && navigation && typeof navigation.addEventListener === 'function';
  if (hasNavigationApi) {
    let pendingHow = 'push';
    listen(navigation, 'navigate', (event) => {
      const type = event.navigationType;
      pendingHow = event.hashChange ? 'hash' : type === 'traverse' ? 'pop' : type === 'replace' ? 'replace' : type === 'reload' ? 'reload' : 'push';
    }, false);
    // The title is read one task later: routers usually set it right after
    // the URL changes.
    listen(navigation, 'navigatesuccess', () => {
      const how = pendingHow;
      setTimeout(() => { if (!stopped) reportNavigation(how); }, 0);
    }, false);
  } else {
    listen(window, 'popstate', () => reportNavigation('pop'), false);
    listen(window, 'hashchange', () => reportNavigation('hash'), false);
  }

  // ------------------------------------------------------------ clicks

  let clicksAwaitingState = [];
  let clickStateTimer = 0;
  // A click on a check box or radio button fires its change event in the
  // same turn. The click record already carries `state.checked`, so that
  // change would only repeat it (and, between two clicks, break the run of
  // clicks the daemon coalesces into a burst); it is not sent.
  let lastClickedElement = null;

  const fillClickStates = () => {
    clickStateTimer = 0;
    const t0 = measure ? performance.now() : 0;
    for (const { entry, el } of clicksAwaitingState) {
      if (!entry.record.sens) {
        const state = clickStateOf(el);
        if (state) entry.record.state = state;
      }
      entry.pending = false;
      if (onRecord) onRecord(entry.tag, entry.record);
    }
    clicksAwaitingState = [];
    lastClickedElement = null;
    if (measure) performance.measure('uitrail:click-state', { start: t0, end: performance.now() });
    scheduleSend();
  };

  /** Finds the element a click or change is about: the nearest actionable
   *  element on the event's composed path inside root, or null when the
   *  event is outside root or under an ignored subtree. */
  const actionTarget = (event, actionableOnly) => {
    const path = event.composedPath();
    let target = null;
    let insideRoot = false;
    for (const node of path) {
      if (!isElement(node)) continue;
      if (node.hasAttribute('data-no-track') || node.hasAttribute('data-uitrail-ignore')) return null;
      if (!target && (!actionableOnly || isActionable(node))) target = node;
      if (node === root) { insideRoot = true; break; }
    }
    return insideRoot ? target : null;
  };

  const onClick = (event) => {
    const t0 = measure ? performance.now() : 0;
    const el = actionTarget(event, true);
    if (el) {
      const role = cut(roleOf(el), LIMITS.ROLE_MAX_CHARS);
      let record;
      if (isSensitive(el, knownSecrets)) {
        record = { tab, role, el: keyOf(el), sens: true };
      } else {
        const name = accessibleName(el, role);
        if (name) {
          record = { tab, role, name, el: keyOf(el) };
          const ctx = contextOf(el, rowContext);
          if (ctx) record.ctx = ctx;
        }
      }
      if (record) {
        // State is read after the default action and the page's handlers
        // ran; until then the click holds its place in the queue.
        const entry = enqueue('uitrail.click', record, eventMs(event), true);
        lastClickedElement = el;
        clicksAwaitingState.push({ entry, el });
        if (!clickStateTimer) clickStateTimer = setTimeout(fillClickStates, 0);
      }
    }
    if (measure) performance.measure('uitrail:click', { start: t0, end: performance.now() });
  };

  const onChange = (event) => {
    const t0 = measure ? performance.now() : 0;
    const el = actionTarget(event, false);
    const echoOfClick = el !== null && el === lastClickedElement && el.localName === 'input' && CHOICE_INPUT_TYPES.has(el.type);
    if (el && !echoOfClick && CONTROL_ELEMENTS.has(el.localName) && el.localName !== 'button') {
      const role = cut(roleOf(el), LIMITS.ROLE_MAX_CHARS);
      const record = { tab, role, el: keyOf(el) };
      if (isSensitive(el, knownSecrets)) {
        record.sens = true;
      } else {
        const name = accessibleName(el, role);
        if (name) record.name = name;
        if (el.localName === 'input' && CHOICE_INPUT_TYPES.has(el.type)) {
          record.checked = el.checked;
        } else if (el.localName === 'select') {
          record.value = cut(choiceValueOf(el), LIMITS.VALUE_MAX_CHARS);
        } else if (closestComposed(el, '[data-track-value]')) {
          record.value = cut(String(el.value), LIMITS.VALUE_MAX_CHARS);
        } else if (typeof el.value === 'string') {
          record.len = codePointLength(el.value);
        }
      }
      enqueue('uitrail.change', record, eventMs(event));
    }
    if (measure) performance.measure('uitrail:change', { start: t0, end: performance.now() });
  };

  // ------------------------------------------------------------ mutations

  const dom = { elements: 0, depth: 0 };
  let lastResync = 0;
  let resyncNeeded = false;
  const busyCandidates = new Set();
  const dialogCandidates = new Set();
  const openDialogs = new Map();   // element -> {role, name, text}
  const liveRegionTexts = new WeakMap();
  let pendingRecords = [];
  let frameRequest = 0;
  let fallbackTimer = 0;

  /** Counts elements and the maximum depth under root: one walk, done at
   *  start and then at most every DOM_RESYNC_MS, never per flush. */
  const measureTree = () => {
    let elements = 0;
    let maxDepth = 0;
    let depth = 1;
    let node = root;
    while (node) {
      elements++;
      if (depth > maxDepth) maxDepth = depth;
      if (node.firstElementChild) { node = node.firstElementChild; depth++; continue; }
      while (node && node !== root && !node.nextElementSibling) { node = node.parentElement; depth--; }
      if (!node || node === root) break;
      node = node.nextElementSibling;
    }
    dom.elements = elements;
    dom.depth = maxDepth;
    lastResync = performance.now();
    resyncNeeded = false;
  };

  const depthOf = (el) => {
    let depth = 1;
    for (let node = el; node && node !== root; node = node.parentElement) depth++;
    return depth;
  };

  const isBusy = (el) => {
    if (el.getAttribute('aria-busy') === 'true') return true;
    if (el.getAttribute('role') === 'progressbar') {
      if (!el.hasAttribute('aria-valuenow')) return true;
      const max = el.hasAttribute('aria-valuemax') ? Number(el.getAttribute('aria-valuemax')) : 100;
      return Number(el.getAttribute('aria-valuenow')) < max;
    }
    if (el.localName === 'progress') return !el.hasAttribute('value') || el.value < el.max;
    if (el.hasAttribute('data-loading')) return el.getAttribute('data-loading') !== 'false';
    return el.matches(BUSY_SELECTOR);
  };

  const noteCandidates = (el) => {
    if (el.matches(BUSY_SELECTOR)) busyCandidates.add(el);
    if (el.matches(DIALOG_SELECTOR)) dialogCandidates.add(el);
    if (el.firstElementChild) {
      for (const found of el.querySelectorAll(BUSY_SELECTOR)) busyCandidates.add(found);
      for (const found of el.querySelectorAll(DIALOG_SELECTOR)) dialogCandidates.add(found);
    }
    rememberPasswordFields(el, knownSecrets);
  };

  const dialogRoleOf = (el) => {
    const role = roleOf(el);
    return DIALOG_ROLES.has(role) ? role : 'dialog';
  };

  const reportDialogs = (touched, ms) => {
    for (const el of dialogCandidates) {
      const open = el.isConnected && !closestComposed(el, IGNORE_SELECTOR) && isVisible(el);
      const known = openDialogs.get(el);
      if (open && !known) {
        const role = dialogRoleOf(el);
        const name = accessibleName(el, 'none');
        const text = snapshotText(el, name);
        openDialogs.set(el, { role, name, text });
        const record = { tab, state: 'open', role, el: keyOf(el), text };
        if (name) record.name = name;
        enqueue('uitrail.dialog', record, ms);
      } else if (open && known && touched.some((target) => el.contains(target))) {
        const text = snapshotText(el, known.name);
        if (text !== known.text) {
          known.text = text;
          const record = { tab, state: 'open', role: known.role, el: keyOf(el), text };
          if (known.name) record.name = known.name;
          enqueue('uitrail.dialog', record, ms);
        }
      } else if (!open && known) {
        openDialogs.delete(el);
        const record = { tab, state: 'close', role: known.role, el: keyOf(el), text: known.text };
        if (known.name) record.name = known.name;
        enqueue('uitrail.dialog', record, ms);
      }
      if (!el.isConnected && !known) dialogCandidates.delete(el);
    }
  };

  const reportAlert = (region, ms) => {
    if (isSensitiveField(region) || !isVisible(region)) return;
    const text = textOf(region, LIMITS.ALERT_TEXT_MAX_CHARS);
    const previous = liveRegionTexts.get(region) || '';
    liveRegionTexts.set(region, text);
    if (!text || text === previous) return;
    const role = region.getAttribute('role');
    const record = { tab, role, text };
    const level = region.getAttribute('data-level') || levelFromClass(region.className);
    if (level) record.level = level;
    enqueue('uitrail.alert', record, ms);
  };

  /** Turns the mutations gathered since the last frame into one record. */
  const flushMutations = () => {
    if (!frameRequest) return; // Flushed already by the frame or the timer.
    cancelAnimationFrame(frameRequest);
    clearTimeout(fallbackTimer);
    frameRequest = 0;
    fallbackTimer = 0;
    if (stopped) return;
    const t0 = performance.now();
    const batches = pendingRecords;
    pendingRecords = [];
    const late = observer.takeRecords();
    if (late.length) batches.push(late);

    const targets = new Map();     // element -> [childList, attributes, characterData] slots
    const ignored = new Map();     // element -> bool, per flush
    const liveRegions = new Set();
    const touched = [];
    let layoutChanged = false;
    let addedElements = 0;

    for (const records of batches) {
      for (const record of records) {
        const target = isElement(record.target) ? record.target : record.target.parentElement;
        if (!target) continue;
        let skip = ignored.get(target);
        if (skip === undefined) {
          skip = target.closest('[data-uitrail-ignore]') !== null;
          ignored.set(target, skip);
          if (!skip) {
            touched.push(target);
            const region = target.closest(LIVE_REGION_SELECTOR);
            if (region) liveRegions.add(region);
          }
        }
        if (skip) continue;
        const kind = MUTATION_KIND[record.type];
        let slots = targets.get(target);
        if (!slots) { slots = [null, null, null]; targets.set(target, slots); }
        const slot = slots[kind] || (slots[kind] = { nodes: 0, bytes: 0 });
        if (kind === 0) {
          layoutChanged = true;
          slot.nodes += record.addedNodes.length + record.removedNodes.length;
          for (const node of record.addedNodes) {
            slot.bytes = Math.min(LIMITS.MUTATION_BYTES_CAP, slot.bytes + sizeOf(node));
            if (isElement(node)) {
              if (node.isConnected) {
                noteCandidates(node);
                if (node.matches(LIVE_REGION_SELECTOR)) liveRegions.add(node);
                else if (node.firstElementChild) {
                  for (const region of node.querySelectorAll(LIVE_REGION_SELECTOR)) liveRegions.add(region);
                }
              }
              addedElements += 1 + node.getElementsByTagName('*').length;
            }
          }
          for (const node of record.removedNodes) {
            slot.bytes = Math.min(LIMITS.MUTATION_BYTES_CAP, slot.bytes + sizeOf(node));
            if (isElement(node)) addedElements -= 1 + node.getElementsByTagName('*').length;
          }
        } else if (kind === 1) {
          layoutChanged = true;
          const attribute = record.attributeName;
          if (BUSY_ATTRIBUTES.has(attribute) && target.matches(BUSY_SELECTOR)) busyCandidates.add(target);
          if (attribute === 'role' && target.matches(DIALOG_SELECTOR)) dialogCandidates.add(target);
          if (attribute === 'type' && target.localName === 'input' && target.type === 'password') knownSecrets.add(target);
        }
      }
    }

    // The element count follows the added and removed subtrees (their sizes
    // are proportional to the change, not to the page) and is re-measured
    // exactly now and then, since nested insertions can be counted twice.
    if (addedElements !== 0) {
      dom.elements = Math.max(1, dom.elements + addedElements);
      resyncNeeded = true;
    }
    if (resyncNeeded && t0 - lastResync > LIMITS.DOM_RESYNC_MS) measureTree();

    if (targets.size) {
      const recs = [];
      let dropped = 0;
      for (const [target, slots] of targets) {
        const depth = depthOf(target);
        if (depth > dom.depth) dom.depth = depth;
        const subtree = target === root ? dom.elements - 1 : target.getElementsByTagName('*').length;
        for (let kind = 0; kind < 3; kind++) {
          const slot = slots[kind];
          if (!slot) continue;
          if (recs.length >= LIMITS.MUTATION_RECS_MAX) { dropped++; continue; }
          recs.push([keyOf(target), kind, depth, subtree, slot.nodes, slot.bytes]);
        }
      }
      const ms = performance.timeOrigin + t0;
      const record = { tab, dom: [dom.elements, dom.depth], recs, busy: countBusy() };
      if (dropped) record.dropped = dropped;
      enqueue('uitrail.mutation', record, ms);
      if (layoutChanged && dialogCandidates.size) reportDialogs(touched, ms);
      for (const region of liveRegions) reportAlert(region, ms);
      if (!hasNavigationApi && location.href !== lastUrl) reportNavigation('push');
    }
    if (measure) performance.measure('uitrail:flush', { start: t0, end: performance.now() });
  };

  // Loading indicators on the page now (busy candidates are kept up to date
  // from the mutations, so this is no query of the whole tree).
  const countBusy = () => {
    let busy = 0;
    for (const el of busyCandidates) {
      if (!el.isConnected) { busyCandidates.delete(el); continue; }
      if (isBusy(el) && !el.closest('[data-uitrail-ignore]') && isVisible(el)) busy++;
    }
    return busy;
  };

  // The flush runs in a task posted from the animation frame callback, that
  // is right after the frame was rendered: style and layout are then clean,
  // so the visibility checks of busy indicators and dialogs read them
  // instead of forcing a recalculation in the middle of the page's work.
  const afterFrame = new MessageChannel();
  afterFrame.port1.onmessage = () => flushMutations();
  const observer = new MutationObserver((records) => {
    pendingRecords.push(records);
    if (!frameRequest) {
      frameRequest = requestAnimationFrame(() => afterFrame.port2.postMessage(null));
      fallbackTimer = setTimeout(flushMutations, LIMITS.FLUSH_FALLBACK_MS);
    }
  });

  // ------------------------------------------------------------ lifecycle

  const onPageHide = () => {
    enqueue('uitrail.close', { tab }, nowMs());
    sendNow();
    writeSavedTab(tab, seq);
  };

  const onPageShow = (event) => {
    // A page restored from the back-forward cache is the same tab again.
    if (event.persisted) { lastUrl = ''; reportNavigation('pop'); }
  };

  const onVisibilityChange = () => {
    if (document.visibilityState === 'hidden') sendPending();
  };

  measureTree();
  noteCandidates(root);
  for (const el of dialogCandidates) {
    if (isVisible(el)) {
      const name = accessibleName(el, 'none');
      openDialogs.set(el, { role: dialogRoleOf(el), name, text: snapshotText(el, name) });
    }
  }
  observer.observe(root, { childList: true, subtree: true, attributes: true, characterData: true });
  listen(document, 'click', onClick, true);
  listen(document, 'change', onChange, true);
  listen(window, 'pagehide', onPageHide, false);
  listen(window, 'pageshow', onPageShow, false);
  listen(document, 'visibilitychange', onVisibilityChange, false);
  reportNavigation(navigationHowAtLoad());
  // A first mutation record with the tree as it is and no changes: the
  // daemon then knows this tab reports mutations, so a page that never
  // changes still gets its stable mark, and the loading indicators present
  // at start hold the page "changing" until they go.
  enqueue('uitrail.mutation', { tab, dom: [dom.elements, dom.depth], recs: [], busy: countBusy() }, nowMs());

  return {
    tab,
    stats,
    /** Sends what is queued now instead of on the next turn. */
    flush() { sendPending(); },
    /** Stops tracking: listeners and observer removed, what is queued sent
     *  when the connection allows, then the connection closed. */
    stop() {
      if (stopped) return;
      observer.disconnect();
      for (const cleanup of cleanups) cleanup();
      clearTimeout(clickStateTimer);
      if (clicksAwaitingState.length) fillClickStates();
      sendNow();
      stopped = true;
      clearTimeout(sendTimer);
      clearTimeout(reconnectTimer);
      clearTimeout(ackTimer);
      clearTimeout(fallbackTimer);
      cancelAnimationFrame(frameRequest);
      frameRequest = 0;
      afterFrame.port1.close();
      if (socket) socket.close(1000, 'stopped');
    },
  };
}

/** Size of an added or removed node for `bytes`: its markup length, or the
 *  cap at once for a subtree too large to serialize cheaply. */
function sizeOf(node) {
  if (node.nodeType === 3) return node.data.length;
  if (node.nodeType !== 1) return 0;
  if (node.getElementsByTagName('*').length > LIMITS.MUTATION_MEASURE_ELEMENTS_MAX) return LIMITS.MUTATION_BYTES_CAP;
  return node.outerHTML.length;
}

/** The length of text in characters (code points), as a user counts them. */
function codePointLength(text) {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xdc00 && unit <= 0xdfff && i > 0) length--;
  }
  return length;
}

function levelFromClass(className) {
  if (typeof className !== 'string') return '';
  if (/\b(error|danger|invalid|fail)/i.test(className)) return 'error';
  if (/\bwarn/i.test(className)) return 'warning';
  if (/\b(info|success|notice)/i.test(className)) return 'info';
  return '';
}

export { EventTime, extensionCodec, accessibleName, roleOf, snapshotText };
export default { start, LIMITS };
