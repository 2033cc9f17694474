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

/* ---- Wire (msgpack decoding; see shared/style.md) ---- */
#define UT_FRAME_MAX_BYTES (1u << 20)      /* one Forward message */
#define UT_WIRE_STR_MAX_BYTES (64u << 10)  /* one msgpack str/bin (PackedForward bodies excepted) */
#define UT_WIRE_CONTAINER_MAX 4096         /* elements of one array or map */
#define UT_WIRE_DEPTH_MAX 8                /* nesting of arrays and maps */
#define UT_FORWARD_ENTRIES_MAX 4096        /* entries of one Forward/PackedForward message */

/* ---- Engine (defaults; each is configurable within these bounds) ---- */
#define UT_RING_DEFAULT 20
#define UT_RING_MIN 1
#define UT_RING_MAX 1000
#define UT_TABS_DEFAULT 100000
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
#define UT_CTX_PRINT_MAX_CHARS 60  /* context text in a trace line */
#define UT_REDACT_PATTERNS_MAX 64  /* extra redaction patterns */

/* ---- Trace requests ---- */
#define UT_TRACE_LIMIT_MAX 1000
#define UT_TRACE_MAX_TOKENS_MAX 100000

#endif
