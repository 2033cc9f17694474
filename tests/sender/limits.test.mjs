// The browser sender's copy of the C limits (tools/sender/lib/limits.js)
// equals include/uitrail/limits.h. The sender is plain ES modules served
// without a build step, so it keeps its own copy and this test holds the
// two equal: a LIMITS key mirrors the C constant of the same name (UT_
// prefix; a text maximum counted in UTF-16 code units, _CHARS, mirrors the
// C one in bytes, _BYTES), and a key with no C constant must be listed in
// SENDER_OWN, so that a renamed or new C limit cannot leave a stale copy.
//
//   [UITRAIL_LIMITS_H=path/to/limits.h] node --test tests/sender/limits.test.mjs

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { LIMITS } from '../../tools/sender/lib/limits.js';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const HEADER = process.env.UITRAIL_LIMITS_H || join(REPO, 'include', 'uitrail', 'limits.h');

// The sender's own bounds: queues, timers and DOM walks that the daemon
// knows nothing of.
const SENDER_OWN = new Set([
  'MUTATION_MEASURE_ELEMENTS_MAX', 'QUEUE_MAX_EVENTS', 'BATCH_MAX_EVENTS', 'INFLIGHT_MAX_BATCHES',
  'ACK_TIMEOUT_MS', 'BACKOFF_INITIAL_MS', 'BACKOFF_MAX_MS', 'FLUSH_FALLBACK_MS', 'DOM_RESYNC_MS',
  'KEEPALIVE_BODY_MAX_BYTES', 'NAV_TITLE_WAIT_MS', 'SHADOW_ROOTS_MAX', 'LOADED_WAIT_MAX_MS',
  'FRAME_HANDOFF_WAIT_MS', 'REQUEST_COUNT_MAX_MS',
]);

/** limits.h's integer constants by name, each evaluated (shifts, products, other constants). */
export function parseLimits(text) {
  const raw = new Map();
  for (const m of text.matchAll(/^#define\s+(UT_\w+)\s+(.+?)\s*(?:\/\*.*)?$/gm)) raw.set(m[1], m[2]);
  const values = new Map();
  const evaluate = (name, depth = 0) => {
    if (values.has(name)) return values.get(name);
    assert.ok(depth < 16, `${name}: constants refer to each other in a loop`);
    const text = raw.get(name);
    // Integers only: a floating constant is not a limit the sender mirrors.
    if (/\d\.\d/.test(text)) return undefined;
    const expr = text
      .replace(/UINT64_C\(([^)]*)\)/g, '$1')
      .replace(/\b(\d+)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU])\b/g, '$1n')
      .replace(/\bUT_\w+\b/g, (ref) => {
        const v = raw.has(ref) ? evaluate(ref, depth + 1) : undefined;
        return v === undefined ? 'NaN' : `${v}n`;
      });
    if (!/^[\dn\s()+\-*<>]+$/.test(expr)) return undefined;
    const v = Function(`"use strict"; return ${expr};`)(); // BigInt arithmetic, as C's unsigned
    values.set(name, Number(v));
    return Number(v);
  };
  for (const name of raw.keys()) evaluate(name);
  return values;
}

/** The C constant a LIMITS key mirrors. */
function cName(key) {
  return `UT_${key.replace(/_CHARS$/, '_BYTES')}`;
}

describe('tools/sender/lib/limits.js against limits.h', () => {
  const c = parseLimits(readFileSync(HEADER, 'utf8'));

  it('parses limits.h', () => {
    assert.equal(c.get('UT_FRAME_MAX_BYTES'), 1 << 20);
    assert.equal(c.get('UT_WIRE_STR_MAX_BYTES'), 64 << 10);
    assert.equal(c.get('UT_IDLE_DEFAULT_MS'), 3600000);
    assert.equal(c.get('UT_MEMORY_DEFAULT_BYTES'), 2 ** 30);
    assert.ok(c.size > 100, `${c.size} constants`);
  });

  it('every mirrored limit has the C value', () => {
    const mirrored = Object.keys(LIMITS).filter((key) => c.has(cName(key)));
    for (const key of mirrored) {
      assert.equal(LIMITS[key], c.get(cName(key)), `LIMITS.${key} vs ${cName(key)}`);
    }
    // The 16 of protocol §1: text maxima, row cells, mutation records, host events.
    assert.ok(mirrored.length >= 16, `${mirrored.length} limits mirrored: ${mirrored.join(', ')}`);
  });

  it('every other key is the sender\'s own', () => {
    for (const key of Object.keys(LIMITS)) {
      if (c.has(cName(key))) {
        assert.ok(!SENDER_OWN.has(key), `LIMITS.${key} is listed as the sender's own but mirrors ${cName(key)}`);
      } else {
        assert.ok(SENDER_OWN.has(key), `LIMITS.${key}: no ${cName(key)} in limits.h; a renamed C limit, or add it to SENDER_OWN`);
      }
    }
    for (const key of SENDER_OWN) assert.ok(key in LIMITS, `SENDER_OWN lists ${key}, which LIMITS no longer has`);
  });
});
