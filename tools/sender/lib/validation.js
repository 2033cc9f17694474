// Form validation (`uitrail.invalid`): the controls an action found
// invalid and the message the page showed for each, so that a submit that
// only made error messages appear reads `→ invalid: [textbox] "Amount":
// "Enter an amount"`, not `→ page changed`.
//
// Where a message comes from, in this order, for a control that is invalid
// (`aria-invalid="true"`, `:invalid`, the target of an `invalid` event of
// native constraint validation, or a control whose field just showed an
// alert: a message announced next to one control is about that control):
//  - text that became visible since the action began in the control's
//    `aria-errormessage` or `aria-describedby` elements, or in its field:
//    the largest ancestor (a few levels up) holding no other control,
//    outside the control itself and its labels. That is how frameworks
//    show messages: one class on the form makes hidden feedback visible, or
//    a message element is added next to the control;
//  - else, for an `invalid` event, the browser's validationMessage.
// "Became visible since the action began" is what tells a message from a
// hint that was always there: a baseline of the visible text of every
// control's field is taken when an action begins. No library is known by
// name. A message is page text (the daemon redacts and escapes it) and
// never the typed value: a value quoted in it is replaced.
//
// A message stays the field's current message while what marked its
// control invalid when it appeared still does (staleMessages): a field
// that became valid keeps its old message on screen for a moment (a
// library fades it out, a debounce later), and a dialog closing then must
// not read it as still there.

import { LIMITS, clean, cut, isIgnored, isVisible, isVisuallyHidden, nowMs, textOf } from './dom.js';
import { levelFromClass } from './ephemera.js';
import { accessibleName, actionRoleOf, isSensitive } from './naming.js';

const CONTROL_SELECTOR = [
  'input:not([type="hidden"]):not([type="submit"]):not([type="button"]):not([type="reset"]):not([type="image"])',
  'select', 'textarea', '[role="textbox"]', '[role="combobox"]', '[role="spinbutton"]', '[role="checkbox"]',
  '[role="radio"]', '[role="switch"]', '[role="slider"]', '[role="searchbox"]',
].join(',');
// After an action began, flushes are checked for messages this long.
const CHECK_WINDOW_MS = 2000;
// Messages that appear over a few frames (a framework validating each
// field in turn) go out as one record, this long after the first.
const GATHER_MS = 100;
// A field is at most this many levels above its control.
const FIELD_LEVELS_MAX = 6;
// Controls looked at in one baseline or check, and text elements in one
// field: bounds on a page of thousands of controls (a data grid).
const CONTROLS_MAX = 300;
const FIELD_ELEMENTS_MAX = 60;
// A typed value this short is not looked for in a message ("1", "no").
const VALUE_QUOTE_MIN_CHARS = 3;
const ANNOUNCING = '[role="alert"],[aria-live="assertive"],[aria-live="polite"]';

function isControl(el) {
  return el.nodeType === 1 && el.matches(CONTROL_SELECTOR);
}

/** The field of a control: the largest ancestor, at most FIELD_LEVELS_MAX
 *  up, that holds no other control; null when even its parent holds one. */
function fieldOf(control) {
  let field = null;
  let node = control.parentElement;
  for (let level = 0; node && level < FIELD_LEVELS_MAX; level++, node = node.parentElement) {
    if (node.localName === 'form' || node.localName === 'body' || node === document.documentElement) break;
    let controls = 0;
    for (const el of node.querySelectorAll(CONTROL_SELECTOR)) {
      if (el !== control && !control.contains(el)) { controls++; break; }
    }
    if (controls) break;
    field = node;
  }
  return field;
}

/** Whether an element of no size is growing into view: an animation or a
 *  transition runs on it (a message that opens from height 0; rc-motion,
 *  Vue's <transition>). It is on its way in from its first frame, which is
 *  when the page showed it; a frame without a DOM change may not come
 *  before the user's next action. */
function isGrowing(el) {
  return typeof el.getAnimations === 'function' && el.getAnimations().length > 0;
}

/** The elements of `root`'s tree named by the ids in attribute `name`. */
function referenced(control, name) {
  const ids = control.getAttribute(name);
  if (!ids) return [];
  const root = control.getRootNode();
  if (!root.getElementById) return [];
  return ids.split(/\s+/).map((id) => id && root.getElementById(id)).filter(Boolean);
}

/** The visible pieces of text that may be a control's message: elements
 *  of its field holding text of their own (outside the control and its
 *  labels), and its errormessage and describedby elements. Map el → text. */
function textsAround(control) {
  const found = new Map();
  const take = (el) => {
    // Text only screen readers get (a select's live echo of the option
    // just chosen, in a box of no size) is no message the user saw. A box
    // of one pixel is not taken for hidden here: a recording replayed
    // without a layout (uitrail import) gives every element that box.
    if (found.has(el) || isIgnored(el) || !isVisible(el) || (isVisuallyHidden(el, 0) && !isGrowing(el))) return;
    for (const kept of found.keys()) if (kept.contains(el)) return;
    const text = textOf(el, LIMITS.INVALID_TEXT_MAX_CHARS, true);
    if (text) found.set(el, { text, announced: el.closest(ANNOUNCING) !== null });
  };
  for (const el of referenced(control, 'aria-errormessage')) take(el);
  for (const el of referenced(control, 'aria-describedby')) take(el);
  const field = fieldOf(control);
  if (!field) return found;
  let seen = 0;
  for (const el of field.querySelectorAll('*')) {
    if (++seen > FIELD_ELEMENTS_MAX) break;
    if (el.contains(control) || control.contains(el) || el.closest('label') || isControl(el)) continue;
    if (el.localName === 'button' || el.getAttribute('role') === 'button') continue;
    let own = false;
    for (let child = el.firstChild; child && !own; child = child.nextSibling) {
      own = child.nodeType === 3 && child.data.trim() !== '';
    }
    if (own) take(el);
  }
  return found;
}

/** What marks a control invalid now, each apart: `aria-invalid="true"`,
 *  native constraint validation (`:invalid`), and an error word in the
 *  class of the control or of an element of its field around it (a
 *  library that marks the field, `is-error`, `has-error`, `is-invalid`,
 *  and sets no ARIA). */
function invalidMarks(control) {
  const field = fieldOf(control);
  let marked = levelFromClass(control.getAttribute('class')) === 'error';
  for (let node = field && control.parentElement; node && !marked; node = node === field ? null : node.parentElement) {
    marked = levelFromClass(node.getAttribute('class')) === 'error';
  }
  return {
    aria: control.getAttribute('aria-invalid') === 'true',
    // validity, not matches(':invalid'): jsdom (uitrail import) answers
    // that selector with checkValidity(), which fires `invalid` events
    // (onInvalid), and would check again without end.
    native: Boolean(control.validity) && control.validity.valid === false,
    marked,
  };
}

/** Whether a message that appeared while `then` marked its control
 *  invalid is stale: every mark it had is gone. A message that appeared
 *  with no mark at all (an alert next to a control) has nothing to lose. */
function marksGone(then, control) {
  const now = invalidMarks(control);
  const had = Object.keys(then).filter((mark) => then[mark]);
  return had.length > 0 && had.every((mark) => !now[mark]);
}

/** The message with the control's own value taken out. */
function withoutValue(text, control) {
  const value = typeof control.value === 'string' ? clean(control.value) : '';
  if (value.length < VALUE_QUOTE_MIN_CHARS) return text;
  return text.split(value).join('…');
}

/**
 * Creates the validation reporter.
 *  - tab, root, knownSecrets: the tracker's;
 *  - transport: enqueue.
 */
export function createValidation({ tab, root, knownSecrets, transport }) {
  let baseline = new WeakMap(); // text element → text, visible when the action began
  let windowEnd = -Infinity;    // performance.now() until which flushes are checked
  let invalidEvents = new Set(); // controls an `invalid` event named since the action
  let sent = new WeakMap();     // control → message sent since the action
  let gathered = null;          // {ms, fields: Map control → message, timer}
  // control → {elements, marks}: the elements of the last message that
  // appeared for it and what marked it invalid then (staleMessages).
  const shown = new Map();

  const controls = () => {
    const found = new Set(invalidEvents);
    let n = 0;
    for (const el of root.querySelectorAll(CONTROL_SELECTOR)) {
      if (++n > CONTROLS_MAX) break;
      found.add(el);
    }
    return found;
  };

  const isInvalid = (el) => el.getAttribute('aria-invalid') === 'true' || invalidEvents.has(el) ||
    (typeof el.matches === 'function' && el.matches(':invalid'));

  /** The baseline: what every control's field shows as an action begins. */
  const takeBaseline = () => {
    baseline = new WeakMap();
    for (const control of controls()) {
      for (const [el, { text }] of textsAround(control)) baseline.set(el, text);
    }
  };

  const send = () => {
    const fields = [];
    const entries = [...gathered.fields].filter(([control]) => control.isConnected || invalidEvents.has(control));
    entries.sort(([a], [b]) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    for (const [control, text] of entries.slice(0, LIMITS.INVALID_FIELDS_MAX)) {
      const role = cut(actionRoleOf(control) || 'textbox', LIMITS.ROLE_MAX_CHARS);
      const field = { role, text };
      if (!isSensitive(control, knownSecrets)) {
        const name = accessibleName(control, role);
        if (name) field.name = name;
      }
      fields.push(field);
    }
    const ms = gathered.ms;
    gathered = null;
    if (fields.length) transport.enqueue('uitrail.invalid', { tab, fields }, ms);
  };

  const remember = (control, elements) => {
    shown.delete(control);
    shown.set(control, { elements, marks: invalidMarks(control) });
    for (const kept of shown.keys()) {
      if (shown.size <= CONTROLS_MAX) break;
      shown.delete(kept);
    }
  };

  /** Looks for messages that appeared since the baseline, as of `ms`. */
  const check = (ms) => {
    if (!checkedThisTask) {
      checkedThisTask = true;
      queueMicrotask(() => { checkedThisTask = false; });
    }
    for (const control of controls()) {
      if (isIgnored(control)) continue;
      const fresh = [];
      const elements = new Set();
      let announced = false;
      for (const [el, found] of textsAround(control)) {
        if (baseline.get(el) === found.text) continue;
        fresh.push(found.text);
        elements.add(el);
        announced = announced || found.announced;
      }
      if (!announced && !isInvalid(control)) continue;
      if (elements.size) remember(control, elements);
      let message = clean(fresh.join(' '));
      if (!message && invalidEvents.has(control)) message = clean(control.validationMessage || '');
      message = cut(withoutValue(message, control), LIMITS.INVALID_TEXT_MAX_CHARS);
      if (!message || sent.get(control) === message) continue;
      sent.set(control, message);
      if (!gathered) gathered = { ms, fields: new Map(), timer: setTimeout(send, GATHER_MS) };
      gathered.fields.set(control, message);
    }
  };

  const onInvalid = (event) => {
    const control = event.target;
    if (!control || control.nodeType !== 1 || !root.contains(control)) return;
    // Validation no action asked for (a script's reportValidity()): its
    // baseline is the page as it is now.
    if (performance.now() > windowEnd) beginAction();
    invalidEvents.add(control);
    const ms = nowMs();
    // A native message may change nothing in the DOM: no flush would come.
    setTimeout(() => check(ms), 0);
  };

  const sendGathered = () => {
    if (gathered) { clearTimeout(gathered.timer); send(); }
  };
  // Whether the task running now has looked at the page already.
  let checkedThisTask = false;

  /** An action begins (before the page's handlers ran). */
  const beginAction = () => {
    sendGathered();
    invalidEvents = new Set();
    sent = new WeakMap();
    windowEnd = performance.now() + CHECK_WINDOW_MS;
    takeBaseline();
  };

  const views = [];
  return {
    beginAction,
    /** The user types, at `ms`: the messages the page shows by then (a
     *  style sheet may reveal one with no DOM change, so no flush looked)
     *  are the answer to the action before, and go out at once, before
     *  the keystroke's record. */
    beforeTyping(ms) {
      if (!checkedThisTask && performance.now() <= windowEnd) check(ms);
      sendGathered();
    },
    /** A flush of the page's changes, as of `ms`. */
    afterFlush(ms) {
      if (performance.now() <= windowEnd) check(ms);
    },
    /** Whether a live region is a control's validation message (reported
     *  here, not as an alert): it sits in the field of one control (within
     *  what fieldOf() takes for the field: a page-wide message beside a
     *  form of one field is no field's), or an invalid control names it. */
    owns(region) {
      let node = region;
      for (let level = 0; node && level <= FIELD_LEVELS_MAX; level++, node = node.parentElement) {
        if (node.localName === 'form' || node.localName === 'body') return false;
        if (node.id && root.querySelector(`[aria-describedby~="${CSS.escape(node.id)}"][aria-invalid="true"],[aria-errormessage~="${CSS.escape(node.id)}"]`)) return true;
        const inside = node.querySelectorAll(CONTROL_SELECTOR);
        if (inside.length) return inside.length === 1 && Boolean(fieldOf(inside[0])?.contains(region));
      }
      return false;
    },
    /** The elements inside `container` showing a message of a control
     *  that is no longer invalid (marksGone): on screen, on their way out,
     *  but no longer what the field says. The one owner of "is this a
     *  field's current message" for what reads a field's text (a
     *  dialog's snapshot). */
    staleMessages(container) {
      const stale = new Set();
      for (const [control, { elements, marks }] of shown) {
        if (!control.isConnected) { shown.delete(control); continue; }
        if (!marksGone(marks, control)) continue;
        for (const el of elements) if (el.isConnected && container.contains(el)) stale.add(el);
      }
      return stale;
    },
    /** Listens to `invalid` events of a document's window (capture: they
     *  do not bubble). */
    attach(doc) {
      const view = doc.defaultView;
      if (!view) return;
      view.addEventListener('invalid', onInvalid, true);
      views.push(view);
    },
    stop() {
      for (const view of views) view.removeEventListener('invalid', onInvalid, true);
      views.length = 0;
      if (gathered) { clearTimeout(gathered.timer); gathered = null; }
    },
  };
}
