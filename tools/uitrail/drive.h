/* uitrail (the command line): drives an engine from an input, the part
 * that `uitrail replay` and `uitrail tune` share.
 *
 * An input is a Forward stream in one of three forms, told apart by its
 * first bytes: a recording (zstd frames, protocol §5), JSON (one Forward
 * message or an array of them, as in fixtures) or a raw msgpack stream.
 * Each decoded event is applied at its receive time (rt) when it has one,
 * else at its sender time, after the engine clock has been advanced to it,
 * exactly as the daemon does live. */
#ifndef UITRAIL_DRIVE_H
#define UITRAIL_DRIVE_H

#include <stdio.h>

#include "uitrail/engine.h"
#include "uitrail/record.h"
#include "uitrail/wire.h"

/* After the last event the engine clock moves on by this much, so that
 * what was pending at the end of the stream (a stable mark after the
 * quiet time, a dead click) settles the way it would have live. */
#define UT_CLI_SETTLE_US (60 * INT64_C(1000000))

typedef enum ut_cli_input_kind {
    UT_CLI_INPUT_MSGPACK,
    UT_CLI_INPUT_JSON,
    UT_CLI_INPUT_RECORDING,
} ut_cli_input_kind;

/* Tells the form of an input from its first `len` bytes (at least the
 * first four when the input has them). */
ut_cli_input_kind ut_cli_input_kind_of(const void *data, size_t len);

/* One engine driven by one input. The caller fills the first group of
 * fields, calls ut_cli_drive_begin, feeds, and ends with ut_cli_drive_end;
 * the counters say what happened. */
typedef struct ut_cli_drive {
    const char *command; /* the command, for messages: "replay" */
    const char *path;    /* the input, for messages */
    ut_engine *engine;   /* borrowed */
    bool quiet;          /* count rejected records and damage, print nothing */
    /* Optional hooks, all called with `ud`. before_event sees each decoded
     * event before the clock moves to it, after_event once it is applied
     * (whatever the engine answered); an error from either stops the
     * drive with that error. on_label receives uitrail.label entries. */
    ut_status (*before_event)(void *ud, const ut_event *ev);
    ut_status (*after_event)(void *ud, const ut_event *ev);
    ut_fwd_label_fn on_label;
    void *ud;
    /* With has_until, events whose engine-clock time is past until_us
     * (`uitrail replay --at`) are decoded but not applied, and no hook
     * sees them. */
    bool has_until;
    int64_t until_us;
    /* When set (`replay --tab` of a recording), events of other tabs are
     * decoded but not applied, and no hook sees them: a journal replays
     * one tab as its own recording would. */
    ut_str only_tab;

    /* Filled while driving. */
    int64_t last_clock_us; /* the latest engine-clock time of an event */
    uint64_t events, rejected, ignored, duplicates, not_applied, damage;
    uint64_t past_until; /* events left out by has_until */
    ut_status fatal;          /* a hook or engine failure that stopped the drive */
    ut_fwd_decoder *decoder;  /* NULL before begin and after end */
} ut_cli_drive;

/* Creates the decoder. UT_ENOMEM. */
ut_status ut_cli_drive_begin(ut_cli_drive *d);
void ut_cli_drive_end(ut_cli_drive *d);

/* Feeds `len` bytes of a msgpack stream. `from_json` only changes the
 * wording of an error. Returns UT_OK, UT_ENOMEM, a hook's error, or
 * UT_EPROTO for a malformed stream (reported on stderr, even when quiet:
 * the drive stops there). */
ut_status ut_cli_drive_feed(ut_cli_drive *d, const void *data, size_t len, bool from_json);

/* Drives the whole recording held in `data` with `reader` (reused across
 * recordings). Damage is reported on stderr as a warning unless quiet,
 * and decoding starts afresh after it, as ut_rec_read does. */
ut_status ut_cli_drive_recording(ut_cli_drive *d, ut_rec_reader *reader, const void *data, size_t len);

/* Reads `in` to its end and drives it: a msgpack stream is fed as it is
 * read; JSON (up to UT_REPLAY_JSON_MAX_BYTES) and a recording (up to
 * UT_CLI_INPUT_MAX_BYTES) are read whole first. Read errors and limits are
 * reported on stderr (UT_EIO, UT_ELIMIT). */
ut_status ut_cli_drive_file(ut_cli_drive *d, FILE *in);

/* Moves the engine clock UT_CLI_SETTLE_US past the last event. */
void ut_cli_drive_settle(ut_cli_drive *d);

/* An input read whole, for driving many engines from it: the msgpack
 * stream (JSON converted) or the recording's bytes. */
typedef struct ut_cli_input {
    ut_cli_input_kind kind;
    ut_buf bytes;
} ut_cli_input;

/* Says on stderr that `path` is empty: nothing to replay, which a script
 * must not take for a session without events (the caller exits 1). */
void ut_cli_report_empty(const char *command, const char *path);

/* Reads the file at `path` into `in` (converting JSON to msgpack). Errors
 * are reported on stderr as "uitrail COMMAND: PATH: ...": UT_ENOENT (cannot
 * open), UT_EIO, UT_ELIMIT (over UT_CLI_INPUT_MAX_BYTES, or JSON over
 * UT_REPLAY_JSON_MAX_BYTES), UT_EPROTO (bad JSON), UT_ENOMEM. */
ut_status ut_cli_input_load(const char *command, const char *path, ut_cli_input *in);
void ut_cli_input_free(ut_cli_input *in);

/* Drives a loaded input; `reader` is needed for a recording only. */
ut_status ut_cli_drive_input(ut_cli_drive *d, const ut_cli_input *in, ut_rec_reader *reader);

#endif
