/* Helpers shared by the wire tests: a sink that logs what the decoder
 * reports as text lines (so two runs compare with one strcmp), a
 * fail-after-N allocator, and small msgpack builders. */
#ifndef UITRAIL_WIRE_TEST_UTIL_H
#define UITRAIL_WIRE_TEST_UTIL_H

#include <msgpack.h>

#include "uitrail/common.h"
#include "uitrail/event.h"
#include "uitrail/wire.h"

/* Appends a one-line description of every field of `ev` to `out`: two
 * events are equal exactly when their descriptions are. */
void wt_describe_event(const ut_event *ev, ut_buf *out);

/* A sink recording each report as a line: "event ...", "reject <reason>:
 * <detail>", "ignored <tag>", "ack <chunk>". */
typedef struct wt_log {
    ut_buf text;
    unsigned events, rejects, ignored, acks;
    ut_reject last_reject;
    ut_status fail_on_event; /* returned by on_event when not UT_OK */
} wt_log;

void wt_log_init(wt_log *log);
void wt_log_free(wt_log *log);
ut_fwd_sink wt_log_sink(wt_log *log);

/* Feeds `data` to a fresh decoder in pieces of `step` bytes (0: all at
 * once), logging into `log`. Returns the last status; copies the error
 * text and offset out when they are not NULL. */
ut_status wt_decode(const void *data, size_t len, size_t step, wt_log *log, char *error,
                    size_t errlen, uint64_t *error_offset);

/* Converts JSON text (one Forward message or an array of them) to msgpack,
 * appended to `out`; fails the test when the JSON is rejected. */
void wt_json(const char *json, ut_buf *out);

/* A record written as JSON, and what the decoder must say of it. */
typedef struct wt_record_case {
    const char *kind;   /* the tag is uitrail.<kind> */
    const char *record; /* JSON */
    const char *expect; /* good: a substring of the event's description; bad: the report line */
} wt_record_case;

/* Decodes the one record `record` (JSON) under the tag uitrail.<kind>
 * into `log` (initialised here). */
void wt_decode_record(const char *kind, const char *record, wt_log *log);
/* Each of the `n` cases decodes to one event whose description holds its
 * `expect`. */
void wt_check_good_records(const wt_record_case *cases, size_t n);
/* Each of the `n` cases is rejected with exactly the report line `expect`. */
void wt_check_bad_records(const wt_record_case *cases, size_t n);

/* The fail-after-N allocator: the first `n` allocations succeed, the rest
 * fail, until wt_alloc_restore(). Returns how many were attempted. */
void wt_alloc_fail_after(long n);
long wt_alloc_attempts(void);
void wt_alloc_restore(void);

/* msgpack packer writing into a ut_buf. */
void wt_packer(msgpack_packer *pk, ut_buf *out);
void wt_pack_cstr(msgpack_packer *pk, const char *s);
void wt_pack_event_time(msgpack_packer *pk, uint32_t sec, uint32_t nsec);

/* Test groups, one per file. */
int wt_run_forward_tests(void);
int wt_run_validate_tests(void);
int wt_run_json_tests(void);
int wt_run_pack_tests(void);
int wt_run_compressed_tests(void);

#endif
