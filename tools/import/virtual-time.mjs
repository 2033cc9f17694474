// Virtual time for a page rebuilt from a recording: the sender's timers,
// animation frames, message channels and performance clock all run on the
// recording's own time, so a click recorded at T is stamped T and what the
// sender would have flushed 16 ms later is flushed at T + 16 ms, however
// fast the import runs. Time moves only when the importer advances it to
// the next recorded event (causality by the event's own time).

const FRAME_MS = 16;

/** Lets every microtask and promise job queued so far run (the sender's
 *  MutationObserver callbacks, its transport's promise chains). */
export const drainJobs = () => new Promise((resolve) => setImmediate(resolve));

export function createClock(startMs) {
  let now = startMs;
  let nextId = 1;
  let order = 0;
  const timers = new Map(); // id -> {at, order, fn, args}

  const add = (fn, delay, args) => {
    const id = nextId++;
    const ms = Number(delay);
    timers.set(id, { at: now + (Number.isFinite(ms) && ms > 0 ? ms : 0), order: order++, fn, args });
    return id;
  };
  const earliest = () => {
    let best = null;
    let bestId = 0;
    for (const [id, timer] of timers) {
      if (!best || timer.at < best.at || (timer.at === best.at && timer.order < best.order)) { best = timer; bestId = id; }
    }
    return best ? { id: bestId, timer: best } : null;
  };

  return {
    now: () => now,
    setTimeout: (fn, delay, ...args) => (typeof fn === 'function' ? add(fn, delay, args) : 0),
    clearTimeout: (id) => { timers.delete(id); },
    requestAnimationFrame: (fn) => add(() => fn(now), FRAME_MS - (now % FRAME_MS) || FRAME_MS, []),
    /** A MessageChannel whose messages arrive as a zero-delay task. */
    MessageChannel: class {
      constructor() {
        const port = () => ({ onmessage: null, postMessage: null, close() {}, start() {} });
        this.port1 = port();
        this.port2 = port();
        const link = (from, to) => {
          from.postMessage = (data) => add(() => { if (typeof to.onmessage === 'function') to.onmessage({ data }); }, 0, []);
        };
        link(this.port1, this.port2);
        link(this.port2, this.port1);
      }
    },
    /** Runs every timer due up to `targetMs`, in time order, then sets the
     *  clock to it. A timer a callback adds runs too when it is due. At
     *  most `maxTimers` callbacks (a page that re-arms forever). */
    async advanceTo(targetMs, maxTimers = 100000) {
      await drainJobs();
      for (let ran = 0; ran < maxTimers; ran++) {
        const next = earliest();
        if (!next || next.timer.at > targetMs) break;
        timers.delete(next.id);
        if (next.timer.at > now) now = next.timer.at;
        try {
          next.timer.fn(...next.timer.args);
        } catch {
          // The sender's own errors are its to report; the import goes on.
        }
        await drainJobs();
      }
      if (targetMs > now) now = targetMs;
    },
    pending: () => timers.size,
  };
}
