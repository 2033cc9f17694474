/* libFuzzer target: the daemon's WebSocket ingest path, as uitraild sees
 * it.
 *
 * A client on http.sock opens GET /v1/ingest with a valid upgrade (over
 * the Unix socket: with no Origin, or with one on the allowlist), then
 * sends the input, after its first byte, as raw WebSocket frame bytes:
 * masked or not, well-formed or not, as the fuzzer decides. The first byte
 * says whether the Origin header is sent (bit 0), whether the handshake
 * and the first piece of frames go in one write (bit 1: the daemon then
 * finds frames behind the request it upgrades), and where the frames are
 * cut in two writes (bits 2-7). The daemon must not crash (ASan, UBSan),
 * must accept the upgrade, must free the connection, and must answer with
 * a 101 and well-formed, unmasked server frames (fuzz_daemon.c).
 *
 * The seed corpus, fixtures/fuzz/fuzz_ws/, holds masked binary frames of
 * Forward messages (one, several, fragmented, with acks), pings, closes,
 * text, unmasked and oversize frames; tests/fuzz/make_daemon_corpus.py
 * writes it. */
#include "fuzz_daemon.h"

#include <string.h>

#define WS_CONTROL_ORIGIN 0x01u
#define WS_CONTROL_ONE_WRITE 0x02u
#define WS_CONTROL_CUT_SHIFT 2
#define WS_CONTROL_CUT_STEPS 63u

static const char handshake_head[] = "GET /v1/ingest HTTP/1.1\r\n"
                                     "Host: localhost\r\n"
                                     "Upgrade: websocket\r\n"
                                     "Connection: Upgrade\r\n"
                                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                     "Sec-WebSocket-Version: 13\r\n"
                                     "Sec-WebSocket-Protocol: uitrail.v1\r\n";
static const char origin_line[] = "Origin: " FUZZ_ALLOWED_ORIGIN "\r\n";
static const char switching[] = "HTTP/1.1 101 ";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_session s;
    static ut_buf first = UT_BUF_INIT;
    if (size == 0)
        return 0;
    unsigned control = data[0];
    const uint8_t *frames = data + 1;
    size_t len = size - 1;
    size_t cut = len * (control >> WS_CONTROL_CUT_SHIFT) / WS_CONTROL_CUT_STEPS;

    ut_buf_reset(&first);
    ut_buf_append_cstr(&first, handshake_head);
    if (control & WS_CONTROL_ORIGIN)
        ut_buf_append_cstr(&first, origin_line);
    ut_buf_append_cstr(&first, "\r\n");
    FUZZ_CHECK(!first.oom, "the handshake is built");

    fuzz_session_open(&s);
    if (control & WS_CONTROL_ONE_WRITE) {
        FUZZ_CHECK(ut_buf_append(&first, frames, cut) == UT_OK, "the first write is built");
        fuzz_session_send(&s, first.data, first.len);
    } else {
        fuzz_session_send(&s, first.data, first.len);
        FUZZ_CHECK(s.out.len >= sizeof switching - 1 &&
                       memcmp(s.out.data, switching, sizeof switching - 1) == 0,
                   "the daemon accepts the upgrade");
        fuzz_session_send(&s, frames, cut);
    }
    fuzz_session_send(&s, frames + cut, len - cut);
    fuzz_session_close(&s);
    FUZZ_CHECK(s.out.len >= sizeof switching - 1 &&
                   memcmp(s.out.data, switching, sizeof switching - 1) == 0,
               "the daemon accepted the upgrade");
    return 0;
}
