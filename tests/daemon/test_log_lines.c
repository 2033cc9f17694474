/* The daemon's log (log.c): bounded samples, lines no tab id can forge. */
#include "daemon_test_util.h"

static void test_daemon_log_sample_is_bounded(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    /* A string at the root, longer than the sample, with a forged line. */
    char bad[2 + 200];
    bad[0] = (char)0xd9;
    bad[1] = (char)200;
    memset(bad + 2, 'A', 200);
    memcpy(bad + 2, "\nFAKE", 5);
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(itest_send(fd, bad, sizeof bad));
    assert_true(itest_wait_closed(fd, ITEST_TIMEOUT_MS));
    close(fd);
    assert_true(itest_log_wait(&d, "protocol error", ITEST_TIMEOUT_MS));
    char *log = itest_log(&d);
    char *sample = strstr(log, "input: \"");
    assert_non_null(sample);
    sample += strlen("input: \"");
    char *end = strchr(sample, '"');
    assert_non_null(end);
    /* 64 bytes: two escaped as \xNN, a newline escaped, and 59 'A's. */
    assert_true(strncmp(sample, "\\xd9\\xc8\\x0aFAKE", 16) == 0);
    assert_int_equal(end - sample, 4 + 4 + 4 + 4 + (UT_LOG_SAMPLE_MAX_BYTES - 7));
    assert_null(strstr(log, "\nFAKE"));
    ut_free(log);
    stop_clean(&d);
}

/* Every log line is escaped whatever its arguments: a tab id with a
 * newline (or a NEL) cannot end the line and forge the next. */
static void test_daemon_log_line_not_forged_by_tab_id(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, (const char *const[]){"--log-level", "debug", NULL});
    /* The second event's seq jumps too far: its tab id is logged. */
    ut_buf b = mp("[[\"uitrail.nav\", 1700000000, {\"tab\":\"t\\nFORGED error: x\\u0085NEL\",\"seq\":1,\"url\":\"/a\",\"how\":\"load\"}],"
                  " [\"uitrail.nav\", 1700000001, {\"tab\":\"t\\nFORGED error: x\\u0085NEL\",\"seq\":9000000,\"url\":\"/b\",\"how\":\"load\"}]]");
    int fd = itest_connect_unix(d.ingest_sock);
    assert_true(send_synced(fd, b.data, b.len, "logged"));
    ut_buf_free(&b);
    close(fd);
    bool logged = itest_log_wait(&d, "jumps too far ahead", ITEST_TIMEOUT_MS);
    char *log = itest_log(&d);
    if (!logged)
        fail_msg("no log line of the seq jump:\n%s", log);
    assert_null(strstr(log, "\nFORGED"));
    assert_null(strstr(log, "\xc2\x85"));
    /* Ingest made the NEL a newline (ut_text_clean); the log escapes both. */
    assert_non_null(strstr(log, "tab 't\\x0aFORGED error: x\\x0aNEL'"));
    ut_free(log);
    stop_clean(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_log_sample_is_bounded),
        cmocka_unit_test(test_daemon_log_line_not_forged_by_tab_id),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = 0;
    failed += cmocka_run_group_tests_name("daemon_log", tests, NULL, NULL);
    return failed;
}
