/* uitrail wire: internals shared by the files of src/wire (and by the wire
 * tests and fuzz targets, which exercise them directly). Not installed. */
#ifndef UITRAIL_WIRE_INTERNAL_H
#define UITRAIL_WIRE_INTERNAL_H

#include <msgpack.h>

#include "uitrail/common.h"
#include "uitrail/event.h"
#include "uitrail/limits.h"
#include "uitrail/wire.h"

/* ---- Header pre-scan (scan.c) ----
 *
 * msgpack-c trusts the counts and lengths it reads: an array32 header of
 * 2^28 makes it reserve gigabytes before any element arrives, and deep
 * nesting ends in NOMEM rather than a parse error. So no byte reaches
 * msgpack-c before this scanner has walked the headers of the whole value
 * and checked every count, length and depth against limits.h. The scanner
 * is incremental: fed a growing prefix of one value, it resumes where it
 * stopped, so byte-by-byte input costs linear time. */

typedef struct ut__scan_limits {
    size_t frame_max_bytes;     /* bytes of the whole value */
    const char *bound_name;     /* what that bound is, for messages: "the frame limit" */
    const char *root_name;      /* what the root is: "Forward message" */
    uint32_t root_min_elements; /* the root must be an array of this many... */
    uint32_t root_max_elements; /* ...to this many elements */
    bool allow_nil_root;        /* a nil root is a heartbeat */
    bool allow_any_root;        /* any root value (a lone record): no root checks */
    bool allow_large_body;      /* root element 1 (a PackedForward body) may be
                                   a str/bin of up to frame_max_bytes */
} ut__scan_limits;

typedef struct ut__scan {
    size_t pos;           /* bytes of the value scanned so far */
    size_t skip;          /* payload bytes of a str/bin/ext still to pass */
    uint32_t depth;       /* containers open */
    uint32_t root_elements;
    uint32_t remaining[UT_WIRE_DEPTH_MAX]; /* values still due in each open container */
    size_t error_pos;     /* where the offending header starts */
    char error[160];
} ut__scan;

typedef enum ut__scan_result {
    UT__SCAN_NEED_MORE, /* the value is incomplete but valid so far */
    UT__SCAN_COMPLETE,  /* the value is complete; its length is scan.pos */
    UT__SCAN_INVALID,   /* malformed or over a limit: scan.error, scan.error_pos */
} ut__scan_result;

void ut__scan_reset(ut__scan *s);

/* Continues scanning the value that starts at `value`, of which `avail`
 * bytes are present (the same bytes as before plus possibly more). */
ut__scan_result ut__scan_run(ut__scan *s, const ut__scan_limits *lim,
                             const uint8_t *value, size_t avail);

/* ---- Record validation (validate.c) ---- */

/* One text field whose final address is known only once the scratch
 * buffer has stopped growing. */
typedef struct ut__text_fixup {
    ut_str *field;
    size_t offset;
} ut__text_fixup;

/* Text fields one event can hold: the fixed ones, the row cells and the
 * elements of a mutation's records. */
#define UT__TEXT_FIXUPS_MAX (16 + UT_CTX_CELLS_MAX + UT_MUTATION_RECS_MAX)

/* Reusable state of the record validator: the cleaned text of the current
 * event and its mutation records live here until the next validation, so
 * validating an event allocates nothing once the buffers have grown. */
typedef struct ut__record_validator {
    ut_buf text;
    ut__text_fixup *fixups;
    size_t nfixups;
    ut_mut_rec *recs;
    ut_reject why;   /* after UT_EINVAL */
    char detail[256]; /* after UT_EINVAL: "uitrail.click: field \"el\" is missing" */
} ut__record_validator;

ut_status ut__record_validator_init(ut__record_validator *v);
void ut__record_validator_free(ut__record_validator *v);

/* Validates `record` (a msgpack object whose strings stay valid during the
 * call) as a record of `kind` sent at `time_us`, filling `ev`. Returns
 * UT_OK, UT_EINVAL (rejected: v->why and v->detail say why) or UT_ENOMEM.
 * The strings of `ev` point into `v` and live until the next call. */
ut_status ut__record_validate(ut__record_validator *v, ut_kind kind, int64_t time_us,
                              const msgpack_object *record, ut_event *ev);

/* ---- CompressedPackedForward (inflate.c) ---- */

/* Appends the inflated content of `in`, one or more gzip members back to
 * back, to `out`. Returns UT_OK; UT_EPROTO (corrupt, truncated, empty, or
 * followed by bytes that are not a gzip member) or UT_ELIMIT (more than
 * `max_bytes` of output) with a one-line reason in `err`; UT_ENOMEM. */
ut_status ut__wire_gunzip(ut_str in, size_t max_bytes, ut_buf *out, char *err, size_t errlen);

/* Converts a Forward `time` (EventTime ext 0, or integer/float seconds) to
 * microseconds since the epoch; false when it is neither or out of range. */
bool ut__wire_time_us(const msgpack_object *time, int64_t *out_us);

/* "a string", "an integer", ... for error messages. */
const char *ut__msgpack_type_name(const msgpack_object *o);

/* msgpack-c packer output callback appending to the ut_buf in `data`. */
int ut__msgpack_write_buf(void *data, const char *bytes, size_t len);

/* Bytes copied into the unpacker per step: bounds the unpacker's buffer to
 * one frame plus one step, whatever size the caller feeds at once. */
#define UT__FEED_STEP_BYTES (64u << 10)
/* A new decoder's buffer (msgpack-c's default is 64 KiB) and the chunk of
 * its entry zone: small, because every connection has a decoder and most
 * carry small messages (or none: 5 000 WebSockets opened and closed kept
 * some 140 MiB). The buffer grows as a message needs it. */
#define UT__DECODER_INITIAL_BYTES (2u << 10)
#define UT__DECODER_ZONE_CHUNK_BYTES 1024u

#endif
