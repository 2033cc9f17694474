/* Stable waits (waiters.c): GET /v1/tabs/{tab}/stable, with and without after=. */
#include "daemon_test_util.h"

/* ---- stability ---- */

static void test_daemon_stable_wait(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    /* A tab without mutations answers at once: nothing is known to change,
     * and its state is unknown (as in its JSON trace). */
    ingest_json(&d, "[\"uitrail.click\", 1700000000, {\"tab\":\"calm\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\"}]");
    char *body = itest_get(&d, "/v1/tabs/calm/stable?wait_ms=5000", 200);
    assert_non_null(body);
    assert_string_equal(body, "{\"stable\":true,\"state\":\"unknown\",\"marks\":0,\"since\":null,"
                              "\"intensity\":0.000,\"busy\":0}\n");
    ut_free(body);
    char *trace = itest_get(&d, "/v1/tabs/calm/trace?format=json", 200);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "\"page\":{\"stable\":true,\"state\":\"unknown\",\"marks\":0,"
                                  "\"since\":null,\"intensity\":0.000,\"busy\":0}}"));
    ut_free(trace);
    /* A busy page is not stable: the wait runs out. */
    make_busy_tab(&d, "busy");
    body = itest_get(&d, "/v1/tabs/busy/stable?wait_ms=300", 200);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"stable\":false"));
    assert_non_null(strstr(body, "\"state\":\"changing\""));
    ut_free(body);
    /* It answers when the page settles, before the wait runs out. */
    int fd = itest_connect_unix(d.http_sock);
    static const char wait[] = "GET /v1/tabs/busy/stable?wait_ms=30000 HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(itest_send(fd, wait, sizeof wait - 1));
    char json[256];
    snprintf(json, sizeof json,
             "[\"uitrail.mutation\", %.3f, {\"tab\":\"busy\",\"dom\":[1000,10],\"recs\":[[\"#root\",1,2,1,1,0]],\"busy\":0}]",
             now_s());
    ingest_json(&d, json);
    itest_response r;
    assert_true(itest_read_response(fd, &r, 20000));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body.data, "\"stable\":true"));
    itest_response_free(&r);
    close(fd);
    stop_clean(&d);
}

/* Sends one event of tab "act" at sender time `t` with `seq`: a nav, a
 * click, or a flush that renders a dialog into most of the page. */
static void act_event(const itest_daemon *d, const char *kind, double t, unsigned seq)
{
    char json[512];
    if (strcmp(kind, "nav") == 0)
        snprintf(json, sizeof json,
                 "[\"uitrail.nav\", %.3f, {\"tab\":\"act\",\"seq\":%u,\"url\":\"https://x.test/\",\"title\":\"T\",\"how\":\"load\"}]",
                 t, seq);
    else if (strcmp(kind, "click") == 0)
        snprintf(json, sizeof json,
                 "[\"uitrail.click\", %.3f, {\"tab\":\"act\",\"seq\":%u,\"role\":\"button\",\"name\":\"Open\",\"el\":\"open\"}]",
                 t, seq);
    else
        snprintf(json, sizeof json,
                 "[\"uitrail.mutation\", %.3f, {\"tab\":\"act\",\"seq\":%u,\"dom\":[1000,10],\"recs\":[[\"#root\",0,2,900,50,40000]],\"busy\":0}]",
                 t, seq);
    ingest_json(d, json);
}

/* Sends GET `target` on a new connection and returns it, unanswered. */
static int send_get(const itest_daemon *d, const char *target)
{
    int fd = itest_connect_unix(d->http_sock);
    assert_true(fd >= 0);
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", target);
    assert_true(itest_send(fd, req, (size_t)n));
    return fd;
}

/* The daemon's count of pending stable waits, read from /metrics. */
static long stable_waiters(const itest_daemon *d)
{
    char *metrics = itest_get(d, "/metrics", 200);
    assert_non_null(metrics);
    const char *at = strstr(metrics, "\nuitrail_stable_waiters ");
    long n = at ? strtol(at + strlen("\nuitrail_stable_waiters "), NULL, 10) : -1;
    ut_free(metrics);
    return n;
}

/* Issue 20 item 12: an assistant that just navigated asks for a tab whose
 * page has sent nothing yet. Without wait_ms: 404 at once, saying so; with
 * it: the wait holds until the tab appears and settles, or runs out (404). */
static void test_daemon_stable_waits_for_unknown_tab(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    char *body = itest_get(&d, "/v1/tabs/late/stable", 404);
    assert_non_null(body);
    assert_non_null(strstr(body, "unknown tab: no events were received for it yet"));
    ut_free(body);
    int plain = send_get(&d, "/v1/tabs/late/stable?wait_ms=30000");
    int after = send_get(&d, "/v1/tabs/late/stable?wait_ms=30000&after=2");
    /* Both are waiting before the tab's first event: no race with it. */
    for (int i = 0; stable_waiters(&d) != 2; i++) {
        assert_true(i < 2000);
        struct timespec tick = {0, 5 * 1000 * 1000};
        nanosleep(&tick, NULL); /* polls what the daemon says, asserts no time */
    }
    double t = now_s();
    char json[512];
    snprintf(json, sizeof json,
             "[\"uitrail.nav\", %.3f, {\"tab\":\"late\",\"seq\":1,\"url\":\"https://x.test/\",\"title\":\"T\",\"how\":\"load\"}]", t);
    ingest_json(&d, json);
    snprintf(json, sizeof json,
             "[\"uitrail.click\", %.3f, {\"tab\":\"late\",\"seq\":2,\"role\":\"button\",\"name\":\"Go\",\"el\":\"go\"}]", t + 0.01);
    ingest_json(&d, json);
    itest_response r;
    assert_true(itest_read_response(plain, &r, 20000));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body.data, "\"stable\":true"));
    itest_response_free(&r);
    assert_true(itest_read_response(after, &r, 20000));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body.data, "\"after\":\"settled\""));
    itest_response_free(&r);
    close(plain);
    close(after);
    /* A tab that never comes: the wait runs out, then the tab is unknown. */
    body = itest_get(&d, "/v1/tabs/never/stable?wait_ms=200", 404);
    assert_non_null(body);
    assert_non_null(strstr(body, "unknown tab"));
    ut_free(body);
    assert_int_equal(stable_waiters(&d), 0);
    stop_clean(&d);
}

/* The "since" of a page state answer, in ms. */
static long long since_of(const char *body)
{
    const char *p = strstr(body, "\"since\":");
    assert_non_null(p);
    return strtoll(p + 8, NULL, 10);
}

/* Act, then wait: the wait after the action answers with the first stable
 * state after the page answered it, never at once with the state from
 * before the action, whether it was asked before the action's response or
 * before the action's own event had arrived. */
static void test_daemon_stable_after_action(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    double t = now_s();
    act_event(&d, "nav", t, 1);
    act_event(&d, "mutation", t + 0.005, 2);
    char *body = itest_get(&d, "/v1/tabs/act/stable?wait_ms=10000", 200);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"stable\":true"));
    long long first_since = since_of(body);
    ut_free(body);

    /* The click arrives, then the wait; the dialog renders later. */
    t = now_s();
    act_event(&d, "click", t, 3);
    int after_seq = send_get(&d, "/v1/tabs/act/stable?wait_ms=20000&after=3");
    int plain = send_get(&d, "/v1/tabs/act/stable?wait_ms=20000");
    /* The wait is asked before the next action's event (seq 5) arrives. */
    int before_event = send_get(&d, "/v1/tabs/act/stable?wait_ms=20000&after=5");
    /* No sleep: the dialog's event says it rendered 150 ms later. */
    double dialog_t = t + 0.15;
    act_event(&d, "mutation", dialog_t, 4);
    long long dialog_ms = (long long)(dialog_t * 1000);
    itest_response r;
    for (int i = 0; i < 2; i++) {
        assert_true(itest_read_response(i ? plain : after_seq, &r, 20000));
        assert_int_equal(r.status, 200);
        assert_non_null(strstr(r.body.data, "\"stable\":true"));
        assert_true(since_of(r.body.data) > first_since);
        assert_true(since_of(r.body.data) >= dialog_ms);
        if (i == 0)
            assert_non_null(strstr(r.body.data, "\"after\":\"settled\""));
        itest_response_free(&r);
    }
    close(after_seq);
    close(plain);

    /* The event of action 5 comes now, and its response after it. */
    t = now_s();
    act_event(&d, "click", t, 5);
    double second_t = t + 0.1; /* the response, 100 ms later by its own time */
    act_event(&d, "mutation", second_t, 6);
    assert_true(itest_read_response(before_event, &r, 20000));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body.data, "\"after\":\"settled\""));
    assert_true(since_of(r.body.data) >= (long long)(second_t * 1000));
    itest_response_free(&r);
    close(before_event);

    /* A wait that runs out before the action arrived says so. */
    body = itest_get(&d, "/v1/tabs/act/stable?wait_ms=200&after=99", 200);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"stable\":false"));
    assert_non_null(strstr(body, "\"after\":\"unseen\""));
    ut_free(body);
    /* after_ms: an action time with no event (a click on nothing) is
     * settled once the dead-click timeout has passed it. */
    char target[128];
    snprintf(target, sizeof target, "/v1/tabs/act/stable?wait_ms=20000&after_ms=%lld",
             (long long)(now_s() * 1000));
    body = itest_get(&d, target, 200);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"after\":\"settled\""));
    ut_free(body);
    stop_clean(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_stable_wait),
        cmocka_unit_test(test_daemon_stable_after_action),
        cmocka_unit_test(test_daemon_stable_waits_for_unknown_tab),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = 0;
    failed += cmocka_run_group_tests_name("daemon_waiters", tests, NULL, NULL);
    return failed;
}
