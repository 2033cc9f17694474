/* --record DIR --record-journal: one journal per daemon (protocol §5.1).
 *
 * Every tab's events go into one ut_rec_writer in journal mode, so a
 * group commit over a thousand tabs compresses and writes a few large
 * frames instead of a thousand small ones. The journal is a series of
 * segment files, DIR/journal-<time>-<n>.uitrail (0600, O_EXCL, O_NOFOLLOW,
 * never appended to once closed), each with its own meta entry; a segment
 * is closed when it reaches --record-segment-bytes or is
 * --record-segment-s old, and closed segments are removed, oldest first,
 * beyond --record-max-bytes and --record-max-age.
 *
 * This file does the files; recorder.c keeps the tabs and the acks. A
 * failed write closes the segment, cut back to its last whole frame (or,
 * if even that fails, with a torn tail the readers drop), and the events
 * not yet on disk are lost: recorder.c stops the tabs they belong to and
 * withholds their acks. The next event opens a new segment. */
#include "daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOURNAL_PREFIX "journal-"

/* ---- segments ---- */

/* Appends the name of a segment opened at wall-clock `now_us`, try `n`:
 * journal-20240131T143205.123456Z-000.uitrail. Names sort by time. */
static ut_status segment_name(ut_buf *out, int64_t now_us, unsigned n)
{
    ut_buf_reset(out);
    time_t t = (time_t)(now_us / 1000000);
    struct tm tm;
    if (now_us < 0 || !gmtime_r(&t, &tm))
        return UT_EINVAL;
    ut_buf_printf(out, JOURNAL_PREFIX "%04d%02d%02dT%02d%02d%02d.%06dZ-%03u" UT_REC_FILE_SUFFIX,
                  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  (int)(now_us % 1000000), n);
    ut_buf_append(out, "", 1); /* the NUL openat wants */
    if (out->oom)
        return UT_ENOMEM;
    out->len--;
    return UT_OK;
}

/* Creates a new segment file; -1 with errno on failure. */
static int segment_create(ut__daemon *d, int64_t now_us)
{
    ut__journal *j = &d->rec.journal;
    for (unsigned n = 0; n <= UT_REC_NAME_SUFFIX_MAX; n++) {
        if (segment_name(&j->name, now_us, n) != UT_OK) {
            errno = ENOMEM;
            return -1;
        }
        int fd = openat(d->rec.dir_fd, j->name.data,
                        O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Opens a segment and its writer. False (logged once until one opens) when
 * it cannot: the event at hand is not recorded, the next one tries again. */
static bool segment_open(ut__daemon *d, int64_t first_event_us)
{
    ut__recorder *r = &d->rec;
    ut__journal *j = &r->journal;
    int64_t now = ut__clock_wall_us();
    int fd = segment_create(d, now);
    if (fd < 0) {
        d->m.record_errors++;
        if (!j->open_failing)
            ut__log(UT__LOG_ERROR, "cannot create a journal segment in %s: %s; events are not recorded (nor "
                    "acked) until one can be created", d->settings.record_dir, strerror(errno));
        j->open_failing = true;
        return false;
    }
    ut_rec_meta meta = {
        .time_us = first_event_us,
        .daemon = UT_STR_LIT(UT_VERSION),
        .version = UT_REC_VERSION,
        .journal = true,
        .has_config = true,
        .config = *ut_engine_config(d->engine),
    };
    ut_rec_writer_opts opts = r->opts;
    opts.journal = true;
    char err[256];
    if (ut_rec_writer_new(&opts, &meta, &j->writer, err, sizeof err) != UT_OK) {
        close(fd);
        unlinkat(r->dir_fd, j->name.data, 0);
        d->m.record_errors++;
        ut__log(UT__LOG_ERROR, "cannot start a journal segment: %s; this event is not recorded", err[0] ? err
                : "out of memory");
        return false;
    }
    if (j->open_failing)
        ut__log(UT__LOG_INFO, "recording again, to %s/%s (events before it were not recorded)",
                d->settings.record_dir, j->name.data);
    j->open_failing = false;
    if (d->settings.fsync == UT__FSYNC_FRAME && fsync(r->dir_fd) != 0)
        ut__log(UT__LOG_WARN, "fsync of %s failed: %s; the new segment %s may not survive a power loss",
                d->settings.record_dir, strerror(errno), j->name.data);
    j->fd = fd;
    j->bytes = 0;
    j->opened_us = now;
    d->m.record_files++;
    ut__log(UT__LOG_DEBUG, "journal segment %s/%s opened", d->settings.record_dir, j->name.data);
    return true;
}

/* Closes the open segment; what its writer still holds is dropped (the
 * caller flushed it, or it is lost). */
static void segment_close(ut__daemon *d)
{
    ut__journal *j = &d->rec.journal;
    if (j->fd < 0)
        return;
    if (close(j->fd) != 0)
        ut__log(UT__LOG_WARN, "closing journal segment %s failed: %s", j->name.data, strerror(errno));
    j->fd = -1;
    ut_rec_writer_free(j->writer);
    j->writer = NULL;
}

/* A write of the open segment failed: cut it back to its last whole frame
 * and close it. */
static void segment_fail(ut__daemon *d, const char *what, int err)
{
    ut__journal *j = &d->rec.journal;
    d->m.record_errors++;
    bool cut = ftruncate(j->fd, (off_t)j->bytes) == 0;
    ut__log(UT__LOG_ERROR,
            "journal segment %s/%s: %s: %s; the events not yet on disk are lost, their tabs stop recording "
            "until closed or evicted (check the space of %s); the segment is closed%s",
            d->settings.record_dir, j->name.data, what, strerror(err), d->settings.record_dir,
            cut ? "" : " with a torn tail");
    segment_close(d);
}

/* Writes one frame (its index and data) with a single write(2). */
static bool segment_write(ut__daemon *d, ut_str frame)
{
    ut__journal *j = &d->rec.journal;
    if (frame.len == 0)
        return true;
    ssize_t n;
    do
        n = write(j->fd, frame.ptr, frame.len);
    while (n < 0 && errno == EINTR);
    if (n < 0 || (size_t)n != frame.len) {
        segment_fail(d, n < 0 ? "write failed" : "short write (disk full?)", n < 0 ? errno : ENOSPC);
        return false;
    }
    if (d->settings.fsync == UT__FSYNC_FRAME && fdatasync(j->fd) != 0) {
        segment_fail(d, "fdatasync failed", errno);
        return false;
    }
    j->bytes += frame.len;
    d->m.record_frames++;
    d->m.record_bytes += frame.len;
    return true;
}

/* The answer of a writer call that may have finished a frame. Out of
 * memory (the frame stays queued, or the event was not packed) leaves
 * events off the disk for now: LOST, for the acks. */
static ut__journal_result after_writer(ut__daemon *d, ut_status st, ut_str frame)
{
    if (frame.len > 0 && !segment_write(d, frame))
        return UT__JOURNAL_FAILED;
    if (st == UT_OK || st == UT_ELIMIT || st == UT_EINVAL)
        return UT__JOURNAL_OK;
    d->m.record_errors++;
    ut__log(UT__LOG_ERROR, "journal: %s; what is queued is retried at the next cut",
            st == UT_ENOMEM ? "out of memory" : ut_status_str(st));
    return UT__JOURNAL_LOST;
}

/* ---- retention ---- */

typedef struct seg_info {
    char name[96];
    uint64_t bytes;
    int64_t mtime_s;
} seg_info;

static int seg_cmp(const void *a, const void *b)
{
    return strcmp(((const seg_info *)a)->name, ((const seg_info *)b)->name);
}

/* Lists the closed segments of DIR, oldest first, into `*out` (ut_malloc'ed). */
static size_t segments_list(ut__daemon *d, seg_info **out, uint64_t *total)
{
    ut__journal *j = &d->rec.journal;
    *out = NULL;
    *total = 0;
    int fd = dup(d->rec.dir_fd);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    rewinddir(dir);
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, JOURNAL_PREFIX, strlen(JOURNAL_PREFIX)) != 0 || len >= sizeof (*out)->name)
            continue;
        struct stat st;
        if (fstatat(d->rec.dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        *total += (uint64_t)st.st_size;
        if (j->fd >= 0 && strcmp(e->d_name, j->name.data) == 0)
            continue; /* the open segment counts, but stays */
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            seg_info *p = ut_realloc(*out, ncap * sizeof *p);
            if (!p)
                break;
            *out = p;
            cap = ncap;
        }
        memcpy((*out)[n].name, e->d_name, len + 1);
        (*out)[n].bytes = (uint64_t)st.st_size;
        (*out)[n].mtime_s = (int64_t)st.st_mtime;
        n++;
    }
    closedir(dir);
    if (n > 1)
        qsort(*out, n, sizeof **out, seg_cmp);
    return n;
}

void ut__journal_retain(ut__daemon *d)
{
    uint64_t max_bytes = d->settings.record_max_bytes;
    uint32_t max_age = d->settings.record_max_age_s;
    if (max_bytes == 0 && max_age == 0)
        return;
    seg_info *segs;
    uint64_t total;
    size_t n = segments_list(d, &segs, &total);
    int64_t now_s = ut__clock_wall_us() / 1000000;
    for (size_t i = 0; i < n; i++) {
        bool too_big = max_bytes && total > max_bytes;
        bool too_old = max_age && now_s - segs[i].mtime_s > (int64_t)max_age;
        if (!too_big && !too_old)
            continue;
        if (unlinkat(d->rec.dir_fd, segs[i].name, 0) != 0) {
            ut__log(UT__LOG_WARN, "removing journal segment %s/%s failed: %s", d->settings.record_dir,
                    segs[i].name, strerror(errno));
            continue;
        }
        total -= segs[i].bytes;
        ut__log(UT__LOG_INFO, "journal segment %s/%s removed (%s)", d->settings.record_dir, segs[i].name,
                too_big ? "over --record-max-bytes" : "older than --record-max-age");
    }
    ut_free(segs);
}

/* ---- the recorder's calls ---- */

ut__journal_result ut__journal_append(ut__daemon *d, const ut_event *ev, ut_status *append_st)
{
    ut__journal *j = &d->rec.journal;
    *append_st = UT_OK;
    if (j->fd < 0 && !segment_open(d, ev->time_us))
        return UT__JOURNAL_LOST;
    ut_str frame = UT_STR_NULL;
    *append_st = ut_rec_writer_append(j->writer, ev, &frame);
    return after_writer(d, *append_st, frame);
}

/* Closes the segment when it is full or old, once what it holds is
 * written. */
static ut__journal_result maybe_rotate(ut__daemon *d)
{
    ut__journal *j = &d->rec.journal;
    if (j->fd < 0)
        return UT__JOURNAL_OK;
    int64_t age_us = ut__clock_wall_us() - j->opened_us;
    if (j->bytes < d->settings.record_segment_bytes && age_us < (int64_t)d->settings.record_segment_s * 1000000)
        return UT__JOURNAL_OK;
    ut_str frame = UT_STR_NULL;
    ut__journal_result res = after_writer(d, ut_rec_writer_flush(j->writer, &frame), frame);
    if (res != UT__JOURNAL_OK)
        return res;
    segment_close(d);
    ut__journal_retain(d);
    return UT__JOURNAL_OK;
}

ut__journal_result ut__journal_flush(ut__daemon *d)
{
    ut__journal *j = &d->rec.journal;
    if (j->fd < 0)
        return UT__JOURNAL_OK;
    ut_str frame = UT_STR_NULL;
    ut__journal_result res = after_writer(d, ut_rec_writer_flush(j->writer, &frame), frame);
    return res == UT__JOURNAL_OK ? maybe_rotate(d) : res;
}

ut__journal_result ut__journal_flush_due(ut__daemon *d, int64_t now_us)
{
    ut__journal *j = &d->rec.journal;
    if (j->fd < 0)
        return UT__JOURNAL_OK;
    ut_str frame = UT_STR_NULL;
    ut__journal_result res = after_writer(d, ut_rec_writer_flush_due(j->writer, now_us, &frame), frame);
    return res == UT__JOURNAL_OK ? maybe_rotate(d) : res;
}

int64_t ut__journal_deadline(const ut__daemon *d)
{
    const ut__journal *j = &d->rec.journal;
    return j->writer ? ut_rec_writer_deadline(j->writer) : INT64_MAX;
}

void ut__journal_stop(ut__daemon *d)
{
    ut__journal *j = &d->rec.journal;
    if (j->fd >= 0) {
        ut_str frame = UT_STR_NULL;
        after_writer(d, ut_rec_writer_flush(j->writer, &frame), frame);
    }
    segment_close(d);
    ut_buf_free(&j->name);
}
