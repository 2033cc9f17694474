// Reads a JSON array one element at a time from a stream of bytes, so that
// a recording of any size is parsed with memory bounded by its largest
// event, not by the file: the splitter finds where each top-level element
// ends (strings, escapes and nesting tracked byte by byte) and hands that
// element alone to JSON.parse.
//
// Hostile input is reported, never thrown through: the generator yields
// {value} for each element and, at the first problem, one {error} and
// stops. Problems: the file is not an array, an element is not valid JSON,
// an element is larger than maxElementBytes, nesting deeper than maxDepth,
// or the data ends inside the array (a truncated file).

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

function isSpace(byte) {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * Yields the elements of the JSON array read from `chunks` (an async
 * iterable of Buffers). Options: maxElementBytes, maxDepth.
 */
export async function* jsonArrayElements(chunks, { maxElementBytes, maxDepth }) {
  let state = 'before-array'; // before-array, before-element, in-element, after-element, done
  let depth = 0;              // nesting inside the current element
  let inString = false;
  let escaped = false;
  let parts = [];             // the current element's bytes, chunk by chunk
  let partBytes = 0;
  let offset = 0;             // bytes consumed before the current chunk

  const finishElement = () => {
    if (partBytes > maxElementBytes) return { error: `event at byte ${offset}: larger than ${maxElementBytes} bytes` };
    const text = Buffer.concat(parts, partBytes).toString('utf8');
    parts = [];
    partBytes = 0;
    try {
      return { value: JSON.parse(text) };
    } catch (error) {
      return { error: `event at byte ${offset}: not valid JSON (${error.message})` };
    }
  };

  for await (const chunk of chunks) {
    let start = -1; // where the current element starts in this chunk
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (state === 'in-element') {
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) inString = false;
          continue;
        }
        if (byte === QUOTE) { inString = true; continue; }
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
          if (++depth > maxDepth) { yield { error: `event at byte ${offset + i}: nested deeper than ${maxDepth}` }; return; }
          continue;
        }
        const closes = byte === CLOSE_BRACE || byte === CLOSE_BRACKET;
        // A scalar element ends at the comma or bracket after it.
        const scalarEnd = depth === 0 && (byte === COMMA || byte === CLOSE_BRACKET || isSpace(byte));
        if (closes && depth > 0) depth--;
        if ((closes && depth === 0 && !scalarEnd) || scalarEnd) {
          const end = scalarEnd ? i : i + 1;
          parts.push(chunk.subarray(start < 0 ? 0 : start, end));
          partBytes += end - (start < 0 ? 0 : start);
          start = -1;
          const element = finishElement();
          yield element;
          if (element.error) return;
          state = 'after-element';
          if (scalarEnd) i--; // the comma or bracket is read again
        }
        continue;
      }
      if (isSpace(byte)) continue;
      if (state === 'before-array') {
        if (byte !== OPEN_BRACKET) { yield { error: 'not a JSON array (an rrweb recording is [{type, data, timestamp}, ...])' }; return; }
        state = 'before-element';
      } else if (state === 'before-element' || state === 'after-element') {
        if (byte === CLOSE_BRACKET) { state = 'done'; continue; }
        if (state === 'after-element') {
          if (byte !== COMMA) { yield { error: `byte ${offset + i}: expected ',' or ']' between events` }; return; }
          state = 'before-element';
          continue;
        }
        state = 'in-element';
        start = i;
        depth = 0;
        inString = false;
        escaped = false;
        i--; // the first byte is read as part of the element
      } else if (state === 'done') {
        yield { error: `byte ${offset + i}: data after the end of the array` };
        return;
      }
    }
    if (state === 'in-element') {
      const from = start < 0 ? 0 : start;
      parts.push(chunk.subarray(from));
      partBytes += chunk.length - from;
      if (partBytes > maxElementBytes) {
        yield { error: `event at byte ${offset}: larger than ${maxElementBytes} bytes` };
        return;
      }
    }
    offset += chunk.length;
  }
  if (state !== 'done') yield { error: `truncated: the data ends inside the array (after ${offset} bytes)` };
}
