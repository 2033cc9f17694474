// Loading indicators that move without touching the DOM (issue 21): a
// CSS or Web Animation that runs forever on a visible element. A spinner
// animates by its style alone, so no mutation says it is still there;
// document.getAnimations() does. The markup indicators (aria-busy,
// role=progressbar without a value, skeletons) are observation.js's.
//
// Not every endless animation is a page waiting: a pulsing logo or a
// moving background loops as decoration. An endless animation counts
// when its element says it is an indicator (role progressbar or status,
// aria-busy, a class or id naming a spinner, loader or skeleton, on it or
// on a near ancestor), or when it started after the sender did and runs
// on a small element (a spinner shown for a request): a loop the page
// already had when the sender started is decoration unless it says
// otherwise.

import { IGNORE_SELECTOR, isVisible } from './dom.js';

const HINT_RE = /spin|load|busy|progress|skeleton|shimmer|throbber/i;
const HINT_ROLES = new Set(['progressbar', 'status']);
const HINT_ANCESTORS = 3;   // how far up a hint on an ancestor counts
const SMALL_PX = 160;       // a spinner fits in a square of this side

/** Whether `el` or one of its near ancestors names itself an indicator. */
function hinted(el) {
  let node = el;
  for (let i = 0; node && i <= HINT_ANCESTORS; i++, node = node.parentElement) {
    if (HINT_ROLES.has(node.getAttribute('role')) || node.getAttribute('aria-busy') === 'true') return true;
    const cls = typeof node.className === 'string' ? node.className : '';
    if (HINT_RE.test(cls) || HINT_RE.test(node.id)) return true;
  }
  return false;
}

function small(el) {
  const box = el.getBoundingClientRect();
  return box.width <= SMALL_PX && box.height <= SMALL_PX;
}

/** The element an animation moves, when it is one. */
function targetOf(animation) {
  const effect = animation.effect;
  const target = effect && effect.target;
  return target && target.nodeType === 1 ? target : null;
}

function endless(animation) {
  if (animation.playState !== 'running' || !animation.effect) return false;
  const timing = animation.effect.getComputedTiming ? animation.effect.getComputedTiming() : animation.effect.getTiming();
  return timing.iterations === Infinity;
}

/**
 * Creates the animation indicators of `doc`. `skip(el)`: an element the
 * markup rules count already (not counted twice). Returns {count()}.
 */
export function createAnimationIndicators({ doc = document, skip = () => false } = {}) {
  const supported = typeof doc.getAnimations === 'function';
  // The endless loops running when the sender started: decoration unless
  // they say otherwise.
  const atStart = new WeakSet(supported ? doc.getAnimations().filter(endless) : []);
  return {
    /** Endless animations on visible elements that are indicators. */
    count() {
      if (!supported) return 0;
      const seen = new Set();
      for (const animation of doc.getAnimations()) {
        const el = targetOf(animation);
        if (!el || seen.has(el) || !endless(animation)) continue;
        if (skip(el) || el.closest(IGNORE_SELECTOR) || !isVisible(el)) continue;
        if (!hinted(el) && (atStart.has(animation) || !small(el))) continue;
        seen.add(el);
      }
      return seen.size;
    },
  };
}
