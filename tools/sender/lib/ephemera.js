// Ephemeral UI: dialogs, menus, listboxes and tooltips opening, changing
// and closing (`uitrail.dialog`), and what live regions announce
// (`uitrail.alert`), in the light DOM, in open shadow roots and in
// same-origin frames. The observation module finds the candidates; this
// module decides what they show.

import {
  LIMITS, clean, closestComposed, composedParent, flatContains, hasLayoutSize, hiddenByStyle, isIgnored, isShown, isVisible,
  isVisuallyHidden, textOf,
} from './dom.js';
import { DIALOG_SELECTOR, LIVE_REGION_SELECTOR } from './observation.js';
import { accessibleName, isClippedAway, isSensitiveField, roleOf, snapshotText } from './naming.js';

const DIALOG_ROLES = new Set(['dialog', 'alertdialog', 'menu', 'listbox', 'tooltip']);
const LEVELS = new Set(['error', 'warning', 'info']);
// How many flushes, how many changed elements of each, and for how long, a
// hidden announcement is compared with (shownElsewhere).
const RECENT_FLUSHES_MAX = 32;
const RECENT_TARGETS_MAX = 64;
const RECENT_TARGETS_MS = 3000;
// After a history traversal, for this long, a live region showing a text
// this document already announced is the page restored (a library swapping
// its cached page back in), not news. The last this many texts are kept.
const HISTORY_RESTORE_MS = 1500;
const ANNOUNCED_TEXTS_MAX = 64;
// A dialog or menu found closed is stamped with the time the page began
// changing it (a closing animation), when that was at most this long ago.
export const CLOSE_START_WINDOW_MS = 500;

// A tooltip is text. One that holds a popup of its own (a select's
// listbox, a menu) is only the positioned box a library draws that popup
// in (a "popper"): the popup inside is what opens and closes, once.
const POPUP_INSIDE_SELECTOR = '[role="listbox"],[role="menu"],[role="dialog"],[role="alertdialog"],dialog';
// How far above a listbox of no size the box that draws its options may be.
const SURFACE_DEPTH = 3;

function isPopperBox(el) {
  return roleOf(el) === 'tooltip' && el.querySelector(POPUP_INSIDE_SELECTOR) !== null;
}

/** Where a popup is drawn: the popup itself, or for a listbox clipped to
 *  nothing that holds options (a select keeps it for screen readers and
 *  draws the options as plain elements next to it) the nearest element
 *  around it that has a box, below <body>. */
function surfaceOf(el) {
  if (roleOf(el) !== 'listbox' || hiddenByStyle(el) || !el.querySelector('[role="option"]') || !isClippedAway(el)) return el;
  const doc = el.ownerDocument;
  let node = el.parentElement;
  for (let depth = 0; node && depth < SURFACE_DEPTH; depth++, node = node.parentElement) {
    if (node === doc.body || node === doc.documentElement) break;
    if (hasLayoutSize(node)) return node;
  }
  return el;
}

/** What a popup shows: the text of its surface, without the listbox kept
 *  for screen readers when the surface is around it, and without a
 *  field's message that is no longer its current one (`stale(surface)`,
 *  validation.js: a message fading out as its field became valid while
 *  the dialog closes on Save; whether it is still on screen when the
 *  dialog hides is a race, whether its field is still invalid is not). */
function popupSnapshot(el, name, stale) {
  const surface = surfaceOf(el);
  const skip = new Set(stale(surface));
  if (surface !== el) skip.add(el);
  return snapshotText(surface, name, skip);
}

function dialogRoleOf(el) {
  const role = roleOf(el);
  return DIALOG_ROLES.has(role) ? role : 'dialog';
}

export function levelFromClass(className) {
  if (typeof className !== 'string') return '';
  if (/\b(error|danger|invalid|fail)/i.test(className)) return 'error';
  if (/\bwarn/i.test(className)) return 'warning';
  if (/\b(info|success|notice)/i.test(className)) return 'info';
  return '';
}

/** The role an alert record takes for a live region: its own role, or for
 *  an aria-live region, alert when assertive and status when polite. */
function alertRoleOf(region) {
  const role = region.getAttribute('role');
  if (role === 'alert' || role === 'status' || role === 'log') return role;
  return region.getAttribute('aria-live') === 'assertive' ? 'alert' : 'status';
}

/** The level of an announcement: data-level, or a level word in the
 *  classes of the region or its host element (a web component's). */
function levelOf(region) {
  const declared = region.getAttribute('data-level');
  if (declared && LEVELS.has(declared)) return declared;
  const level = levelFromClass(region.className);
  if (level) return level;
  const host = region.getRootNode().host;
  if (host) {
    const variant = host.getAttribute('variant');
    if (variant === 'danger') return 'error';
    if (variant === 'warning') return 'warning';
    if (variant === 'success' || variant === 'primary') return 'info';
    return levelFromClass(host.className);
  }
  return '';
}

/** True when an element the same flush changed, outside the region and
 *  visible, shows `text`: a toast library announcing its visible toast
 *  through a hidden live region. A hidden announcement that nothing
 *  visible shows (a grid's "Press ENTER to sort" hint for a focused
 *  header) is no message to the user, and is not reported. */
function shownElsewhere(text, region, recent) {
  const probe = text.slice(0, 80);
  for (const { targets } of recent) {
    for (let i = 0; i < targets.length && i < RECENT_TARGETS_MAX; i++) {
      const target = targets[i];
      if (region.contains(target) || target.contains(region)) continue;
      if (clean(target.textContent || '').includes(probe) && isVisible(target)) return true;
    }
  }
  return false;
}

/**
 * Creates the ephemera reporter.
 *  - tab, keyOf: the tab id and the element keys;
 *  - candidates: the observation's set of candidate dialogs;
 *  - transport: enqueue, enqueueAt, lastSeq;
 *  - isValidationMessage(region): a live region that is a form control's
 *    validation message (validation.js reports it, as the action's
 *    `invalid` outcome, not as an alert);
 *  - staleMessages(container): the elements in it showing a field's
 *    message that is no longer current (validation.js), left out of
 *    snapshots;
 *  - lastActionName(): the name of the last user action's element.
 */
export function createEphemera({
  tab, keyOf, candidates, transport, isValidationMessage = () => false, staleMessages = () => [],
  lastActionName = () => '',
}) {
  const openDialogs = new Map();   // element -> {role, name, text}
  const liveRegionTexts = new WeakMap();
  const announced = new Set(); // texts this document announced, oldest first
  let traversedAt = -Infinity;
  // What recent flushes changed, newest last, for shownElsewhere: a toast
  // is often shown a little before its hidden announcement.
  const recent = [];

  // Open as the accessibility tree has it: still a dialog (a framework
  // that takes the role away on hiding closes it) and shown (isShown).
  const isOpen = (el) => el.isConnected && el.matches(DIALOG_SELECTOR) && !isIgnored(el) && !isPopperBox(el) &&
    isShown(surfaceOf(el));

  const send = (state, el, known, ms) => {
    const record = { tab, state, role: known.role, el: keyOf(el), text: known.text };
    if (known.name) record.name = known.name;
    if (state === 'close' && known.touchedSeq !== undefined) transport.enqueueAt('uitrail.dialog', record, ms, known.touchedSeq);
    else transport.enqueue('uitrail.dialog', record, ms);
  };

  /** Whether a flush's changes were in or around the dialog, in the flat
   *  tree (a web component's menu is slotted into its popup). */
  const touches = (el, touched) => {
    const surface = surfaceOf(el);
    return touched.some((target) => flatContains(surface, target) || flatContains(target, el));
  };

  /** Dialogs open when tracking starts are known, not reported. */
  const noteOpenAtStart = () => {
    for (const el of candidates) {
      if (isOpen(el)) {
        const name = accessibleName(el, 'none');
        openDialogs.set(el, { role: dialogRoleOf(el), name, text: popupSnapshot(el, name, staleMessages) });
      }
    }
  };

  /** Reports dialogs opened, updated or closed, as of `ms`. */
  const reportDialogs = (touched, ms) => {
    for (const el of candidates) {
      const open = isOpen(el);
      const known = openDialogs.get(el);
      if (open && !known) {
        const name = accessibleName(el, 'none');
        const fresh = { role: dialogRoleOf(el), name, text: popupSnapshot(el, name, staleMessages) };
        openDialogs.set(el, fresh);
        send('open', el, fresh, ms);
      } else if (open && known && touches(el, touched)) {
        // A change of the dialog itself or of what holds it (a host's
        // `open`, a popup's class) may be the start of its closing; a change
        // inside it (a button's focus ring) is not.
        if (touched.some((target) => flatContains(target, el)) &&
            (!known.touchedMs || ms - known.touchedMs > CLOSE_START_WINDOW_MS)) {
          known.touchedMs = ms;
          known.touchedSeq = transport.lastSeq();
        }
        // A dialog emptied while it closes (content rendered only while
        // open, gone during the exit transition) keeps what it showed.
        const text = popupSnapshot(el, known.name, staleMessages);
        if (text !== known.text && (text || !known.text)) {
          known.text = text;
          send('open', el, known, ms);
        }
      } else if (!open && known) {
        openDialogs.delete(el);
        const closing = known.touchedMs && ms - known.touchedMs <= CLOSE_START_WINDOW_MS;
        if (!closing) known.touchedSeq = undefined;
        send('close', el, known, closing ? known.touchedMs : ms);
      }
      if (!el.isConnected && !known) candidates.delete(el);
    }
  };

  const reportAlert = (region, recentFlushes, ms) => {
    if (isSensitiveField(region) || isIgnored(region) || !isVisible(region)) return;
    // A dialog that is also a live region (a modal-alert library's popup)
    // is reported as the dialog it is, not a second time as an alert.
    if (region.matches(DIALOG_SELECTOR)) return;
    if (isValidationMessage(region)) return;
    // A live region inside another (a component's message inside its alert)
    // is announced as part of the outer one.
    const outer = composedParent(region);
    if (outer && closestComposed(outer, LIVE_REGION_SELECTOR)) return;
    const text = textOf(region, LIMITS.ALERT_TEXT_MAX_CHARS);
    const previous = liveRegionTexts.get(region) || '';
    liveRegionTexts.set(region, text);
    if (!text || text === previous) return;
    if (announced.has(text) && performance.now() - traversedAt <= HISTORY_RESTORE_MS) return;
    announced.delete(text);
    announced.add(text);
    if (announced.size > ANNOUNCED_TEXTS_MAX) announced.delete(announced.values().next().value);
    // A hidden announcement of the very thing the user just acted on (a
    // select announcing the option just chosen) is the widget's echo of
    // the action, not a message.
    if (isVisuallyHidden(region) && (text === lastActionName() || !shownElsewhere(text, region, recentFlushes))) return;
    const record = { tab, role: alertRoleOf(region), text };
    const level = levelOf(region);
    if (level) record.level = level;
    transport.enqueue('uitrail.alert', record, ms);
  };

  return {
    noteOpenAtStart,
    /** One flush's worth: dialogs when the layout changed, then each live
     *  region touched. Stamped with the time the first mutation of the
     *  flush was observed, not the later time of the flush. */
    report({ touched, liveRegions, layoutChanged, firstMs }) {
      // One entry per flush (its list of changed elements), so this costs
      // nothing per element; the lists are read only for an announcement.
      const now = performance.now();
      if (touched.length) recent.push({ at: now, targets: touched });
      while (recent.length && (recent.length > RECENT_FLUSHES_MAX || now - recent[0].at > RECENT_TARGETS_MS)) recent.shift();
      if (layoutChanged && candidates.size) reportDialogs(touched, firstMs);
      for (const region of liveRegions) reportAlert(region, recent, firstMs);
    },
    /** Alerts the page shows when tracking starts (a server-rendered
     *  error after a form post) are reported: they are what the user sees
     *  first. Status and log regions are not (they hold standing text). */
    reportAlertsAtStart(root) {
      for (const region of root.querySelectorAll('[role="alert"],[aria-live="assertive"]')) {
        reportAlert(region, recent, performance.timeOrigin + performance.now());
      }
    },
    /** An action began (its earlier changes flushed): a dialog that closes
     *  from now on closes in answer to it, after it, even when the page
     *  changed the dialog a moment before the action (the end of its
     *  opening animation is no start of its closing). */
    noteAction() {
      for (const known of openDialogs.values()) {
        known.touchedMs = undefined;
        known.touchedSeq = undefined;
      }
    },
    /** The user went back or forward in history: standing text the page
     *  restores now is not announced again. */
    noteTraversal() { traversedAt = performance.now(); },
    /** The page went away: its dialogs went with it, unreported. */
    forget() {
      openDialogs.clear();
    },
  };
}

