/* `uitrail info FILE...`: what a recording holds, and what is damaged.
 *
 * For each file: the tab(s), the time span of the events (UTC, ISO 8601),
 * event counts by kind, frames, compressed and decompressed bytes and their
 * ratio, and every damage the reader found. A damaged file is still
 * summarised: damage is what this command is for. The exit status is 0
 * when every file could be read (damaged or not), 1 when one could not be
 * opened or is not a recording at all, 2 for a usage error. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "uitrail/record.h"
#include "uitrail/wire.h"

/* Distinct tabs listed by name; a file holding more is summarised with a
 * count of the others. */
#define INFO_TABS_LISTED 16

typedef struct info_tab {
    char *name;
    uint64_t events;
} info_tab;

typedef struct info_summary {
    bool has_meta;
    char daemon[64];
    char imported[768]; /* "rrweb (file); lacks: ...", or "" for a daemon's recording */
    uint32_t version;
    uint64_t events;
    uint64_t by_kind[UT_KIND__COUNT];
    int64_t first_us, last_us;
    info_tab tabs[INFO_TABS_LISTED];
    size_t ntabs;
    uint64_t other_tab_events;
    uint64_t frames, frame_bytes, content_bytes;
    uint64_t damaged, damaged_bytes;
    uint64_t rejected, ignored;
    ut_buf damage;       /* one line per damage */
    bool oom;
} info_summary;

static void info_summary_free(info_summary *s)
{
    for (size_t i = 0; i < s->ntabs; i++)
        ut_free(s->tabs[i].name);
    ut_buf_free(&s->damage);
}

static void count_tab(info_summary *s, ut_str tab)
{
    for (size_t i = 0; i < s->ntabs; i++) {
        if (ut_str_eq_cstr(tab, s->tabs[i].name)) {
            s->tabs[i].events++;
            return;
        }
    }
    if (s->ntabs == INFO_TABS_LISTED) {
        s->other_tab_events++;
        return;
    }
    char *name = ut_strndup(tab.ptr, tab.len);
    if (!name) {
        s->oom = true;
        return;
    }
    s->tabs[s->ntabs++] = (info_tab){name, 1};
}

static ut_status on_event(void *ud, const ut_event *ev)
{
    info_summary *s = ud;
    if (s->events == 0 || ev->time_us < s->first_us)
        s->first_us = ev->time_us;
    if (s->events == 0 || ev->time_us > s->last_us)
        s->last_us = ev->time_us;
    s->events++;
    if ((unsigned)ev->kind < UT_KIND__COUNT)
        s->by_kind[ev->kind]++;
    count_tab(s, ev->tab);
    return s->oom ? UT_ENOMEM : UT_OK;
}

static void on_reject(void *ud, ut_reject why, const char *detail)
{
    info_summary *s = ud;
    (void)why;
    (void)detail;
    s->rejected++;
}

static void on_ignored(void *ud, ut_str tag)
{
    info_summary *s = ud;
    (void)tag;
    s->ignored++;
}

/* Appends `v` to the fixed buffer `out` of `cap` bytes, control bytes as
 * '?': a file name or a gap is printed on a terminal. */
static void append_clean(char *out, size_t cap, ut_str v)
{
    size_t len = strlen(out);
    for (size_t i = 0; i < v.len && len + 1 < cap; i++) {
        unsigned char c = (unsigned char)v.ptr[i];
        out[len++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    out[len] = '\0';
}

static void on_meta(void *ud, const ut_rec_meta *meta)
{
    info_summary *s = ud;
    s->has_meta = true;
    s->version = meta->version;
    snprintf(s->daemon, sizeof s->daemon, "%.*s", (int)meta->daemon.len, meta->daemon.ptr);
    s->imported[0] = '\0';
    if (!meta->has_import)
        return;
    append_clean(s->imported, sizeof s->imported, meta->import.from);
    append_clean(s->imported, sizeof s->imported, ut_str_from(" (", 2));
    append_clean(s->imported, sizeof s->imported, meta->import.file);
    append_clean(s->imported, sizeof s->imported, ut_str_from(")", 1));
    for (size_t i = 0; i < meta->import.n_gaps; i++) {
        append_clean(s->imported, sizeof s->imported, i ? ut_str_from("; ", 2) : ut_str_from("; it lacks: ", 12));
        append_clean(s->imported, sizeof s->imported, meta->import.gaps[i]);
    }
}

static void on_frame(void *ud, const ut_rec_step *frame)
{
    info_summary *s = ud;
    s->frames++;
    s->frame_bytes += frame->bytes;
    s->content_bytes += frame->content.len;
}

static void on_damage(void *ud, const ut_rec_step *d)
{
    info_summary *s = ud;
    s->damaged++;
    s->damaged_bytes += d->bytes;
    if (ut_buf_printf(&s->damage, "    %s\n", d->detail) != UT_OK)
        s->oom = true;
}

/* Formats `t_us` as 2024-01-31T14:32:05.123Z. */
static void format_utc(int64_t t_us, char *out, size_t cap)
{
    int64_t sec = t_us / 1000000, ms = (t_us % 1000000) / 1000;
    if (ms < 0) {
        ms += 1000;
        sec -= 1;
    }
    time_t t = (time_t)sec;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, cap, "(time out of range)");
        return;
    }
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (int)ms);
}

static void print_summary(FILE *out, const char *path, off_t file_bytes, const info_summary *s)
{
    fprintf(out, "%s\n", path);
    if (s->has_meta)
        fprintf(out, "  recorded by: uitraild %s, format version %" PRIu32 "\n", s->daemon, s->version);
    if (s->has_meta && s->imported[0])
        fprintf(out, "  imported from: %s\n", s->imported);
    if (!s->has_meta)
        fprintf(out, "  recorded by: unknown (no uitrail.meta entry)\n");

    fprintf(out, "  tabs:");
    for (size_t i = 0; i < s->ntabs; i++)
        fprintf(out, "%s %s (%" PRIu64 " events)", i ? "," : "", s->tabs[i].name, s->tabs[i].events);
    if (s->other_tab_events)
        fprintf(out, ", and more tabs (%" PRIu64 " events)", s->other_tab_events);
    fprintf(out, "%s\n", s->ntabs ? "" : " none");

    if (s->events) {
        char first[80], last[80];
        format_utc(s->first_us, first, sizeof first);
        format_utc(s->last_us, last, sizeof last);
        fprintf(out, "  span: %s to %s (%.3f s)\n", first, last, (double)(s->last_us - s->first_us) / 1e6);
    }
    fprintf(out, "  events: %" PRIu64, s->events);
    const char *sep = " (";
    for (int k = 0; k < UT_KIND__COUNT; k++) {
        if (s->by_kind[k]) {
            fprintf(out, "%s%s %" PRIu64, sep, ut_kind_name((ut_kind)k), s->by_kind[k]);
            sep = ", ";
        }
    }
    fprintf(out, "%s\n", s->events ? ")" : "");
    if (s->rejected || s->ignored)
        fprintf(out, "  records not replayable: %" PRIu64 " rejected, %" PRIu64 " with other tags\n", s->rejected,
                s->ignored);

    fprintf(out, "  frames: %" PRIu64 " good\n", s->frames);
    fprintf(out, "  bytes: %jd in the file, %" PRIu64 " compressed in good frames, %" PRIu64 " decompressed",
            (intmax_t)file_bytes, s->frame_bytes, s->content_bytes);
    if (s->frame_bytes)
        fprintf(out, ", ratio %.2f", (double)s->content_bytes / (double)s->frame_bytes);
    fprintf(out, "\n");
    if (s->damaged)
        fprintf(out, "  damage: %" PRIu64 " place%s, %" PRIu64 " bytes skipped\n%s", s->damaged,
                s->damaged == 1 ? "" : "s", s->damaged_bytes, s->damage.data);
    else
        fprintf(out, "  damage: none\n");
}

/* Summarises one file. Returns UT_CLI_OK, or UT_CLI_FAILED when it cannot
 * be read. */
static int info_file(ut_rec_reader *reader, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "uitrail info: cannot open %s: %s\n", path, strerror(errno));
        return UT_CLI_FAILED;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "uitrail info: %s is not a regular file: give a .uitrail recording\n", path);
        close(fd);
        return UT_CLI_FAILED;
    }
    void *data = NULL;
    if (st.st_size > 0) {
        data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (data == MAP_FAILED) {
            fprintf(stderr, "uitrail info: cannot map %s: %s\n", path, strerror(errno));
            close(fd);
            return UT_CLI_FAILED;
        }
    }
    close(fd);

    info_summary s = {.damage = UT_BUF_INIT};
    ut_rec_handlers h = {on_meta, on_frame, on_damage, &s};
    ut_fwd_sink sink = {on_event, on_reject, on_ignored, NULL, &s};
    ut_status rst = ut_rec_read(reader, data, (size_t)st.st_size, &h, &sink);
    if (data)
        munmap(data, (size_t)st.st_size);

    int rc = UT_CLI_OK;
    if (rst != UT_OK || s.oom) {
        fprintf(stderr, "uitrail info: %s: %s while reading\n", path, ut_status_str(rst != UT_OK ? rst : UT_ENOMEM));
        rc = UT_CLI_FAILED;
    } else if (s.frames == 0 && st.st_size > 0) {
        print_summary(stdout, path, st.st_size, &s);
        fprintf(stderr, "uitrail info: %s holds no readable zstd frame: is it a .uitrail recording?\n", path);
        rc = UT_CLI_FAILED;
    } else {
        print_summary(stdout, path, st.st_size, &s);
    }
    info_summary_free(&s);
    return rc;
}

static int run_info(const ut_cli_command *self, int argc, char **argv)
{
    if (argc < 2)
        return ut_cli_usage_error(self, "name at least one recording");
    ut_rec_reader *reader = NULL;
    if (ut_rec_reader_new(&reader) != UT_OK) {
        fprintf(stderr, "uitrail info: out of memory\n");
        return UT_CLI_FAILED;
    }
    int rc = UT_CLI_OK;
    for (int i = 1; i < argc; i++) {
        if (i > 1)
            fputc('\n', stdout);
        if (info_file(reader, argv[i]) != UT_CLI_OK)
            rc = UT_CLI_FAILED;
    }
    ut_rec_reader_free(reader);
    return rc;
}

const ut_cli_command ut_cli_info = {
    .name = "info",
    .summary = "summarise recordings: tabs, time span, events, frames, damage",
    .usage = "FILE...",
    .help = "For each .uitrail recording: the daemon that wrote it, its tabs, the time\n"
            "span of its events (UTC), event counts by kind, good frames, compressed and\n"
            "decompressed bytes and their ratio, and every damage found: a torn tail\n"
            "(a crash while writing), frames failing their checksum, garbage. Frames\n"
            "around a damaged one are still read.\n"
            "Exit status: 0 when every file was read (damaged or not), 1 when one could\n"
            "not be opened or holds no readable frame.\n",
    .run = run_info,
};
