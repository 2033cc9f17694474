// What the stories on libraries this project did not write share: the
// sentinel values typed into them (none may reach any output), keyboard-only
// focus moves, and the checks of the JSON trace (who acted, and that every
// outcome comes after the action it is linked to).

import assert from 'node:assert/strict';

/** Typed into fields of the stories; must never appear in any output. */
export const SENTINELS = ['sentinel.q7z@example.com', '1 sentinel-q7z lane', 'no-phone-sentinel', 'call sentinel.q7z'];

/** Presses Tab (and nothing else) until the focused element, looked up
 *  through open shadow roots, matches `selector`. */
export async function tabTo(page, selector, maxPresses = 80) {
  for (let i = 0; i < maxPresses; i++) {
    await page.keyboard.press('Tab');
    const there = await page.evaluate((sel) => {
      let el = document.activeElement;
      while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
      return Boolean(el && (el.matches(sel) || el.closest(sel)));
    }, selector);
    if (there) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

// The daemon's --debounce-ms default (OPTIONS.md): clicks on one element
// within it make one entry, by design (a double click is one action).
const DEBOUNCE_MS = 300;

/** Lets the page's clock pass the daemon's debounce after the newest click
 *  the daemon holds, as a user who reads what a click opened before
 *  clicking the same element again does: a story's second click on one
 *  element is then an action of its own, however fast the test runs.
 *  Waits on the click's own time, as the daemon has it. */
export async function pastDebounce(run, tab, page) {
  const click = (await run.json(tab)).events.find((event) => event.kind === 'click');
  assert.ok(click, 'a click to wait past');
  await page.waitForFunction((ms) => performance.timeOrigin + performance.now() > ms, click.ms + DEBOUNCE_MS);
}

/**
 * The JSON trace's links: every event has a `seq` (newest first, so
 * decreasing), every user action its `actor`, and an action's outcome the
 * `seq` of what it caused, later than the action's own.
 * `actors` maps "ROLE NAME" of the trace's actions to the expected actor.
 */
export function assertJsonLinks(json, actors) {
  const events = json.events;
  for (const [i, event] of events.entries()) {
    assert.equal(typeof event.seq, 'number', `event ${i} (${event.kind}) has a seq`);
    if (i > 0) assert.ok(event.seq < events[i - 1].seq, `event ${i} seq ${event.seq} older than ${events[i - 1].seq}`);
    if (event.kind !== 'click' && event.kind !== 'change') continue;
    const key = `${event.role} ${event.name}`;
    // The JSON leaves `actor` out for the user's actions (protocol §4.4).
    assert.equal(event.actor ?? 'user', actors[key] ?? 'user', `actor of ${key}`);
    if (event.outcome && event.kind === 'click') {
      assert.equal(typeof event.outcome.seq, 'number', `the outcome of ${key} links to its event`);
      assert.ok(event.outcome.seq > event.seq, `the outcome of ${key} comes after it`);
    }
  }
}
