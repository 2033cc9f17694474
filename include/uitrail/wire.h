/* uitrail: the Forward protocol (protocol §1) decoder, the JSON ingest body
 * and the packer. Knows msgpack; knows nothing of sockets or files. */
#ifndef UITRAIL_WIRE_H
#define UITRAIL_WIRE_H

#include "uitrail/common.h"
#include "uitrail/event.h"

/* Why a well-formed record was rejected alone (the connection stays open). */
typedef enum ut_reject {
    UT_REJECT_NOT_MAP,       /* the record is not a map */
    UT_REJECT_MISSING_FIELD, /* a required field is absent (tab, el, ...) */
    UT_REJECT_WRONG_TYPE,    /* a field has the wrong msgpack type */
    UT_REJECT_BAD_VALUE,     /* an enum field holds an unknown value, a tab is empty or too long */
    UT_REJECT_UNKNOWN_KIND,  /* tag uitrail.<kind> with an unknown kind */
    UT_REJECT_BAD_TIME,      /* time is neither EventTime nor a number */
    UT_REJECT__COUNT
} ut_reject;

const char *ut_reject_name(ut_reject r); /* "missing_field", ... (metric labels) */

/* What the decoder reports, in stream order. Every pointer lives only for
 * the duration of the call. */
typedef struct ut_fwd_sink {
    /* A valid event. Returning an error stops the feed with that error. */
    ut_status (*on_event)(void *ud, const ut_event *ev);
    /* A rejected record; `detail` is a one-line human reason such as
     * "uitrail.click: field 'el' missing". */
    void (*on_reject)(void *ud, ut_reject why, const char *detail);
    /* A message with a tag other than uitrail.* (counted, ignored). */
    void (*on_ignored)(void *ud, ut_str tag);
    /* Every event of a message with option.chunk was delivered. */
    void (*on_ack)(void *ud, ut_str chunk);
    void *ud;
} ut_fwd_sink;

typedef struct ut_fwd_decoder ut_fwd_decoder;

ut_status ut_fwd_decoder_new(ut_fwd_decoder **out);
void ut_fwd_decoder_free(ut_fwd_decoder *d);

/* Feeds `len` more bytes of the stream. Complete messages are decoded and
 * reported through `sink` before it returns; a partial message is kept for
 * the next call. Returns UT_OK, UT_ENOMEM, or UT_EPROTO for a malformed
 * stream or a limit breach — then ut_fwd_decoder_error() says what and at
 * which stream offset, and the decoder must not be fed again. Events that
 * were complete before the error have been delivered. */
ut_status ut_fwd_decoder_feed(ut_fwd_decoder *d, const void *data, size_t len,
                              const ut_fwd_sink *sink);

/* One tag for every kind, as an alternative to uitrail.<kind>: the kind is
 * then the record's "kind" field ("click", ...). For clients that find
 * one tag easier to route, and for per-tag buffering clients, which then
 * keep a tab's events in one buffer and in order. */
#define UT_ONE_TAG "uitrail"

/* Ground truth for `uitrail tune` (issue 6): the entry
 *     ["uitrail.label", time, {"tab": T, "settled": true}]
 * says that the page of tab T truly settled at `time`. Labels travel in
 * labelled sessions and recordings; they are not events. */
#define UT_LABEL_TAG "uitrail.label"

/* Receives one settled label: its tab (cleaned like an event's tab) and
 * time. Pointers live for the call only. */
typedef void (*ut_fwd_label_fn)(void *ud, ut_str tab, int64_t time_us);

/* Makes `d` report labels to `fn` (NULL, the default: labels are counted
 * through on_ignored like any tag that is not an event). With a hook, a
 * label whose record is not a map, lacks "tab" or "settled", has them of
 * the wrong type, an empty or too long tab, or a bad time is rejected
 * through the sink's on_reject; a label whose "settled" is false goes to
 * on_ignored. Other record keys are ignored. */
void ut_fwd_decoder_set_label_fn(ut_fwd_decoder *d, ut_fwd_label_fn fn, void *ud);

/* Bytes held for an incomplete message (0 at a clean message boundary). */
size_t ut_fwd_decoder_pending(const ut_fwd_decoder *d);
/* The last protocol error ("array of 268435456 elements exceeds 4096 at
 * offset 17") or "" when none; and its stream offset. */
const char *ut_fwd_decoder_error(const ut_fwd_decoder *d);
uint64_t ut_fwd_decoder_error_offset(const ut_fwd_decoder *d);

/* Converts a JSON ingest body (one Forward message, or an array of them,
 * times in seconds) into the msgpack stream it stands for, appended to
 * `out`. On failure returns UT_EPROTO (or UT_ENOMEM / UT_ELIMIT) and writes
 * a one-line reason into `err`. */
ut_status ut_wire_json_to_msgpack(ut_str json, ut_buf *out, char *err, size_t errlen);

/* Appends the Message-mode entry [tag, EventTime, record] for `ev` to
 * `out`; `with_rt` adds the record field `rt` (protocol §5). */
ut_status ut_wire_pack_event(const ut_event *ev, bool with_rt, ut_buf *out);

/* Appends the Forward ack {"ack": chunk} (protocol §1, option.chunk) to
 * `out`, the chunk as a msgpack str in the shortest form for its length
 * (str32 beyond 65 535 bytes: a chunk may be UT_WIRE_STR_MAX_BYTES long).
 * On UT_ENOMEM nothing is appended and `out->oom` is set. */
ut_status ut_wire_pack_ack(ut_str chunk, ut_buf *out);

#endif
