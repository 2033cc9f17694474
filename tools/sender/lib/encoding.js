// Forward EventTime (msgpack ext type 0) for @msgpack/msgpack, and a
// decoder of the entries the sender sends, for tests and tools.

import { ExtensionCodec, decodeMulti } from '@msgpack/msgpack';

/** A Forward EventTime: msgpack ext type 0, uint32 seconds, uint32 ns. */
export class EventTime {
  constructor(ms) { this.ms = ms; }
}

const eventTimeBytes = new Uint8Array(8);
const eventTimeView = new DataView(eventTimeBytes.buffer);

export const extensionCodec = new ExtensionCodec();
extensionCodec.register({
  type: 0,
  encode(value) {
    if (!(value instanceof EventTime)) return null;
    const seconds = Math.floor(value.ms / 1000);
    const nanoseconds = Math.min(999999999, Math.max(0, Math.round((value.ms - seconds * 1000) * 1e6)));
    eventTimeView.setUint32(0, seconds);
    eventTimeView.setUint32(4, nanoseconds);
    // The encoder copies the bytes at once, so one scratch buffer serves.
    return eventTimeBytes;
  },
  decode(data) {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    return new EventTime(view.getUint32(0) * 1000 + view.getUint32(4) / 1e6);
  },
});

/** Decodes a byte string of Forward entries sent back to back, as the
 *  sender sends them. */
export function decodeEntries(bytes) {
  return Array.from(decodeMulti(bytes, { extensionCodec }));
}
