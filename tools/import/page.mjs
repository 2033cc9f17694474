// One page of a recording, rebuilt in jsdom with the real sender
// (tools/sender) running inside it: the sender is loaded into the page's
// own JavaScript realm (one classic script, sender-bundle.mjs),
// so `window`, `document`, `performance` and the timers they use are the
// page's, on the recording's virtual time (virtual-time.mjs). The sender
// is started with the HTTP transport; its batches of Forward entries are
// handed to `onBytes` by a fetch() that answers 200 at once.
//
// What jsdom does not have is given here, and each stand-in is a documented
// gap of an import (PROTOCOL.md §5.2): no layout, so an element is "visible"
// when no ancestor is hidden by markup or by a style jsdom computes (the
// recording's inlined stylesheets and inline styles; not media queries,
// animations or layout-dependent rules), and a visible element's box is 2x2,
// or 1x1 where its style is the "visually hidden" pattern (below).

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

import { JSDOM, VirtualConsole } from 'jsdom';

import { senderScriptSource } from './sender-bundle.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
export const SENDER_DIR = resolve(process.env.UITRAIL_SENDER_DIR || join(HERE, '..', 'sender'));
const INPUT_TYPES = new Set(['pointerdown', 'pointerup', 'pointercancel', 'click', 'keydown', 'change']);
const INGEST_URL = 'http://uitrail-import.invalid';

// Bundled and compiled when the importer loads this module (once per
// importer process, before any event is read: without esbuild nothing is
// imported), then run in every page's realm.
const SENDER_SCRIPT = new vm.Script(senderScriptSource(SENDER_DIR), { filename: join(SENDER_DIR, 'uitrail.bundle.js') });

/** Evaluates the sender in `context` (sender-bundle.mjs says why as one
 *  classic script); returns its entry module's namespace. */
function loadSender(context) {
  return SENDER_SCRIPT.runInContext(context);
}

/** Visibility without layout: hidden by markup or by a computed display
 *  or visibility, on the element or a composed ancestor. Cached until the
 *  importer changes the DOM (page.changed()). */
function installVisibility(window, cache) {
  const { Element } = window;
  const hiddenSelf = (el, visibility) => {
    if (el.hasAttribute('hidden')) return true;
    const style = window.getComputedStyle(el);
    return style.display === 'none' || (visibility && style.visibility === 'hidden');
  };
  const visible = (el, visibility) => {
    if (!el.isConnected) return false;
    const key = visibility ? 'v' : 'd';
    let entry = cache.get(el);
    if (entry && entry[key] !== undefined) return entry[key];
    let shown = true;
    for (let node = el; node && node.nodeType === 1; ) {
      if (hiddenSelf(node, visibility && node === el)) { shown = false; break; }
      const parent = node.parentNode;
      node = parent && parent.nodeType === 11 ? parent.host : node.parentElement;
    }
    if (!entry) { entry = {}; cache.set(el, entry); }
    entry[key] = shown;
    return shown;
  };
  // The side of a visible element's box: a pixel where its style, or an
  // ancestor's (a block fills its container), makes it the "visually
  // hidden" pattern (a box of a pixel, or clipped away), which the sender
  // reads as for screen readers only (a live region's echo); two pixels
  // otherwise, so that a live region in plain sight announces, as live.
  const px = (value) => (/^[\d.]+px$/.test(value) ? parseFloat(value) : Infinity);
  const tiny = (el) => {
    const style = window.getComputedStyle(el);
    return px(style.width) <= 1 || px(style.height) <= 1 || style.clipPath === 'inset(50%)' ||
      /rect\(0(px)?,? 0(px)?,? 0(px)?,? 0(px)?\)/.test(style.clip);
  };
  const side = (el) => {
    if (!visible(el, false)) return 0;
    const entry = cache.get(el);
    if (entry.s === undefined) {
      const parent = el.parentNode && el.parentNode.nodeType === 11 ? el.parentNode.host : el.parentElement;
      entry.s = tiny(el) || (parent && side(parent) === 1) ? 1 : 2;
    }
    return entry.s;
  };
  const box = (n) => ({ x: 0, y: 0, top: 0, left: 0, right: n, bottom: n, width: n, height: n });
  Element.prototype.checkVisibility = function checkVisibility(options) {
    return visible(this, Boolean(options && options.visibilityProperty));
  };
  Element.prototype.getBoundingClientRect = function getBoundingClientRect() { return box(side(this)); };
  Element.prototype.getClientRects = function getClientRects() { return visible(this, false) ? [box(side(this))] : []; };
  // The sender reads a box's size from offsetWidth/offsetHeight where an
  // element has them (jsdom's are always 0): the same box.
  for (const key of ['offsetWidth', 'offsetHeight']) {
    Object.defineProperty(window.HTMLElement.prototype, key, {
      configurable: true,
      get() { return side(this); },
    });
  }
}

/** Makes the input events the sender listens to on `window` look like the
 *  browser's: trusted (rrweb records what the user did; it does not say
 *  whether the page dispatched it: a documented gap), from the primary
 *  pointer's main button, stamped on the virtual clock. */
function installTrustedInputs(window, clock, timeOrigin) {
  const add = window.addEventListener.bind(window);
  const remove = window.removeEventListener.bind(window);
  const wrapped = new WeakMap();
  const trusted = (event) => new Proxy(event, {
    get(target, prop) {
      if (prop === 'isTrusted' || prop === 'isPrimary') return true;
      if (prop === 'pointerId') return 1;
      if (prop === 'timeStamp') return clock.now() - timeOrigin;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  window.addEventListener = (type, fn, options) => {
    if (!INPUT_TYPES.has(type) || typeof fn !== 'function') return add(type, fn, options);
    let wrapper = wrapped.get(fn);
    if (!wrapper) { wrapper = (event) => fn(trusted(event)); wrapped.set(fn, wrapper); }
    return add(type, wrapper, options);
  };
  window.removeEventListener = (type, fn, options) => remove(type, (fn && wrapped.get(fn)) || fn, options);
}

// The computed styles the sender reads: display and visibility (through
// checkVisibility above), overflow and clipping. jsdom computes a style by
// matching every rule of every sheet against the element (its cascade is
// the rules' order, property by property), which made nine tenths of an
// import's time on a page with a CSS framework's thousands of rules. A rule
// that declares none of these properties cannot change what the sender
// reads, so it is dropped from the rebuilt page's sheets.
const READ_PROPERTY_RE = /^(display|visibility|overflow|clip|all$)/;

function declaresReadProperty(rule) {
  const { style } = rule;
  if (!style) return false;
  for (let i = 0; i < style.length; i++) if (READ_PROPERTY_RE.test(style[i])) return true;
  return false;
}

/** Keeps, in `list` (a sheet's or a media rule's cssRules), the style
 *  rules that declare a read property and the media rules that still hold
 *  one; jsdom reads no other kind of rule. */
function keepReadRules(container) {
  const rules = container.cssRules;
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i];
    let keep;
    if (rule.media && rule.cssRules) {
      keepReadRules(rule);
      keep = rule.cssRules.length > 0;
    } else keep = typeof rule.selectorText === 'string' && declaresReadProperty(rule);
    if (!keep) container.deleteRule(i);
  }
}

/**
 * Creates an empty page at `url` on `clock`, its time origin `startMs`.
 * `onBytes(bytes)` receives each batch the sender posts.
 */
export async function createPage({ url, clock, startMs, onBytes }) {
  let pageUrl;
  try {
    pageUrl = new URL(url).href;
  } catch {
    pageUrl = 'about:blank';
  }
  const dom = new JSDOM('<!DOCTYPE html><html><head></head><body></body></html>', {
    url: pageUrl, runScripts: 'outside-only', virtualConsole: new VirtualConsole(),
  });
  const { window } = dom;
  if (window.document.readyState !== 'complete') {
    await new Promise((done) => window.addEventListener('load', done, { once: true }));
  }
  const visibility = new WeakMap();
  let visibilityCache = visibility;
  const trimmedSheets = new WeakSet();
  const perf = {
    timeOrigin: startMs,
    now: () => clock.now() - startMs,
    measure() {}, mark() {},
    getEntriesByType: () => [],
  };
  Object.defineProperty(window, 'performance', { value: perf, configurable: true, writable: true });
  window.setTimeout = clock.setTimeout;
  window.clearTimeout = clock.clearTimeout;
  window.setInterval = () => 0; // the sender uses none; a page's would be its own
  window.requestAnimationFrame = clock.requestAnimationFrame;
  window.cancelAnimationFrame = clock.clearTimeout;
  window.MessageChannel = clock.MessageChannel;
  // What a browser has and jsdom's realm lacks; Node's own serve.
  for (const name of ['TextEncoder', 'TextDecoder', 'crypto']) {
    if (window[name] === undefined) window[name] = globalThis[name];
  }
  window.fetch = async (_url, init) => {
    if (init && init.body) onBytes(init.body);
    return { ok: true, status: 200 };
  };
  // The page's `new Date()` and Date.now() read the virtual clock too: a
  // time zone offset is the one in force on the session's date.
  window.__uitrailNow = clock.now;
  dom.getInternalVMContext();
  new vm.Script(`(() => {
    const RealDate = Date;
    const now = globalThis.__uitrailNow;
    delete globalThis.__uitrailNow;
    globalThis.Date = class Date extends RealDate {
      constructor(...args) { if (args.length) super(...args); else super(now()); }
      static now() { return now(); }
    };
  })();`).runInContext(dom.getInternalVMContext());
  installVisibility(window, { get: (el) => visibilityCache.get(el), set: (el, v) => visibilityCache.set(el, v) });
  installTrustedInputs(window, clock, startMs);
  const sender = loadSender(dom.getInternalVMContext());
  return {
    window,
    document: window.document,
    sender,
    tracker: null,
    /** Starts the sender over the page as it is now. */
    start(options) {
      this.tracker = sender.start({ url: INGEST_URL, transport: 'http', network: false, ...options });
    },
    /** The importer changed the DOM: cached visibility is stale, and a
     *  sheet it added or rewrote is cut to the rules the sender reads. */
    changed() {
      visibilityCache = new WeakMap();
      for (const sheet of window.document.styleSheets) {
        if (trimmedSheets.has(sheet)) continue;
        trimmedSheets.add(sheet);
        try {
          keepReadRules(sheet);
        } catch { /* a sheet jsdom could not parse holds no rule to keep */ }
      }
    },
    close() { window.close(); },
  };
}
