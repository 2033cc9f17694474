// Interaction: clicks and changes (`uitrail.click`, `uitrail.change`),
// from capture-phase listeners on each observed document. The element a
// click is about is the nearest actionable element on the composed path;
// its state (and a column header's sort order) is read after the page's
// own handlers ran.

import {
  CONTROL_ELEMENTS, LIMITS, closestComposed, codePointLength, cut, eventMs, isElement, isIgnored, isIgnoredElement,
} from './dom.js';
import {
  CHOICE_INPUT_TYPES, accessibleName, actionRoleOf, choiceValueOf, clickStateOf, contextOf, isActionable,
  isSensitive, sortableHeaderAround, sortOf,
} from './naming.js';

// How long a click made while a dialog or menu is open waits for it to
// close (a closing animation), before it is sent.
const CLICK_WAIT_FOR_CLOSE_MS = 400;

/**
 * Creates the interaction listeners.
 *  - tab, rowContext, keyOf, knownSecrets, measure: the tracker's;
 *  - root: the observed element of the top document (frames count whole);
 *  - transport: enqueue/complete;
 *  - beforeClick(): called first on every click (flushes the mutations
 *    the page made before it, so they come before the click);
 *  - dialogOpen(): true while a dialog or menu is open: a click then waits
 *    CLICK_WAIT_FOR_CLOSE_MS for the page to close it, so that a menu the
 *    click began closing is reported before the click.
 */
export function createInteraction({ tab, root, rowContext, keyOf, knownSecrets, measure, transport, beforeClick, dialogOpen }) {
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
        if (entry.record.role === 'columnheader') {
          const sort = sortOf(el);
          if (sort) entry.record.sort = sort;
        }
      }
      if (entry.waitForClose) setTimeout(() => transport.complete(entry), CLICK_WAIT_FOR_CLOSE_MS);
      else transport.complete(entry);
    }
    clicksAwaitingState = [];
    lastClickedElement = null;
    if (measure) performance.measure('uitrail:click-state', { start: t0, end: performance.now() });
  };

  /** Finds the element a click or change is about: the nearest actionable
   *  element on the event's composed path inside the observed tree, or
   *  null when the event is outside it or under an ignored subtree. An
   *  event of a same-origin frame counts when its frame is inside. */
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

  const onClick = (event) => {
    beforeClick();
    const t0 = measure ? performance.now() : 0;
    let el = actionTarget(event, true);
    if (el) el = sortableHeaderAround(el) || el;
    if (el) {
      const role = cut(actionRoleOf(el), LIMITS.ROLE_MAX_CHARS);
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
        if (!event.isTrusted) record.trusted = false;
        // State is read after the default action and the page's handlers
        // ran; until then the click holds its place in the queue.
        const entry = transport.enqueue('uitrail.click', record, eventMs(event), true);
        entry.waitForClose = dialogOpen();
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
          record.len = codePointLength(el.value);
        }
      }
      if (!event.isTrusted) record.trusted = false;
      transport.enqueue('uitrail.change', record, eventMs(event));
    }
    if (measure) performance.measure('uitrail:change', { start: t0, end: performance.now() });
  };

  return {
    /** Listens on a document (the top one, or a same-origin frame's). */
    attach(doc, listen) {
      listen(doc, 'click', onClick, true);
      listen(doc, 'change', onChange, true);
    },
    stop() {
      clearTimeout(clickStateTimer);
      for (const { entry } of clicksAwaitingState) entry.waitForClose = false;
      if (clicksAwaitingState.length) fillClickStates();
    },
  };
}
