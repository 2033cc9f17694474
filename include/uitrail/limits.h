/* uitrail: every limit, in one place. Each has a test that trips it.
 * Units are in the names. The protocol's text maxima are in protocol.md §1;
 * text longer than its maximum is cut on a UTF-8 boundary, never rejected. */
#ifndef UITRAIL_LIMITS_H
#define UITRAIL_LIMITS_H

/* ---- Records (protocol §1) ---- */
#define UT_TAB_MAX_BYTES 128
#define UT_URL_MAX_BYTES 2048
#define UT_TITLE_MAX_BYTES 256
#define UT_ROLE_MAX_BYTES 32
#define UT_NAME_MAX_BYTES 256
#define UT_EL_MAX_BYTES 64
#define UT_VALUE_MAX_BYTES 256
#define UT_ALERT_TEXT_MAX_BYTES 512
#define UT_DIALOG_TEXT_MAX_BYTES 2048
#define UT_CELL_MAX_BYTES 256     /* one row cell or context name */
#define UT_CTX_CELLS_MAX 16       /* cells kept of a row; more are dropped */
#define UT_MUTATION_RECS_MAX 512  /* `recs` entries in one mutation record */
/* Host events (`uitrail.app`). The event name and the data keys may hold
 * only [A-Za-z0-9_.-]: they name things in the app's code, never the
 * user's data, and a record breaking that is rejected. */
#define UT_APP_NAME_MAX_BYTES 64
#define UT_APP_TEXT_MAX_BYTES 512
#define UT_APP_DATA_MAX 16          /* pairs of `data`; a record with more is rejected */
#define UT_APP_KEY_MAX_BYTES 32     /* one key of `data`; a longer key is rejected */
#define UT_APP_VALUE_MAX_BYTES 256  /* one value of `data`; longer values are cut */
/* Form validation (`uitrail.invalid`): the controls a submit found
 * invalid, each with the message the page showed for it. */
#define UT_INVALID_FIELDS_MAX 8          /* `fields` kept; later ones are dropped */
#define UT_INVALID_TEXT_MAX_BYTES 256    /* one field's message; longer is cut */

/* ---- Wire (msgpack decoding; see shared/style.md) ---- */
#define UT_FRAME_MAX_BYTES (1u << 20)      /* one Forward message */
#define UT_WIRE_STR_MAX_BYTES (64u << 10)  /* one msgpack str/bin (PackedForward bodies excepted) */
#define UT_WIRE_CONTAINER_MAX 4096         /* elements of one array or map */
#define UT_WIRE_DEPTH_MAX 8                /* nesting of arrays and maps */
#define UT_FORWARD_ENTRIES_MAX 4096        /* entries of one Forward/PackedForward message */
/* A CompressedPackedForward body inflates to at most this: more is a
 * protocol error (a zip bomb costs the daemon this much, once, not its
 * memory). Fluentd's and Fluent Bit's chunks stay well below it. */
#define UT_FORWARD_INFLATED_MAX_BYTES (8u << 20)
#define UT_WIRE_TIME_MAX_S 4294967295u     /* latest event time: EventTime's uint32 seconds (2106) */
#define UT_WIRE_TZ_MAX_MIN 1440            /* |tz| of a nav record, minutes from UTC */
#define UT_REPLAY_JSON_MAX_BYTES (64u << 20) /* a JSON file or stdin read whole by `uitrail replay` */

/* ---- Recordings (protocol §5; src/record) ---- */
#define UT_REC_FRAME_CUT_DEFAULT_BYTES (64u << 10)  /* content that cuts a frame */
#define UT_REC_FRAME_CUT_MIN_BYTES 256u
#define UT_REC_FRAME_CUT_MAX_BYTES (1u << 20)
#define UT_REC_FRAME_INTERVAL_DEFAULT_MS 1000u      /* age of a frame's first entry that cuts it */
#define UT_REC_FRAME_INTERVAL_MIN_MS 10u
#define UT_REC_FRAME_INTERVAL_MAX_MS 60000u
/* One entry of a recording must fit one ingest Forward message, so that a
 * recording can be sent back to a daemon. */
#define UT_REC_ENTRY_MAX_BYTES UT_FRAME_MAX_BYTES
/* Decompressed content of one frame a reader accepts: a full frame plus the
 * entry that crossed the cut. A frame declaring more is skipped unread. */
#define UT_REC_FRAME_CONTENT_MAX_BYTES (UT_REC_FRAME_CUT_MAX_BYTES + UT_REC_ENTRY_MAX_BYTES)
#define UT_REC_META_MAX_BYTES (16u << 10)           /* the uitrail.meta entry */
/* What an imported recording's meta says it lacks (`import.gaps`). */
#define UT_REC_IMPORT_GAPS_MAX 8u
#define UT_REC_FILE_TAB_MAX_BYTES 160u              /* escaped tab id in a file name */
/* Tabs one journal frame's index lists (protocol §5.1). A frame holds at
 * most UT_REC_FRAME_CONTENT_MAX_BYTES of entries of some 20 bytes at the
 * least, so a writer never reaches it; a longer index is not honoured. */
#define UT_REC_INDEX_MAX_TABS 65536u

/* ---- Engine (defaults; each is configurable within these bounds) ---- */
#define UT_RING_DEFAULT 20
#define UT_RING_MIN 1
#define UT_RING_MAX 1000
#define UT_TABS_DEFAULT 100000
/* --max-memory: bytes of tab state (rings, dialogs, pages, scorers, held
 * events) over all tabs; the least recently active tabs are evicted beyond
 * it. 1 GiB holds ~10 000 tabs with every field at its limit (~108 kB
 * each) or the default tab cap of ordinary tabs. 0 turns the budget off. */
#define UT_MEMORY_DEFAULT_BYTES (UINT64_C(1) << 30)
#define UT_MEMORY_MIN_BYTES (UINT64_C(1) << 20)
#define UT_TABS_MAX 10000000
#define UT_IDLE_DEFAULT_MS (60 * 60 * 1000)
#define UT_DEBOUNCE_DEFAULT_MS 300
#define UT_RAGE_WINDOW_MS 1000     /* three or more clicks on one element within it: rage */
#define UT_RAGE_MIN_CLICKS 3
#define UT_BURST_WINDOW_MS 2000    /* consecutive same-role clicks in one context within it: a burst */
#define UT_BURST_MIN_CLICKS 3
#define UT_BURST_NAMES_SHOWN 3     /* names printed in a burst line before "… (+N more)" */
#define UT_OUTCOME_WINDOW_MS 1000  /* a dialog, navigation or change within it is the click's outcome */
#define UT_DEAD_CLICK_MS 2000      /* nothing within it: "no visible response" */
/* After a `uitrail.unload` that came within a click's outcome window, the
 * next page's navigation within this long of the unload is the click's
 * outcome, and the page reads as changing until then (or until this has
 * passed without a new page). */
#define UT_UNLOAD_OUTCOME_WINDOW_MS 10000
#define UT_CTX_PRINT_MAX_CHARS 60  /* context text in a trace line */
#define UT_REDACT_PATTERNS_MAX 64  /* extra redaction patterns */
#define UT_REDACT_PATTERN_MAX_BYTES 1024 /* source of one extra redaction pattern */
/* PCRE2 match limit of one redaction search (pcre2_set_match_limit). A
 * field whose search exceeds it (a pathological extra pattern) is replaced
 * whole by "[redacted]": redaction fails closed, never open. */
#define UT_REDACT_MATCH_LIMIT 200000
#define UT_TABS_MIN 1
#define UT_IDLE_MIN_MS 1000
#define UT_DEBOUNCE_MAX_MS 10000
#define UT_BURST_MEMBERS_MAX 32    /* members named in one burst entry; later ones are only counted */
#define UT_DIALOGS_OPEN_MAX 8      /* open dialogs remembered per tab; the oldest is forgotten beyond it */
#define UT_TEXT_PRINT_MAX_CHARS 200 /* names, values, alerts, snapshots and paths in a trace line */

/* ---- Order-tolerant ingest (src/core/reorder.c, src/core/seqwin.c) ----
 * Events of one tab may arrive out of order across Forward messages (a
 * client that batches per tag, a resend). Each tab holds them in a reorder
 * window and applies them in event order. */
#define UT_REORDER_DEFAULT_MS 1000 /* how far in event time an event waits for earlier ones (--reorder-ms) */
#define UT_REORDER_MAX_MS 10000    /* bound of --reorder-ms (it must also stay below --idle-ms) */
#define UT_REORDER_WAIT_MAX_MS 10000 /* no event waits longer on the engine clock, whatever its time */
#define UT_REORDER_HELD_MAX 64     /* events one tab may hold; the earliest is applied beyond it */
#define UT_REORDER_HELD_MAX_BYTES (256u << 10) /* bytes one tab may hold, the same way */
#define UT_SEQ_WINDOW 256          /* recent seqs remembered per tab: a gap among them may be filled later */
/* A seq more than this above the tab's highest seq is rejected (and
 * counted): one hostile or corrupt seq must not make every later event of
 * the tab look like a duplicate. */
#define UT_SEQ_JUMP_MAX 65536

/* ---- Stability scorer (src/core/stability.c) ---- */
#define UT_STAB_TARGETS_MAX 16        /* per-tab table of recently mutated targets (window maximum, churn rhythm) */
#define UT_STAB_WINDOW_BUCKETS 8      /* per-tab ring of window slices for targets the table cannot hold */
#define UT_MUTATION_BYTES_CAP 50000   /* protocol §1 cap of a record's `bytes`; larger values are clamped */
#define UT_STAB_WINDOW_MIN_MS 6       /* bounds of ut_stab_params.window_ms */
#define UT_STAB_WINDOW_MAX_MS 60000
#define UT_STAB_QUIET_MAX_MS 60000    /* bound of quiet_ms */
#define UT_STAB_HALF_LIFE_MAX_MS 60000 /* bound of decay_half_life_ms (at least 1) */
#define UT_STAB_BUSY_CAP_MAX_MS (10 * 60 * 1000) /* bound of busy_cap_ms */
#define UT_STAB_CHURN_REPEATS_MAX 255 /* bound of churn_min_repeats (at least 1) */
#define UT_STAB_CHURN_PERIOD_MAX_MS 60000 /* bound of churn_min_period_ms */
#define UT_STAB_ACTION_WINDOW_MAX_MS 60000 /* bound of action_window_ms */
#define UT_STAB_THRESHOLD_MAX 1000.0  /* bound of the intensity thresholds and leaf_floor */

/* ---- Trace requests ---- */
#define UT_TRACE_LIMIT_MAX 1000
#define UT_TRACE_MAX_TOKENS_MAX 100000

/* ---- Command line: inputs read whole, and `uitrail tune` (tools/uitrail) ---- */
#define UT_CLI_INPUT_MAX_BYTES (256u << 20)      /* a recording or a session read whole into memory */
#define UT_TUNE_FILES_MAX 4096                   /* sessions of one `uitrail tune` run */
#define UT_TUNE_GRID_VALUES_MAX 64               /* values of one parameter in --grid */
#define UT_TUNE_GRID_SPEC_MAX_BYTES 4096         /* the --grid argument */
#define UT_TUNE_SETTINGS_MAX 20000               /* settings of a grid: the product of its value counts */
#define UT_TUNE_JOBS_MAX 256                     /* --jobs */
#define UT_TUNE_LABELS_MAX 10000                 /* true settles of one session */
#define UT_TUNE_LABELS_FILE_MAX_BYTES (1u << 20) /* a <session>.labels sidecar file */
#define UT_TUNE_SETTLE_WINDOW_MS 2000            /* a true settle without a stable mark this soon after it is missed */
/* `uitrail tune --unlabelled` (tools/uitrail/tune_observed.h): a stable
 * mark followed this soon by a significant change, with no user action in
 * between, is a flap. The default action_window_ms (UT_DEAD_CLICK_MS): the
 * time the scorer itself gives a page to answer an action, so a change
 * within it belongs to what was going on, not to something new. */
#define UT_TUNE_FLAP_WINDOW_MS UT_DEAD_CLICK_MS
/* An answered action whose response no stable mark ends this soon is
 * unsettled: the replay runs the clock 60 s past the last event
 * (UT_CLI_SETTLE_US), and it bounds a latency in a partial result. */
#define UT_TUNE_ACTION_SETTLE_MAX_MS 60000
#define UT_TUNE_PARTIAL_MAX_BYTES (64u << 20)    /* one `uitrail tune --partial` file read by --merge */
#define UT_TUNE_MERGE_FILES_MAX 4096             /* partial results of one --merge */
#define UT_TUNE_COUNT_MAX 9007199254740991.0     /* a count in a partial result: 2^53 - 1, exact in any JSON reader */
#define UT_TUNE_SVG_STEP_MS 20                   /* the plotted intensity is sampled this often... */
#define UT_TUNE_SVG_SAMPLES_MAX 20000            /* ...unless that makes more samples: then evenly over the session */
#define UT_IMPORT_JOBS_MAX 256                   /* `uitrail import -j` */
#define UT_IMPORT_SHARDS_MAX 1000000             /* N of `uitrail import --shard I/N` */
/* Windows of one PostHog file imported, one recording each (the importer,
 * tools/import/rrweb.mjs WINDOWS_MAX, counts the rest as skipped). */
#define UT_IMPORT_WINDOWS_MAX 64
/* The V8 old-space heap of one Node importer, in MB: a session's memory is
 * bounded (one page's DOM at a time, the input streamed), so a runaway is an
 * error ("JavaScript heap out of memory", the file's import fails) and not
 * swap; with what Node holds outside it, an importer stays under 256 MB RSS
 * (a 100-load session peaks at 186 MB: BENCHMARKS.md). */
#define UT_IMPORT_NODE_HEAP_MB 128

/* ---- `uitrail mcp`: the MCP server on stdio (tools/uitrail/mcp*.c) ---- */
#define UT_MCP_MESSAGE_MAX_BYTES (1u << 20)      /* one JSON-RPC line from the client; longer is a parse error */
#define UT_MCP_CALLS_MAX 32                      /* tool calls waiting for uitraild at once; more get a tool error */
#define UT_MCP_WAIT_DEFAULT_MS 10000             /* wait_until_stable without timeout_ms */
/* timeout_ms of wait_until_stable: half the 60 s request timeout of common
 * MCP clients (the official SDKs'), so that a wait never outlives the call. */
#define UT_MCP_WAIT_MAX_MS 30000
#define UT_MCP_DAEMON_TIMEOUT_MS 10000           /* uitraild must answer within it (beyond the wait asked for) */
/* An answer from uitraild larger than this is refused: the daemon drops a
 * connection whose output grows past UT_CONN_OUTPUT_MAX_BYTES, so a real
 * one never sends more. */
#define UT_MCP_ANSWER_MAX_BYTES UT_CONN_OUTPUT_MAX_BYTES

/* ---- Daemon (src/daemon; uitraild) ---- */
#define UT_CONN_MAX_DEFAULT 4096             /* open connections, all listeners (--max-connections) */
/* After a burst: once the open connections fall to a quarter of a peak of
 * at least this many, the memory their buffers left free is given back to
 * the system (malloc_trim), not kept for a burst that may not come. */
#define UT_CONN_TRIM_PEAK_MIN 256
#define UT_CONN_MAX_LIMIT 1000000            /* the highest --max-connections accepted */
#define UT_CONN_INPUT_HIGH_BYTES (256u << 10) /* unprocessed input held for a connection: stop reading above */
#define UT_CONN_INPUT_LOW_BYTES (64u << 10)   /* ... and read again below */
#define UT_CONN_OUTPUT_HIGH_BYTES (1u << 20)  /* queued output: stop serving a connection's requests above */
#define UT_CONN_OUTPUT_MAX_BYTES (4u << 20)   /* queued output: a reader that lets it grow past this is dropped */
#define UT_CONN_READ_CHUNK_BYTES (64u << 10)  /* one read from a socket (one buffer for the whole loop) */
/* Bounded work per loop pass, so that a trace request waits behind at most
 * one pass of ingest (Redis reads 16 KiB per client per pass): a connection
 * reads at most UT_CONN_PASS_BYTES in one turn of the loop, and all of them
 * together at most UT_LOOP_PASS_BYTES; the rest is read on the next turn. */
#define UT_CONN_PASS_BYTES (16u << 10)
#define UT_LOOP_PASS_BYTES (64u << 10)
/* Group commit of acks (src/daemon/acks.c): while input keeps arriving,
 * the acks of several passes share one recorder write pass, up to this
 * many acks or this age; an idle loop commits at once. */
#define UT_ACK_COMMIT_MAX_ACKS 16384
#define UT_ACK_COMMIT_MAX_MS 20
#define UT_HTTP_HEADER_MAX_BYTES (16u << 10)  /* request line and headers of one request */
#define UT_HTTP_BODY_MAX_BYTES (16u << 20)    /* POST /v1/ingest body (413 above) */
#define UT_HTTP_JSON_BODY_MAX_BYTES (4u << 20) /* application/json ingest body, held whole to convert it */
#define UT_HTTP_HEADER_TIMEOUT_MS 10000       /* a request's headers must arrive within (--header-timeout-ms) */
#define UT_CONN_IDLE_TIMEOUT_MS 60000         /* a silent HTTP connection, or a stalled ingest frame (--idle-timeout-ms) */
#define UT_CONN_LINGER_MS 2000                /* input is read and dropped this long after a final response */
#define UT_STABLE_WAIT_MAX_MS 60000           /* wait_ms of GET /v1/tabs/{tab}/stable */
#define UT_STABLE_AFTER_SEQ_MAX 9007199254740991ULL /* after= of the same: 2^53 - 1, exact in JSON */
#define UT_SSE_KEEPALIVE_MS 15000             /* comment line sent to an idle event stream */
/* An event stream's queued output: past it the stream lags, its messages
 * are not queued but coalesced (a count, and the tabs whose trace it
 * missed), and it is dropped if it does not catch up within the idle
 * timeout. What a stream holds stays near this, whatever the burst. */
#define UT_SSE_QUEUE_MAX_BYTES (64u << 10)
/* Tabs a lagging stream remembers to send the trace of once it catches
 * up; past it, it is told to start over ("resync"). */
#define UT_SSE_LAG_TABS_MAX 1024
#define UT_SSE_TAB_FILTER_MAX_BYTES UT_TAB_MAX_BYTES
#define UT_ALLOW_UIDS_MAX 64                  /* --allow-uid entries */
#define UT_TOKEN_RANDOM_BYTES 32              /* a generated token: this many random bytes, hex */
#define UT_TOKEN_MAX_BYTES 256                /* a configured token (--token-file) */
/* Signed per-tab ingest tokens (include/uitrail/token.h; --ingest-secret-file). */
#define UT_INGEST_TOKEN_MAX_BYTES 2048        /* one signed token, as offered in its subprotocol */
#define UT_INGEST_SECRET_MIN_BYTES 32         /* the shared HMAC secret: at least 256 bits of it */
#define UT_INGEST_SECRET_MAX_BYTES UT_TOKEN_MAX_BYTES
#define UT_INGEST_TOKEN_TTL_MAX_S (7 * 86400) /* a token whose exp is further ahead is refused */
/* After SIGHUP brings a new ingest secret, tokens signed with the previous
 * one still verify this long (--ingest-secret-overlap-s): pages that
 * loaded with a token minted before the rotation reconnect meanwhile. */
#define UT_INGEST_SECRET_OVERLAP_DEFAULT_S 3600
#define UT_LOG_SAMPLE_MAX_BYTES 64            /* sanitized sample of bad input in a log line */
#define UT_LOG_REPEAT_BURST 10                /* lines of one kind of warning written before throttling */
#define UT_LOG_REPEAT_INTERVAL_MS 1000        /* then at most one such line per interval (loop time) */
#define UT_UNIX_PATH_MAX_BYTES 107            /* sun_path minus its NUL: uv_pipe_bind truncates silently */
/* WebSocket ingest (protocol §3; src/daemon/ws.c) and the --demo files (src/daemon/static.c). */
#define UT_WS_MESSAGE_MAX_BYTES UT_FRAME_MAX_BYTES /* one WebSocket message, all its frames (closed with 1009 above) */
#define UT_WS_CLOSE_REASON_MAX_BYTES 123      /* reason of a close frame: 125-byte control payload minus the code */
#define UT_ALLOW_ORIGINS_MAX 32               /* --allow-origin entries */
#define UT_ORIGIN_MAX_BYTES 256               /* one --allow-origin value */
#define UT_STATIC_FILE_MAX_BYTES (4u << 20)   /* one file served under /demo/ or /sender/ */
#define UT_STATIC_PATH_MAX_BYTES 1024         /* the decoded path of such a request */
/* Recording in the daemon (src/daemon/recorder.c; --record). */
#define UT_REC_OPEN_FILES_DEFAULT 1024        /* recording files open at once (--record-max-files) */
/* --record-journal (recorder_journal.c): a segment is closed at this size
 * or age, and closed segments are kept within --record-max-bytes and
 * --record-max-age (0: no bound). */
#define UT_REC_SEGMENT_DEFAULT_BYTES (64ull << 20)
#define UT_REC_SEGMENT_MIN_BYTES (64ull << 10)
#define UT_REC_SEGMENT_MAX_BYTES (1ull << 40)
#define UT_REC_SEGMENT_DEFAULT_S 3600u
#define UT_REC_SEGMENT_MAX_S (7u * 86400u)
#define UT_REC_MAX_AGE_MAX_S (3650u * 86400u)
#define UT_REC_OPEN_FILES_MAX 65536           /* the highest --record-max-files accepted */
#define UT_REC_NAME_SUFFIX_MAX 999            /* name taken: <time>.1-<tab> ... <time>.999-<tab> are tried */

#endif
