// Observation: one MutationObserver over the page, the open shadow roots
// inside it and its same-origin frames, one `uitrail.mutation` record per
// frame, the page's element count and depth, loading indicators, and the
// candidate dialogs and live regions the ephemera module reports. Nothing
// of the page is patched: shadow roots are found as their hosts appear (and
// when a custom element is defined), frames as they load.

import { IGNORE_SELECTOR, LIMITS, composedParent, isElement, isVisible } from './dom.js';
import { rememberPasswordFields } from './naming.js';

const BUSY_SELECTOR =
  '[aria-busy="true"],[role="progressbar"],progress,[class*="skeleton"],[class*="spinner"],[data-loading]';
const BUSY_ATTRIBUTES = new Set(['aria-busy', 'class', 'role', 'aria-valuenow', 'aria-valuemax', 'data-loading', 'value', 'max']);
export const DIALOG_SELECTOR =
  '[role="dialog"],[role="alertdialog"],dialog,[role="menu"],[role="listbox"],[role="tooltip"]';
// Live regions: the roles, and the aria-live regions most toast libraries
// announce through.
export const LIVE_REGION_SELECTOR =
  '[role="alert"],[role="status"],[role="log"],[aria-live="polite"],[aria-live="assertive"]';
const OBSERVE_OPTIONS = { childList: true, subtree: true, attributes: true, characterData: true };
// An empty main landmark is a page still waiting for its content (an SPA
// shell before its data, with no loading marker): it counts as a loading
// indicator for this long after the page started, so a page whose <main>
// stays empty is held "changing" briefly, not for the daemon's busy cap.
const EMPTY_MAIN_MAX_MS = 5000;
const MAIN_SELECTOR = 'main,[role="main"]';
const MUTATION_KIND = { childList: 0, attributes: 1, characterData: 2 };

function isBusy(el) {
  if (el.getAttribute('aria-busy') === 'true') return true;
  if (el.getAttribute('role') === 'progressbar') {
    if (!el.hasAttribute('aria-valuenow')) return true;
    const max = el.hasAttribute('aria-valuemax') ? Number(el.getAttribute('aria-valuemax')) : 100;
    return Number(el.getAttribute('aria-valuenow')) < max;
  }
  if (el.localName === 'progress') return !el.hasAttribute('value') || el.value < el.max;
  if (el.hasAttribute('data-loading')) return el.getAttribute('data-loading') !== 'false';
  return el.matches(BUSY_SELECTOR);
}

/** Size of an added or removed node for `bytes`: its markup length, or the
 *  cap at once for a subtree too large to serialize cheaply. */
function sizeOf(node) {
  if (node.nodeType === 3) return node.data.length;
  if (node.nodeType !== 1) return 0;
  if (node.getElementsByTagName('*').length > LIMITS.MUTATION_MEASURE_ELEMENTS_MAX) return LIMITS.MUTATION_BYTES_CAP;
  return node.outerHTML.length;
}

/** Counts elements and the maximum depth under an element (depth 1). */
function measureElement(top) {
  let elements = 0;
  let maxDepth = 0;
  let depth = 1;
  let node = top;
  while (node) {
    elements++;
    if (depth > maxDepth) maxDepth = depth;
    if (node.firstElementChild) { node = node.firstElementChild; depth++; continue; }
    while (node && node !== top && !node.nextElementSibling) { node = node.parentElement; depth--; }
    if (!node || node === top) break;
    node = node.nextElementSibling;
  }
  return { elements, depth: maxDepth };
}

/**
 * Creates the observation of one tab.
 *  - root: the element observed in the top document;
 *  - keyOf, knownSecrets: the tracker's element keys and secret fields;
 *  - measure: record each flush's cost with performance.measure();
 *  - onFrameDocument(doc): a same-origin frame's document to attach to;
 *  - onFlush(flush): after each flush with changes, with the record fields
 *    and what the other modules need: {dom, recs, dropped, busy, touched,
 *    liveRegions, layoutChanged, ms, firstMs}.
 */
export function createObservation({ root, keyOf, knownSecrets, measure, onFrameDocument, onFlush }) {
  const dom = { elements: 0, depth: 0 };
  let lastResync = 0;
  let resyncNeeded = false;
  const busyCandidates = new Set();
  const dialogCandidates = new Set();
  const roots = [root];         // observed roots: the root, shadow roots, frame roots
  const observedRoots = new WeakSet([root]);
  const frames = new WeakSet();
  const awaitedTags = new Set();
  let pendingRecords = [];      // [{records, at}] since the last flush
  let frameRequest = 0;
  let fallbackTimer = 0;
  let stopped = false;

  const measureTree = () => {
    let elements = 0;
    let depth = 0;
    for (const observed of roots) {
      const top = observed.nodeType === 11 ? observed.host : observed;
      // A frame's document that was navigated away from is no part of the page.
      if (observed !== root && (!top.isConnected || !top.ownerDocument.defaultView)) continue;
      const counts = observed.nodeType === 11
        ? Array.from(observed.children, measureElement).reduce((a, b) => ({ elements: a.elements + b.elements, depth: Math.max(a.depth, b.depth) }), { elements: 0, depth: 0 })
        : measureElement(observed);
      elements += counts.elements;
      if (counts.depth > depth) depth = counts.depth;
    }
    dom.elements = elements;
    dom.depth = depth;
    lastResync = performance.now();
    resyncNeeded = false;
  };

  const depthOf = (el) => {
    let depth = 1;
    for (let node = el; node && node !== root; node = composedParent(node)) depth++;
    return depth;
  };

  /** True when the page's main landmark is there but empty. */
  const mainIsEmpty = () => {
    const main = root.querySelector(MAIN_SELECTOR);
    return Boolean(main && !main.firstElementChild && !main.textContent.trim() && !main.closest('[data-uitrail-ignore]'));
  };
  /** 1 while the main landmark is empty, early on (EMPTY_MAIN_MAX_MS). */
  const emptyMain = () => (performance.now() <= EMPTY_MAIN_MAX_MS && mainIsEmpty() ? 1 : 0);

  const countBusy = () => {
    let busy = emptyMain();
    for (const el of busyCandidates) {
      if (!el.isConnected) { busyCandidates.delete(el); continue; }
      if (isBusy(el) && !el.closest('[data-uitrail-ignore]') && isVisible(el)) busy++;
    }
    return busy;
  };

  /** Starts observing a shadow root or a frame's root element. */
  const observe = (node) => {
    if (observedRoots.has(node) || roots.length >= LIMITS.SHADOW_ROOTS_MAX) return false;
    observedRoots.add(node);
    roots.push(node);
    observer.observe(node, OBSERVE_OPTIONS);
    return true;
  };

  /** A custom element not yet defined gets its shadow root when it is: look
   *  again then. */
  const awaitDefinition = (el, scope) => {
    const name = el.localName;
    if (awaitedTags.has(name) || !name.includes('-')) return;
    const registry = el.ownerDocument.defaultView && el.ownerDocument.defaultView.customElements;
    if (!registry || registry.get(name)) return;
    awaitedTags.add(name);
    registry.whenDefined(name).then(() => {
      awaitedTags.delete(name);
      if (stopped) return;
      for (const found of (scope.isConnected || scope.nodeType === 11 ? scope : el.ownerDocument).querySelectorAll(name)) {
        if (found.shadowRoot) scan(found);
      }
    });
  };

  const frameDocument = (frame) => {
    try {
      return frame.contentDocument;
    } catch {
      return null; // Cross-origin: another tracker's world.
    }
  };
  /** Attaches to the frame's current document once (observe() says no to
   *  a root it has), and watches for the next one from the moment this one
   *  is left: the frame's `load` comes only after the next page's scripts
   *  and images, and the user may click there before that. */
  const attachFrameDocument = (frame) => {
    const doc = frameDocument(frame);
    if (!doc || !doc.documentElement || !observe(doc.documentElement)) return;
    scan(doc.documentElement);
    onFrameDocument(doc);
    doc.defaultView?.addEventListener('pagehide', () => awaitNextDocument(frame, doc), { once: true });
  };
  /** Polls for the frame's next document until it is there, the frame's
   *  `load` attaches it, the frame leaves the page or observation stops. */
  const awaitNextDocument = (frame, left) => {
    let loaded = false;
    frame.addEventListener('load', () => { loaded = true; }, { once: true });
    const poll = () => {
      if (loaded || stopped || !frame.isConnected) return;
      const doc = frameDocument(frame);
      if (doc && doc !== left && doc.documentElement) attachFrameDocument(frame);
      else setTimeout(poll, 4);
    };
    setTimeout(poll, 0);
  };
  const attachFrame = (frame) => {
    if (!frames.has(frame)) {
      frames.add(frame);
      frame.addEventListener('load', () => attachFrameDocument(frame));
    }
    // Again when a sender in the frame asks (adoptFrame): its document may
    // be newer than the last this one saw.
    attachFrameDocument(frame);
  };

  /** Notes what an added subtree holds: loading indicators, dialogs,
   *  password fields, open shadow roots (observed from now on, and
   *  scanned in turn) and same-origin frames. */
  const scan = (node) => {
    const noteElement = (el) => {
      if (el.shadowRoot) {
        if (observe(el.shadowRoot)) scan(el.shadowRoot);
      } else if (el.localName.includes('-')) {
        awaitDefinition(el, node);
      }
      if (el.localName === 'iframe' || el.localName === 'frame') attachFrame(el);
    };
    if (node.nodeType === 1) noteElement(node);
    const all = node.nodeType === 11 ? node.querySelectorAll('*') : node.getElementsByTagName('*');
    for (let i = 0; i < all.length; i++) noteElement(all[i]);
    if (node.nodeType === 1) {
      if (node.matches(BUSY_SELECTOR)) busyCandidates.add(node);
      if (node.matches(DIALOG_SELECTOR)) dialogCandidates.add(node);
    }
    if (node.nodeType === 11 || node.firstElementChild) {
      for (const found of node.querySelectorAll(BUSY_SELECTOR)) busyCandidates.add(found);
      for (const found of node.querySelectorAll(DIALOG_SELECTOR)) dialogCandidates.add(found);
      if (node.nodeType === 1) rememberPasswordFields(node, knownSecrets);
      else for (const field of node.querySelectorAll('input[type="password"]')) knownSecrets.add(field);
    } else if (node.nodeType === 1) {
      rememberPasswordFields(node, knownSecrets);
    }
  };

  /** Live regions an added subtree holds, shadow roots included. */
  const liveRegionsIn = (node, into) => {
    if (node.matches(LIVE_REGION_SELECTOR)) into.add(node);
    if (node.firstElementChild) for (const region of node.querySelectorAll(LIVE_REGION_SELECTOR)) into.add(region);
    if (node.shadowRoot) for (const region of node.shadowRoot.querySelectorAll(LIVE_REGION_SELECTOR)) into.add(region);
  };

  /** Turns the mutations gathered since the last frame into one record. */
  /** `atMostMs`: a flush made for an action is stamped no later than the
   *  action's own time (what it holds happened before the action). */
  const flush = (atMostMs = Infinity) => {
    if (!frameRequest) return; // Flushed already by the frame or the timer.
    if (frameRequest > 0) cancelAnimationFrame(frameRequest);
    clearTimeout(fallbackTimer);
    frameRequest = 0;
    fallbackTimer = 0;
    if (stopped) return;
    const t0 = performance.now();
    const batches = pendingRecords;
    pendingRecords = [];
    const late = observer.takeRecords();
    if (late.length) batches.push({ records: late, at: t0 });
    const firstMs = Math.min(atMostMs, performance.timeOrigin + (batches.length ? batches[0].at : t0));

    const targets = new Map();     // element -> [childList, attributes, characterData] slots
    const ignored = new Map();     // element -> bool, per flush
    const liveRegions = new Set();
    const touched = [];
    let layoutChanged = false;
    let addedElements = 0;

    for (const { records } of batches) {
      for (const record of records) {
        const target = isElement(record.target) ? record.target
          : record.target.nodeType === 11 ? record.target.host : record.target.parentElement;
        if (!target) continue;
        let skip = ignored.get(target);
        if (skip === undefined) {
          skip = target.closest(IGNORE_SELECTOR) !== null;
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
                scan(node);
                liveRegionsIn(node, liveRegions);
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
          if ((attribute === 'role' || attribute === 'aria-live') && target.matches(DIALOG_SELECTOR)) dialogCandidates.add(target);
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
      onFlush({
        dom: [dom.elements, dom.depth], recs, dropped, busy: countBusy(), touched, liveRegions,
        layoutChanged, ms: Math.min(atMostMs, performance.timeOrigin + t0), firstMs,
      });
    }
    if (measure) performance.measure('uitrail:flush', { start: t0, end: performance.now() });
  };

  // The flush runs in a task posted from the animation frame callback, that
  // is right after the frame was rendered: style and layout are then clean,
  // so the visibility checks of busy indicators and dialogs read them
  // instead of forcing a recalculation in the middle of the page's work.
  const afterFrame = new MessageChannel();
  afterFrame.port1.onmessage = () => flush();
  const observer = new MutationObserver((records) => {
    pendingRecords.push({ records, at: performance.now() });
    if (!frameRequest) {
      frameRequest = requestAnimationFrame(() => afterFrame.port2.postMessage(null));
      fallbackTimer = setTimeout(() => flush(), LIMITS.FLUSH_FALLBACK_MS);
    }
  });

  return {
    dom,
    busyCandidates,
    dialogCandidates,
    countBusy,
    /** Milliseconds until an empty main landmark stops counting as a
     *  loading indicator, when it counts now; 0 otherwise. */
    emptyMainLapsesIn() {
      return emptyMain() ? Math.max(0, EMPTY_MAIN_MAX_MS - performance.now()) + 1 : 0;
    },
    /** True when the main landmark is there but empty. */
    mainIsEmpty,
    /** Starts: the first measure and scan, then observing. */
    start() {
      scan(root);
      observer.observe(root, OBSERVE_OPTIONS);
      measureTree();
    },
    /** Observes a same-origin frame (its sender asked). */
    adoptFrame(frame) { attachFrame(frame); },
    /** True when mutations are waiting for the next frame. */
    hasPending() {
      return frameRequest !== 0 || pendingRecords.length > 0;
    },
    /** Flushes what is waiting now; with `beforeMs` (an action's event
     *  time, epoch ms), only the mutations observed before it: they come
     *  before the action, and those after it stay for the next flush, so
     *  they come after it as its answer, whichever handler made them. */
    flushNow(beforeMs) {
      // Records not yet delivered to the observer were made before this
      // call, after those delivered: before the action when all those were
      // (a script changed the page, then dispatched the action's event).
      const before = beforeMs === undefined ? Infinity : beforeMs - performance.timeOrigin;
      const after = pendingRecords.findIndex((batch) => batch.at >= before);
      const late = observer.takeRecords();
      if (late.length) pendingRecords.push({ records: late, at: after < 0 ? Math.min(performance.now(), before) : performance.now() });
      const split = after < 0 ? pendingRecords.length : after;
      if (split === 0) return;
      const kept = pendingRecords.splice(split);
      if (!frameRequest) frameRequest = -1;
      flush(beforeMs);
      if (kept.length) {
        pendingRecords = kept;
        frameRequest = requestAnimationFrame(() => afterFrame.port2.postMessage(null));
        fallbackTimer = setTimeout(() => flush(), LIMITS.FLUSH_FALLBACK_MS);
      }
    },
    stop() {
      stopped = true;
      observer.disconnect();
      clearTimeout(fallbackTimer);
      if (frameRequest > 0) cancelAnimationFrame(frameRequest);
      frameRequest = 0;
      afterFrame.port1.close();
    },
  };
}
