// Pending requests, for the daemon's page-stability scorer (issue 21): a
// page waiting for its data is not stable. fetch and XMLHttpRequest are
// wrapped so that the tracker learns when a request starts and when it
// settled, and counts what is in flight. Only that count leaves the page
// (mutation `net`, protocol §1), never a URL: URLs carry personal data.
//
// The wrapping is invisible to the page: fetch returns the very promise
// the browser's fetch returned (same response, same error, same abort);
// the body is measured on a clone, so the page reads its own stream
// untouched; XMLHttpRequest gets one extra `loadend` listener. Two senders
// on one page (two bundles, a frame's sender) share one wrapping, held on
// the window under a registry symbol, each with its own listener and its
// own ignore list; the last one to stop restores the originals, unless
// the page wrapped them again since (then the wrapper stays, passing
// through, and the page's own chain is not broken).
//
// A request open longer than requestMaxMs (a long poll, an event stream
// read through fetch) stops counting then: a page must not look busy
// forever because it listens for pushes.

const REGISTRY = Symbol.for('uitrail.network.v1');

/** The absolute URL a fetch input or an XHR url names ('' when none). */
function urlOf(input, base) {
  try {
    if (input && typeof input === 'object' && typeof input.url === 'string') return input.url; // a Request
    return new URL(String(input), base).href;
  } catch {
    return '';
  }
}

/** Reads a response clone to its end (or until `signal` says stop) and
 *  calls done() once. A response without a body is done at once. */
function drain(response, done, onCancel) {
  let body = null;
  try {
    body = response.body ? response.clone().body : null;
  } catch {
    body = null; // body already used or locked: nothing more to wait for
  }
  if (!body) { done(); return; }
  const reader = body.getReader();
  onCancel(() => { reader.cancel().catch(() => {}); });
  const pump = () => reader.read().then(({ done: end }) => (end ? done() : pump()), () => done());
  pump();
}

/** The registry of `view`: the originals, the wrappers and the listeners. */
function registryOf(view) {
  if (!view[REGISTRY]) {
    Object.defineProperty(view, REGISTRY, {
      value: { listeners: new Set(), fetch: null, wrappedFetch: null, open: null, send: null, wrappedOpen: null, wrappedSend: null, xhrs: new WeakMap() },
      configurable: true,
    });
  }
  return view[REGISTRY];
}

/** One request as the listeners see it: begin() asks each listener,
 *  end() tells those that counted it, once. */
function beginRequest(reg, url) {
  const taken = [];
  for (const listener of reg.listeners) {
    const token = listener.begin(url);
    if (token) taken.push(token);
  }
  let ended = false;
  const cancels = [];
  return {
    end() {
      if (ended) return;
      ended = true;
      for (const token of taken) token.end();
    },
    counted: taken.length > 0,
    onCancel(fn) { cancels.push(fn); for (const token of taken) token.onBound(fn); },
  };
}

function wrapFetch(view, reg) {
  if (typeof view.fetch !== 'function' || reg.wrappedFetch) return;
  reg.fetch = view.fetch;
  const original = reg.fetch;
  reg.wrappedFetch = function fetch(input, init) {
    const request = beginRequest(reg, urlOf(input, view.location.href));
    let promise;
    try {
      // eslint-disable-next-line prefer-rest-params
      promise = original.apply(this, arguments);
    } catch (error) {
      request.end();
      throw error;
    }
    if (!request.counted || !promise || typeof promise.then !== 'function') {
      request.end();
      return promise;
    }
    // A side branch: the page gets `promise` itself, and a rejection it
    // does not handle stays unhandled, as without the sender.
    promise.then((response) => drain(response, request.end, request.onCancel), request.end);
    return promise;
  };
  Object.defineProperty(reg.wrappedFetch, 'length', { value: original.length });
  view.fetch = reg.wrappedFetch;
}

function wrapXhr(view, reg) {
  const XHR = view.XMLHttpRequest;
  if (typeof XHR !== 'function' || reg.wrappedSend) return;
  const proto = XHR.prototype;
  reg.open = proto.open;
  reg.send = proto.send;
  const { open, send, xhrs } = reg;
  reg.wrappedOpen = function open_(method, url) {
    // open() on a request in flight ends it without an event.
    const active = xhrs.get(this);
    if (active && active.request) active.request.end();
    xhrs.set(this, { url: urlOf(url, view.location.href), request: null });
    // eslint-disable-next-line prefer-rest-params
    return open.apply(this, arguments);
  };
  Object.defineProperty(reg.wrappedOpen, 'name', { value: 'open' });
  reg.wrappedSend = function send_() {
    const state = xhrs.get(this);
    let request = null;
    if (state) {
      request = beginRequest(reg, state.url);
      state.request = request;
      const xhr = this;
      const done = () => { xhr.removeEventListener('loadend', done); request.end(); };
      this.addEventListener('loadend', done);
      try {
        // eslint-disable-next-line prefer-rest-params
        return send.apply(this, arguments);
      } catch (error) {
        this.removeEventListener('loadend', done);
        request.end();
        throw error;
      }
    }
    // eslint-disable-next-line prefer-rest-params
    return send.apply(this, arguments);
  };
  Object.defineProperty(reg.wrappedSend, 'name', { value: 'send' });
  proto.open = reg.wrappedOpen;
  proto.send = reg.wrappedSend;
}

/** Restores what this registry wrapped, where the wrapper is still the
 *  one in place. */
function unwrap(view, reg) {
  if (reg.wrappedFetch && view.fetch === reg.wrappedFetch) {
    view.fetch = reg.fetch;
    reg.wrappedFetch = null;
  }
  const proto = view.XMLHttpRequest && view.XMLHttpRequest.prototype;
  if (proto && reg.wrappedSend && proto.send === reg.wrappedSend && proto.open === reg.wrappedOpen) {
    proto.open = reg.open;
    proto.send = reg.send;
    reg.wrappedOpen = null;
    reg.wrappedSend = null;
  }
}

/** Whether `url` is one of `ignore`: a string is a prefix of the URL (or
 *  the whole origin-relative path), a RegExp matches it, a function says
 *  true. */
export function ignored(ignore, url) {
  for (const rule of ignore) {
    if (typeof rule === 'string' && (url.startsWith(rule) || (rule.startsWith('/') && url.startsWith(location.origin + rule)))) return true;
    if (rule instanceof RegExp && rule.test(url)) return true;
    if (typeof rule === 'function') {
      try {
        if (rule(url)) return true;
      } catch {
        // A broken rule of the page ignores nothing.
      }
    }
  }
  return false;
}

/**
 * Starts counting the requests of `view` (the page's window).
 *  - ignore: ignoreUrls rules (strings, RegExps, functions);
 *  - maxMs: a request open longer stops counting;
 *  - onChange(count): the count of requests in flight changed.
 * Returns {count(), stop()}.
 */
export function startNetwork({ view = window, ignore = [], maxMs, onChange }) {
  const reg = registryOf(view);
  let count = 0;
  let stopped = false;
  const listener = {
    begin(url) {
      if (stopped || ignored(ignore, url)) return null;
      let counting = true;
      const bounds = [];
      const timer = setTimeout(() => {
        // Open too long: a long poll or a stream, no longer the page waiting.
        if (!counting) return;
        counting = false;
        for (const fn of bounds) fn();
        count--;
        if (!stopped) onChange(count);
      }, maxMs);
      count++;
      onChange(count);
      return {
        end() {
          clearTimeout(timer);
          if (!counting) return;
          counting = false;
          count--;
          if (!stopped) onChange(count);
        },
        onBound(fn) { bounds.push(fn); },
      };
    },
  };
  reg.listeners.add(listener);
  wrapFetch(view, reg);
  wrapXhr(view, reg);
  return {
    count: () => count,
    stop() {
      if (stopped) return;
      stopped = true;
      reg.listeners.delete(listener);
      if (reg.listeners.size === 0) unwrap(view, reg);
    },
  };
}
