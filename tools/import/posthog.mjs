// PostHog's session recordings (recorded with rrweb) as rrweb events, one
// window at a time. PostHog gives them in two shapes:
//  - the recording export of its web app: one JSON object, version
//    "2023-04-28" ({data: {id, person, snapshots: [{windowId, ...event}]}})
//    or "2022-12-02" ({data: {person, snapshotsByWindowId: {W: [event]}}});
//  - the snapshot blobs of its storage, JSON lines, each `[window_id,
//    event]` (or, in older blobs, `{"window_id": W, "data": [event, ...]}`).
// posthog-js may compress an event's fields (`cv: "2024-10"`): a full
// snapshot's `data`, a mutation's `adds`/`removes`/`texts`/`attributes`, a
// style sheet rule's `adds`/`removes`, each the gzip of its JSON as a
// string of bytes (one char per byte). They are inflated here, capped.
//
// Which shape a file has is told from its first bytes (detectFormat).

import { gunzipSync } from 'node:zlib';

import { jsonArrayElements, jsonLines, jsonValuesAt } from './json-path-stream.mjs';

const COMPRESSION_VERSION = '2024-10';
const EXPORT_VERSIONS = new Set(['2022-12-02', '2023-04-28']);
// Custom events posthog-js adds for itself (its options, its idle
// detection, the tab's visibility): not the page's, never a trace record.
const SDK_TAGS = new Set(['sessionIdle', 'sessionNoLongerIdle', 'window hidden', 'window visible',
  'Session recording buffer', 'Recording options', 'Recording rejected', 'rrweb config', 'sessionId', 'mutation rate limited']);

/** Whether a custom event's tag is posthog-js's own ($-tags and its
 *  plain-named ones); `$url_changed` and `$pageview` are read by the
 *  importer before this is asked. */
export const isSdkTag = (tag) => typeof tag === 'string' && (tag.startsWith('$') || SDK_TAGS.has(tag));

/** Returns the first chunk and an iterable that yields it again, then the
 *  rest, so that the format can be told without reading twice. */
export async function peek(chunks) {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  const head = first.done ? Buffer.alloc(0) : first.value;
  const rest = (async function* again() {
    if (!first.done) yield head;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  })();
  return { head, chunks: rest };
}

/** The shape of a file from its first bytes: 'rrweb' (an array of
 *  events), 'posthog-lines' (JSON lines) or 'posthog-export' (an object
 *  that is not a line of blobs); null when it is none of them. */
export function detectFormat(head) {
  let i = 0;
  const skip = () => { while (i < head.length && [0x20, 0x0a, 0x0d, 0x09].includes(head[i])) i++; };
  skip();
  if (head[i] === 0x5b) {
    i++;
    skip();
    return head[i] === 0x22 ? 'posthog-lines' : 'rrweb';
  }
  if (head[i] !== 0x7b) return null;
  i++;
  skip();
  return head.subarray(i, i + 11).toString('latin1') === '"window_id"' ? 'posthog-lines' : 'posthog-export';
}

const selectExport = (path) =>
  (path.length === 1 && path[0] === 'version') ||
  (path.length === 3 && path[0] === 'data' && path[1] === 'snapshots' && typeof path[2] === 'number') ||
  (path.length === 4 && path[0] === 'data' && path[1] === 'snapshotsByWindowId' && typeof path[3] === 'number');

/**
 * Yields {window, value} for each event of the file (its window id as a
 * string, '' when it has none), {skip: why} for a part that is not an
 * event, {error} at the first damage (and stops). `format` is one of
 * detectFormat's; limits as the JSON splitters'.
 */
export async function* windowEvents(chunks, format, limits) {
  if (format === 'rrweb') {
    for await (const element of jsonArrayElements(chunks, limits)) {
      yield element.error ? element : { window: '', value: element.value };
    }
    return;
  }
  if (format === 'posthog-lines') {
    for await (const element of jsonLines(chunks, limits)) {
      if (element.error) { yield element; return; }
      const line = element.value;
      if (Array.isArray(line) && line.length === 2 && typeof line[0] === 'string') yield { window: line[0], value: line[1] };
      else if (line && typeof line === 'object' && typeof line.window_id === 'string' && Array.isArray(line.data)) {
        for (const value of line.data) yield { window: line.window_id, value };
      } else yield { skip: 'line that is neither [window_id, event] nor {window_id, data} (damaged)' };
    }
    return;
  }
  // An object with neither a version nor an event is no export at all.
  let known = false;
  for await (const element of jsonValuesAt(chunks, { ...limits, select: selectExport })) {
    if (element.error) { yield element; return; }
    const { path, value } = element;
    known = true;
    if (path[0] === 'version') {
      if (!EXPORT_VERSIONS.has(value)) yield { skip: `export version ${JSON.stringify(value).slice(0, 40)} (read as 2023-04-28)` };
    } else if (path[1] === 'snapshotsByWindowId') yield { window: String(path[2]), value };
    else yield { window: value && typeof value.windowId === 'string' ? value.windowId : '', value };
  }
  if (!known) yield { error: 'not a JSON array (an rrweb recording) nor a PostHog export ({version, data: {snapshots}})' };
}

/** Inflates one compressed field (gzip of JSON, one char per byte),
 *  refusing more than `maxBytes` of JSON. Throws on damage. */
function inflate(field, maxBytes) {
  if (typeof field !== 'string') return field;
  const bytes = gunzipSync(Buffer.from(field, 'latin1'), { maxOutputLength: maxBytes });
  return JSON.parse(bytes.toString('utf8'));
}

const COMPRESSED_FIELDS = { 0: ['adds', 'removes', 'texts', 'attributes'], 8: ['adds', 'removes'] };

/**
 * The event with its compressed fields inflated (the same object when none
 * is). Returns {event} or {skip: why}: an unknown compression version, or a
 * field that does not inflate to JSON within maxBytes (a gzip bomb is cut
 * there).
 */
export function decompress(event, maxBytes) {
  if (!event || typeof event !== 'object' || !('cv' in event)) return { event };
  if (event.cv !== COMPRESSION_VERSION) return { skip: `event compressed by an unknown version (cv ${String(event.cv).slice(0, 20)})` };
  try {
    if (event.type === 2 && typeof event.data === 'string') return { event: { ...event, data: inflate(event.data, maxBytes) } };
    const data = event.data;
    const fields = event.type === 3 && data && typeof data === 'object' && COMPRESSED_FIELDS[data.source];
    if (!fields) return { event };
    const inflated = { ...data };
    for (const key of fields) inflated[key] = inflate(data[key], maxBytes);
    return { event: { ...event, data: inflated } };
  } catch (error) {
    const why = error && error.code === 'ERR_BUFFER_TOO_LARGE' ? `inflates past ${maxBytes} bytes (a gzip bomb?)` : 'does not inflate to JSON';
    return { skip: `compressed field that ${why}` };
  }
}
