// The importer's one streaming JSON reader: the values found at chosen
// paths of one JSON document, read from a stream of bytes with memory
// bounded by the largest chosen value, not by the file. An rrweb recording
// is an array whose elements are the events (jsonArrayElements); PostHog's
// recording export is one object ({version, data: {snapshots: [...]}})
// whose events are deep inside it (jsonValuesAt with its paths).
// The scanner walks the document byte by byte, keeping only the stack of
// containers and the current key; a value whose path `select` accepts is
// gathered alone and handed to JSON.parse. What is not chosen is skipped
// (only its nesting is followed).
//
// Hostile input is reported, never thrown through: the generator yields
// {path, value} for each chosen value and, at the first problem, one
// {error} and stops: a chosen value that is not valid JSON or larger than
// maxElementBytes, nesting deeper than maxDepth (the document's, its root
// container counted), a structure that does not close, data after the
// document, or the end inside it (a truncated file).

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
// A key longer than this is kept as null: no path chosen runs through it.
const KEY_MAX_BYTES = 256;

function isSpace(byte) {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * Yields {path, value} for every value of the document read from `chunks`
 * (an async iterable of Buffers) whose path `select(path)` accepts; a path
 * is the array of keys (strings) and indices (numbers) from the root.
 * Options: select, maxElementBytes, maxDepth, and notArray: when given, a
 * document that is not an array is this error at its first byte.
 */
export async function* jsonValuesAt(chunks, { select, maxElementBytes, maxDepth, notArray = null }) {
  // One frame per open container: {array, key, index}. `key` is the
  // object's current key (null while none or too long to be chosen).
  const stack = [];
  let state = 'value';      // value, key, colon, after, done, string, key-string, scalar, capture
  let inString = false;     // in capture: inside a string
  let escaped = false;
  let depth = 0;            // in capture: nesting inside the chosen value
  let keyBytes = [];
  let keyTooLong = false;
  let parts = [];
  let partBytes = 0;
  let capturePath = null;
  let offset = 0;

  const path = () => stack.map((frame) => (frame.array ? frame.index : frame.key));
  const afterValue = () => { state = stack.length ? 'after' : 'done'; };
  const finishCapture = () => {
    const text = Buffer.concat(parts, partBytes).toString('utf8');
    parts = [];
    partBytes = 0;
    try {
      return { path: capturePath, value: JSON.parse(text) };
    } catch (error) {
      return { error: `value at byte ${offset}: not valid JSON (${error.message})` };
    }
  };

  for await (const chunk of chunks) {
    let start = -1;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (state === 'capture') {
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) inString = false;
          continue;
        }
        if (byte === QUOTE) { inString = true; continue; }
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
          if (stack.length + ++depth > maxDepth) { yield { error: `byte ${offset + i}: nested deeper than ${maxDepth}` }; return; }
          continue;
        }
        const closes = byte === CLOSE_BRACE || byte === CLOSE_BRACKET;
        const scalarEnd = depth === 0 && (byte === COMMA || closes || isSpace(byte));
        if (closes && depth > 0) depth--;
        if (scalarEnd || (closes && depth === 0)) {
          const end = scalarEnd ? i : i + 1;
          const from = start < 0 ? 0 : start;
          parts.push(chunk.subarray(from, end));
          partBytes += end - from;
          start = -1;
          if (partBytes > maxElementBytes) { yield { error: `value at byte ${offset}: larger than ${maxElementBytes} bytes` }; return; }
          const element = finishCapture();
          yield element;
          if (element.error) return;
          afterValue();
          if (scalarEnd) i--; // the delimiter is read again
        }
        continue;
      }
      if (state === 'string' || state === 'key-string') {
        if (escaped) { escaped = false; if (state === 'key-string') keyBytes.push(byte); continue; }
        if (byte === BACKSLASH) { escaped = true; if (state === 'key-string') keyBytes.push(byte); continue; }
        if (byte === QUOTE) {
          if (state === 'key-string') {
            const frame = stack[stack.length - 1];
            frame.key = null;
            if (!keyTooLong) {
              try { frame.key = JSON.parse(`"${Buffer.from(keyBytes).toString('utf8')}"`); } catch { /* not a key anyone chose */ }
            }
            state = 'colon';
          } else afterValue();
          continue;
        }
        if (state === 'key-string') {
          if (keyBytes.length < KEY_MAX_BYTES) keyBytes.push(byte);
          else keyTooLong = true;
        }
        continue;
      }
      if (state === 'scalar') {
        if (byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || isSpace(byte)) { afterValue(); i--; }
        continue;
      }
      if (isSpace(byte)) continue;
      const frame = stack[stack.length - 1];
      if (state === 'value') {
        if (notArray && !frame && byte !== OPEN_BRACKET) { yield { error: notArray }; return; }
        if (frame && frame.array && byte === CLOSE_BRACKET && frame.index === 0 && !frame.sawComma) { stack.pop(); afterValue(); continue; }
        if (select(path())) {
          state = 'capture';
          capturePath = path();
          start = i;
          depth = 0;
          inString = false;
          escaped = false;
          i--;
          continue;
        }
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
          if (stack.length + 1 > maxDepth) { yield { error: `byte ${offset + i}: nested deeper than ${maxDepth}` }; return; }
          stack.push({ array: byte === OPEN_BRACKET, key: null, index: 0, sawComma: false });
          state = byte === OPEN_BRACKET ? 'value' : 'key';
        } else if (byte === QUOTE) state = 'string';
        else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET || byte === COMMA || byte === COLON) {
          yield { error: `byte ${offset + i}: a value was expected` }; return;
        } else state = 'scalar';
        continue;
      }
      if (state === 'key') {
        if (byte === CLOSE_BRACE && !frame.sawComma) { stack.pop(); afterValue(); continue; }
        if (byte !== QUOTE) { yield { error: `byte ${offset + i}: expected a key` }; return; }
        keyBytes = [];
        keyTooLong = false;
        state = 'key-string';
        continue;
      }
      if (state === 'colon') {
        if (byte !== COLON) { yield { error: `byte ${offset + i}: expected ':'` }; return; }
        state = 'value';
        continue;
      }
      if (state === 'after') {
        if (byte === COMMA) {
          frame.sawComma = true;
          if (frame.array) { frame.index++; state = 'value'; } else state = 'key';
        } else if (byte === (frame.array ? CLOSE_BRACKET : CLOSE_BRACE)) {
          stack.pop();
          afterValue();
        } else { yield { error: `byte ${offset + i}: expected ',' or a closing bracket` }; return; }
        continue;
      }
      // state === 'done'
      yield { error: `byte ${offset + i}: data after the end of the document` };
      return;
    }
    if (state === 'capture') {
      const from = start < 0 ? 0 : start;
      parts.push(chunk.subarray(from));
      partBytes += chunk.length - from;
      if (partBytes > maxElementBytes) { yield { error: `value at byte ${offset}: larger than ${maxElementBytes} bytes` }; return; }
    }
    offset += chunk.length;
  }
  if (state === 'capture' && depth === 0 && !inString && partBytes > 0 && stack.length === 0) {
    // A scalar document ends with the data.
    const element = finishCapture();
    yield element;
    if (element.error) return;
    state = 'done';
  }
  if (state === 'scalar' && stack.length === 0) state = 'done';
  if (state !== 'done') yield { error: `truncated: the data ends inside the document (after ${offset} bytes)` };
}

const ELEMENT = (path) => path.length === 1;

/**
 * Yields {path, value} for each element of the JSON array read from
 * `chunks` (an rrweb recording: each event alone), then as jsonValuesAt.
 * Options: maxElementBytes, maxDepth (the file's nesting, the array's
 * own level counted).
 */
export function jsonArrayElements(chunks, { maxElementBytes, maxDepth }) {
  return jsonValuesAt(chunks, {
    select: ELEMENT, maxElementBytes, maxDepth,
    notArray: 'not a JSON array (an rrweb recording is [{type, data, timestamp}, ...])',
  });
}

/**
 * Yields {value} for each line of a JSON-lines stream (blank lines
 * skipped), {error} at the first line that is not JSON or is longer than
 * maxElementBytes, and stops there. A last line without its newline that
 * does not parse is a truncated file.
 */
export async function* jsonLines(chunks, { maxElementBytes }) {
  let parts = [];
  let partBytes = 0;
  let line = 0;
  const parse = (last) => {
    const text = Buffer.concat(parts, partBytes).toString('utf8');
    parts = [];
    partBytes = 0;
    line++;
    if (!text.trim()) return null;
    try {
      return { value: JSON.parse(text) };
    } catch (error) {
      return { error: last ? `truncated: line ${line} ends without its end (${error.message})` : `line ${line}: not valid JSON (${error.message})` };
    }
  };
  for await (const chunk of chunks) {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
      parts.push(chunk.subarray(from, nl));
      partBytes += nl - from;
      from = nl + 1;
      if (partBytes > maxElementBytes) { yield { error: `line ${line + 1}: longer than ${maxElementBytes} bytes` }; return; }
      const element = parse(false);
      if (!element) continue;
      yield element;
      if (element.error) return;
    }
    parts.push(chunk.subarray(from));
    partBytes += chunk.length - from;
    if (partBytes > maxElementBytes) { yield { error: `line ${line + 1}: longer than ${maxElementBytes} bytes` }; return; }
  }
  const element = parse(true);
  if (element) yield element;
}
