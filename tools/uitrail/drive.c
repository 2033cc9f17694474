/* Drives an engine from an input: the stream-to-engine path of `uitrail
 * replay` and `uitrail tune` (drive.h). */
#include "drive.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "uitrail/limits.h"

/* Bytes read from an input at a time. */
#define DRIVE_READ_BYTES (64u << 10)

/* The first bytes of a zstd frame and of a skippable frame (whose magic
 * is 0x184D2A50 to 0x184D2A5F), little-endian. */
static const unsigned char zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

ut_cli_input_kind ut_cli_input_kind_of(const void *data, size_t len)
{
    const unsigned char *p = data;
    if (len >= 4 && (memcmp(p, zstd_magic, 4) == 0 || ((p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d &&
                                                       p[3] == 0x18)))
        return UT_CLI_INPUT_RECORDING;
    /* A Forward stream starts with an array or nil header (0x90-0x9f,
     * 0xdc, 0xdd, 0xc0), never with '[' (0x5b), '{' (0x7b) or whitespace,
     * so the first non-space byte tells JSON from msgpack. */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = p[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        return c == '[' || c == '{' ? UT_CLI_INPUT_JSON : UT_CLI_INPUT_MSGPACK;
    }
    return UT_CLI_INPUT_MSGPACK;
}

/* ---- Events into the engine ---- */

static ut_status on_event(void *ud, const ut_event *ev)
{
    ut_cli_drive *d = ud;
    ut_status st;
    int64_t clock = ev->rt_us ? ev->rt_us : ev->time_us;
    if (d->has_until && clock > d->until_us) {
        d->past_until++;
        return UT_OK;
    }
    if (d->only_tab.ptr && !ut_str_eq(ev->tab, d->only_tab))
        return UT_OK;
    if (d->before_event && (st = d->before_event(d->ud, ev)) != UT_OK)
        return d->fatal = st;
    d->events++;
    if (clock > d->last_clock_us)
        d->last_clock_us = clock;
    ut_engine_advance(d->engine, clock);
    st = ut_engine_apply(d->engine, ev);
    switch (st) {
    case UT_OK: break;
    case UT_EDUP: d->duplicates++; break;
    case UT_ENOMEM: return d->fatal = UT_ENOMEM;
    default:
        d->not_applied++;
        if (!d->quiet)
            fprintf(stderr, "uitrail %s: warning: %s event for tab \"%.*s\" not applied: %s\n", d->command,
                    ut_kind_name(ev->kind), (int)ev->tab.len, ev->tab.ptr, ut_status_str(st));
        break;
    }
    if (d->after_event && (st = d->after_event(d->ud, ev)) != UT_OK)
        return d->fatal = st;
    return UT_OK;
}

static void on_reject(void *ud, ut_reject why, const char *detail)
{
    ut_cli_drive *d = ud;
    d->rejected++;
    if (!d->quiet)
        fprintf(stderr, "uitrail %s: warning: record rejected (%s): %s\n", d->command, ut_reject_name(why), detail);
}

static void on_ignored(void *ud, ut_str tag)
{
    (void)tag;
    ((ut_cli_drive *)ud)->ignored++;
}

ut_status ut_cli_drive_begin(ut_cli_drive *d)
{
    d->last_clock_us = INT64_MIN;
    d->events = d->rejected = d->ignored = d->duplicates = d->not_applied = d->damage = d->past_until = 0;
    d->fatal = UT_OK;
    if (ut_fwd_decoder_new(&d->decoder) != UT_OK)
        return UT_ENOMEM;
    if (d->on_label)
        ut_fwd_decoder_set_label_fn(d->decoder, d->on_label, d->ud);
    return UT_OK;
}

void ut_cli_drive_end(ut_cli_drive *d)
{
    ut_fwd_decoder_free(d->decoder);
    d->decoder = NULL;
}

ut_status ut_cli_drive_feed(ut_cli_drive *d, const void *data, size_t len, bool from_json)
{
    const ut_fwd_sink sink = {on_event, on_reject, on_ignored, NULL, d};
    ut_status st = ut_fwd_decoder_feed(d->decoder, data, len, &sink);
    if (st == UT_OK && d->fatal != UT_OK)
        st = d->fatal;
    if (st == UT_EPROTO)
        fprintf(stderr, "uitrail %s: %s: bad input%s: %s\n", d->command, d->path,
                from_json ? " (in the msgpack converted from JSON)" : "", ut_fwd_decoder_error(d->decoder));
    return st;
}

void ut_cli_drive_settle(ut_cli_drive *d)
{
    if (d->last_clock_us != INT64_MIN)
        ut_engine_advance(d->engine, d->last_clock_us + UT_CLI_SETTLE_US);
}

/* A stream that ends inside a message is damaged input, as a torn
 * recording is (one rule for both: counted in `damage`); warns unless
 * quiet. */
static void check_stream_end(ut_cli_drive *d)
{
    size_t pending = ut_fwd_decoder_pending(d->decoder);
    if (pending > 0)
        d->damage++;
    if (pending > 0 && !d->quiet)
        fprintf(stderr, "uitrail %s: %s: warning: the stream ends inside a message (%zu bytes ignored)\n",
                d->command, d->path, pending);
}

/* Replaces the decoder by a fresh one: after damage, an entry cut by the
 * lost bytes can never be completed, and after a malformed frame the old
 * decoder refuses more input. */
static ut_status restart_decoder(ut_cli_drive *d)
{
    ut_fwd_decoder_free(d->decoder);
    d->decoder = NULL;
    if (ut_fwd_decoder_new(&d->decoder) != UT_OK)
        return UT_ENOMEM;
    if (d->on_label)
        ut_fwd_decoder_set_label_fn(d->decoder, d->on_label, d->ud);
    return UT_OK;
}

static void warn_damage(ut_cli_drive *d, const char *detail)
{
    d->damage++;
    if (!d->quiet)
        fprintf(stderr, "uitrail %s: %s: warning: damaged recording: %s\n", d->command, d->path, detail);
}

ut_status ut_cli_drive_recording(ut_cli_drive *d, ut_rec_reader *reader, const void *data, size_t len)
{
    ut_rec_reader_reset(reader, data, len);
    for (;;) {
        ut_rec_step step;
        ut_status st = ut_rec_reader_next(reader, &step);
        if (st != UT_OK)
            return st;
        if (step.kind == UT_REC_STEP_END)
            break;
        if (step.kind == UT_REC_STEP_DAMAGE) {
            warn_damage(d, step.detail);
            if ((st = restart_decoder(d)) != UT_OK)
                return st;
            continue;
        }
        /* A journal frame without the tab looked for: frames hold whole
         * entries, so the next one starts afresh. */
        if (step.skipped) {
            if ((st = restart_decoder(d)) != UT_OK)
                return st;
            continue;
        }
        /* The frame's content goes to the decoder whole: the uitrail.meta
         * entry that leads a recording is not an event and is ignored. */
        const ut_fwd_sink sink = {on_event, on_reject, on_ignored, NULL, d};
        st = ut_fwd_decoder_feed(d->decoder, step.content.ptr, step.content.len, &sink);
        if (st == UT_OK && d->fatal != UT_OK)
            return d->fatal;
        if (st == UT_EPROTO) {
            char detail[sizeof step.detail + 64];
            snprintf(detail, sizeof detail, "frame %llu at byte %llu: %s; rest of the frame skipped",
                     (unsigned long long)step.frame, (unsigned long long)step.offset,
                     ut_fwd_decoder_error(d->decoder));
            warn_damage(d, detail);
            st = restart_decoder(d);
        }
        if (st != UT_OK)
            return st;
    }
    check_stream_end(d);
    return UT_OK;
}

/* ---- Reading inputs ---- */

/* Appends the rest of `in` to `buf`. Past `max` bytes in all it reports
 * "WHAT over MAX bytes" and the `hint` and returns UT_ELIMIT. */
static ut_status read_rest(const ut_cli_drive *d, FILE *in, ut_buf *buf, size_t max, const char *what,
                           const char *hint)
{
    char chunk[DRIVE_READ_BYTES];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) {
        if (buf->len + n > max) {
            fprintf(stderr, "uitrail %s: %s: %s over %zu bytes%s\n", d->command, d->path, what, max, hint);
            return UT_ELIMIT;
        }
        if (ut_buf_append(buf, chunk, n) != UT_OK)
            return UT_ENOMEM;
    }
    if (ferror(in)) {
        fprintf(stderr, "uitrail %s: %s: read failed: %s\n", d->command, d->path, strerror(errno));
        return UT_EIO;
    }
    return UT_OK;
}

/* Converts the JSON text in `json` to msgpack in `out`, reporting bad
 * JSON on stderr. */
static ut_status convert_json(const char *command, const char *path, const ut_buf *json, ut_buf *out)
{
    char err[256];
    ut_status st = ut_wire_json_to_msgpack(ut_buf_str(json), out, err, sizeof err);
    if (st == UT_EPROTO || st == UT_ELIMIT)
        fprintf(stderr, "uitrail %s: %s: bad JSON input: %s\n", command, path, err);
    return st;
}

/* Feeds a whole msgpack stream in read-sized pieces, as a file would be. */
static ut_status feed_all(ut_cli_drive *d, const ut_buf *stream, bool from_json)
{
    ut_status st = UT_OK;
    for (size_t off = 0; st == UT_OK && off < stream->len; off += DRIVE_READ_BYTES)
        st = ut_cli_drive_feed(d, stream->data + off,
                               stream->len - off < DRIVE_READ_BYTES ? stream->len - off : DRIVE_READ_BYTES, from_json);
    if (st == UT_OK)
        check_stream_end(d);
    return st;
}

static ut_status drive_whole_recording(ut_cli_drive *d, const ut_buf *bytes)
{
    ut_rec_reader *reader;
    if (ut_rec_reader_new(&reader) != UT_OK)
        return UT_ENOMEM;
    ut_status st = ut_cli_drive_recording(d, reader, bytes->data, bytes->len);
    ut_rec_reader_free(reader);
    return st;
}

void ut_cli_report_empty(const char *command, const char *path)
{
    fprintf(stderr, "uitrail %s: %s: the input is empty, nothing to read (a recording whose first "
                    "frame is not written yet is empty too)\n", command, path);
}

ut_status ut_cli_drive_file(ut_cli_drive *d, FILE *in)
{
    ut_buf buf = UT_BUF_INIT;
    char chunk[DRIVE_READ_BYTES];
    ut_status st = UT_OK;

    /* The first read decides the form. */
    size_t n = fread(chunk, 1, sizeof chunk, in);
    if (n == 0 && !ferror(in)) {
        ut_cli_report_empty(d->command, d->path);
        return UT_EIO;
    }
    ut_cli_input_kind kind = ut_cli_input_kind_of(chunk, n);
    if (kind != UT_CLI_INPUT_MSGPACK) {
        bool json = kind == UT_CLI_INPUT_JSON;
        if (ut_buf_append(&buf, chunk, n) != UT_OK)
            st = UT_ENOMEM;
        if (st == UT_OK)
            st = read_rest(d, in, &buf, json ? UT_REPLAY_JSON_MAX_BYTES : UT_CLI_INPUT_MAX_BYTES,
                           json ? "JSON input" : "recording", json ? "; convert it to msgpack to replay it" : "");
        if (st == UT_OK && json) {
            ut_buf msgpack = UT_BUF_INIT;
            st = convert_json(d->command, d->path, &buf, &msgpack);
            if (st == UT_OK)
                st = feed_all(d, &msgpack, true);
            ut_buf_free(&msgpack);
        } else if (st == UT_OK) {
            st = drive_whole_recording(d, &buf);
        }
        ut_buf_free(&buf);
        return st;
    }
    while (n > 0 && st == UT_OK) {
        st = ut_cli_drive_feed(d, chunk, n, false);
        if (st == UT_OK)
            n = fread(chunk, 1, sizeof chunk, in);
    }
    if (st == UT_OK && ferror(in)) {
        fprintf(stderr, "uitrail %s: %s: read failed: %s\n", d->command, d->path, strerror(errno));
        st = UT_EIO;
    }
    if (st == UT_OK)
        check_stream_end(d);
    return st;
}

/* ---- Inputs read whole ---- */

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

ut_status ut_cli_input_load(const char *command, const char *path, ut_cli_input *in)
{
    *in = (ut_cli_input){.kind = UT_CLI_INPUT_MSGPACK, .bytes = UT_BUF_INIT};
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "uitrail %s: cannot open %s: %s\n", command, path, strerror(errno));
        return UT_ENOENT;
    }
    /* A file known to be too large is refused before it is read. */
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > UT_CLI_INPUT_MAX_BYTES) {
        fprintf(stderr, "uitrail %s: %s: input over %u bytes\n", command, path, UT_CLI_INPUT_MAX_BYTES);
        fclose(f);
        return UT_ELIMIT;
    }
    ut_cli_drive reporter = {.command = command, .path = path};
    ut_buf raw = UT_BUF_INIT;
    ut_status st = read_rest(&reporter, f, &raw, UT_CLI_INPUT_MAX_BYTES, "input", "");
    fclose(f);
    if (st != UT_OK) {
        ut_buf_free(&raw);
        return st;
    }
    /* A recording is known by its name even when its first frame is lost. */
    in->kind = has_suffix(path, UT_REC_FILE_SUFFIX) ? UT_CLI_INPUT_RECORDING : ut_cli_input_kind_of(raw.data, raw.len);
    if (in->kind != UT_CLI_INPUT_JSON) {
        in->bytes = raw;
        return UT_OK;
    }
    if (raw.len > UT_REPLAY_JSON_MAX_BYTES) {
        fprintf(stderr, "uitrail %s: %s: JSON input over %u bytes; convert it to msgpack\n", command, path,
                UT_REPLAY_JSON_MAX_BYTES);
        st = UT_ELIMIT;
    } else {
        st = convert_json(command, path, &raw, &in->bytes);
    }
    ut_buf_free(&raw);
    if (st != UT_OK)
        ut_cli_input_free(in);
    return st;
}

void ut_cli_input_free(ut_cli_input *in)
{
    ut_buf_free(&in->bytes);
}

ut_status ut_cli_drive_input(ut_cli_drive *d, const ut_cli_input *in, ut_rec_reader *reader)
{
    if (in->kind == UT_CLI_INPUT_RECORDING)
        return ut_cli_drive_recording(d, reader, in->bytes.data, in->bytes.len);
    return feed_all(d, &in->bytes, in->kind == UT_CLI_INPUT_JSON);
}
