#!/usr/bin/env node
// Measures how soon the daemon's page-stability marks follow the truth, in
// headless Chromium with the real sender and uitraild, for the default
// (uitrail) model and the DOMQuake model: on each page of
// tests/e2e/corpus/stability/ (each signals its own true transitions),
// the latency from a true change to its "changing" mark and from a true
// settle to its "stable" mark, median and max over all of a page's
// transitions in N runs, with the true transitions no mark followed
// (missed) and the marks no truth explains (extra: a spurious
// changing/stable pair, a premature stable). Times are the sender's clock.
// Then, per run, whether each page passed the test's own check
// (tests/e2e/stability.test.mjs: the same transitions, each within its
// tolerance), for each model: DOMQuake's eight fixtures (the first eight
// pages) and the pages of issue 21 (requests, indicators) among them.
//
// Usage: node tools/bench-stability.mjs [--runs N] [--page NAME]... [--json]
// Needs the npm packages of tests/e2e and tools/sender (tools/e2e installs
// them) and a built uitraild (UITRAILD or build/src/daemon/uitraild). A
// benchmark measures; it asserts nothing.

import { parseArgs } from 'node:util';

import { startCorpus } from '../tests/e2e/lib/corpus.mjs';
import { PAGES, latencies, mismatches, runPage } from '../tests/e2e/lib/stability.mjs';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' }, page: { type: 'string', multiple: true },
    json: { type: 'boolean', default: false },
  },
});
const RUNS = Number.parseInt(args.runs, 10);
const MODELS = ['uitrail', 'domquake'];
const pages = args.page ? PAGES.filter((p) => args.page.includes(p.name)) : PAGES;

const median = (xs) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const results = {};
for (const model of MODELS) {
  const run = await startCorpus({ daemonArgs: ['--stab-model', model] });
  try {
    for (const spec of pages) {
      const acc = { changing: [], stable: [], missed: 0, extra: 0, passes: [] };
      for (let i = 0; i < RUNS; i++) {
        const { truth, marks, senderReady } = await runPage(run, spec);
        acc.passes.push(mismatches(truth, marks, { loadSettle: spec.loadSettle, senderReady }).length === 0);
        const l = latencies(truth, marks);
        acc.changing.push(...l.changing);
        acc.stable.push(...l.stable);
        acc.missed += l.missed;
        acc.extra += l.extra;
      }
      (results[spec.name] ||= {})[model] = acc;
      if (!args.json) process.stderr.write(`${model} ${spec.name} done\n`);
    }
  } finally {
    await run.close();
  }
}

if (args.json) {
  console.log(JSON.stringify(results, null, 2));
} else {
  const cell = (xs) => (xs.length ? `${Math.round(median(xs))} / ${Math.round(Math.max(...xs))}` : '—');
  console.log(`Latency in ms, median / max over every transition of ${RUNS} runs; missed true transitions, extra marks (all runs)\n`);
  console.log('| page | uitrail change→changing | uitrail settle→stable | uitrail missed, extra | DOMQuake change→changing | DOMQuake settle→stable | DOMQuake missed, extra |');
  console.log('|---|---|---|---|---|---|---|');
  for (const spec of pages) {
    const r = results[spec.name];
    const row = MODELS.flatMap((m) => [cell(r[m].changing), cell(r[m].stable), `${r[m].missed}, ${r[m].extra}`]);
    console.log(`| ${spec.name} | ${row.join(' | ')} |`);
  }
  const runs = (passes) => passes.map((ok) => (ok ? 'pass' : 'FAIL')).join(' ');
  console.log(`\nThe test's check (transitions and tolerances of tests/e2e/stability.test.mjs), run by run\n`);
  console.log('| page | uitrail | DOMQuake |');
  console.log('|---|---|---|');
  for (const spec of pages) {
    const r = results[spec.name];
    console.log(`| ${spec.name} | ${runs(r.uitrail.passes)} | ${runs(r.domquake.passes)} |`);
  }
}
