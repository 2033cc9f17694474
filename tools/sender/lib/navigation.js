// Navigation and the page's lifecycle: `uitrail.nav` at start and for
// every in-app navigation, with the title the page sets after it;
// `uitrail.unload` when the page goes away (the tab may come back: a link,
// a form post, a reload, the back/forward cache); a page restored from that
// cache navigates again. A frame's navigations are not the tab's.

import { LIMITS, clean, cut, nowMs } from './dom.js';

function navigationHowAtLoad() {
  const entry = performance.getEntriesByType && performance.getEntriesByType('navigation')[0];
  if (entry && entry.type === 'reload') return 'reload';
  if (entry && entry.type === 'back_forward') return 'pop';
  return 'load';
}

const currentTitle = () => cut(clean(document.title), LIMITS.TITLE_MAX_CHARS);

/**
 * Creates navigation reporting.
 *  - tab, transport, listen: the tracker's;
 *  - onPageHide(persisted): the tracker's work when the page goes away
 *    (the unload record is sent from here);
 *  - onPageShow(): after a back/forward-cache restore;
 *  - onNavigated(how): after a restore's or an in-app navigation's record;
 *  - onTraverse(): the user went back or forward in history.
 */
export function createNavigation({ tab, transport, listen, onPageHide, onPageShow, onNavigated = () => {}, onTraverse = () => {} }) {
  let lastUrl = '';
  let waiting = null; // {entry, title, timer}: a nav record waiting for its title

  /** Completes the nav record waiting for its title, with the title now. */
  const settleTitle = () => {
    if (!waiting) return;
    const { entry, timer } = waiting;
    waiting = null;
    clearTimeout(timer);
    entry.record.title = currentTitle();
    transport.complete(entry);
  };

  /** Reports the page at `how`. Frameworks set the title after the URL
   *  (after the next frame, in an effect), so the record waits until the
   *  title changes or NAV_TITLE_WAIT_MS passes, holding later records
   *  behind it so that their order stays. */
  const report = (how) => {
    const url = location.href;
    if (url === lastUrl && how !== 'reload') return;
    lastUrl = url;
    settleTitle();
    const record = {
      tab, url: cut(url, LIMITS.URL_MAX_CHARS), title: currentTitle(), how,
      tz: -new Date().getTimezoneOffset() || 0, // never -0
    };
    const entry = transport.enqueue('uitrail.nav', record, nowMs(), true);
    waiting = { entry, title: record.title, timer: setTimeout(settleTitle, LIMITS.NAV_TITLE_WAIT_MS) };
    if (started) onNavigated(how);
  };
  let started = false;

  const hasNavigationApi = typeof navigation !== 'undefined' && navigation && typeof navigation.addEventListener === 'function';
  if (hasNavigationApi) {
    let pendingHow = 'push';
    listen(navigation, 'navigate', (event) => {
      const type = event.navigationType;
      pendingHow = event.hashChange ? 'hash' : type === 'traverse' ? 'pop' : type === 'replace' ? 'replace' : type === 'reload' ? 'reload' : 'push';
      if (type === 'traverse') onTraverse();
    }, false);
    listen(navigation, 'navigatesuccess', () => report(pendingHow), false);
  } else {
    listen(window, 'popstate', () => { onTraverse(); report('pop'); }, false);
    listen(window, 'hashchange', () => report('hash'), false);
  }

  listen(window, 'pagehide', (event) => {
    settleTitle();
    onPageHide(event.persisted === true);
  }, false);
  listen(window, 'pageshow', (event) => {
    // A page restored from the back/forward cache is the same tab again.
    if (event.persisted) { lastUrl = ''; onPageShow(); report('pop'); }
  }, false);

  return {
    start() { report(navigationHowAtLoad()); started = true; },
    /** After each mutation flush: a title that changed completes the
     *  waiting record; without the Navigation API, a URL that changed is
     *  an in-app navigation. */
    afterFlush() {
      if (waiting && currentTitle() !== waiting.title) settleTitle();
      if (!hasNavigationApi && location.href !== lastUrl) report('push');
    },
    stop() { settleTitle(); },
    hasNavigationApi,
  };
}
