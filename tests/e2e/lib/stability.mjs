// The page-stability pages of tests/e2e/corpus/stability/, shared by
// stability.test.mjs (asserts each page's marks against its own truth) and
// tools/bench-stability.mjs (prints the latency table). Each page calls
// truth('changing' | 'stable') itself at its true transitions; the daemon's
// marks come from its SSE stream. Both are on the sender's clock (the
// page's performance.timeOrigin + performance.now()).

import { sleep } from './harness.mjs';
import { uniqueTab } from './corpus.mjs';

// Tolerances of the test (ms from the true transition to its mark). A
// changing mark is within 100 ms of the truth either way: one that answers
// a click is dated at the click, which on a loaded machine the page's
// handler (its truth) runs some tens of ms after. A stable mark may come
// at most EARLY_MS before the truth (a flush is stamped when its first
// record was queued); earlier, it is premature.
export const EARLY_MS = 30;
export const CHANGING_EARLY_MS = 100;
export const CHANGING_LATE_MS = 100;
export const STABLE_LATE_MS = 250;
// A static page's stable mark comes load_quiet_ms (100) after the sender's
// record that the document loaded, which the sender sends as it starts
// when the page is loaded by then; without it, quiet_ms (200) after the
// sender's start. So it is asked within LOAD_SETTLE_MS of the later of
// the truth (the load event) and the sender's start: 60 ms for the
// sender's own work, counted from its start so that a busy machine
// delaying the start delays the bound too.
export const LOAD_SETTLE_MS = 160;
const earliest = (state) => (state === 'changing' ? CHANGING_EARLY_MS : EARLY_MS);

const click = (selector) => async (page) => { await page.click(selector); };

/** The pages: `steps` are [ms after the load, action] pairs, `watchMs` how
 *  long after the load the page is watched. */
export const PAGES = [
  { name: 'static', watchMs: 2500, loadSettle: true },
  { name: 'harmonic-minor', watchMs: 5000 },
  { name: 'harmonic-minor-pause', watchMs: 6500 },
  { name: 'harmonic-major', watchMs: 7000 },
  { name: 'hydrated-minor', watchMs: 7000 },
  { name: 'hydrated-major', watchMs: 7000 },
  { name: 'native-dialog', watchMs: 3500, steps: [[1200, click('#open')], [2400, click('#close')]] },
  { name: 'portal-dialog', watchMs: 3500, steps: [[1200, click('#open')], [2400, click('#close')]] },
  { name: 'skeleton', watchMs: 2500 },
  { name: 'spinner', watchMs: 2500 },
  { name: 'late-data', watchMs: 3500 },
  // Issue 21: pages that wait for requests or show animated indicators.
  { name: 'fetch-late', watchMs: 3000 },
  { name: 'fetch-skeleton', watchMs: 2700 },
  { name: 'xhr-table', watchMs: 2500 },
  { name: 'fetch-fail', watchMs: 2600 },
  { name: 'fetch-abort', watchMs: 2700, steps: [[1200, click('#cancel')]] },
  { name: 'long-poll', watchMs: 3500, loadSettle: true },
  { name: 'endless-spinner', watchMs: 4000 },
  { name: 'spinner-stops', watchMs: 2900 },
  { name: 'aria-busy', watchMs: 2700 },
  { name: 'click-request', watchMs: 3300, loadSettle: true, steps: [[1000, click('#load')]] },
  {
    name: 'tabs', watchMs: 5500,
    steps: [[1000, click('#t2')], [1600, click('#t3')], [2200, click('#t4')], [2800, click('#t1')],
      [3400, click('#t2')], [4000, click('#t3')], [4600, click('#t4')]],
  },
];

/** Opens one page in `run` (a startCorpus() run), plays its steps and
 *  returns {tab, truth, marks, trace}: truth and marks as [{t, state}]. */
export async function runPage(run, spec) {
  const tab = uniqueTab(`stab-${spec.name}`);
  const { page } = await run.open(`/corpus/stability/${spec.name}.html`, tab);
  const start = Date.now();
  for (const [at, act] of spec.steps || []) {
    await sleep(Math.max(0, at - (Date.now() - start)));
    await act(page);
  }
  await sleep(Math.max(0, spec.watchMs - (Date.now() - start)));
  const { truth, end, senderReady } = await page.evaluate(() => ({
    truth: window.__truth, end: performance.timeOrigin + performance.now(), senderReady: window.__senderReady,
  }));
  await page.close();
  const marks = run.events.events
    .filter((e) => e.event === 'mark')
    .map((e) => JSON.parse(e.data))
    .filter((m) => m.tab === tab && m.time < end)
    .map((m) => ({ t: m.time, state: m.state, intensity: m.intensity }));
  const trace = await run.trace(tab);
  return { tab, truth, marks, trace, senderReady };
}

/** What is wrong with `marks` against `truth`: the same transitions in the
 *  same order, each within the tolerances; with `loadSettle`, the first
 *  stable mark within LOAD_SETTLE_MS of the later of its truth and
 *  `senderReady`. [] when nothing is. */
export function mismatches(truth, marks, { loadSettle = false, senderReady } = {}) {
  const problems = [];
  const want = truth.map((x) => x.state).join(' ');
  const got = marks.map((x) => x.state).join(' ');
  if (want !== got) problems.push(`transitions: want [${want}], got [${got}]`);
  for (let i = 0; i < Math.min(truth.length, marks.length); i++) {
    if (truth[i].state !== marks[i].state) break;
    const late = marks[i].t - truth[i].t;
    const limit = truth[i].state === 'changing' ? CHANGING_LATE_MS : STABLE_LATE_MS;
    const early = earliest(truth[i].state);
    if (late < -early || late > limit) {
      problems.push(`${truth[i].state} #${i}: ${Math.round(late)} ms after the truth (allowed ${-early}..${limit})`);
    }
  }
  if (loadSettle && truth[0]?.state === 'stable' && marks[0]?.state === 'stable') {
    if (senderReady === undefined) problems.push('the sender never started');
    const from = Math.max(truth[0].t, senderReady ?? Infinity);
    const after = marks[0].t - from;
    if (after > LOAD_SETTLE_MS) {
      problems.push(`first stable ${Math.round(after)} ms after the later of the load and the sender's start (allowed ${LOAD_SETTLE_MS})`);
    }
  }
  return problems;
}

/** Latencies for the benchmark: for each true transition, the first mark
 *  of its state at or after it (less the tolerance above) and before the
 *  next true transition of that state; `extra` counts the marks no truth
 *  claimed. */
export function latencies(truth, marks) {
  const out = { changing: [], stable: [], missed: 0, extra: 0 };
  const used = new Set();
  truth.forEach((x, i) => {
    const next = truth.slice(i + 1).find((y) => y.state === x.state);
    const early = earliest(x.state);
    const j = marks.findIndex((m, k) => !used.has(k) && m.state === x.state && m.t >= x.t - early &&
      (!next || m.t < next.t - early));
    if (j < 0) { out.missed++; return; }
    used.add(j);
    out[x.state].push(marks[j].t - x.t);
  });
  out.extra = marks.length - used.size;
  return out;
}
