// Types of the uitrail sender (uitrail.js). The module runs in a browser
// page; see README.md for what each record carries.

/** Options of start(). */
export interface StartOptions {
  /** The daemon's base URL (default: the page's origin). */
  url?: string;
  /** The ingest token, sent as Sec-WebSocket-Protocol uitrail.token.<token>
   *  (HTTP: Authorization: Bearer): the shared one of --ingest-token-file,
   *  or a signed per-tab token (uitraild --ingest-secret-file). A function
   *  is asked for a token before each connection, with the tab id: signed
   *  tokens expire, and the daemon closes a socket whose token expired
   *  (1008), so return a fresh one from the app's backend. */
  token?: string | ((tab: string) => string | Promise<string>);
  /** The tab id (default: a random id kept in sessionStorage). */
  tab?: string;
  /** Row context: only in tables that opt in with
   *  data-track-row-context="true" on the table or any element around it
   *  (default), always, or never. */
  rowContext?: 'opt-in' | 'always' | 'never';
  /** The element observed (default: document.documentElement). */
  root?: Element;
  /** "websocket" (default) or "http" (POST /v1/ingest). */
  transport?: 'websocket' | 'http';
  /** false switches the DOM source off: no clicks, changes, mutations,
   *  dialogs or alerts from the page, only navigations, unloads and the
   *  host events the app emits (default true). */
  dom?: boolean;
  /** false stops counting the page's requests in flight (fetch and
   *  XMLHttpRequest, wrapped transparently) as page activity; only their
   *  number is sent, never a URL (default true; needs the DOM source). */
  network?: boolean;
  /** Requests that never count as the page waiting: a string is a prefix
   *  of the absolute URL (or a path of this origin when it starts with
   *  "/"), a RegExp is tested on it, a function returns true. For
   *  beacons, analytics and long polls; the daemon's address is always
   *  ignored. */
  ignoreUrls?: Array<string | RegExp | ((url: string) => boolean)>;
  /** A request open longer than this many ms stops counting (long polls,
   *  streams; default 5000). */
  requestMaxMs?: number;
  /** When true, the ingest URL carries the tab id as ?tab=ID, so that a
   *  proxy in front of several daemons can hash on it (default false). */
  tabInUrl?: boolean;
  /** Record each handler's cost with performance.measure()
   *  (uitrail:click, uitrail:click-state, uitrail:change, uitrail:flush,
   *  uitrail:encode). */
  measure?: boolean;
  /** Called with each record once it is complete (tests). */
  onRecord?: (tag: RecordTag, record: Readonly<Record<string, unknown>>) => void;
}

export type RecordTag =
  | 'uitrail.nav' | 'uitrail.click' | 'uitrail.change' | 'uitrail.alert' | 'uitrail.dialog'
  | 'uitrail.mutation' | 'uitrail.unload' | 'uitrail.app' | 'uitrail.close';

/** A host event's details (tracker.emit). */
export interface AppEventDetails {
  /** A human message, at most 512 characters (cut beyond). */
  text?: string;
  level?: 'error' | 'warning' | 'info';
  /** At most 16 keys of [A-Za-z0-9_.-] (at most 32 characters each);
   *  numbers and booleans are sent as text; values are cut at 256
   *  characters. */
  data?: Record<string, string | number | boolean>;
}

export interface TrackerStats {
  queued: number;
  sent: number;
  acked: number;
  dropped: number;
  rejected: number;
  reconnects: number;
}

export interface Tracker {
  /** The tab id (undefined in a frame until it knows the top page's). */
  readonly tab: string | undefined;
  readonly stats: TrackerStats | undefined;
  /** True in a same-origin frame that hands off to the top page's tracker. */
  readonly frame: boolean;
  /** Reports a host event, e.g. emit('order.refund_failed', {text, level,
   *  data}). The name is 1 to 64 characters of [A-Za-z0-9_.-]. Throws a
   *  TypeError when the arguments break these rules. */
  emit(name: string, details?: AppEventDetails): void;
  /** Runs fn as the in-app assistant's executor: every click and change
   *  until fn returns (or until the promise it returns settles) is marked
   *  as the assistant's (`(by assistant)` in the trace, `"actor":
   *  "assistant"` in JSON), not the user's. An element under
   *  data-uitrail-actor="assistant" marks its clicks the same way.
   *  Throws a TypeError for any other actor. */
  actor<T>(actor: 'assistant', fn: () => T): T;
  /** Sends what is queued now instead of on the next turn. */
  flush(): void;
  /** Stops tracking. With {close: true} the tab is reported gone for good
   *  (uitrail.close); otherwise the daemon keeps it until it goes idle. */
  stop(options?: { close?: boolean }): void;
}

export declare const LIMITS: Readonly<{
  ROLE_MAX_CHARS: number; NAME_MAX_CHARS: number; VALUE_MAX_CHARS: number; URL_MAX_CHARS: number;
  TITLE_MAX_CHARS: number; ALERT_TEXT_MAX_CHARS: number; DIALOG_TEXT_MAX_CHARS: number;
  CELL_MAX_CHARS: number; CTX_CELLS_MAX: number; MUTATION_RECS_MAX: number; MUTATION_BYTES_CAP: number;
  APP_NAME_MAX_CHARS: number; APP_TEXT_MAX_CHARS: number; APP_DATA_MAX: number; APP_KEY_MAX_CHARS: number;
  APP_VALUE_MAX_CHARS: number; MUTATION_MEASURE_ELEMENTS_MAX: number; QUEUE_MAX_EVENTS: number;
  BATCH_MAX_EVENTS: number; INFLIGHT_MAX_BATCHES: number; ACK_TIMEOUT_MS: number; BACKOFF_INITIAL_MS: number;
  BACKOFF_MAX_MS: number; FLUSH_FALLBACK_MS: number; DOM_RESYNC_MS: number; KEEPALIVE_BODY_MAX_BYTES: number;
  NAV_TITLE_WAIT_MS: number; SHADOW_ROOTS_MAX: number; FRAME_HANDOFF_WAIT_MS: number;
}>;

/** Starts tracking the page and streaming to the daemon. */
export declare function start(options?: StartOptions): Tracker;

/** A Forward EventTime (msgpack ext type 0). */
export declare class EventTime {
  constructor(ms: number);
  readonly ms: number;
}
/** Decodes Forward entries sent back to back, as the sender sends them. */
export declare function decodeEntries(bytes: Uint8Array): unknown[];
export declare const extensionCodec: unknown;

/** The role, accessible name, context and dialog snapshot the sender
 *  reports for an element (for tools and tests). */
export declare function roleOf(el: Element): string;
export declare function accessibleName(el: Element, role?: string): string;
export declare function contextOf(el: Element, rowContext: 'opt-in' | 'always' | 'never'):
  { kind: 'row'; cells: string[] } | { kind: string; name: string } | undefined;
export declare function snapshotText(container: Element, dialogName: string): string;

declare const uitrail: { start: typeof start; LIMITS: typeof LIMITS };
export default uitrail;
