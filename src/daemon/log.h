/* log.c: one line per event worth a line, on stderr, with a timestamp, and
 * the sanitized samples that let a log line quote hostile input.
 *
 * Below every other room of the daemon: it knows nothing of connections. */
#ifndef UT_DAEMON_LOG_H
#define UT_DAEMON_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uitrail/limits.h"

typedef enum ut__log_level {
    UT__LOG_ERROR,
    UT__LOG_WARN,
    UT__LOG_INFO,
    UT__LOG_DEBUG,
} ut__log_level;

void ut__log_set_level(ut__log_level level);
bool ut__log_enabled(ut__log_level level);
/* Writes one line to stderr: an ISO 8601 UTC timestamp, the level and the
 * message. A trailing newline in `fmt` is not needed. */
void ut__log(ut__log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ut__log_level_name(ut__log_level level);
bool ut__log_level_parse(const char *name, ut__log_level *out);

/* Writes at most UT_LOG_SAMPLE_MAX_BYTES of `data` into `out` as printable
 * ASCII: other bytes become \xNN, and `"` and `\` are escaped, so a sample
 * of hostile input can never forge a log line. `out` is always terminated;
 * it needs UT__SAMPLE_BUF_BYTES to hold a full sample. */
#define UT__SAMPLE_BUF_BYTES (4 * UT_LOG_SAMPLE_MAX_BYTES + 4)
void ut__sanitize(const void *data, size_t len, char *out, size_t outlen);

/* The one log throttle: a flood of one kind of line (refused connections,
 * rejected records) must not become a flood of log lines. The first
 * `burst` lines of its kind pass, then at most one per `interval_ms` of
 * loop time; the ones held back in between are counted, and the next line
 * written says how many. One per kind of line, in the daemon's state. */
typedef struct ut__log_throttle {
    uint64_t last_ms; /* loop time of the last line written; 0: none yet */
    uint64_t seen;    /* lines of this kind so far */
    uint64_t held;    /* held back since the last line written */
} ut__log_throttle;

/* Whether a line of `t`'s kind may be written at loop time `now_ms`; when
 * it may, `*held` is the number held back since the last one (and the
 * count starts again), else the line is counted as held back. */
bool ut__log_throttle_pass(ut__log_throttle *t, uint64_t now_ms, uint32_t burst, uint32_t interval_ms,
                           uint64_t *held);

#endif
