/* bench_null: the ceiling of tools/bench. A do-nothing ingest server on a
 * Unix socket, driven by the same bench_client over the same socket code:
 * it reads with the same libuv loop and 64 KiB buffer as uitraild, finds
 * each entry's option {"chunk": id} by its bytes (no msgpack decode, no
 * engine), and answers {"ack": id}. What it sustains is what the socket,
 * the kernel and the client allow; uitraild's rate over it is the share of
 * that ceiling uitraild's own work leaves.
 *
 * Usage: bench_null SOCKET_PATH (runs until killed) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define READ_BUF_BYTES (64u << 10)
/* "chunk" as a msgpack fixstr key, then the id as a fixstr (< 32 bytes). */
static const char KEY[] = "\xa5" "chunk";
#define KEY_LEN (sizeof KEY - 1)
#define TAIL_MAX (KEY_LEN + 1 + 31)

typedef struct conn {
    uv_pipe_t pipe;
    char tail[TAIL_MAX]; /* the end of the last read: a key may straddle reads */
    size_t tail_len;
} conn;

static char read_buf[READ_BUF_BYTES + TAIL_MAX];

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    *buf = uv_buf_init(read_buf + TAIL_MAX, READ_BUF_BYTES);
}

static void on_close(uv_handle_t *h)
{
    free(h->data);
}

static void on_written(uv_write_t *w, int status)
{
    (void)status;
    free(w);
}

static void ack(conn *c, const char *id, size_t len)
{
    uv_write_t *w = malloc(sizeof *w + 5 + len);
    if (!w)
        abort();
    char *out = (char *)(w + 1);
    memcpy(out, "\x81\xa3" "ack", 5);
    memcpy(out + 5, id, len);
    uv_buf_t b = uv_buf_init(out, (unsigned)(5 + len));
    if (uv_write(w, (uv_stream_t *)&c->pipe, &b, 1, on_written) != 0)
        free(w);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    conn *c = s->data;
    if (n < 0) {
        uv_close((uv_handle_t *)s, on_close);
        return;
    }
    /* The tail of the last read goes just before this one. */
    char *start = buf->base - c->tail_len;
    memcpy(start, c->tail, c->tail_len);
    size_t len = c->tail_len + (size_t)n;
    size_t done = 0; /* bytes before it are searched */
    for (;;) {
        char *k = memmem(start + done, len - done, KEY, KEY_LEN);
        if (!k)
            break;
        size_t at = (size_t)(k - start) + KEY_LEN;
        if (at >= len || at + 1 + ((unsigned char)start[at] & 0x1f) > len)
            break; /* the id is in the next read */
        size_t id_len = 1 + ((unsigned char)start[at] & 0x1f);
        ack(c, start + at, id_len);
        done = at + id_len;
    }
    size_t keep = len - done < TAIL_MAX ? len - done : TAIL_MAX;
    memcpy(c->tail, start + len - keep, keep);
    c->tail_len = keep;
}

static void on_connection(uv_stream_t *server, int status)
{
    if (status < 0)
        return;
    conn *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    uv_pipe_init(server->loop, &c->pipe, 0);
    c->pipe.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->pipe) != 0 ||
        uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) != 0)
        uv_close((uv_handle_t *)&c->pipe, on_close);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("Usage: bench_null SOCKET_PATH\n", stderr);
        return 2;
    }
    uv_loop_t *loop = uv_default_loop();
    uv_pipe_t server;
    uv_pipe_init(loop, &server, 0);
    int rc = uv_pipe_bind(&server, argv[1]);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&server, 128, on_connection);
    if (rc != 0) {
        fprintf(stderr, "bench_null: %s: %s\n", argv[1], uv_strerror(rc));
        return 1;
    }
    return uv_run(loop, UV_RUN_DEFAULT);
}
