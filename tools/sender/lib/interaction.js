// Interaction: user actions (`uitrail.click`) and changes
// (`uitrail.change`). A user action is a gesture: a pointer pressed on an
// element and released (the `click` may land elsewhere: on a backdrop the
// page put under the pointer, on <body> when the pressed option went away;
// or never come, when a listbox chose on `mousedown` and closed), or a key
// that activates a control the browser does not click for (Enter or Space
// on a custom widget, Enter on a listbox's or combobox's active option). It
// is about the element it started on, named as it was then, at the time of
// its first event: whatever the page does after that time is its answer,
// whoever's handler ran first. The record takes its place in the queue
// when the gesture starts (so nothing the page did in answer goes before
// it) and is sent when the gesture ends and the page's handlers have run
// (its state, and a column header's sort order, are read then).

import {
  CONTROL_ELEMENTS, LIMITS, closestComposed, codePointLength, cut, eventMs, isElement, isIgnored, isIgnoredElement,
} from './dom.js';
import { actorOf, listenInputs } from './gesture.js';
import {
  CHOICE_INPUT_TYPES, accessibleName, actionRoleOf, choiceValueOf, clickStateOf, comboboxOfBox, contextOf,
  isActionable, isSensitive, sortableHeaderAround, sortOf,
} from './naming.js';

// A click a script dispatches on the element a key gesture just activated
// (a widget answering Enter by calling el.click()) is that gesture, not a
// second action, when it comes this soon after it.
const KEY_ECHO_MS = 100;
// Elements the browser itself clicks on Enter or Space: their keyboard
// activation arrives as a `click`.
// Form controls are left out too: a key in a text field is typing, and
// Enter there submits through a click on the form's button.
const KEY_CLICKED = 'button,a[href],area[href],summary';
const SELECT_ONLY_INPUT = 'input[role="combobox"][readonly]';
// A press held this long without a release ends anyway: the records
// behind it wait for it.
const PRESS_MAX_MS = 2000;
const TEXT_ROLES = new Set(['textbox', 'searchbox', 'spinbutton', 'slider']);
// Inputs whose `input` event is no typing: a choice, a slider, a picker.
const UNTYPED_INPUTS = new Set(['checkbox', 'radio', 'range', 'color', 'file', 'button', 'submit', 'reset', 'image', 'hidden']);

/** True for an element the user types text into. */
function isTextEntry(el) {
  if (el.localName === 'textarea' || el.isContentEditable) return true;
  return el.localName === 'input' && !UNTYPED_INPUTS.has(el.type);
}

/** The column header a sort control inside it acts on, when the header
 *  has a name of its own; else the control itself (a header whose only
 *  content is its sort button is named by that button). */
function headerOrSelf(el) {
  const header = sortableHeaderAround(el);
  return header && accessibleName(header, 'columnheader') ? header : el;
}

// Keys that move a selection that follows focus, and where: a tablist, or
// a listbox the focus is in (a popup listbox a combobox drives keeps the
// focus in the combobox and is not one).
const SELECTION_KEYS = new Set(['ArrowDown', 'ArrowUp', 'ArrowLeft', 'ArrowRight', 'Home', 'End']);
const SELECTION_CONTAINER = '[role="tablist"],[role="listbox"]:not([aria-multiselectable="true"])';

/** The selected tab or option of a tablist or listbox, or null. */
function selectedIn(container) {
  const role = container.getAttribute('role') === 'tablist' ? 'tab' : 'option';
  return container.querySelector(`[role="${role}"][aria-selected="true"]`);
}

/** The focused element, inside open shadow roots. */
function deepActiveElement(doc) {
  let el = doc.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el;
}

/** The element a key press on `focus` activates without a `click` from the
 *  browser: the active descendant of a listbox, menu, grid or combobox, or
 *  a custom widget itself. Null for native controls (their activation is a
 *  click), text fields and anything not actionable. */
function keyActivated(focus) {
  if (!focus || focus.nodeType !== 1) return null;
  const active = focus.getAttribute('aria-activedescendant');
  if (active) {
    const root = focus.getRootNode();
    const target = root.getElementById ? root.getElementById(active) : null;
    return target && isActionable(target) ? target : null;
  }
  if (focus.matches(KEY_CLICKED) || !isActionable(focus)) return null;
  // A read-only input a select draws is no text field: Enter or Space on
  // it opens the select, as a click does.
  if (focus.matches(SELECT_ONLY_INPUT)) return focus;
  if (focus.isContentEditable || CONTROL_ELEMENTS.has(focus.localName)) return null;
  return TEXT_ROLES.has(actionRoleOf(focus)) ? null : focus;
}

/**
 * Creates the interaction listeners.
 *  - tab, rowContext, keyOf, knownSecrets, measure: the tracker's;
 *  - root: the observed element of the top document (frames count whole);
 *  - transport: enqueue/complete/cancel;
 *  - beforeAction(ms): called when an action starts, with its event time:
 *    flushes the mutations the page made before that time, so they come
 *    before it (and only those: a change made after it is its answer);
 *  - onTyping(ms): the user's first keystroke in a text field since their
 *    last action, at its event time: what the page does from then on
 *    answers the typing (a list the search box filters), not that action.
 */
export function createInteraction({ tab, root, rowContext, keyOf, knownSecrets, measure, transport, beforeAction, onTyping }) {
  let clicksAwaitingState = [];
  let clickStateTimer = 0;
  // A click on a check box or radio button fires its change event in the
  // same turn. The click record already carries `state.checked`, so that
  // change would only repeat it (and, between two clicks, break the run of
  // clicks the daemon coalesces into a burst); it is not sent.
  let lastClickedElement = null;
  // The gesture in progress, or the last one for KEY_ECHO_MS:
  // {kind: 'pointer' | 'key', el, entry, pointerId, done, doneAt}.
  let gesture = null;
  // The name of the last action's element, for the echo a widget's hidden
  // live region makes of it (ephemera.js).
  let lastAction = null;
  const stops = [];
  // The length of what the user typed into a field: its value's length at
  // the user's last keystroke (a trusted `input` event). A suggestion a
  // widget then writes into the field (a combobox completing "sup" to
  // "Support") is the widget's, not typed: `len` counts the user's.
  const typedLength = new WeakMap();
  // Whether the user typed since their last action (onTyping was called),
  // and the key pressed in this task, whose time is the keystroke's: the
  // page may answer its keydown before the `input` event comes.
  let typing = false;
  let keyPressed = null;

  const fillClickStates = () => {
    clickStateTimer = 0;
    const t0 = measure ? performance.now() : 0;
    for (const { entry, el, pressState } of clicksAwaitingState) {
      if (!entry.record.sens) {
        // An element the page removed in answer (a chosen option of a list
        // that closed) says nothing any more: its state is the one it had
        // when the gesture began.
        const state = el.isConnected ? clickStateOf(el) : pressState;
        if (state) entry.record.state = state;
        if (entry.record.role === 'columnheader') {
          const sort = sortOf(el);
          if (sort) entry.record.sort = sort;
        }
      }
      transport.complete(entry);
    }
    clicksAwaitingState = [];
    lastClickedElement = null;
    if (measure) performance.measure('uitrail:click-state', { start: t0, end: performance.now() });
  };

  /** Finds the element an event is about: the nearest actionable element
   *  on the event's composed path inside the observed tree, or null when
   *  the event is outside it or under an ignored subtree. An event of a
   *  same-origin frame counts when its frame is inside. */
  const actionTarget = (event, actionableOnly) => {
    const path = event.composedPath();
    let target = null;
    let inside = false;
    for (const node of path) {
      if (!isElement(node)) continue;
      if (isIgnoredElement(node)) return null;
      if (!target && (!actionableOnly || isActionable(node))) target = node;
      if (node === root) { inside = true; break; }
    }
    if (!inside && path.length) {
      const doc = path[path.length - 1].document || null;
      const frame = doc && doc !== root.ownerDocument && doc.defaultView && doc.defaultView.frameElement;
      inside = Boolean(frame) && !isIgnored(frame);
    }
    return inside ? target : null;
  };

  /** The element a press is about: the nearest actionable element on its
   *  path, or the combobox whose drawn box the press landed on (when that
   *  box is inside the actionable element found, or none was). */
  const pressTarget = (event) => {
    let el = actionTarget(event, true);
    const first = event.composedPath()[0];
    const combobox = isElement(first) && (!el || el.contains(first)) ? comboboxOfBox(first) : null;
    if (combobox && (!el || el.contains(combobox)) && !isIgnored(combobox)) el = combobox;
    return el ? headerOrSelf(el) : null;
  };

  /** The click record for `el`, or null when it has no name to give. */
  const describe = (el, event) => {
    const role = cut(actionRoleOf(el), LIMITS.ROLE_MAX_CHARS);
    let record;
    if (isSensitive(el, knownSecrets)) {
      record = { tab, role, el: keyOf(el), sens: true };
    } else {
      const name = accessibleName(el, role);
      if (!name) return null;
      record = { tab, role, name, el: keyOf(el) };
      const ctx = contextOf(el, rowContext);
      if (ctx) record.ctx = ctx;
    }
    markActor(record, event, el);
    return record;
  };

  /** Starts the action of a gesture on `el` at the event's time: the
   *  mutations before it flushed, its record queued and waiting. */
  const begin = (event, el) => {
    if (!el) return null;
    const ms = eventMs(event);
    beforeAction(ms);
    typing = false;
    const record = describe(el, event);
    if (!record) return null;
    if (record.name) lastAction = { name: record.name };
    const entry = transport.enqueue('uitrail.click', record, ms, true);
    entry.pressState = record.sens ? undefined : clickStateOf(el);
    return entry;
  };

  /** Ends an action: its state is read once the page's handlers ran. */
  const settle = (entry, el) => {
    lastClickedElement = el;
    clicksAwaitingState.push({ entry, el, pressState: entry.pressState });
    // Read after the tasks the page's handlers queued in answer too (a
    // select that opens from a zero timeout set in its click handler):
    // those were queued after this first hop, before the second.
    if (!clickStateTimer) clickStateTimer = setTimeout(() => { clickStateTimer = setTimeout(fillClickStates, 0); }, 0);
  };

  const endGesture = () => {
    if (!gesture || gesture.done) return;
    gesture.done = true;
    gesture.doneAt = performance.now();
    if (gesture.entry) settle(gesture.entry, gesture.el);
  };

  const onPointerDown = (event) => {
    if (!event.isPrimary || event.button !== 0) return;
    endGesture();
    const el = pressTarget(event);
    const pressed = { kind: 'pointer', el, entry: begin(event, el), pointerId: event.pointerId, done: false };
    gesture = pressed;
    if (pressed.entry) setTimeout(() => { if (gesture === pressed) endGesture(); }, PRESS_MAX_MS);
  };

  const onPointerUp = (event) => {
    if (!gesture || gesture.kind !== 'pointer' || gesture.done || event.pointerId !== gesture.pointerId) return;
    // The click, when there is one, comes in this same task: a gesture
    // still open after it got none (the pressed option went away).
    const pressed = gesture;
    setTimeout(() => { if (gesture === pressed) endGesture(); }, 0);
  };

  const onPointerCancel = (event) => {
    if (!gesture || gesture.kind !== 'pointer' || gesture.done || event.pointerId !== gesture.pointerId) return;
    // The browser took the pointer (a scroll, a drag): no action.
    if (gesture.entry) transport.cancel(gesture.entry);
    gesture = null;
  };

  /** Enter or Space on an element the browser clicks for the key (a
   *  button, a link): when the page takes the key itself (it prevents the
   *  key's default, as a menu button opening its menu on keydown does), no
   *  click comes, and the key is the activation. Its record takes its
   *  place at the key, before whatever the page's handlers do, and is
   *  taken back once they ran if the page left the key to the browser
   *  (whose click is then the action). */
  const keyOnClickable = (event, focus) => {
    endGesture();
    const entry = begin(event, focus);
    gesture = { kind: 'key', el: focus, entry: null, done: true, doneAt: performance.now() };
    if (!entry) return;
    setTimeout(() => {
      if (event.defaultPrevented) settle(entry, focus);
      else transport.cancel(entry);
    }, 0);
  };

  /** A key that moves the selection of a tablist or listbox the focus is
   *  in (selection that follows focus: an automatic tablist showing the
   *  next panel, a listbox choosing the next option) chose what it
   *  selected, as a click on it would. Its record takes its place at the
   *  key, before what the page does in answer; once the page's handlers
   *  ran it is about the newly selected element, or taken back when the
   *  selection did not move (focus moved alone, or no element is
   *  selected). */
  const keyMovingSelection = (event, focus) => {
    const container = closestComposed(focus, SELECTION_CONTAINER);
    if (!container || !actionTarget(event, false)) return;
    const before = selectedIn(container);
    endGesture();
    const entry = begin(event, focus);
    gesture = { kind: 'key', el: focus, entry: null, done: true, doneAt: performance.now() };
    if (!entry) return;
    setTimeout(() => {
      const chosen = selectedIn(container);
      const record = chosen && chosen !== before && !isIgnored(chosen) ? describe(chosen, event) : null;
      if (!record) { transport.cancel(entry); return; }
      for (const key of Object.keys(entry.record)) if (key !== 'seq') delete entry.record[key];
      Object.assign(entry.record, record);
      if (record.name) lastAction = { name: record.name };
      entry.pressState = undefined;
      settle(entry, chosen);
    }, 0);
  };

  const onKeyDown = (event) => {
    if (event.isTrusted) {
      const pressed = { el: event.composedPath()[0], ms: eventMs(event) };
      keyPressed = pressed;
      setTimeout(() => { if (keyPressed === pressed) keyPressed = null; }, 0);
    }
    if (!event.isTrusted || event.repeat) return;
    const doc = event.target && event.target.ownerDocument ? event.target.ownerDocument : document;
    const focus = deepActiveElement(doc);
    if (SELECTION_KEYS.has(event.key)) {
      if (focus && focus.nodeType === 1 && !isIgnored(focus)) keyMovingSelection(event, focus);
      return;
    }
    if (event.key !== 'Enter' && event.key !== ' ') return;
    if (focus && focus.nodeType === 1 && focus.matches(KEY_CLICKED) && isActionable(focus) &&
        !isIgnored(focus) && actionTarget(event, false)) {
      keyOnClickable(event, focus);
      return;
    }
    const el = keyActivated(focus);
    // The key's path must be inside the observed tree, as a click's is.
    if (!el || isIgnored(el) || !actionTarget(event, false)) return;
    endGesture();
    gesture = { kind: 'key', el, entry: begin(event, el), done: false };
    endGesture();
  };

  const onClick = (event) => {
    const t0 = measure ? performance.now() : 0;
    const pressed = gesture && !gesture.done && gesture.kind === 'pointer' && event.isTrusted ? gesture : null;
    if (pressed) endGesture();
    if (pressed && pressed.entry) {
      // The click of the pressed gesture, wherever it landed.
    } else {
      let el = actionTarget(event, true);
      if (el) el = headerOrSelf(el);
      const echo = gesture && gesture.kind === 'key' && gesture.el === el && !event.isTrusted &&
        performance.now() - gesture.doneAt <= KEY_ECHO_MS;
      if (el && !echo) {
        // A click with no gesture of its own: the browser's for a key on a
        // native control, or a script's.
        const entry = begin(event, el);
        if (entry) settle(entry, el);
      }
    }
    if (measure) performance.measure('uitrail:click', { start: t0, end: performance.now() });
  };

  /** Marks whose action a record is (see gesture.js): nothing for the
   *  user's, `trusted: false` for the page's own, `actor` for the
   *  assistant's. */
  const markActor = (record, event, el) => {
    const actor = actorOf(event, el);
    if (actor === 'script') record.trusted = false;
    else if (actor === 'assistant') record.actor = 'assistant';
  };

  const onChange = (event) => {
    const t0 = measure ? performance.now() : 0;
    const el = actionTarget(event, false);
    const echoOfClick = el !== null && el === lastClickedElement && el.localName === 'input' && CHOICE_INPUT_TYPES.has(el.type);
    if (el && !echoOfClick && CONTROL_ELEMENTS.has(el.localName) && el.localName !== 'button') {
      const role = cut(actionRoleOf(el), LIMITS.ROLE_MAX_CHARS);
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
          record.len = typedLength.has(el) ? typedLength.get(el) : codePointLength(el.value);
        }
      }
      markActor(record, event, el);
      // A field left for the element being pressed reports its change on
      // the press: what was typed came before the press, and goes before it.
      const pressed = gesture && !gesture.done && gesture.entry && gesture.el !== el ? gesture.entry : null;
      if (pressed) transport.enqueueAt('uitrail.change', record, eventMs(event), pressed.record.seq - 1);
      else transport.enqueue('uitrail.change', record, eventMs(event));
    }
    if (measure) performance.measure('uitrail:change', { start: t0, end: performance.now() });
  };

  const onTyped = (event) => {
    // The field itself, inside a shadow root too (event.target is its host).
    const el = event.composedPath()[0];
    if (!event.isTrusted || !el || el.nodeType !== 1) return;
    if (typeof el.value === 'string') typedLength.set(el, codePointLength(el.value));
    if (!typing && isTextEntry(el) && actionTarget(event, false) !== null) {
      typing = true;
      onTyping(keyPressed && keyPressed.el === el ? keyPressed.ms : eventMs(event));
    }
  };

  const handlers = {
    pointerdown: onPointerDown, pointerup: onPointerUp, pointercancel: onPointerCancel,
    keydown: onKeyDown, click: onClick, change: onChange, input: onTyped,
  };
  const onInput = (event) => {
    const handler = handlers[event.type];
    if (handler) handler(event);
  };

  return {
    /** Listens to a document's window (the top one, or a same-origin
     *  frame's), in the capture phase, before the page's own listeners. */
    attach(doc) {
      if (doc.defaultView) stops.push(listenInputs(doc.defaultView, onInput));
    },
    /** The name of the element of the last action, or '' for none. */
    lastActionName() { return lastAction ? lastAction.name : ''; },
    stop() {
      for (const stop of stops) stop();
      stops.length = 0;
      endGesture();
      clearTimeout(clickStateTimer);
      if (clicksAwaitingState.length) fillClickStates();
    },
  };
}
