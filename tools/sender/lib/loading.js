// The document's loading, for the daemon's page-stability scorer: once the
// `load` event has fired, the web fonts are loaded and no image is still
// loading, the sender says so (a mutation record with `loaded: true`), and
// a page whose DOM stayed quiet may be marked stable sooner than one the
// daemon knows nothing about (protocol: `loaded`). A page that takes
// longer than LOADED_WAIT_MAX_MS from its start to get there never says
// it: it settles by the scorer's ordinary rules.

import { LIMITS } from './limits.js';

/** The first image of `doc` still loading, or null. A lazy image the
 *  browser has not started is not pending: nothing waits for it. */
function pendingImage(doc) {
  for (const img of doc.images) {
    if (!img.complete && img.loading !== 'lazy') return img;
  }
  return null;
}

/**
 * Calls done() once, when `doc` is loaded with nothing pending, unless
 * that takes longer than LOADED_WAIT_MAX_MS. Returns a function that
 * cancels it.
 */
export function whenLoaded(doc, done) {
  const view = doc.defaultView;
  const deadline = performance.now() + LIMITS.LOADED_WAIT_MAX_MS;
  let over = false;
  let waitingOn = null; // the image whose load or error we listen for

  const stopWaiting = () => {
    if (!waitingOn) return;
    waitingOn.removeEventListener('load', check);
    waitingOn.removeEventListener('error', check);
    waitingOn = null;
  };
  const finish = () => {
    over = true;
    stopWaiting();
    view.removeEventListener('load', check);
  };
  function check() {
    if (over) return;
    stopWaiting();
    if (performance.now() > deadline) { finish(); return; }
    if (doc.readyState !== 'complete') return; // the load event checks again
    if (doc.fonts && doc.fonts.status !== 'loaded') { doc.fonts.ready.then(check, check); return; }
    const img = pendingImage(doc);
    if (img) {
      waitingOn = img;
      img.addEventListener('load', check);
      img.addEventListener('error', check);
      return;
    }
    finish();
    done();
  }
  view.addEventListener('load', check);
  check();
  return finish;
}
