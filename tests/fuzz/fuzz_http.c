/* libFuzzer target: the daemon's HTTP request path, as uitraild sees it.
 *
 * The input is what a client sends on http.sock: its first byte chooses
 * where the rest is cut in two writes (so that requests also arrive in
 * pieces), the rest is sent, the client half-closes, and the daemon runs
 * on its real loop until it has answered and closed (fuzz_daemon.c). The
 * daemon must not crash (ASan, UBSan), must free the connection, and must
 * have written well-formed HTTP responses, never a 500.
 *
 * The seed corpus, fixtures/fuzz/fuzz_http/, holds one request of each
 * endpoint, pipelined and malformed requests and every request-side limit;
 * tests/fuzz/make_daemon_corpus.py writes it. */
#include "fuzz_daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_session s;
    if (size == 0)
        return 0;
    size_t rest = size - 1;
    size_t cut = rest * data[0] / 255;
    fuzz_session_open(&s);
    fuzz_session_send(&s, data + 1, cut);
    fuzz_session_send(&s, data + 1 + cut, rest - cut);
    fuzz_session_close(&s);
    return 0;
}
