/* `uitrail send`: Forward messages (a recording, msgpack or a JSON
 * fixture) into a running uitraild's ingest.sock, as fast as it reads or
 * at the original pace, until the daemon acks a last sync message. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <msgpack.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon_client.h"
#include "drive.h"
#include "uitrail/common.h"
#include "uitrail/daemon.h"
#include "uitrail/limits.h"
#include "uitrail/record.h"
#include "uitrail/wire.h"

/* ---- send ---- */

/* The sync message: a Forward message with no entries and a chunk. The
 * daemon acks a message once all its events are applied, and it handles a
 * connection's messages in order, so this ack means every event sent
 * before it is applied. */
static ut_status pack_sync(ut_buf *out, const char *chunk)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_str_with_body(&pk, "uitrail.nav", 11);
    msgpack_pack_array(&pk, 0);
    msgpack_pack_map(&pk, 1);
    msgpack_pack_str_with_body(&pk, "chunk", 5);
    msgpack_pack_str_with_body(&pk, chunk, strlen(chunk));
    ut_status st = ut_buf_append(out, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
    return st;
}

/* Acks as they come back on the ingest connection: the file's own
 * messages may ask for acks too, and those are read and passed over. */
typedef struct ack_reader {
    msgpack_unpacker unpacker;
    msgpack_unpacked msg;
    const char *chunk; /* the sync chunk we wait for */
    bool found;
} ack_reader;

static bool ack_reader_init(ack_reader *a, const char *chunk)
{
    a->chunk = chunk;
    a->found = false;
    msgpack_unpacked_init(&a->msg);
    return msgpack_unpacker_init(&a->unpacker, 1024);
}

static void ack_reader_free(ack_reader *a)
{
    msgpack_unpacked_destroy(&a->msg);
    msgpack_unpacker_destroy(&a->unpacker);
}

/* Reads what `fd` has and looks for the sync ack. False when the daemon
 * closed the connection or the read failed. */
static bool ack_reader_read(ack_reader *a, int fd)
{
    if (!msgpack_unpacker_reserve_buffer(&a->unpacker, 1024))
        return false;
    ssize_t n;
    do
        n = read(fd, msgpack_unpacker_buffer(&a->unpacker),
                 msgpack_unpacker_buffer_capacity(&a->unpacker));
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return false;
    msgpack_unpacker_buffer_consumed(&a->unpacker, (size_t)n);
    while (msgpack_unpacker_next(&a->unpacker, &a->msg) == MSGPACK_UNPACK_SUCCESS) {
        const msgpack_object *o = &a->msg.data;
        if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size != 1)
            continue;
        const msgpack_object *v = &o->via.map.ptr[0].val;
        if (v->type == MSGPACK_OBJECT_STR && v->via.str.size == strlen(a->chunk) &&
            memcmp(v->via.str.ptr, a->chunk, v->via.str.size) == 0)
            a->found = true;
    }
    return true;
}

static bool read_whole(int fd, ut_buf *out)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            return true;
        if (ut_buf_append(out, buf, (size_t)n) != UT_OK)
            return false;
    }
}

/* ---- send: the input, and its pace ---- */

/* Turns what `uitrail send` read into the msgpack stream to send: JSON is
 * converted, a recording's good frames are decompressed one after the
 * other (its damage reported as warnings), msgpack is sent as it is. */
static bool send_input_to_stream(const char *path, ut_buf *data)
{
    ut_cli_input_kind kind = ut_cli_input_kind_of(data->data, data->len);
    if (kind == UT_CLI_INPUT_MSGPACK)
        return true;
    ut_buf stream = UT_BUF_INIT;
    if (kind == UT_CLI_INPUT_JSON) {
        char err[256] = "";
        if (ut_wire_json_to_msgpack(ut_buf_str(data), &stream, err, sizeof err) != UT_OK) {
            fprintf(stderr, "uitrail send: %s: %s\n", path, err[0] ? err : "out of memory");
            ut_buf_free(&stream);
            return false;
        }
    } else {
        ut_rec_reader *reader;
        if (ut_rec_reader_new(&reader) != UT_OK) {
            fprintf(stderr, "uitrail send: out of memory\n");
            return false;
        }
        ut_rec_reader_reset(reader, data->data, data->len);
        ut_rec_step step;
        ut_status st;
        while ((st = ut_rec_reader_next(reader, &step)) == UT_OK && step.kind != UT_REC_STEP_END) {
            if (step.kind == UT_REC_STEP_DAMAGE)
                fprintf(stderr, "uitrail send: %s: warning: damaged recording: %s\n", path, step.detail);
            else if (ut_buf_append_str(&stream, step.content) != UT_OK)
                st = UT_ENOMEM;
            if (st != UT_OK)
                break;
        }
        ut_rec_reader_free(reader);
        if (st != UT_OK) {
            fprintf(stderr, "uitrail send: %s: %s\n", path, ut_status_str(st));
            ut_buf_free(&stream);
            return false;
        }
    }
    ut_buf_free(data);
    *data = stream;
    return true;
}

/* The clock a message is paced by: the daemon's receive time (`rt`, in a
 * recording) or the sender's time. Gaps are only measured between two
 * times of the same clock. */
typedef enum pace_clock { PACE_NONE, PACE_RT, PACE_SENDER } pace_clock;

/* One message of the stream: where it ends and when it is due, in
 * microseconds after the first. */
typedef struct paced_message {
    size_t end;
    int64_t due_us;
} paced_message;

typedef struct pace_plan {
    paced_message *messages;
    size_t n, cap;
} pace_plan;

static bool object_time_us(const msgpack_object *t, int64_t *out)
{
    if (t->type == MSGPACK_OBJECT_EXT && t->via.ext.type == 0 && t->via.ext.size == 8) {
        const unsigned char *p = (const unsigned char *)t->via.ext.ptr;
        uint32_t sec = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        uint32_t nsec = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
        *out = (int64_t)sec * 1000000 + nsec / 1000;
        return true;
    }
    if (t->type == MSGPACK_OBJECT_POSITIVE_INTEGER && t->via.u64 <= UT_WIRE_TIME_MAX_S) {
        *out = (int64_t)t->via.u64 * 1000000;
        return true;
    }
    if ((t->type == MSGPACK_OBJECT_FLOAT64 || t->type == MSGPACK_OBJECT_FLOAT32) && t->via.f64 >= 0 &&
        t->via.f64 <= UT_WIRE_TIME_MAX_S) {
        *out = (int64_t)(t->via.f64 * 1e6);
        return true;
    }
    return false;
}

/* The time of one [time, record] entry: its rt when the record has one. */
static pace_clock entry_time_us(const msgpack_object *time, const msgpack_object *record, int64_t *out)
{
    if (record->type == MSGPACK_OBJECT_MAP) {
        for (uint32_t i = 0; i < record->via.map.size; i++) {
            const msgpack_object_kv *kv = &record->via.map.ptr[i];
            if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == 2 &&
                memcmp(kv->key.via.str.ptr, "rt", 2) == 0 && kv->val.type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
                kv->val.via.u64 > 0 && kv->val.via.u64 <= INT64_MAX) {
                *out = (int64_t)kv->val.via.u64;
                return PACE_RT;
            }
        }
    }
    return object_time_us(time, out) ? PACE_SENDER : PACE_NONE;
}

/* The time of a Forward message of an event kind: that of its first entry,
 * whatever the mode. Other tags (a recording's uitrail.meta, labels),
 * heartbeats and empty messages have none: they go with the message
 * before them. */
static pace_clock message_time_us(const msgpack_object *m, int64_t *out)
{
    if (m->type != MSGPACK_OBJECT_ARRAY || m->via.array.size < 2)
        return PACE_NONE;
    const msgpack_object *tag = &m->via.array.ptr[0];
    const msgpack_object *second = &m->via.array.ptr[1];
    ut_kind kind;
    if (tag->type != MSGPACK_OBJECT_STR ||
        ut_kind_from_tag(ut_str_from(tag->via.str.ptr, tag->via.str.size), &kind) != UT_OK)
        return PACE_NONE;
    if (second->type == MSGPACK_OBJECT_ARRAY) {
        if (second->via.array.size == 0)
            return PACE_NONE;
        const msgpack_object *entry = &second->via.array.ptr[0];
        if (entry->type != MSGPACK_OBJECT_ARRAY || entry->via.array.size < 2)
            return PACE_NONE;
        return entry_time_us(&entry->via.array.ptr[0], &entry->via.array.ptr[1], out);
    }
    if (second->type == MSGPACK_OBJECT_BIN || second->type == MSGPACK_OBJECT_STR) {
        const char *bytes = second->type == MSGPACK_OBJECT_BIN ? second->via.bin.ptr : second->via.str.ptr;
        size_t len = second->type == MSGPACK_OBJECT_BIN ? second->via.bin.size : second->via.str.size;
        msgpack_unpacked first;
        msgpack_unpacked_init(&first);
        pace_clock clock = PACE_NONE;
        if (msgpack_unpack_next(&first, bytes, len, NULL) == MSGPACK_UNPACK_SUCCESS &&
            first.data.type == MSGPACK_OBJECT_ARRAY && first.data.via.array.size >= 2)
            clock = entry_time_us(&first.data.via.array.ptr[0], &first.data.via.array.ptr[1], out);
        msgpack_unpacked_destroy(&first);
        return clock;
    }
    if (m->via.array.size < 3)
        return PACE_NONE;
    return entry_time_us(second, &m->via.array.ptr[2], out);
}

static ut_status pace_plan_add(pace_plan *p, size_t end, int64_t due_us)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 256;
        paced_message *grown = ut_realloc(p->messages, cap * sizeof *grown);
        if (!grown)
            return UT_ENOMEM;
        p->messages = grown;
        p->cap = cap;
    }
    p->messages[p->n++] = (paced_message){end, due_us};
    return UT_OK;
}

static ut_status count_event(void *ud, const ut_event *ev)
{
    (void)ev;
    (*(uint64_t *)ud)++;
    return UT_OK;
}

/* Plans when each message of `stream` is due at `speed` times the original
 * pace. The stream is checked first with the daemon's own decoder, so a
 * malformed or oversized input is refused here, with its reason, and the
 * walk over messages that follows only meets the shapes the decoder
 * allows. */
static bool pace_plan_build(const char *path, const ut_buf *stream, uint32_t speed, pace_plan *p)
{
    ut_fwd_decoder *check;
    uint64_t events = 0;
    if (ut_fwd_decoder_new(&check) != UT_OK) {
        fprintf(stderr, "uitrail send: out of memory\n");
        return false;
    }
    const ut_fwd_sink sink = {.on_event = count_event, .ud = &events};
    ut_status st = ut_fwd_decoder_feed(check, stream->data, stream->len, &sink);
    if (st != UT_OK || ut_fwd_decoder_pending(check) > 0) {
        fprintf(stderr, "uitrail send: %s: %s\n", path,
                st == UT_EPROTO ? ut_fwd_decoder_error(check)
                : st != UT_OK   ? ut_status_str(st)
                                : "the stream ends inside a message");
        ut_fwd_decoder_free(check);
        return false;
    }
    ut_fwd_decoder_free(check);

    msgpack_unpacked msg;
    msgpack_unpacked_init(&msg);
    size_t off = 0;
    int64_t due = 0, last = 0;
    pace_clock last_clock = PACE_NONE;
    bool ok = true;
    while (ok && off < stream->len) {
        if (msgpack_unpack_next(&msg, stream->data, stream->len, &off) != MSGPACK_UNPACK_SUCCESS) {
            fprintf(stderr, "uitrail send: %s: cannot walk the messages at byte %zu\n", path, off);
            ok = false;
            break;
        }
        int64_t t;
        pace_clock clock = message_time_us(&msg.data, &t);
        if (clock != PACE_NONE) {
            if (clock == last_clock && t > last)
                due += (t - last) / (int64_t)speed;
            last = t;
            last_clock = clock;
        }
        ok = pace_plan_add(p, off, due) == UT_OK;
        if (!ok)
            fprintf(stderr, "uitrail send: out of memory\n");
    }
    msgpack_unpacked_destroy(&msg);
    return ok;
}

/* Records of the stream the daemon will reject, found the way it finds
 * them (the same decoder and validator, on a scratch engine); each is
 * reported on stderr. The ingest ack says only "done", so this is how
 * `send` can tell "applied" from "refused". UINT64_MAX when out of memory. */
static uint64_t invalid_records(const char *path, const ut_buf *stream)
{
    ut_config cfg;
    ut_config_defaults(&cfg);
    ut_engine *engine = NULL;
    char err[128];
    if (ut_engine_new(&cfg, &engine, err, sizeof err) != UT_OK)
        return UINT64_MAX;
    ut_cli_drive drive = {.command = "send", .path = path, .engine = engine};
    uint64_t rejected = UINT64_MAX;
    if (ut_cli_drive_begin(&drive) == UT_OK &&
        ut_cli_drive_feed(&drive, stream->data, stream->len, false) != UT_ENOMEM)
        rejected = drive.rejected;
    ut_cli_drive_end(&drive);
    ut_engine_free(engine);
    return rejected;
}

static int64_t monotonic_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* One `uitrail send`: what it sends, and what it holds while sending. */
typedef struct send_job {
    const char *runtime_dir;
    const char *path;
    uint32_t speed;    /* 0: as fast as possible */
    ut_buf data;       /* the stream, then the sync message */
    size_t stream_len; /* the stream alone */
    uint64_t invalid;  /* records the validator rejects, said on stderr */
    pace_plan plan;    /* with a speed */
    char chunk[64];    /* the sync message's chunk id */
    int fd;            /* the ingest connection, or -1 */
    ack_reader acks;
    bool acks_ready;
} send_job;

static void send_job_free(send_job *j)
{
    if (j->acks_ready)
        ack_reader_free(&j->acks);
    if (j->fd >= 0)
        close(j->fd);
    ut_free(j->plan.messages);
    ut_buf_free(&j->data);
}

/* Parses the options and FILE into `j`. Returns UT_CLI_OK, or the exit
 * status of a bad command line (said on stderr). */
static int send_parse(const ut_cli_command *self, int argc, char **argv, send_job *j)
{
    enum { OPT_RUNTIME_DIR = 256, OPT_SPEED };
    static const struct option opts[] = {
        {"speed", required_argument, NULL, OPT_SPEED},
        {"runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR},
        {NULL, 0, NULL, 0},
    };
    int ch;
    optind = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (ch == OPT_RUNTIME_DIR) {
            j->runtime_dir = optarg;
        } else if (ch == OPT_SPEED) {
            if (strcmp(optarg, "max") == 0)
                j->speed = 0;
            else if (strcmp(optarg, "1") == 0 || strcmp(optarg, "10") == 0)
                j->speed = (uint32_t)atoi(optarg);
            else
                return ut_cli_usage_error(self, "--speed %s: use 1 (the original pace), 10 or max", optarg);
        } else {
            return ut_cli_bad_option(self, argv);
        }
    }
    if (argc - optind != 1)
        return ut_cli_usage_error(self, "name exactly one file (or -)");
    j->path = argv[optind];
    return UT_CLI_OK;
}

/* Reads the input, makes it a Forward stream, plans its pace and appends
 * the sync message. False when that failed (said on stderr). */
static bool send_prepare(send_job *j)
{
    int in = strcmp(j->path, "-") == 0 ? STDIN_FILENO : open(j->path, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        fprintf(stderr, "uitrail: cannot open %s: %s\n", j->path, strerror(errno));
        return false;
    }
    bool read_ok = read_whole(in, &j->data);
    if (in != STDIN_FILENO)
        close(in);
    if (!read_ok) {
        fprintf(stderr, "uitrail: cannot read %s: %s\n", j->path, j->data.oom ? "out of memory" : strerror(errno));
        return false;
    }
    if (!send_input_to_stream(j->path, &j->data) ||
        (j->speed && !pace_plan_build(j->path, &j->data, j->speed, &j->plan)))
        return false;
    j->stream_len = j->data.len;
    j->invalid = invalid_records(j->path, &j->data);
    if (j->invalid == UINT64_MAX) {
        fprintf(stderr, "uitrail: out of memory\n");
        return false;
    }
    snprintf(j->chunk, sizeof j->chunk, "uitrail-send-%ld", (long)getpid());
    if (pack_sync(&j->data, j->chunk) != UT_OK) {
        fprintf(stderr, "uitrail: out of memory\n");
        return false;
    }
    return true;
}

/* How much of the data may be written by now, and how long to wait for
 * the next message to be due (-1: no wait): paced, only the messages that
 * are due; the sync message follows the last. */
static size_t send_limit(const send_job *j, int64_t elapsed_us, size_t *next_message, int *timeout_ms)
{
    *timeout_ms = -1;
    if (!j->speed)
        return j->data.len;
    while (*next_message < j->plan.n && j->plan.messages[*next_message].due_us <= elapsed_us)
        (*next_message)++;
    if (*next_message == j->plan.n)
        return j->data.len;
    int64_t wait_us = j->plan.messages[*next_message].due_us - elapsed_us;
    *timeout_ms = (int)((wait_us + 999) / 1000);
    return *next_message ? j->plan.messages[*next_message - 1].end : 0;
}

/* Writes the data while reading acks, so that neither side blocks on a
 * full socket buffer, until the sync ack. False when the daemon closed
 * the connection first; *sent says how far it got. */
static bool send_stream(send_job *j, int64_t start_us, size_t *sent)
{
    bool ok = true;
    size_t next_message = 0;
    *sent = 0;
    while (ok && !j->acks.found) {
        int timeout_ms;
        size_t limit = send_limit(j, monotonic_us() - start_us, &next_message, &timeout_ms);
        struct pollfd pfd = {j->fd, (short)(POLLIN | (*sent < limit ? POLLOUT : 0)), 0};
        int rc = poll(&pfd, 1, timeout_ms);
        if (rc < 0) {
            ok = errno == EINTR;
            continue;
        }
        if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
            ok = ack_reader_read(&j->acks, j->fd);
            if (!ok)
                break;
        }
        if (*sent < limit && (pfd.revents & POLLOUT)) {
            ssize_t n = send(j->fd, j->data.data + *sent, limit - *sent, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n > 0)
                *sent += (size_t)n;
            else if (n < 0 && errno != EAGAIN && errno != EINTR)
                ok = false;
        }
    }
    return ok;
}

static int run_send(const ut_cli_command *self, int argc, char **argv)
{
    send_job j = {.data = UT_BUF_INIT, .fd = -1};
    int rc = send_parse(self, argc, argv, &j);
    if (rc != UT_CLI_OK)
        return rc;
    ut_cli_client cl;
    bool ok = send_prepare(&j) && ut_cli_client_init(&cl, j.runtime_dir) &&
              (j.fd = ut_cli_client_connect(&cl, UT_INGEST_SOCKET_NAME)) >= 0;
    if (ok && !(j.acks_ready = ack_reader_init(&j.acks, j.chunk))) {
        fprintf(stderr, "uitrail: out of memory\n");
        ok = false;
    }
    if (!ok) {
        send_job_free(&j);
        return UT_CLI_FAILED;
    }
    size_t sent;
    int64_t start_us = monotonic_us();
    ok = send_stream(&j, start_us, &sent);
    const char *pace = j.speed == 1 ? " at the original pace" : j.speed == 10 ? " at 10x the original pace" : "";
    double took = (double)(monotonic_us() - start_us) / 1e6;
    if (ok && j.invalid)
        fprintf(stderr, "uitrail: sent %zu bytes%s in %.3f s; uitraild rejected %llu invalid record%s "
                        "(the warnings above say why) and applied the rest\n",
                j.stream_len, pace, took, (unsigned long long)j.invalid, j.invalid == 1 ? "" : "s");
    else if (ok)
        fprintf(stderr, "uitrail: sent %zu bytes%s in %.3f s; uitraild applied them\n", j.stream_len, pace, took);
    else
        fprintf(stderr, "uitrail: uitraild closed the ingest connection after %zu of %zu bytes "
                        "(see its log: the input may be malformed)\n", sent, j.data.len);
    send_job_free(&j);
    return ok && !j.invalid ? UT_CLI_OK : UT_CLI_FAILED;
}

const ut_cli_command ut_cli_send = {
    .name = "send",
    .summary = "send Forward messages (a recording, msgpack or a JSON fixture) to the running uitraild",
    .usage = "FILE|- [--speed 1|10|max] [--runtime-dir DIR]",
    .help = "Streams FILE (- for standard input) into uitraild's ingest.sock: Forward\n"
            "messages in msgpack back to back, JSON (one Forward message or an array\n"
            "of them, times in seconds), which is converted first, or a .uitrail\n"
            "recording, whose good frames are decompressed (damage is reported as a\n"
            "warning and skipped). Returns once the daemon has applied every event: a\n"
            "last message asks for an ack.\n"
            "  --speed 1|10|max  1: each message when it is due at the original pace,\n"
            "                    taken from the receive times (rt) of a recording, else\n"
            "                    the event times; 10: ten times faster; max (default):\n"
            "                    as fast as the daemon reads. Records are sent as they\n"
            "                    are: the daemon stamps its own receive time on each.\n"
            "Records the daemon rejects (a missing tab, a wrong type, an unknown kind)\n"
            "are reported on stderr, each with its reason.\n"
            "Exit status: 0 applied, 1 the daemon rejected records, refused the input\n"
            "or is not running.\n",
    .run = run_send,
};
