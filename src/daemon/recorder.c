/* --record DIR: the daemon's side of recorded sessions (protocol §5).
 *
 * Each recorded tab has a ut_rec_writer (src/record: pure, it only builds
 * frames) and a file DIR/<first-event-time>-<tab>.uitrail, created with
 * O_EXCL so that no recording is ever appended to or overwritten. Events
 * arrive from the engine's on_accepted, after redaction, in the order they
 * arrived (before any wait in a reorder window). Every finished
 * frame is written with one write(2), so a crash tears at most the frame
 * being written and the reader drops just that tail.
 *
 * A frame is cut when its content reaches --record-frame-bytes, when its
 * first event is --record-frame-ms old (one timer over all writers, armed
 * at the earliest deadline), when the tab is closed or evicted, at
 * shutdown, and before an ack: an ack for a `chunk` is sent only once the
 * frames holding the events before it are written.
 *
 * An error on a tab's file (open, write, fsync; disk full) stops recording
 * for that tab alone, with one log line and uitrail_record_errors_total;
 * ingest and traces go on. Beyond --record-max-files open files, the least
 * recently written one is flushed and closed; its tab's next event starts
 * a new file, so a tab may have several files (each with its own meta
 * entry), read one after the other in name order.
 *
 * The writes are blocking writes to a local file, made on the loop thread:
 * a frame is small (64 KiB of content at most, compressed) and written
 * once per second per busy tab. --fsync frame adds an fdatasync per frame
 * on the same thread; it trades ingest latency for durability. */
#include "daemon.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* Buckets of the tab table when recording starts; it doubles as it fills. */
#define REC_BUCKETS_INITIAL 64

struct ut__rec_file {
    ut__rec_file *hash_next;
    ut_list open_link;    /* on the open list exactly while `writer` is set */
    ut_list touched_link; /* on the touched list: written since the last ack */
    uint64_t touched_at;  /* the ack mark when it joined the touched list */
    bool stopped;         /* an error stopped this tab's recording */
    bool gap;             /* an event of this tab was not recorded */
    bool open_failing;    /* the last try to open a file failed (logged once) */
    ut_rec_writer *writer; /* NULL when no file is open */
    int fd;               /* -1 when no file is open */
    uint64_t hash;
    size_t tab_len;
    char tab[];           /* not NUL-terminated */
};

/* ---- the tab table ---- */

static uint64_t tab_hash(ut_str tab)
{
    return XXH3_64bits(tab.ptr, tab.len);
}

static ut__rec_file **bucket_of(ut__recorder *r, uint64_t hash)
{
    return &r->buckets[hash & (r->n_buckets - 1)];
}

static ut__rec_file *table_find(ut__recorder *r, ut_str tab, uint64_t hash)
{
    for (ut__rec_file *f = *bucket_of(r, hash); f; f = f->hash_next) {
        if (f->hash == hash && ut_str_eq(ut_str_from(f->tab, f->tab_len), tab))
            return f;
    }
    return NULL;
}

/* Doubles the buckets when the table is full. A failed allocation keeps
 * the old buckets: longer chains, nothing lost. */
static void table_maybe_grow(ut__recorder *r)
{
    if (r->n_entries < r->n_buckets)
        return;
    size_t n = r->n_buckets * 2;
    ut__rec_file **buckets = ut_calloc(n, sizeof *buckets);
    if (!buckets)
        return;
    for (size_t i = 0; i < r->n_buckets; i++) {
        for (ut__rec_file *f = r->buckets[i], *next; f; f = next) {
            next = f->hash_next;
            ut__rec_file **b = &buckets[f->hash & (n - 1)];
            f->hash_next = *b;
            *b = f;
        }
    }
    ut_free(r->buckets);
    r->buckets = buckets;
    r->n_buckets = n;
}

static void table_remove(ut__recorder *r, ut__rec_file *f)
{
    for (ut__rec_file **p = bucket_of(r, f->hash); *p; p = &(*p)->hash_next) {
        if (*p == f) {
            *p = f->hash_next;
            r->n_entries--;
            return;
        }
    }
}

/* ---- the open-file and touched lists ---- */

static ut__rec_file *open_entry(ut_list *l)
{
    return l ? ut_list_entry(l, ut__rec_file, open_link) : NULL;
}

/* The file at the front of the open list is the one written last. */
static void mark_written(ut__recorder *r, ut__rec_file *f)
{
    assert(f->writer && ut_list_linked(&f->open_link));
    ut_list_move_front(&r->open, &f->open_link);
    if (!ut_list_linked(&f->touched_link)) {
        f->touched_at = r->mark;
        ut_list_push_front(&r->touched, &f->touched_link);
    }
}

/* An ack queued from `from` on (an ack mark) must not be sent. */
static void withhold_from(ut__recorder *r, uint64_t from)
{
    if (from < r->lost_from)
        r->lost_from = from;
}

/* The mark from which the acks may cover events of `f`'s tab not yet on
 * disk: the file's place on the touched list (every event appended since
 * the last sync came after it), or from now when it has none. */
static uint64_t pending_from(const ut__recorder *r, const ut__rec_file *f)
{
    return f && ut_list_linked(&f->touched_link) ? f->touched_at : r->mark;
}

/* Events of `f`'s tab are not on disk and never will be: every ack queued
 * since its pending frame began (or from now, when it has none) must not
 * be sent, nor the ack of a later copy of them (`gap`). */
static void lost(ut__recorder *r, ut__rec_file *f)
{
    withhold_from(r, pending_from(r, f));
    if (f)
        f->gap = true;
}

/* Whether `f` has events not yet written (a frame not cut, or one whose
 * compression failed and stays queued). */
static bool has_pending(const ut__rec_file *f)
{
    return f->writer && ut_rec_writer_deadline(f->writer) != INT64_MAX;
}

/* ---- files ---- */

/* Closes the file of `f` without writing anything more, and frees its
 * writer. The entry stays in the table. */
static void file_release(ut__recorder *r, ut__rec_file *f)
{
    if (!f->writer)
        return;
    assert(ut_list_linked(&f->open_link) && r->n_open > 0);
    ut_list_remove(&f->touched_link);
    ut_list_remove(&f->open_link);
    r->n_open--;
    if (close(f->fd) != 0)
        ut__log(UT__LOG_WARN, "closing the recording of tab '%.*s' failed: %s", (int)f->tab_len, f->tab,
                strerror(errno));
    f->fd = -1;
    ut_rec_writer_free(f->writer);
    f->writer = NULL;
}

/* A recording error: says what failed, counts it, and stops recording
 * `f`'s tab for as long as the tab lives. */
static void file_fail(ut__daemon *d, ut__rec_file *f, const char *what, int err)
{
    d->m.record_errors++;
    ut__log(UT__LOG_ERROR,
            "recording of tab '%.*s' stopped: %s: %s; its events are still applied and served but not "
            "recorded until the tab is closed or evicted (check the space and permissions of %s)",
            (int)f->tab_len, f->tab, what, strerror(err), d->settings.record_dir);
    lost(&d->rec, f);
    file_release(&d->rec, f);
    f->stopped = true;
}

/* Writes one finished frame with a single write(2), then fdatasync when
 * --fsync frame. False (and the tab's recording stopped) on any failure,
 * a short write included: the reader drops a torn tail, so the file stays
 * readable up to the last whole frame. */
static bool file_write_frame(ut__daemon *d, ut__rec_file *f, ut_str frame)
{
    if (frame.len == 0)
        return true;
    ssize_t n;
    do
        n = write(f->fd, frame.ptr, frame.len);
    while (n < 0 && errno == EINTR);
    if (n < 0 || (size_t)n != frame.len) {
        if (n > 0)
            d->m.record_bytes += (uint64_t)n;
        file_fail(d, f, n < 0 ? "write failed" : "short write (disk full?)", n < 0 ? errno : ENOSPC);
        return false;
    }
    if (d->settings.fsync == UT__FSYNC_FRAME && fdatasync(f->fd) != 0) {
        file_fail(d, f, "fdatasync failed", errno);
        return false;
    }
    d->m.record_frames++;
    d->m.record_bytes += frame.len;
    return true;
}

/* Handles the answer of a writer call that may have finished a frame. */
static void file_after_writer(ut__daemon *d, ut__rec_file *f, ut_status st, ut_str frame)
{
    if (frame.len > 0 && !file_write_frame(d, f, frame))
        return;
    if (st == UT_ENOMEM) {
        /* The frame stays queued whole; the next cut retries it. */
        d->m.record_errors++;
        ut__log(UT__LOG_ERROR, "out of memory compressing a recording frame of tab '%.*s': it is retried "
                "at the next cut", (int)f->tab_len, f->tab);
    } else if (st != UT_OK) {
        d->m.record_errors++;
        ut__log(UT__LOG_ERROR, "compressing a recording frame of tab '%.*s' failed: %s", (int)f->tab_len,
                f->tab, ut_status_str(st));
    }
}

/* Writes the pending frame of `f`, if any. False when events of the
 * tab are not on disk after it: the write failed (the recording stopped,
 * the loss noted) or the frame stays queued (out of memory compressing
 * it). */
static bool file_flush(ut__daemon *d, ut__rec_file *f)
{
    if (!f->writer)
        return !f->stopped;
    ut_str frame = UT_STR_NULL;
    ut_status st = ut_rec_writer_flush(f->writer, &frame);
    file_after_writer(d, f, st, frame);
    return f->writer && !has_pending(f);
}

/* Flushes and closes `f`'s file to make room for another (the open-file
 * cap, out of file descriptors). The entry stays: the tab lives on, its
 * next event opens a new file, and what it lost (`gap`, `stopped`) is
 * still known when its events are sent again. A frame that could not be
 * written is lost with the writer. */
static void file_rotate(ut__daemon *d, ut__rec_file *f)
{
    if (!file_flush(d, f) && f->writer)
        lost(&d->rec, f);
    file_release(&d->rec, f);
}

/* Flushes and closes `f`'s file and drops its entry (the tab is gone, or
 * the daemon stops). */
static void file_close(ut__daemon *d, ut__rec_file *f)
{
    file_rotate(d, f);
    table_remove(&d->rec, f);
    ut_free(f);
}

/* Appends to r->name the name of a new file for `tab` whose first event
 * is at `time_us`: the plain name for try 0, else `.<try>` after the time
 * (which keeps the names sorted by time and the tab part intact). */
static ut_status file_name(ut__recorder *r, int64_t time_us, ut_str tab, unsigned try)
{
    ut_buf_reset(&r->name);
    ut_status st = ut_rec_file_name(time_us, tab, &r->name);
    if (st != UT_OK || try == 0)
        return st;
    char suffix[16];
    int n = snprintf(suffix, sizeof suffix, ".%u", try);
    if (ut_buf_reserve(&r->name, (size_t)n) != UT_OK)
        return UT_ENOMEM;
    /* The time part ends in 'Z' and has no '-': the first "Z-" ends it. */
    char *dash = strstr(r->name.data, "Z-");
    if (!dash)
        return UT_EINVAL;
    dash++;
    memmove(dash + n, dash, (size_t)(r->name.data + r->name.len + 1 - dash));
    memcpy(dash, suffix, (size_t)n);
    r->name.len += (size_t)n;
    return UT_OK;
}

/* Creates the file of a new recording of `f`'s tab, starting with `ev`,
 * and its writer. Errors are logged and stop the tab's recording. */
/* Creates a new file for `f`'s tab whose first event is at `time_us`,
 * under the first free name; -1 with errno (or errno 0 when it cannot be
 * named, logged) on failure. */
static int file_create(ut__daemon *d, ut__rec_file *f, int64_t time_us)
{
    ut__recorder *r = &d->rec;
    ut_str tab = ut_str_from(f->tab, f->tab_len);
    int fd = -1;
    for (unsigned try = 0; try <= UT_REC_NAME_SUFFIX_MAX; try++) {
        ut_status st = file_name(r, time_us, tab, try);
        if (st != UT_OK) {
            ut__log(UT__LOG_ERROR, "cannot name a recording for tab '%.*s': %s; this event is not recorded",
                    (int)f->tab_len, f->tab, ut_status_str(st));
            errno = 0;
            return -1;
        }
        fd = openat(r->dir_fd, r->name.data, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            break;
    }
    return fd;
}

/* Out of file descriptors (EMFILE, ENFILE) is not a fault of the tab: the
 * least recently written other file is closed to make room, and when
 * there is none the event is not recorded but the next one tries again. */
static int file_create_or_wait(ut__daemon *d, ut__rec_file *f, int64_t time_us)
{
    ut__recorder *r = &d->rec;
    int fd = file_create(d, f, time_us);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && !ut_list_empty(&r->open)) {
        file_rotate(d, open_entry(ut_list_last(&r->open)));
        fd = file_create(d, f, time_us);
    }
    if (fd >= 0 || (errno != EMFILE && errno != ENFILE && errno != 0))
        return fd;
    int err = errno;
    d->m.record_errors++;
    if (err != 0 && !f->open_failing)
        ut__log(UT__LOG_ERROR, "cannot create a recording for tab '%.*s' in %s: %s; its events are not "
                "recorded (nor acked) until a file can be opened", (int)f->tab_len, f->tab,
                d->settings.record_dir, strerror(err));
    f->open_failing = true;
    errno = 0;
    return -1;
}

static void file_open(ut__daemon *d, ut__rec_file *f, const ut_event *ev)
{
    ut__recorder *r = &d->rec;
    ut_str tab = ut_str_from(f->tab, f->tab_len);
    int fd = file_create_or_wait(d, f, ev->time_us);
    if (fd < 0) {
        if (errno == 0)
            return; /* counted and logged; the next event tries again */
        int open_errno = errno;
        char what[512];
        snprintf(what, sizeof what, "cannot create %s/%s", d->settings.record_dir, r->name.data);
        file_fail(d, f, what, open_errno);
        return;
    }
    if (f->open_failing) {
        f->open_failing = false;
        ut__log(UT__LOG_INFO, "recording tab '%.*s' again, to %s/%s (events before it were not recorded)",
                (int)f->tab_len, f->tab, d->settings.record_dir, r->name.data);
    }
    if (d->settings.fsync == UT__FSYNC_FRAME && fsync(r->dir_fd) != 0)
        ut__log(UT__LOG_WARN, "fsync of %s failed: %s; the new file %s may not survive a power loss",
                d->settings.record_dir, strerror(errno), r->name.data);

    ut_rec_meta meta = {
        .time_us = ev->time_us,
        .daemon = UT_STR_LIT(UT_VERSION),
        .tab = tab,
        .version = UT_REC_VERSION,
        .has_config = true,
        .config = *ut_engine_config(d->engine),
    };
    char err[256];
    ut_status st = ut_rec_writer_new(&r->opts, &meta, &f->writer, err, sizeof err);
    if (st != UT_OK) {
        /* The options were checked at start, so this is memory. */
        close(fd);
        unlinkat(r->dir_fd, r->name.data, 0);
        d->m.record_errors++;
        ut__log(UT__LOG_ERROR, "cannot start the recording of tab '%.*s': %s; this event is not recorded",
                (int)f->tab_len, f->tab, st == UT_ENOMEM ? "out of memory" : err);
        return;
    }
    f->fd = fd;
    ut_list_push_front(&r->open, &f->open_link);
    r->n_open++;
    d->m.record_files++;
    ut__log(UT__LOG_DEBUG, "recording tab '%.*s' to %s/%s", (int)f->tab_len, f->tab, d->settings.record_dir,
            r->name.data);
}

/* ---- the journal (--record-journal; the files in recorder_journal.c) ---- */

/* `f`'s tab has an event the journal has not written yet. */
static void journal_touch(ut__recorder *r, ut__rec_file *f)
{
    if (!ut_list_linked(&f->touched_link)) {
        f->touched_at = r->mark;
        ut_list_push_front(&r->touched, &f->touched_link);
    }
    if (r->journal.pending_from == UINT64_MAX)
        r->journal.pending_from = r->mark;
}

/* A journal write failed: every event not yet on disk is lost. Their tabs
 * (those written since the last sync, some perhaps whole on disk: the
 * recorder does not know which) stop recording, as a tab whose own file
 * failed does, and the acks that cover them are withheld. */
static void journal_failed(ut__recorder *r)
{
    withhold_from(r, r->journal.pending_from);
    r->journal.pending_from = UINT64_MAX;
    ut_list *l, *following;
    ut_list_foreach_safe(l, following, &r->touched) {
        ut__rec_file *f = ut_list_entry(l, ut__rec_file, touched_link);
        f->stopped = true;
        f->gap = true;
        ut_list_remove(&f->touched_link);
    }
}

static void arm_timer(ut__daemon *d, int64_t due_us);

/* Counts an append's result, for a per-tab file and the journal alike. An
 * event the recording format cannot hold (too large, invalid) is logged and
 * counted, and true is returned: it was applied, only not recorded. */
static bool counted(ut__daemon *d, const ut__rec_file *f, const ut_event *ev, ut_status st)
{
    if (st == UT_OK)
        d->m.record_events++;
    if (st != UT_ELIMIT && st != UT_EINVAL)
        return false;
    d->m.record_errors++;
    ut__log(UT__LOG_WARN, "a %s event of tab '%.*s' cannot be recorded (%s); it was applied",
            ut_kind_name(ev->kind), (int)f->tab_len, f->tab, ut_status_str(st));
    return true;
}

static void journal_event(ut__daemon *d, ut__rec_file *f, const ut_event *ev)
{
    ut__recorder *r = &d->rec;
    journal_touch(r, f);
    ut_status st;
    ut__journal_result res = ut__journal_append(d, ev, &st);
    if (res == UT__JOURNAL_FAILED) {
        journal_failed(r);
        return;
    }
    counted(d, f, ev, st);
    if (res == UT__JOURNAL_LOST)
        lost(r, f);
    arm_timer(d, ut__journal_deadline(d));
}

/* Before an ack: the journal's queued events to disk. */
static void journal_sync(ut__daemon *d)
{
    ut__recorder *r = &d->rec;
    ut__journal_result res = ut__journal_flush(d);
    if (res == UT__JOURNAL_FAILED) {
        journal_failed(r);
    } else if (res == UT__JOURNAL_LOST) {
        withhold_from(r, r->journal.pending_from); /* still queued: retried at the next cut */
    } else {
        r->journal.pending_from = UINT64_MAX;
        while (!ut_list_empty(&r->touched))
            ut_list_remove(ut_list_last(&r->touched));
    }
}

/* ---- the flush timer ---- */

static void on_flush_timer(uv_timer_t *t)
{
    ut__daemon *d = t->data;
    ut__recorder *r = &d->rec;
    r->timer_due = INT64_MAX;
    int64_t now = ut__clock_wall_us();
    int64_t next = INT64_MAX;
    if (d->settings.record_journal) {
        if (ut__journal_flush_due(d, now) == UT__JOURNAL_FAILED)
            journal_failed(r);
        arm_timer(d, ut__journal_deadline(d));
        return;
    }
    ut_list *l, *following;
    ut_list_foreach_safe(l, following, &r->open) { /* a failed write unlinks f */
        ut__rec_file *f = open_entry(l);
        ut_str frame = UT_STR_NULL;
        ut_status st = ut_rec_writer_flush_due(f->writer, now, &frame);
        file_after_writer(d, f, st, frame);
        if (f->writer) {
            int64_t due = ut_rec_writer_deadline(f->writer);
            if (due < next)
                next = due;
        }
    }
    arm_timer(d, next);
}

/* Arms the timer for `due_us` when that is earlier than what it is armed
 * for. A deadline that passes (a frame cut by size or by an ack) costs at
 * most one timer run that finds nothing due. */
static void arm_timer(ut__daemon *d, int64_t due_us)
{
    ut__recorder *r = &d->rec;
    if (due_us == INT64_MAX || due_us >= r->timer_due || d->stopping)
        return;
    r->timer_due = due_us;
    int64_t delay_us = due_us - ut__clock_wall_us();
    uint64_t delay_ms = delay_us <= 0 ? 0 : (uint64_t)((delay_us + 999) / 1000);
    uv_timer_start(&r->timer, on_flush_timer, delay_ms, 0);
}

/* ---- the daemon's calls ---- */

/* Recordings hold what users did: the directory must be ours and not
 * writable by anyone else (who could remove, rename or replace them).
 * Checked on the open directory, so a swap after the check does not
 * matter. */
static bool record_dir_is_private(int fd, const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "--record %s: cannot stat the directory: %s", dir, strerror(errno));
        return false;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "--record %s: the directory belongs to uid %ld, not to this daemon's uid %ld",
                 dir, (long)st.st_uid, (long)geteuid());
        return false;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errlen, "--record %s: the directory is writable by %s (mode %04o): chmod go-w it",
                 dir, st.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st.st_mode & 07777));
        return false;
    }
    return true;
}

ut_status ut__recorder_start(ut__daemon *d, char *err, size_t errlen)
{
    ut__recorder *r = &d->rec;
    *r = (ut__recorder){.dir_fd = -1, .timer_due = INT64_MAX, .name = UT_BUF_INIT, .lost_from = UINT64_MAX,
                        .journal = {.fd = -1, .name = UT_BUF_INIT, .pending_from = UINT64_MAX}};
    ut_list_init(&r->open);
    ut_list_init(&r->touched);
    const char *dir = d->settings.record_dir;
    if (!dir)
        return UT_OK;
    ut_rec_writer_opts_defaults(&r->opts);
    r->opts.frame_bytes = d->settings.record_frame_bytes;
    r->opts.frame_interval_ms = d->settings.record_frame_ms;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "--record %s: cannot create the directory: %s", dir, strerror(errno));
        return UT_EIO;
    }
    r->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (r->dir_fd < 0) {
        int open_errno = errno;
        struct stat st;
        bool link = lstat(dir, &st) == 0 && S_ISLNK(st.st_mode);
        snprintf(err, errlen, "--record %s: cannot open the directory: %s", dir,
                 link ? "a symbolic link is refused (name the directory itself)" : strerror(open_errno));
        return UT_EIO;
    }
    if (!record_dir_is_private(r->dir_fd, dir, err, errlen)) {
        close(r->dir_fd);
        r->dir_fd = -1;
        return UT_EIO;
    }
    /* One compressor serves every file: the loop is single-threaded, and a
     * zstd context per open file would cost some 600 KiB each. */
    if (d->settings.record_journal)
        r->opts.zstd_level = UT_REC_ZSTD_LEVEL_JOURNAL;
    r->buckets = ut_calloc(REC_BUCKETS_INITIAL, sizeof *r->buckets);
    if (!r->buckets || ut_rec_compressor_new(r->opts.zstd_level, &r->opts.compressor) != UT_OK) {
        ut_free(r->buckets);
        r->buckets = NULL;
        close(r->dir_fd);
        r->dir_fd = -1;
        snprintf(err, errlen, "out of memory starting the recorder");
        return UT_ENOMEM;
    }
    r->n_buckets = REC_BUCKETS_INITIAL;
    uv_timer_init(d->loop, &r->timer);
    r->timer.data = d;
    r->enabled = true;
    if (d->settings.record_journal) {
        ut__journal_retain(d);
        ut__log(UT__LOG_INFO, "recording to the journal in %s (frames of %u bytes or %u ms, segments of %llu "
                "bytes or %u s, fsync %s)", dir, r->opts.frame_bytes, r->opts.frame_interval_ms,
                (unsigned long long)d->settings.record_segment_bytes, d->settings.record_segment_s,
                d->settings.fsync == UT__FSYNC_FRAME ? "frame" : "never");
        return UT_OK;
    }
    ut__log(UT__LOG_INFO, "recording to %s (frames of %u bytes or %u ms, fsync %s, at most %u files open)",
            dir, r->opts.frame_bytes, r->opts.frame_interval_ms,
            d->settings.fsync == UT__FSYNC_FRAME ? "frame" : "never", d->settings.record_max_files);
    return UT_OK;
}

void ut__recorder_event(ut__daemon *d, const ut_event *ev)
{
    ut__recorder *r = &d->rec;
    if (!r->enabled || d->stopping)
        return;
    uint64_t hash = tab_hash(ev->tab);
    ut__rec_file *f = table_find(r, ev->tab, hash);
    if (f && f->stopped) {
        lost(r, f);
        return;
    }
    if (ev->kind == UT_KIND_CLOSE && !f)
        return; /* a close for a tab not recorded: no file just for that */
    if (!f) {
        f = ut_calloc(1, sizeof *f + ev->tab.len);
        if (!f) {
            d->m.record_errors++;
            ut__log(UT__LOG_ERROR, "out of memory: an event of tab '%.*s' is not recorded", (int)ev->tab.len,
                    ev->tab.ptr);
            lost(r, NULL);
            return;
        }
        f->fd = -1;
        ut_list_init(&f->open_link);
        ut_list_init(&f->touched_link);
        f->hash = hash;
        f->tab_len = ev->tab.len;
        memcpy(f->tab, ev->tab.ptr, ev->tab.len);
        table_maybe_grow(r);
        ut__rec_file **b = bucket_of(r, hash);
        f->hash_next = *b;
        *b = f;
        r->n_entries++;
    }
    if (d->settings.record_journal) {
        journal_event(d, f, ev);
        return;
    }
    if (!f->writer) {
        while (r->n_open >= d->settings.record_max_files && !ut_list_empty(&r->open))
            file_rotate(d, open_entry(ut_list_last(&r->open)));
        file_open(d, f, ev);
        if (!f->writer) {
            /* Not recorded: the entry stays (with its gap), and the next
             * event of the tab tries again unless it is stopped. */
            lost(r, f);
            return;
        }
    }
    ut_str frame = UT_STR_NULL;
    ut_status st = ut_rec_writer_append(f->writer, ev, &frame);
    if (counted(d, f, ev, st))
        st = UT_OK;
    /* Out of memory packing the event (it is not queued) or compressing
     * the frame it completed (it is): either way not on disk, and a copy
     * sent again must not be acked on the strength of this one. */
    if (st == UT_ENOMEM)
        lost(r, f);
    file_after_writer(d, f, st, frame);
    if (!f->writer)
        return;
    mark_written(r, f);
    arm_timer(d, ut_rec_writer_deadline(f->writer));
}

void ut__recorder_tab_gone(ut__daemon *d, ut_str tab)
{
    ut__recorder *r = &d->rec;
    if (!r->enabled)
        return;
    ut__rec_file *f = table_find(r, tab, tab_hash(tab));
    if (!f)
        return;
    /* A journal keeps the tab's queued events: the next sync writes them,
     * and a failure withholds from the journal's own mark. */
    if (d->settings.record_journal)
        ut_list_remove(&f->touched_link);
    file_close(d, f);
}

void ut__recorder_duplicate(ut__daemon *d, ut_str tab)
{
    ut__recorder *r = &d->rec;
    if (!r->enabled)
        return;
    ut__rec_file *f = table_find(r, tab, tab_hash(tab));
    if (f && (f->gap || f->stopped))
        lost(r, f);
}

uint64_t ut__recorder_mark(ut__daemon *d)
{
    return d->rec.mark++;
}

uint64_t ut__recorder_take_lost(ut__daemon *d)
{
    uint64_t from = d->rec.lost_from;
    d->rec.lost_from = UINT64_MAX;
    return from;
}

void ut__recorder_sync(ut__daemon *d)
{
    ut__recorder *r = &d->rec;
    if (d->settings.record_journal) {
        if (r->enabled)
            journal_sync(d);
        return;
    }
    ut_list *l, *following;
    /* A file leaves the touched list only once its frame is written: a
     * failed write then still knows which acks it must hold back (`lost`
     * reads touched_at), and a frame that stays queued keeps the file on
     * the list for the next sync. */
    ut_list_foreach_safe(l, following, &r->touched) {
        ut__rec_file *f = ut_list_entry(l, ut__rec_file, touched_link);
        if (file_flush(d, f))
            ut_list_remove(&f->touched_link);
        else if (f->writer)
            withhold_from(r, f->touched_at);
    }
}

void ut__recorder_stop(ut__daemon *d)
{
    ut__recorder *r = &d->rec;
    if (!r->enabled)
        return;
    r->enabled = false;
    uv_timer_stop(&r->timer);
    if (d->settings.record_journal) {
        journal_sync(d);
        ut__journal_stop(d);
    }
    for (size_t i = 0; i < r->n_buckets; i++) {
        while (r->buckets[i])
            file_close(d, r->buckets[i]);
    }
    ut_free(r->buckets);
    r->buckets = NULL;
    r->n_buckets = 0;
    ut_rec_compressor_free(r->opts.compressor);
    r->opts.compressor = NULL;
    ut_buf_free(&r->name);
    if (d->settings.fsync == UT__FSYNC_FRAME && fsync(r->dir_fd) != 0)
        ut__log(UT__LOG_WARN, "fsync of %s failed: %s", d->settings.record_dir, strerror(errno));
    close(r->dir_fd);
    r->dir_fd = -1;
}

size_t ut__recorder_open_files(const ut__daemon *d)
{
    return d->settings.record_journal ? (d->rec.journal.fd >= 0) : d->rec.n_open;
}
