// Frames: one tracker per tab, the top frame's. It observes its
// same-origin frames itself (observation.js attaches to their documents),
// so a sender loaded inside such a frame hands everything to it (one tab
// id, one seq counter, one transport) instead of competing with it. A
// frame whose top page has no tracker (an embedded widget on a page
// without one, or a cross-origin parent) runs its own.

import { runAs } from './gesture.js';
import { LIMITS, TOP_TRACKER_KEY } from './limits.js';

/** The top frame's tracker when this is a same-origin frame that has one;
 *  null when there is none (yet); undefined when this is the top frame or
 *  the top frame is of another origin. */
export function topTracker() {
  if (window.top === window) return undefined;
  try {
    return window.top[TOP_TRACKER_KEY] || null;
  } catch {
    return undefined; // Cross-origin: this frame is a world of its own.
  }
}

/** Makes `tracker` the one the page's same-origin frames hand off to. */
export function announceTopTracker(tracker) {
  window[TOP_TRACKER_KEY] = tracker;
  return () => { if (window[TOP_TRACKER_KEY] === tracker) delete window[TOP_TRACKER_KEY]; };
}

/**
 * The handle a sender in a frame returns. It forwards to the top frame's
 * tracker once there is one, or to a tracker of its own (from
 * `startOwn()`) when the top page has none within FRAME_HANDOFF_WAIT_MS of
 * its load. Host events emitted before that are kept and replayed.
 */
export function frameHandle(startOwn) {
  let target = null;
  let stopped = false;
  const early = [];
  const decide = (tracker) => {
    if (target || stopped) return;
    target = tracker;
    for (const [name, details] of early) target.emit(name, details);
    early.length = 0;
  };
  const adopt = (top) => {
    top.adoptFrame(window);
    decide({
      tab: top.tab, stats: top.stats, frame: true,
      emit: (name, details) => top.emit(name, details),
      flush: () => top.flush(),
      actor: (actor, fn) => top.actor(actor, fn),
      stop: () => {}, // The top tracker stops with its page.
    });
  };
  const look = () => {
    const top = topTracker();
    if (top) adopt(top);
    return Boolean(top);
  };
  if (!look()) {
    const wait = () => setTimeout(() => { if (!look()) decide(startOwn()); }, LIMITS.FRAME_HANDOFF_WAIT_MS);
    if (window.top.document.readyState === 'complete') wait();
    else window.top.addEventListener('load', wait, { once: true });
  }
  return {
    get tab() { return target ? target.tab : undefined; },
    get stats() { return target ? target.stats : undefined; },
    get frame() { return target ? target.frame === true : true; },
    emit(name, details) { if (target) target.emit(name, details); else early.push([name, details]); },
    flush() { if (target) target.flush(); },
    actor(actor, fn) { return target ? target.actor(actor, fn) : runAs(actor, fn); },
    stop(options) { stopped = true; if (target) target.stop(options); },
  };
}
