// Page activity besides the DOM's own changes, for the daemon's scorer
// (issue 21): the requests in flight (network.js) and the loading
// indicators that animate without mutations (busy.js). Their counts ride
// on every mutation record as `net` and as part of `busy` (protocol §1);
// when one changes while the DOM is quiet, a record with no `recs` says
// so, since no flush would.

import { createAnimationIndicators } from './busy.js';
import { LIMITS } from './limits.js';
import { startNetwork } from './network.js';

/**
 * Creates the tracker's page activity.
 *  - options: the tracker's (network, ignoreUrls, requestMaxMs);
 *  - baseUrl: the daemon's address (its own requests never count);
 *  - busyElements, countBusy: observation.js's markup indicators;
 *  - hasPending(): a mutation flush is on its way (it will carry the counts);
 *  - send(state): sends a record with no recs and these fields.
 * Returns {state(markupBusy?), loadedAgain(), stop()}.
 */
export function createPageActivity({ options, baseUrl, busyElements, countBusy, hasPending, send }) {
  const animations = createAnimationIndicators({ skip: (el) => busyElements.has(el) });
  let lastNet = 0;
  let scheduled = false;
  let stopped = false;
  let loadedWaiter = null; // called with the count on every change while a `loaded` waits

  const network = options.network === false ? null : startNetwork({
    ignore: [...(options.ignoreUrls || []), `${baseUrl}/`],
    maxMs: Number.isFinite(options.requestMaxMs) && options.requestMaxMs > 0 ? options.requestMaxMs : LIMITS.REQUEST_COUNT_MAX_MS,
    onChange: (count) => {
      if (loadedWaiter) loadedWaiter(count);
      if (scheduled || stopped) return;
      scheduled = true;
      // After the page's own reaction to the same event (its promise
      // handlers run first): a render it makes goes out in the flush, with
      // the count.
      setTimeout(() => {
        scheduled = false;
        if (stopped || !network || network.count() === lastNet || hasPending()) return;
        send(state());
      }, 0);
    },
  });

  /** The activity fields of a record: busy (markup indicators, given or
   *  counted now, plus animated ones) and net when requests are counted. */
  function state(markupBusy = countBusy()) {
    const out = { busy: markupBusy + animations.count() };
    if (network) out.net = lastNet = network.count();
    return out;
  }

  return {
    state,
    /** Sends `loaded` once no request is in flight (at most
     *  LOADED_WAIT_MAX_MS from now), after a page came back from the
     *  back/forward cache or an in-app navigation showed a new route. */
    loadedAgain() {
      const deadline = performance.now() + LIMITS.LOADED_WAIT_MAX_MS;
      const go = () => {
        loadedWaiter = null;
        requestAnimationFrame(() => setTimeout(() => { if (!stopped) send({ ...state(), loaded: true }); }, 0));
      };
      if (!network || network.count() === 0) { go(); return; }
      loadedWaiter = (count) => {
        if (count === 0) go();
        else if (performance.now() > deadline) loadedWaiter = null;
      };
    },
    stop() {
      stopped = true;
      loadedWaiter = null;
      if (network) network.stop();
    },
  };
}
