// The transport: a queue of records, sequence numbers, batches of Forward
// Message-mode entries over a WebSocket (acks by chunk, resend after a
// reconnect, backoff with jitter) or HTTP POST, and a last-chance send when
// the page goes away. It knows nothing of the DOM.

import { Encoder, decode } from '@msgpack/msgpack';

import { EventTime, extensionCodec } from './encoding.js';
import { LIMITS } from './limits.js';
import { randomId, writeSavedTab } from './storage.js';

/**
 * Creates the transport of one tab.
 *  - baseUrl, token, kind ("websocket" | "http"), measure, tabInUrl: from
 *    the options (tabInUrl: the ingest URL carries ?tab=ID, so that a proxy
 *    in front of several daemons can send every event of a tab to the
 *    daemon that serves its trace; tools/deploy, "A fleet"). `token` is a
 *    string, or a function (tab) => string | Promise<string> asked before
 *    each connection (and each HTTP batch): a signed per-tab token expires,
 *    and the daemon closes a socket whose token has expired (1008), so the
 *    app's backend hands out a fresh one;
 *  - tab, seq: the tab id and the last seq used;
 *  - stats: the counters object the tracker exposes;
 *  - onRecord: (tag, record) once a record is complete, or null.
 */
export function createTransport({ baseUrl, token, kind, measure, tabInUrl, tab, seq, stats, onRecord }) {
  const ingestUrl = `${baseUrl}/v1/ingest${tabInUrl ? `?tab=${encodeURIComponent(tab)}` : ''}`;
  const encoder = new Encoder({ extensionCodec });
  let batchBuffer = new Uint8Array(4096);
  const queue = [];        // entries not yet in a batch: {tag, ms, record, pending}
  const inflight = [];     // batches sent and not acknowledged: {chunk, bytes, count}
  let inflightEvents = 0;
  let chunkCounter = 0;
  const chunkPrefix = randomId().slice(0, 8);
  let socket = null;
  let socketOpen = false;
  let httpBusy = false;
  let backoffMs = LIMITS.BACKOFF_INITIAL_MS;
  let reconnectTimer = 0;
  let ackTimer = 0;
  let sendTimer = 0;
  let stopped = false;
  let connecting = false;  // asking the token function for a token
  let lastToken = typeof token === 'function' ? undefined : token;
  let lastMs = 0;          // the time of the last record queued

  /** The token for the next connection or batch: the option's string, or
   *  what its function gives now (kept for the last send on unload, which
   *  cannot wait for one). */
  const nextToken = async () => {
    if (typeof token !== 'function') return token;
    lastToken = await token(tab);
    return lastToken;
  };

  /** Queues a record. A pending entry (a click waiting for its after-click
   *  state, a navigation waiting for its title) holds back the entries
   *  behind it until complete() is called on it. */
  const enqueue = (tag, record, ms, pending = false) => {
    // Times never run backwards in seq order: a record stamped with its
    // event's time (taken before the handlers that ran first) goes no
    // earlier than what is queued before it, so the daemon never sees an
    // effect older than its cause, nor a record late.
    ms = Math.max(ms, lastMs);
    lastMs = ms;
    record.seq = ++seq;
    const entry = { tag, ms, record, pending };
    queue.push(entry);
    stats.queued++;
    if (onRecord && !pending) onRecord(tag, record);
    while (queue.length && queue.length + inflightEvents > LIMITS.QUEUE_MAX_EVENTS) {
      queue.shift();
      stats.dropped++;
    }
    scheduleSend();
    return entry;
  };

  /** Queues a record of something the page began before the clicks
   *  queued after seq `afterSeq` (a menu whose closing started before the
   *  click that closed it): it goes before the first of those clicks still
   *  waiting in the queue, at no later a time than that click. Sequence
   *  numbers are reassigned from there on; nothing from there on has been
   *  sent, since a waiting click holds back what follows it. */
  const enqueueAt = (tag, record, ms, afterSeq) => {
    const index = queue.findIndex((entry) => entry.pending && entry.tag === 'uitrail.click' && entry.record.seq > afterSeq);
    if (index < 0) return enqueue(tag, record, ms);
    const entry = { tag, ms: Math.min(ms, queue[index].ms), record, pending: false };
    queue.splice(index, 0, entry);
    let next = queue[index + 1].record.seq;
    for (let i = index; i < queue.length; i++) queue[i].record.seq = next++;
    seq = next - 1;
    stats.queued++;
    if (onRecord) onRecord(tag, record);
    return entry;
  };

  /** Takes back a waiting entry (a press the browser cancelled). The
   *  entries behind it were held back by it, so none has been sent: they
   *  take its seq and the ones after, and the daemon sees no gap. */
  const cancel = (entry) => {
    const index = queue.indexOf(entry);
    if (index < 0 || !entry.pending) return;
    queue.splice(index, 1);
    for (let i = index; i < queue.length; i++) queue[i].record.seq--;
    seq--;
    stats.queued--;
    scheduleSend();
  };

  const complete = (entry) => {
    if (!entry.pending) return;
    entry.pending = false;
    if (onRecord) onRecord(entry.tag, entry.record);
    scheduleSend();
  };

  const scheduleSend = () => {
    if (!sendTimer && !stopped) sendTimer = setTimeout(sendPending, 0);
  };

  /** Encodes entries into one message; the last entry carries the chunk. */
  const encodeBatch = (entries, chunk) => {
    let length = 0;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      const message = chunk !== undefined && i === entries.length - 1
        ? [entry.tag, new EventTime(entry.ms), entry.record, { chunk }]
        : [entry.tag, new EventTime(entry.ms), entry.record];
      const bytes = encoder.encodeSharedRef(message);
      if (length + bytes.length > batchBuffer.length) {
        const grown = new Uint8Array(Math.max(batchBuffer.length * 2, length + bytes.length));
        grown.set(batchBuffer.subarray(0, length));
        batchBuffer = grown;
      }
      batchBuffer.set(bytes, length);
      length += bytes.length;
    }
    return batchBuffer.slice(0, length);
  };

  /** Takes the next batch off the queue, or null when nothing is ready. */
  const takeBatch = (withChunk) => {
    let count = 0;
    while (count < queue.length && count < LIMITS.BATCH_MAX_EVENTS && !queue[count].pending) count++;
    if (count === 0) return null;
    const entries = queue.splice(0, count);
    const chunk = withChunk ? `${chunkPrefix}.${(++chunkCounter).toString(36)}` : undefined;
    const t0 = measure ? performance.now() : 0;
    const bytes = encodeBatch(entries, chunk);
    if (measure) performance.measure('uitrail:encode', { start: t0, end: performance.now() });
    // The highest seq that may reach the daemon is saved before it is sent,
    // so a reloaded page never reuses a seq the daemon has applied.
    writeSavedTab(tab, entries[entries.length - 1].record.seq);
    return { chunk, bytes, count };
  };

  const armAckTimer = () => {
    clearTimeout(ackTimer);
    ackTimer = inflight.length ? setTimeout(onAckTimeout, LIMITS.ACK_TIMEOUT_MS) : 0;
  };

  const onAckTimeout = () => {
    ackTimer = 0;
    if (socket) socket.close(1000, 'ack timeout');
  };

  const scheduleReconnect = () => {
    if (stopped || reconnectTimer) return;
    // Full jitter keeps many tabs from reconnecting in step after a restart.
    const delay = backoffMs / 2 + Math.random() * (backoffMs / 2);
    backoffMs = Math.min(backoffMs * 2, LIMITS.BACKOFF_MAX_MS);
    reconnectTimer = setTimeout(() => {
      reconnectTimer = 0;
      if (kind === 'websocket') connect();
      else sendPending();
    }, delay);
  };

  const onAck = (chunk) => {
    const index = inflight.findIndex((batch) => batch.chunk === chunk);
    if (index < 0) return;
    const [batch] = inflight.splice(index, 1);
    inflightEvents -= batch.count;
    stats.acked += batch.count;
    backoffMs = LIMITS.BACKOFF_INITIAL_MS;
    armAckTimer();
    sendPending();
  };

  const onSocketMessage = (event) => {
    let reply;
    try {
      reply = typeof event.data === 'string' ? JSON.parse(event.data) : decode(new Uint8Array(event.data));
    } catch {
      return; // Not an ack; the daemon sends nothing else to a sender.
    }
    if (reply && typeof reply === 'object' && 'ack' in reply) onAck(reply.ack);
  };

  const connect = () => {
    if (stopped || socket || connecting) return;
    if (typeof token !== 'function') { openSocket(token); return; }
    connecting = true;
    nextToken().then((current) => {
      connecting = false;
      openSocket(current);
    }, () => {
      connecting = false;
      scheduleReconnect();
    });
  };

  const openSocket = (current) => {
    if (stopped || socket) return;
    const protocols = ['uitrail.v1'];
    if (current) protocols.push(`uitrail.token.${current}`);
    let ws;
    try {
      ws = new WebSocket(ingestUrl.replace(/^http/, 'ws'), protocols);
    } catch {
      scheduleReconnect();
      return;
    }
    ws.binaryType = 'arraybuffer';
    socket = ws;
    ws.onopen = () => {
      socketOpen = true;
      // Whatever was sent before and not acknowledged goes again, first and
      // in order; the daemon drops what it already applied by seq.
      for (const batch of inflight) ws.send(batch.bytes);
      stats.sent += inflightEvents;
      armAckTimer();
      sendPending();
    };
    ws.onmessage = onSocketMessage;
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = null;
      socketOpen = false;
      clearTimeout(ackTimer);
      ackTimer = 0;
      if (!stopped) {
        stats.reconnects++;
        scheduleReconnect();
      }
    };
  };

  const postBatch = (batch, keepalive, current) => {
    const headers = { 'content-type': 'application/msgpack' };
    if (current) headers.authorization = `Bearer ${current}`;
    return fetch(ingestUrl, {
      method: 'POST', headers, body: batch.bytes,
      keepalive: keepalive && batch.bytes.length <= LIMITS.KEEPALIVE_BODY_MAX_BYTES,
    });
  };

  const sendHttp = () => {
    if (httpBusy || reconnectTimer) return;
    const batch = inflight[0] || takeBatch(false);
    if (!batch) return;
    if (!inflight.length) { inflight.push(batch); inflightEvents += batch.count; }
    httpBusy = true;
    stats.sent += batch.count;
    nextToken().then((current) => postBatch(batch, false, current)).then((response) => {
      httpBusy = false;
      // A 401 when the token comes from a function is a token that expired
      // (or a secret rotated): the retry asks the function for a fresh one,
      // as a WebSocket closed with 1008 reconnects with one.
      const retry = response.status === 408 || response.status === 429 ||
        (response.status === 401 && typeof token === 'function');
      if (response.ok || (response.status >= 400 && response.status < 500 && !retry)) {
        // Any other 4xx names a batch the daemon will never take; retrying
        // it would block every later event.
        if (!response.ok) stats.rejected += batch.count;
        inflight.shift();
        inflightEvents -= batch.count;
        if (response.ok) stats.acked += batch.count;
        backoffMs = LIMITS.BACKOFF_INITIAL_MS;
        sendPending();
      } else {
        scheduleReconnect();
      }
    }, () => {
      httpBusy = false;
      scheduleReconnect();
    });
  };

  function sendPending() {
    clearTimeout(sendTimer);
    sendTimer = 0;
    if (stopped && !socketOpen) return;
    if (kind === 'http') { sendHttp(); return; }
    if (!socketOpen) { if (!socket && !reconnectTimer) connect(); return; }
    while (inflight.length < LIMITS.INFLIGHT_MAX_BATCHES) {
      const batch = takeBatch(true);
      if (!batch) break;
      inflight.push(batch);
      inflightEvents += batch.count;
      stats.sent += batch.count;
      socket.send(batch.bytes);
    }
    if (inflight.length && !ackTimer) armAckTimer();
  }

  /** Last-chance send when the page goes away: everything queued, at once,
   *  past the in-flight cap (there will be no later turn). */
  const sendNow = () => {
    for (const entry of queue) {
      if (entry.pending) { entry.pending = false; if (onRecord) onRecord(entry.tag, entry.record); }
    }
    if (kind === 'http') {
      const pendingBatches = inflight.slice(httpBusy ? 1 : 0);
      for (let batch = takeBatch(false); batch; batch = takeBatch(false)) pendingBatches.push(batch);
      for (const batch of pendingBatches) postBatch(batch, true, lastToken).catch(() => {});
      return;
    }
    if (!socketOpen) return;
    for (let batch = takeBatch(true); batch; batch = takeBatch(true)) {
      inflight.push(batch);
      inflightEvents += batch.count;
      stats.sent += batch.count;
      socket.send(batch.bytes);
    }
  };

  /** Stops: a last send of what is queued, then the connection closed. */
  const close = () => {
    sendNow();
    stopped = true;
    clearTimeout(sendTimer);
    clearTimeout(reconnectTimer);
    clearTimeout(ackTimer);
    if (socket) socket.close(1000, 'stopped');
  };

  writeSavedTab(tab, seq);
  return {
    enqueue, enqueueAt, complete, cancel, scheduleSend, sendPending, sendNow, close,
    /** Saves the last seq used, sent or not, so the next page of this tab
     *  (which reads it back) never reuses one. */
    saveSeq() { writeSavedTab(tab, seq); },
    /** The last seq used. */
    lastSeq: () => seq,
  };
}
