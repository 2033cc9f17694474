/* uitrail import: the importer's Forward stream → an engine → a recording
 * (import.h). The engine is there for what the daemon does before it
 * records: validation, de-duplication by seq and redaction; the recording
 * holds what it accepted (on_accepted), as the daemon's recorder does. */
#include "import.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drive.h"

typedef struct import_state {
    ut_cli_import_rec *r;
    ut_engine *engine;
    ut_rec_writer *writer;
    int fd;
    char *tab;        /* the recorded tab (the stream's first) */
    ut_status failed; /* the first write failure; UT_OK while none */
} import_state;

/* Writes one finished frame with one write(2), as the daemon does. */
static void write_frame(import_state *s, ut_str frame)
{
    if (frame.len == 0 || s->failed != UT_OK)
        return;
    const char *p = frame.ptr;
    size_t left = frame.len;
    while (left > 0) {
        ssize_t n = write(s->fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "uitrail import: %s: write failed: %s\n", s->r->path,
                    n < 0 ? strerror(errno) : "short write (disk full?)");
            s->failed = UT_EIO;
            return;
        }
        p += n;
        left -= (size_t)n;
        s->r->file_bytes += (uint64_t)n;
    }
}

/* Opens the recording of the stream's first tab at its first event. */
static ut_status open_recording(import_state *s, const ut_event *ev)
{
    ut_cli_import_rec *r = s->r;
    ut_rec_meta meta = {.time_us = ev->time_us, .daemon = ut_str_cstr("uitrail import " UT_VERSION),
                        .tab = ev->tab, .has_config = true, .config = *ut_engine_config(s->engine),
                        .has_import = true};
    meta.config.redact_patterns = NULL;
    meta.import.from = r->from;
    const char *base = strrchr(r->input_path, '/');
    meta.import.file = ut_str_cstr(base ? base + 1 : r->input_path);
    meta.import.n_gaps = r->n_gaps < UT_REC_IMPORT_GAPS_MAX ? r->n_gaps : UT_REC_IMPORT_GAPS_MAX;
    for (size_t i = 0; i < meta.import.n_gaps; i++)
        meta.import.gaps[i] = ut_str_cstr(r->gaps[i]);

    ut_buf name = UT_BUF_INIT;
    ut_status st = ut_rec_file_name(ev->time_us, ev->tab, &name);
    if (st == UT_OK && ut_buf_append(&name, "", 1) != UT_OK)
        st = UT_ENOMEM;
    if (st != UT_OK) {
        ut_buf_free(&name);
        return st;
    }
    snprintf(r->path, sizeof r->path, "%s/%s", r->out_dir, name.data);
    ut_buf_free(&name);

    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    char err[256] = "";
    if ((st = ut_rec_writer_new(&opts, &meta, &s->writer, err, sizeof err)) != UT_OK) {
        fprintf(stderr, "uitrail import: %s: %s\n", r->input_path, err[0] ? err : ut_status_str(st));
        r->path[0] = '\0';
        return st;
    }
    s->fd = open(r->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (s->fd < 0) {
        fprintf(stderr, "uitrail import: cannot create %s: %s\n", r->path, strerror(errno));
        r->path[0] = '\0';
        return UT_EIO;
    }
    s->tab = strndup(ev->tab.ptr, ev->tab.len);
    return s->tab ? UT_OK : UT_ENOMEM;
}

/* The engine accepted `ev` (redacted): it goes into the recording. */
static void on_accepted(void *ud, const ut_event *ev)
{
    import_state *s = ud;
    if (s->failed != UT_OK)
        return;
    if (!s->writer && (s->failed = open_recording(s, ev)) != UT_OK)
        return;
    if (!ut_str_eq_cstr(ev->tab, s->tab)) {
        s->r->other_tabs++;
        return;
    }
    ut_event copy = *ev;
    /* A time zone the recording never had is not written: without --tz
     * the importer's own zone would pass for the user's. */
    if (!s->r->keep_tz) {
        copy.has_tz = false;
        copy.tz_min = 0;
    }
    ut_str frame = {0};
    ut_status st = ut_rec_writer_append(s->writer, &copy, &frame);
    write_frame(s, frame);
    if (st == UT_OK) {
        s->r->written++;
        s->r->written_by_kind[ev->kind]++;
    } else {
        s->r->not_written++;
    }
}

static ut_status finish(import_state *s)
{
    if (s->writer && s->failed == UT_OK) {
        ut_str frame = {0};
        ut_status st = ut_rec_writer_flush(s->writer, &frame);
        write_frame(s, frame);
        if (st != UT_OK && s->failed == UT_OK)
            s->failed = st;
    }
    if (s->fd >= 0 && close(s->fd) != 0 && s->failed == UT_OK) {
        fprintf(stderr, "uitrail import: %s: close failed: %s\n", s->r->path, strerror(errno));
        s->failed = UT_EIO;
    }
    ut_rec_writer_free(s->writer);
    free(s->tab);
    return s->failed;
}

ut_status ut_cli_import_rec_run(ut_cli_import_rec *r, FILE *in)
{
    import_state s = {.r = r, .fd = -1, .failed = UT_OK};
    r->path[0] = '\0';
    ut_config cfg;
    ut_config_defaults(&cfg);
    char err[256] = "";
    ut_status st = ut_engine_new(&cfg, &s.engine, err, sizeof err);
    if (st != UT_OK) {
        fprintf(stderr, "uitrail import: %s\n", err[0] ? err : ut_status_str(st));
        return st;
    }
    const ut_observer obs = {.on_accepted = on_accepted, .ud = &s};
    ut_engine_set_observer(s.engine, &obs);
    ut_cli_drive drive = {.command = "import", .path = r->input_path, .engine = s.engine};
    st = ut_cli_drive_begin(&drive);
    if (st == UT_OK)
        st = ut_cli_drive_file(&drive, in);
    if (st != UT_ENOMEM)
        ut_cli_drive_settle(&drive);
    r->rejected = drive.rejected;
    bool damaged = drive.damage > 0;
    ut_cli_drive_end(&drive);
    ut_status written = finish(&s);
    ut_engine_free(s.engine);
    if (st == UT_ENOMEM || written == UT_ENOMEM)
        return UT_ENOMEM;
    return st != UT_OK || damaged || written != UT_OK ? UT_EIO : UT_OK;
}
