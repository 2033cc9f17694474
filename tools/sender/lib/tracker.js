// The tracker: wires the modules together for one tab. start() is the
// public entry point (see uitrail.d.ts for the options and the handle).

import { nowMs } from './dom.js';
import { appRecord } from './app-events.js';
import { createEphemera } from './ephemera.js';
import { runAs } from './gesture.js';
import { announceTopTracker, frameHandle, topTracker } from './frames.js';
import { createInteraction } from './interaction.js';
import { createNavigation } from './navigation.js';
import { whenLoaded } from './loading.js';
import { createObservation } from './observation.js';
import { createPageActivity } from './activity.js';
import { randomId, readSavedTab } from './storage.js';
import { createTransport } from './transport.js';
import { createValidation } from './validation.js';

const ROW_CONTEXTS = ['opt-in', 'always', 'never'];
const TRANSPORTS = ['websocket', 'http'];

function checkOptions(options) {
  const rowContext = options.rowContext || 'opt-in';
  if (!ROW_CONTEXTS.includes(rowContext)) {
    throw new TypeError(`uitrail.start: rowContext must be "opt-in", "always" or "never", not ${JSON.stringify(rowContext)}`);
  }
  const transport = options.transport || 'websocket';
  if (!TRANSPORTS.includes(transport)) {
    throw new TypeError(`uitrail.start: transport must be "websocket" or "http", not ${JSON.stringify(transport)}`);
  }
  if (options.dom !== undefined && typeof options.dom !== 'boolean') {
    throw new TypeError(`uitrail.start: dom must be true or false, not ${JSON.stringify(options.dom)}`);
  }
  if (options.network !== undefined && typeof options.network !== 'boolean') {
    throw new TypeError(`uitrail.start: network must be true or false, not ${JSON.stringify(options.network)}`);
  }
  if (options.ignoreUrls !== undefined && !Array.isArray(options.ignoreUrls)) {
    throw new TypeError('uitrail.start: ignoreUrls must be an array of strings, RegExps or functions');
  }
  return { rowContext, transport };
}

/**
 * Starts tracking the page and streaming to the daemon; returns the
 * tracker handle. In a same-origin frame it hands off to the top page's
 * tracker (see frames.js).
 */
export function start(options = {}) {
  checkOptions(options);
  if (topTracker() !== undefined && !options.root) return frameHandle(() => startTracker(options));
  return startTracker(options);
}

function startTracker(options) {
  const { rowContext, transport: transportKind } = checkOptions(options);
  const root = options.root || document.documentElement;
  const measure = options.measure === true;
  const domSource = options.dom !== false;
  const onRecord = typeof options.onRecord === 'function' ? options.onRecord : null;

  const saved = readSavedTab();
  const tab = options.tab || (saved ? saved.tab : randomId());
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

  const transport = createTransport({
    baseUrl: String(options.url || location.origin).replace(/\/+$/, ''), token: options.token,
    kind: transportKind, measure, tabInUrl: options.tabInUrl === true, tab, seq: saved && saved.tab === tab ? saved.seq : 0, stats, onRecord,
  });

  let observation = null;
  let ephemera = null;
  let interaction = null;
  let navigation = null;
  let validation = null;
  const attachDocument = (doc) => {
    if (interaction) interaction.attach(doc);
    if (validation) validation.attach(doc);
  };
  if (domSource) {
    observation = createObservation({
      root, keyOf, knownSecrets, measure,
      onFrameDocument: attachDocument,
      onFlush: (flush) => {
        ephemera.report(flush);
        validation.afterFlush(flush.firstMs);
        const record = { tab, dom: flush.dom, recs: flush.recs, ...activity.state(flush.busy) };
        if (flush.dropped) record.dropped = flush.dropped;
        transport.enqueue('uitrail.mutation', record, flush.ms);
        navigation.afterFlush();
      },
    });
    validation = createValidation({ tab, root, knownSecrets, transport });
    ephemera = createEphemera({
      tab, keyOf, candidates: observation.dialogCandidates, transport,
      isValidationMessage: validation.owns,
      staleMessages: validation.staleMessages,
      lastActionName: () => (interaction ? interaction.lastActionName() : ''),
    });
    interaction = createInteraction({
      tab, root, rowContext, keyOf, knownSecrets, measure, transport,
      beforeAction: (ms) => {
        observation.flushNow(ms);
        validation.beginAction();
        ephemera.noteAction();
      },
      // The user typed: the mutations before the keystroke are flushed,
      // then a record with no changes says so (protocol: mutation
      // `input`); the daemon's click awaiting an outcome stops waiting.
      // Validation messages shown by then answer the action before: they
      // go first.
      onTyping: (ms) => {
        observation.flushNow(ms);
        validation.beforeTyping(ms);
        transport.enqueue('uitrail.mutation', { tab, dom: [observation.dom.elements, observation.dom.depth], recs: [], ...activity.state(), input: true }, ms);
      },
    });
  }

  // Pending requests and animated indicators (activity.js): their counts
  // ride on every mutation record, and a change of them while the DOM is
  // quiet goes out on a record of its own.
  const activity = observation ? createPageActivity({
    options, baseUrl: String(options.url || location.origin).replace(/\/+$/, ''),
    busyElements: observation.busyCandidates, countBusy: observation.countBusy,
    hasPending: observation.hasPending,
    send: (state) => transport.enqueue('uitrail.mutation', { tab, dom: [observation.dom.elements, observation.dom.depth], recs: [], ...state }, nowMs()),
  }) : null;
  if (activity) cleanups.push(activity.stop);

  navigation = createNavigation({
    tab, transport, listen,
    onPageHide: (persisted) => {
      if (interaction) interaction.stop();
      if (observation) observation.flushNow();
      if (ephemera) ephemera.forget();
      transport.enqueue('uitrail.unload', { tab, persisted }, nowMs());
      transport.sendNow();
      transport.saveSeq();
    },
    onTraverse: () => { if (ephemera) ephemera.noteTraversal(); },
    onPageShow: () => {
      if (ephemera) ephemera.noteOpenAtStart();
      transport.sendPending();
    },
    // A page restored from the back/forward cache, or an in-app route
    // shown, has loaded again once nothing is pending (protocol: `loaded`).
    onNavigated: () => { if (activity && !stopped) activity.loadedAgain(); },
  });
  listen(document, 'visibilitychange', () => { if (document.visibilityState === 'hidden') transport.sendPending(); }, false);

  if (observation) {
    observation.start();
    attachDocument(document);
    ephemera.noteOpenAtStart();
  }
  navigation.start();
  if (ephemera) ephemera.reportAlertsAtStart(root);
  if (observation) {
    // A first mutation record with the tree as it is and no changes: the
    // daemon then knows this tab reports mutations, so a page that never
    // changes still gets its stable mark, and the loading indicators
    // present at start hold the page "changing" until they go.
    const snapshot = () => transport.enqueue('uitrail.mutation', { tab, dom: [observation.dom.elements, observation.dom.depth], recs: [], ...activity.state() }, nowMs());
    snapshot();
    // An empty main landmark counts as loading for a while only; when it is
    // still empty then, no flush would tell the daemon it stopped counting.
    const lapse = observation.emptyMainLapsesIn();
    if (lapse) setTimeout(() => { if (!stopped && observation.mainIsEmpty()) snapshot(); }, lapse);
    // The document loaded with nothing pending: what the page did until
    // then is flushed first, so the record comes after it.
    cleanups.push(whenLoaded(document, () => {
      if (stopped) return;
      observation.flushNow();
      transport.enqueue('uitrail.mutation', { tab, dom: [observation.dom.elements, observation.dom.depth], recs: [], ...activity.state(), loaded: true }, nowMs());
    }));
  }

  const handle = {
    tab,
    stats,
    frame: false,
    /** Reports a host event; see uitrail.d.ts. */
    emit(name, details) {
      if (stopped) return;
      transport.enqueue('uitrail.app', appRecord(tab, name, details), nowMs());
    },
    /** Runs fn as the assistant's: its clicks and changes are marked so
     *  (see gesture.js, uitrail.d.ts). Returns what fn returns. */
    actor(actor, fn) { return runAs(actor, fn); },
    /** Sends what is queued now instead of on the next turn. */
    flush() { transport.sendPending(); },
    /** Stops tracking: listeners and observer removed, what is queued sent
     *  when the connection allows, then the connection closed. With
     *  {close: true} the tab is reported gone for good (uitrail.close). */
    stop(stopOptions = {}) {
      if (stopped) return;
      stopped = true;
      if (observation) observation.stop();
      for (const cleanup of cleanups) cleanup();
      if (interaction) interaction.stop();
      if (validation) validation.stop();
      navigation.stop();
      if (stopOptions.close === true) transport.enqueue('uitrail.close', { tab }, nowMs());
      unannounce();
      transport.close();
    },
    /** Observes a same-origin frame's document (a frame's sender calls it). */
    adoptFrame(frameWindow) {
      if (!stopped && observation && frameWindow.frameElement) observation.adoptFrame(frameWindow.frameElement);
    },
  };
  const unannounce = window.top === window || topTracker() === undefined ? announceTopTracker(handle) : () => {};
  return handle;
}
