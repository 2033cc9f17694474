// Small DOM helpers shared by the modules: text cleaning and cutting, the
// composed tree (shadow roots and same-origin frames), visibility, and the
// one rule of what the sender ignores.

import { LIMITS } from './limits.js';

// Icon fonts draw glyphs from the Unicode private-use areas; they are not
// words and must not end up in a name.
const PRIVATE_USE_RE = /[\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}]/gu;
export const SPACES_RE = /\s+/g;

export const TEXT_SKIPPED_ELEMENTS = new Set(['script', 'style', 'template', 'noscript', 'svg']);
export const CONTROL_ELEMENTS = new Set(['button', 'input', 'select', 'textarea']);
export const INLINE_ELEMENTS = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'em', 'i', 'kbd',
  'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time',
  'u', 'var', 'wbr',
]);

/**
 * The ignore rule, spelled once: an element carrying one of these
 * attributes, and everything under it, is never reported (the assistant's
 * own panel, parts of the page its team keeps out): no click, change,
 * text, dialog, alert or mutation.
 */
export const IGNORE_ATTRIBUTES = Object.freeze(['data-no-track', 'data-uitrail-ignore']);
export const IGNORE_SELECTOR = IGNORE_ATTRIBUTES.map((name) => `[${name}]`).join(',');

/** True when el itself carries an ignore attribute. */
export function isIgnoredElement(el) {
  return el.hasAttribute(IGNORE_ATTRIBUTES[0]) || el.hasAttribute(IGNORE_ATTRIBUTES[1]);
}

/** True when el or an ancestor (across shadow roots and frames) is ignored. */
export function isIgnored(el) {
  return closestComposed(el, IGNORE_SELECTOR) !== null;
}

/** Cuts text to at most max UTF-16 code units without splitting a pair. */
export function cut(text, max) {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** Collapses white space, drops private-use glyphs and trims. */
export function clean(text) {
  return text.replace(PRIVATE_USE_RE, '').replace(SPACES_RE, ' ').trim();
}

export function isElement(node) {
  return node !== null && node !== undefined && node.nodeType === 1;
}

/** The frame element holding el's document, when it is a same-origin
 *  frame of the page; null otherwise. */
function frameElementOf(el) {
  try {
    const view = el.ownerDocument && el.ownerDocument.defaultView;
    return view && view.frameElement ? view.frameElement : null;
  } catch {
    return null; // A cross-origin parent: the frame is its own world.
  }
}

/** The parent element of el in the composed tree: across a shadow root to
 *  its host, and from a same-origin frame's root to its <iframe>. */
export function composedParent(el) {
  if (el.parentElement) return el.parentElement;
  const parent = el.parentNode;
  if (parent && parent.nodeType === 11 && parent.host) return parent.host;
  if (parent && parent.nodeType === 9) return frameElementOf(el);
  return null;
}

/** The parent of a node in the flat tree (what is rendered): the slot it
 *  is assigned to, else its composed parent. */
export function flatParent(node) {
  return node.assignedSlot || composedParent(node);
}

/** True when `inner` is `outer` or below it in the flat tree. */
export function flatContains(outer, inner) {
  for (let node = inner; node; node = flatParent(node)) if (node === outer) return true;
  return false;
}

/** Like Element.closest(), but continues into shadow hosts and frames. */
export function closestComposed(el, selector) {
  for (let node = el; node; ) {
    const found = node.closest(selector);
    if (found) return found;
    const root = node.getRootNode();
    node = root && root.host ? root.host : root && root.nodeType === 9 ? frameElementOf(root.documentElement) : null;
  }
  return null;
}

/** True when the element is hidden by markup (not by style, which costs a
 *  style recalculation to read). */
export function hiddenByMarkup(el) {
  return el.hidden || el.getAttribute('aria-hidden') === 'true' ||
    TEXT_SKIPPED_ELEMENTS.has(el.localName) ||
    (el.localName === 'dialog' && !el.open);
}

export function isVisible(el) {
  if (!el.isConnected) return false;
  if (typeof el.checkVisibility === 'function') return el.checkVisibility();
  return el.getClientRects().length > 0;
}

/** True when style keeps el out of the accessibility tree: display:none
 *  on it or on an ancestor in the flat tree (through shadow hosts and
 *  slots), or visibility:hidden. An element with `display: contents` has
 *  no box of its own but shows its children: it is not hidden. Reading
 *  style costs a recalculation when it is dirty: called where the layout
 *  is clean (after a frame) or on small subtrees (a dialog's snapshot). */
export function hiddenByStyle(el) {
  if (typeof el.checkVisibility !== 'function') return el.getClientRects().length === 0;
  if (el.checkVisibility({ visibilityProperty: true })) return false;
  return getComputedStyle(el).display !== 'contents';
}

/** True for an element only screen readers see (the "visually hidden"
 *  pattern: a box of `sizeMax` pixels or less, a pixel by default, or
 *  clipped away; a select's echo of its chosen option in a live region of
 *  no size). The layout's size, as in hasLayoutSize: a message growing
 *  from scale(0) is not hidden. An element drawn only through its
 *  children (`display: contents`) has no box and is not hidden either. */
export function isVisuallyHidden(el, sizeMax = 1) {
  const box = typeof el.offsetWidth === 'number'
    ? { width: el.offsetWidth, height: el.offsetHeight } : el.getBoundingClientRect();
  const style = getComputedStyle(el);
  if (box.width <= sizeMax || box.height <= sizeMax) return style.display !== 'contents';
  return style.clipPath === 'inset(50%)' || /rect\(0(px)?,? 0(px)?,? 0(px)?,? 0(px)?\)/.test(style.clip);
}

/** True when el's box has a size in the layout. A transform is left
 *  out, as the accessibility tree leaves it out: a popup that grows from
 *  scale(0) as it opens is open from its first frame. */
export function hasLayoutSize(el) {
  if (typeof el.offsetWidth === 'number') return el.offsetWidth > 0 && el.offsetHeight > 0;
  const box = el.getBoundingClientRect();
  return box.width > 0 && box.height > 0;
}

// How many elements under a box of no size are looked at for one that
// shows something (an absolutely positioned surface).
const RENDERED_PROBE_MAX = 200;

/** True when el shows something on screen: its own box has a size, or an
 *  element under it in the flat tree (its shadow root, its slotted
 *  content) does and is not hidden. A menu host whose surface inside its
 *  shadow root is hidden shows nothing. */
export function rendersSomething(el) {
  if (hasLayoutSize(el)) return true;
  const pending = [el];
  let seen = 0;
  while (pending.length && seen < RENDERED_PROBE_MAX) {
    const node = pending.pop();
    const children = node.shadowRoot ? node.shadowRoot.children
      : node.localName === 'slot' ? node.assignedElements({ flatten: true }) : node.children;
    for (const child of children) {
      if (++seen > RENDERED_PROBE_MAX) break;
      if (hiddenByStyle(child)) continue;
      if (hasLayoutSize(child)) return true;
      pending.push(child);
    }
  }
  return false;
}

/** True when the element is open the way the accessibility tree has it:
 *  connected, not hidden by markup or style (through shadow roots), not
 *  inert nor under aria-hidden, a popover only while open, and showing
 *  something (a box of some size, or content that has one). */
export function isShown(el) {
  if (!el.isConnected || hiddenByStyle(el)) return false;
  if (el.hasAttribute('popover') && !el.matches(':popover-open')) return false;
  if (closestComposed(el, '[inert],[aria-hidden="true"]') !== null) return false;
  return rendersSomething(el);
}

/** The nodes a slot shows: its assigned nodes, or its fallback content. */
export function slotContent(slot) {
  const assigned = slot.assignedNodes({ flatten: true });
  return assigned.length ? assigned : Array.from(slot.childNodes);
}

/**
 * Appends the readable text under node to acc (an object with `parts` and
 * `length`), stopping once `max` characters are gathered. Reads the
 * composed tree: an element's shadow root instead of its children, a slot's
 * assigned content. Skips hidden markup, sensitive subtrees and ignored
 * ones; with skipControls it also skips form controls and buttons, so a
 * cell or label gives its data and not its actions. Never reads an input's
 * value.
 */
function gatherText(node, acc, max, skipControls) {
  const start = node.shadowRoot ? node.shadowRoot : node;
  for (let child = start.firstChild; child && acc.length < max; child = child.nextSibling) {
    gatherNode(child, acc, max, skipControls);
  }
}

function gatherNode(child, acc, max, skipControls) {
  if (child.nodeType === 3) {
    acc.parts.push(child.data);
    acc.length += child.data.length;
    return;
  }
  if (child.nodeType !== 1) return;
  if (hiddenByMarkup(child) || child.hasAttribute('data-sensitive') || isIgnoredElement(child)) return;
  const tag = child.localName;
  const role = child.getAttribute('role');
  // A timer's or progress bar's text is a running value, not words: an
  // alert that counts down its own dismissal says the same thing throughout.
  if (role === 'timer' || role === 'progressbar') return;
  if (skipControls && (CONTROL_ELEMENTS.has(tag) || role === 'button')) return;
  if (tag === 'img' || tag === 'area') {
    const alt = child.getAttribute('alt');
    if (alt) { acc.parts.push(' ', alt, ' '); acc.length += alt.length; }
    return;
  }
  if (tag === 'slot') {
    for (const assigned of slotContent(child)) {
      if (acc.length >= max) break;
      gatherNode(assigned, acc, max, skipControls);
    }
    return;
  }
  const inline = INLINE_ELEMENTS.has(tag);
  if (!inline) acc.parts.push(' ');
  gatherText(child, acc, max, skipControls);
  if (!inline) acc.parts.push(' ');
}

/** The cleaned readable text of node, cut at max characters. */
export function textOf(node, max, skipControls = false) {
  const acc = { parts: [], length: 0 };
  gatherText(node, acc, max * 2, skipControls);
  return cut(clean(acc.parts.join('')), max);
}

/** The length of text in characters (code points), as a user counts them. */
export function codePointLength(text) {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xdc00 && unit <= 0xdfff && i > 0) length--;
  }
  return length;
}

export const nowMs = () => performance.timeOrigin + performance.now();
/** An event's time on the epoch clock. An event of a same-origin frame
 *  counts from that frame's own time origin. */
export function eventMs(event) {
  const target = event.target;
  const doc = target && (target.nodeType === 9 ? target : target.ownerDocument);
  const view = (doc && doc.defaultView) || window;
  return view.performance.timeOrigin + event.timeStamp;
}

export { LIMITS };
