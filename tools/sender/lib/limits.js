// Every bound the sender keeps. The text maxima mirror protocol §1 and
// include/uitrail/limits.h; they are counted in UTF-16 code units (the
// daemon cuts again on UTF-8 bytes), so the sender never ships much more
// than the daemon keeps. A key mirrors the C constant of its name (UT_
// prefix, _CHARS for _BYTES); tests/sender/limits.test.mjs holds them
// equal and lists the keys that are the sender's own.

export const LIMITS = Object.freeze({
  ROLE_MAX_CHARS: 32,
  NAME_MAX_CHARS: 256,
  VALUE_MAX_CHARS: 256,
  URL_MAX_CHARS: 2048,
  TITLE_MAX_CHARS: 256,
  ALERT_TEXT_MAX_CHARS: 512,
  DIALOG_TEXT_MAX_CHARS: 2048,
  CELL_MAX_CHARS: 256,
  CTX_CELLS_MAX: 16,
  MUTATION_RECS_MAX: 512,
  MUTATION_BYTES_CAP: 50000,
  // Host events (uitrail.app): UT_APP_* in limits.h. Names and data keys
  // are identifiers of the app's code: [A-Za-z0-9_.-] only.
  APP_NAME_MAX_CHARS: 64,
  APP_TEXT_MAX_CHARS: 512,
  APP_DATA_MAX: 16,
  APP_KEY_MAX_CHARS: 32,
  APP_VALUE_MAX_CHARS: 256,
  // Form validation (uitrail.invalid): UT_INVALID_* in limits.h.
  INVALID_FIELDS_MAX: 8,
  INVALID_TEXT_MAX_CHARS: 256,
  // An added subtree with more elements than this is not serialized to
  // measure its size: its bytes count as MUTATION_BYTES_CAP at once.
  MUTATION_MEASURE_ELEMENTS_MAX: 2000,
  // Events kept while the daemon is unreachable (queued plus unacknowledged);
  // beyond it the oldest queued events are dropped and counted.
  QUEUE_MAX_EVENTS: 1000,
  BATCH_MAX_EVENTS: 100,
  INFLIGHT_MAX_BATCHES: 4,
  ACK_TIMEOUT_MS: 10000,
  BACKOFF_INITIAL_MS: 250,
  BACKOFF_MAX_MS: 30000,
  // Mutations are flushed once per animation frame; a hidden tab gets no
  // frames, so a timer flushes them after this delay instead.
  FLUSH_FALLBACK_MS: 1000,
  // The element count and depth of the page are kept up to date from the
  // mutations themselves and re-measured exactly at most this often.
  DOM_RESYNC_MS: 2000,
  // fetch(keepalive) refuses bodies above 64 KiB.
  KEEPALIVE_BODY_MAX_BYTES: 60000,
  // A navigation's title is read once the page set it: frameworks set
  // document.title after the next frame. The nav record waits for a title
  // change at most this long (later records wait behind it).
  NAV_TITLE_WAIT_MS: 400,
  // Shadow roots observed per tracker; beyond it new ones are not observed.
  SHADOW_ROOTS_MAX: 2000,
  // The sender reports the document loaded (fonts and images included) at
  // most this long after it started; a page still loading then gets no
  // such report and settles by the daemon's ordinary rules.
  LOADED_WAIT_MAX_MS: 10000,
  // A request (fetch, XMLHttpRequest) open longer than this stops counting
  // as the page waiting for data: a long poll or a stream (option
  // requestMaxMs). A page's data rarely takes longer; the daemon's own
  // cap (net_cap_ms) stands behind it.
  REQUEST_COUNT_MAX_MS: 5000,
  // A sender in a same-origin iframe waits at most this long after the top
  // page loaded for the top page's tracker before it runs on its own.
  FRAME_HANDOFF_WAIT_MS: 1000,
});

export const STORAGE_KEY = 'uitrail.tab';
export const TAB_ID_BYTES = 16;

// Where a tracker of the top frame announces itself to the senders of its
// same-origin frames.
export const TOP_TRACKER_KEY = Symbol.for('uitrail.tracker');
