// Host events: the app reports its own semantic events
// (`tracker.emit('order.refund_failed', {text, level, data})`) as
// `uitrail.app` records. Names and data keys are identifiers of the app's
// code ([A-Za-z0-9_.-]); a bad one is a programming error and throws.
// Values are text: numbers and booleans are turned into text, anything else
// is refused. The daemon redacts the text, keys and values like all page
// text.

import { LIMITS, clean, cut } from './dom.js';

const IDENTIFIER_RE = /^[A-Za-z0-9_.-]+$/;
const LEVELS = new Set(['error', 'warning', 'info']);

function identifier(what, value, max) {
  if (typeof value !== 'string' || !IDENTIFIER_RE.test(value) || value.length > max) {
    throw new TypeError(`uitrail emit: ${what} must be 1 to ${max} characters of A-Z a-z 0-9 _ . -, not ${JSON.stringify(value)}`);
  }
  return value;
}

/** The `uitrail.app` record of one host event; throws a TypeError that says
 *  what to change when the arguments break the protocol's rules. */
export function appRecord(tab, name, details = {}) {
  const record = { tab, name: identifier('the event name', name, LIMITS.APP_NAME_MAX_CHARS) };
  if (details === null || typeof details !== 'object') {
    throw new TypeError('uitrail emit: the second argument must be an object: {text, level, data}');
  }
  const { text, level, data } = details;
  if (text !== undefined) {
    if (typeof text !== 'string') throw new TypeError('uitrail emit: text must be a string');
    const cleaned = cut(clean(text), LIMITS.APP_TEXT_MAX_CHARS);
    if (cleaned) record.text = cleaned;
  }
  if (level !== undefined) {
    if (!LEVELS.has(level)) throw new TypeError(`uitrail emit: level must be "error", "warning" or "info", not ${JSON.stringify(level)}`);
    record.level = level;
  }
  if (data !== undefined) {
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      throw new TypeError('uitrail emit: data must be an object of text, number or boolean values');
    }
    const entries = Object.entries(data);
    if (entries.length > LIMITS.APP_DATA_MAX) {
      throw new TypeError(`uitrail emit: data has ${entries.length} keys, over the limit of ${LIMITS.APP_DATA_MAX}`);
    }
    const out = {};
    for (const [key, value] of entries) {
      identifier('a data key', key, LIMITS.APP_KEY_MAX_CHARS);
      let textValue;
      if (typeof value === 'string') textValue = value;
      else if (typeof value === 'number' || typeof value === 'boolean') textValue = String(value);
      else throw new TypeError(`uitrail emit: data.${key} must be text, a number or a boolean`);
      out[key] = cut(clean(textValue), LIMITS.APP_VALUE_MAX_CHARS);
    }
    if (entries.length) record.data = out;
  }
  return record;
}
