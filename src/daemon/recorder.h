/* recorder.c: --record, the daemon's side of recorded sessions (protocol
 * §5): one recording file per recorded tab, frames cut by size, age, the
 * tab's end and acks, and acks held until their frame is written.
 *
 * Above log, config and metrics; it hears of events from notify.c and is
 * synced by ingest.c before an ack. It knows no connection. */
#ifndef UT_DAEMON_RECORDER_H
#define UT_DAEMON_RECORDER_H

#include <uv.h>

#include "uitrail/event.h"
#include "uitrail/list.h"
#include "uitrail/record.h"

typedef struct ut__daemon ut__daemon;
typedef struct ut__rec_file ut__rec_file;

/* --record-journal (recorder_journal.c): the open segment of the one
 * journal, and its writer. */
typedef struct ut__journal {
    int fd;               /* -1: no segment open */
    ut_rec_writer *writer;
    uint64_t bytes;       /* of the open segment: its whole frames */
    int64_t opened_us;    /* wall clock when it was opened */
    bool open_failing;    /* the last try to open one failed (logged once) */
    ut_buf name;          /* of the open segment */
    uint64_t pending_from; /* ack mark of the first event not yet written; UINT64_MAX: none */
} ut__journal;

typedef enum ut__journal_result {
    UT__JOURNAL_OK,
    /* Not on disk now (no segment could be opened, or out of memory); the
     * journal goes on. */
    UT__JOURNAL_LOST,
    /* A write failed: the segment is closed and every event not yet on
     * disk is lost. */
    UT__JOURNAL_FAILED,
} ut__journal_result;

/* One writer and one open file per recorded tab, found by a hash of the
 * tab id. Open files are also on a list, most recently written first, so
 * that the least recently written is closed beyond --record-max-files;
 * files with events since the last ack are on a second list, flushed
 * before the ack is sent. One timer, armed at the earliest frame deadline,
 * cuts frames by age. */
typedef struct ut__recorder {
    bool enabled;
    int dir_fd;
    ut_rec_writer_opts opts;
    ut__rec_file **buckets;   /* every recorded tab until it is gone: with an open file, a
                               * file closed to make room, or a stopped recording */
    size_t n_buckets;         /* a power of two */
    size_t n_entries;
    ut_list open;             /* open files, most recently written first */
    size_t n_open;
    ut_list touched;          /* open files written since the last ack */
    uv_timer_t timer;
    int64_t timer_due;        /* wall-clock µs the timer is armed for; INT64_MAX: idle */
    ut_buf name;              /* a file name being built */
    /* Ack marks (acks.c): `mark` counts the acks queued; `lost_from` is the
     * lowest mark an event not written is covered by (UINT64_MAX: none). */
    uint64_t mark;
    uint64_t lost_from;
    ut__journal journal;      /* --record-journal */
} ut__recorder;

/* Starts recording when --record is set: creates the directory (0700) if
 * it is missing and opens it. UT_EIO with the reason in `err` otherwise.
 * Needs the loop (the flush timer). */
ut_status ut__recorder_start(ut__daemon *d, char *err, size_t errlen);
/* Records one event, as accepted after redaction (the engine's
 * on_accepted), in the order it arrived. Never fails the event: a
 * recording error stops recording for that tab, is logged and counted. */
void ut__recorder_event(ut__daemon *d, const ut_event *ev);
/* The tab was closed or evicted: its file is flushed and closed. */
void ut__recorder_tab_gone(ut__daemon *d, ut_str tab);
/* Writes the pending frame of every file that took events since the last
 * call: called before acks go out, so that an ack means written. */
void ut__recorder_sync(ut__daemon *d);
/* An ack is queued: its mark. An ack whose mark is at or above what
 * ut__recorder_take_lost returns (after the sync) covers an event that is
 * not on disk and must not be sent; take_lost also forgets the loss. */
uint64_t ut__recorder_mark(ut__daemon *d);
uint64_t ut__recorder_take_lost(ut__daemon *d);
/* A duplicate of an event of `tab`: when the tab's recording lost events,
 * the copy is not on disk either (it counts as lost). */
void ut__recorder_duplicate(ut__daemon *d, ut_str tab);
/* Flushes and closes every file (shutdown). */
void ut__recorder_stop(ut__daemon *d);
/* Recording files open now (a gauge of /metrics). */
size_t ut__recorder_open_files(const ut__daemon *d);

/* The journal's side (recorder_journal.c), called by recorder.c alone. */
/* Queues `ev` in the journal (opening a segment when none is open) and
 * writes the frame it completes. `*append_st`: the writer's answer
 * (UT_ELIMIT, UT_EINVAL: the event cannot be recorded, nothing lost). */
ut__journal_result ut__journal_append(ut__daemon *d, const ut_event *ev, ut_status *append_st);
/* Writes what is queued (before an ack); closes a full or old segment. */
ut__journal_result ut__journal_flush(ut__daemon *d);
/* Writes the frame due at `now_us` (the timer); closes a full or old segment. */
ut__journal_result ut__journal_flush_due(ut__daemon *d, int64_t now_us);
int64_t ut__journal_deadline(const ut__daemon *d);
/* Removes closed segments beyond --record-max-bytes and --record-max-age. */
void ut__journal_retain(ut__daemon *d);
/* Writes what is queued and closes the segment (shutdown). */
void ut__journal_stop(ut__daemon *d);

#endif
