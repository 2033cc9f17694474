// PostHog-shaped recordings built from rrweb ones (issue 26), since PostHog
// itself cannot run here: the shapes its web app exports and its storage
// keeps, with fields compressed as posthog-js compresses them (cv
// "2024-10": the gzip of a field's JSON as a string of bytes). Deterministic:
// the same events give the same bytes.
//
//   node tests/import/posthog-shapes.mjs IN.rrweb.json[.gz] OUTDIR
// writes OUTDIR/NAME.posthog-export.json, .posthog-export-v1.json and
// .posthog.jsonl (compressed fields); the test imports them as modules.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

const COMPRESSION_VERSION = '2024-10';

/** posthog-js's field compression: gzip of the JSON, one char per byte. */
const squeeze = (value) => gzipSync(Buffer.from(JSON.stringify(value), 'utf8'), { level: 6 }).toString('latin1');

/** The event as posthog-js sends it: a full snapshot's data and a
 *  mutation's four lists compressed; anything else as it is. */
export function compressEvent(event) {
  if (event.type === 2) return { ...event, cv: COMPRESSION_VERSION, data: squeeze(event.data) };
  if (event.type === 3 && event.data && event.data.source === 0) {
    const { adds, removes, texts, attributes } = event.data;
    return {
      ...event, cv: COMPRESSION_VERSION,
      data: { ...event.data, adds: squeeze(adds), removes: squeeze(removes), texts: squeeze(texts), attributes: squeeze(attributes) },
    };
  }
  return event;
}

/** The web app's export (version 2023-04-28): {windowId, ...event}. */
export const exportV2 = (windows, id = 'session-1') => JSON.stringify({
  version: '2023-04-28',
  data: {
    id, person: { distinct_id: 'user-1', properties: { $browser: 'Chrome' } },
    snapshots: mergeByTime(windows).map(([windowId, event]) => ({ windowId, ...event })),
  },
});

/** The older export (version 2022-12-02): events grouped by window. */
export const exportV1 = (windows) => JSON.stringify({
  version: '2022-12-02',
  data: { person: null, snapshotsByWindowId: Object.fromEntries(Object.entries(windows)) },
});

/** A snapshot blob: one `[window_id, event]` line each, compressed, in time order. */
export const jsonLines = (windows) => mergeByTime(windows)
  .map(([windowId, event]) => JSON.stringify([windowId, compressEvent(event)])).join('\n') + '\n';

/** An older blob: `{"window_id", "data": [events]}` lines. */
export const jsonLinesV1 = (windows) => Object.entries(windows)
  .map(([windowId, events]) => JSON.stringify({ window_id: windowId, data: events })).join('\n') + '\n';

/** [windowId, event] pairs of every window, by time (stable). */
function mergeByTime(windows) {
  const pairs = [];
  for (const [windowId, events] of Object.entries(windows)) for (const event of events) pairs.push([windowId, event]);
  return pairs.map((pair, order) => ({ pair, order }))
    .sort((a, b) => a.pair[1].timestamp - b.pair[1].timestamp || a.order - b.order)
    .map(({ pair }) => pair);
}

export function readRrweb(file) {
  const bytes = readFileSync(file);
  return JSON.parse((bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [input, outDir] = process.argv.slice(2);
  if (!input || !outDir) {
    process.stderr.write('usage: posthog-shapes.mjs IN.rrweb.json[.gz] OUTDIR\n');
    process.exit(2);
  }
  const windows = { 'window-1': readRrweb(input) };
  const name = basename(input).replace(/\.rrweb\.json(\.gz)?$/, '');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, `${name}.posthog-export.json`), exportV2(windows));
  writeFileSync(join(outDir, `${name}.posthog-export-v1.json`), exportV1(windows));
  writeFileSync(join(outDir, `${name}.posthog.jsonl`), jsonLines(windows));
}
