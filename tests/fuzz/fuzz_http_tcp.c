/* libFuzzer target: the daemon's HTTP request path over TCP, as uitraild
 * sees a client of --http: the Host and Origin checks, the bearer token,
 * the WebSocket handshake's origin rules and the --demo files (the UBSan
 * report of a Host-less GET /demo/config.json came from this path, which
 * fuzz_http, over http.sock, never takes).
 *
 * The input is as fuzz_http's: a first byte choosing where the rest is cut
 * in two writes, then what the client sends. The fuzz daemon runs with
 * --demo (the source tree's demo), --token-file holding FUZZ_TOKEN, and
 * FUZZ_OWN_ADDRESS as its own address. The checks are fuzz_http's.
 *
 * The seed corpus, fixtures/fuzz/fuzz_http_tcp/, is written by
 * tests/fuzz/make_daemon_corpus.py. */
#include "fuzz_daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_session s;
    if (size == 0)
        return 0;
    size_t rest = size - 1;
    size_t cut = rest * data[0] / 255;
    fuzz_session_open_over(&s, true);
    fuzz_session_send(&s, data + 1, cut);
    fuzz_session_send(&s, data + 1 + cut, rest - cut);
    fuzz_session_close(&s);
    return 0;
}
