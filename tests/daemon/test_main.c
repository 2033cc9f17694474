/* The process (main.c, daemon.c): signals, reload, start-up errors, a second daemon. */
#include "daemon_test_util.h"

/* ---- lifecycle ---- */

static void test_daemon_sigterm_with_open_connections(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    make_busy_tab(&d, "busy");
    int stream = open_stream(&d, "?tab=*");
    int waiter = itest_connect_unix(d.http_sock);
    static const char wait[] = "GET /v1/tabs/busy/stable?wait_ms=30000 HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(itest_send(waiter, wait, sizeof wait - 1));
    int partial = itest_connect_unix(d.ingest_sock);
    assert_true(itest_send(partial, "\x93\xabuitrail", 9));
    /* The daemon holds all three (and the scrape that asks it). */
    assert_true(itest_wait_metric(&d, "uitrail_stable_waiters", 1, ITEST_TIMEOUT_MS));
    assert_true(itest_wait_metric(&d, "uitrail_event_streams", 1, ITEST_TIMEOUT_MS));
    assert_true(itest_wait_metric(&d, "uitrail_connections", 4, ITEST_TIMEOUT_MS));
    char http_sock[400], ingest_sock[400];
    snprintf(http_sock, sizeof http_sock, "%s", d.http_sock);
    snprintf(ingest_sock, sizeof ingest_sock, "%s", d.ingest_sock);
    /* Exit status 0 also means the loop closed cleanly and, under
     * AddressSanitizer, that nothing leaked. */
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    assert_true(access(http_sock, F_OK) != 0);
    assert_true(access(ingest_sock, F_OK) != 0);
    close(stream);
    close(waiter);
    close(partial);
}

static void test_daemon_sigint_stops(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    assert_int_equal(itest_stop(&d, SIGINT), 0);
}

static void test_daemon_sighup_reloads_config(void **state)
{
    (void)state;
    char dir[] = "/tmp/uitrail-conf-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/uitraild.conf", dir);
    FILE *f = fopen(path, "w");
    fputs("[uitraild]\nlog-level = info\nring = 20\nmax-connections = 100\n", f);
    fclose(f);
    itest_daemon d;
    start(&d, (const char *const[]){"--config", path, NULL});
    f = fopen(path, "w");
    fputs("# edited\nlog-level = debug\nring = 30\nmax-connections = 2\n", f);
    fclose(f);
    kill(d.pid, SIGHUP);
    assert_true(itest_log_wait(&d, "reload: log-level changed from info to debug", ITEST_TIMEOUT_MS));
    assert_true(itest_log_wait(&d, "reload: max-connections changed from 100 to 2", ITEST_TIMEOUT_MS));
    assert_true(itest_log_wait(&d, "reload: ring changed from 20 to 30, which needs a restart", ITEST_TIMEOUT_MS));
    /* A broken file is reported and the settings stay. */
    f = fopen(path, "w");
    fputs("ring = many\n", f);
    fclose(f);
    kill(d.pid, SIGHUP);
    assert_true(itest_log_wait(&d, "reload failed, keeping the current settings", ITEST_TIMEOUT_MS));
    stop_clean(&d);
    unlink(path);
    rmdir(dir);
}

static void test_daemon_startup_errors(void **state)
{
    (void)state;
    char long_dir[200];
    memset(long_dir, 'd', sizeof long_dir);
    memcpy(long_dir, "/tmp/", 5);
    long_dir[110] = '\0';
    expect_start_failure((const char *const[]){"--runtime-dir", long_dir, NULL},
                         "uitraild: socket path too long (122 > 107 bytes): use --runtime-dir");
    rmdir(long_dir);
    expect_start_failure((const char *const[]){"--http", "0.0.0.0:7317", NULL},
                         "not a loopback address");
    expect_start_failure((const char *const[]){"--forward-tcp", "10.1.2.3:24224", NULL},
                         "not a loopback address");
    expect_start_failure((const char *const[]){"--ring", "0", NULL},
                         "--ring 0: expected a whole number from 1 to 1000");
    expect_start_failure((const char *const[]){"--max-connections", "0", NULL},
                         "--max-connections 0");
    expect_start_failure((const char *const[]){"--bogus", NULL}, "unknown option --bogus");
    expect_start_failure((const char *const[]){"--log-level", "loud", NULL},
                         "expected error, warn, info or debug");
    expect_start_failure((const char *const[]){"--token-file", "/nonexistent/t", NULL},
                         "--token-file /nonexistent/t");
    expect_start_failure((const char *const[]){"--redact", "(unclosed", "--runtime-dir", "/tmp/uitrail-never", NULL},
                         "uitraild: ");
    const char *many[2 * UT_ALLOW_UIDS_MAX + 4];
    size_t n = 0;
    for (int i = 0; i <= UT_ALLOW_UIDS_MAX; i++) {
        many[n++] = "--allow-uid";
        many[n++] = "1000";
    }
    many[n] = NULL;
    expect_start_failure(many, "--allow-uid: at most 64 uids");
    /* A configured token longer than UT_TOKEN_MAX_BYTES is refused. */
    char tok_dir[] = "/tmp/uitrail-tok-XXXXXX";
    assert_non_null(mkdtemp(tok_dir));
    char tok_path[128], conf_path[128];
    snprintf(tok_path, sizeof tok_path, "%s/t", tok_dir);
    FILE *f = fopen(tok_path, "w");
    for (int i = 0; i <= UT_TOKEN_MAX_BYTES; i++)
        fputc('k', f);
    fclose(f);
    expect_start_failure((const char *const[]){"--token-file", tok_path, NULL},
                         "the token must be 1 to 256 bytes");
    /* A config file is read with the same names, and checked as strictly. */
    snprintf(conf_path, sizeof conf_path, "%s/c", tok_dir);
    f = fopen(conf_path, "w");
    fputs("ring = 20\ncolour = blue\n", f);
    fclose(f);
    expect_start_failure((const char *const[]){"--config", conf_path, NULL},
                         "line 2: unknown setting 'colour'");
    /* Two bad lines: each with its own number and its own reason. */
    f = fopen(conf_path, "w");
    fputs("ring = 0\nlog-level = info\ncolour = blue\nnot a setting\n", f);
    fclose(f);
    expect_start_failure((const char *const[]){"--config", conf_path, NULL},
                         "line 1: --ring 0: expected a whole number from 1 to 1000; line 3: unknown "
                         "setting 'colour' (the names are uitraild's long options); line 4: expected "
                         "'name = value'");
    f = fopen(conf_path, "w");
    fputs("[server]\nring = 20\n", f);
    fclose(f);
    expect_start_failure((const char *const[]){"--config", conf_path, NULL},
                         "only [uitraild] (or none) is read");
    unlink(tok_path);
    unlink(conf_path);
    rmdir(tok_dir);
    /* A runtime directory others can read is refused. */
    char open_dir[] = "/tmp/uitrail-open-XXXXXX";
    assert_non_null(mkdtemp(open_dir));
    chmod(open_dir, 0755);
    expect_start_failure((const char *const[]){"--runtime-dir", open_dir, NULL},
                         "it must be 0700");
    rmdir(open_dir);
}

static void test_daemon_second_daemon_refused_and_stale_socket_removed(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    expect_start_failure((const char *const[]){"--runtime-dir", d.runtime_dir, "--http", "off", NULL},
                         "another uitraild is listening");
    /* A daemon killed hard leaves its sockets; the next start removes them. */
    char rt[300];
    snprintf(rt, sizeof rt, "%s", d.runtime_dir);
    kill(d.pid, SIGKILL);
    waitpid(d.pid, NULL, 0);
    d.pid = -1;
    assert_int_equal(access(d.http_sock, F_OK), 0);
    itest_daemon again;
    start(&again, (const char *const[]){"--runtime-dir", rt, NULL});
    assert_true(itest_log_wait(&again, "removed the stale socket", ITEST_TIMEOUT_MS));
    stop_clean(&again);
    itest_stop(&d, SIGKILL);
}

/* A second daemon refused on the same runtime directory leaves the first
 * one's token file and sockets as they were. */
static void test_daemon_second_daemon_leaves_the_first_ones_files(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    char token_path[400];
    snprintf(token_path, sizeof token_path, "%s/%s", d.runtime_dir, UT_TOKEN_FILE_NAME);
    char *before = itest_read_file(token_path, NULL);
    assert_non_null(before);
    expect_start_failure((const char *const[]){"--runtime-dir", d.runtime_dir, "--http", "off", NULL},
                         "another uitraild is listening");
    char *after = itest_read_file(token_path, NULL);
    if (!after)
        fail_msg("the refused daemon removed %s", token_path);
    assert_string_equal(before, after);
    ut_free(before);
    ut_free(after);
    assert_int_equal(access(d.http_sock, F_OK), 0);
    assert_int_equal(access(d.ingest_sock, F_OK), 0);
    /* The first daemon still answers with its token. */
    char auth[400];
    snprintf(auth, sizeof auth, "Bearer %s", d.token);
    itest_response r;
    assert_true(itest_http(&d, true, auth, "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 200);
    itest_response_free(&r);
    stop_clean(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_sigterm_with_open_connections),
        cmocka_unit_test(test_daemon_sigint_stops),
        cmocka_unit_test(test_daemon_sighup_reloads_config),
        cmocka_unit_test(test_daemon_startup_errors),
        cmocka_unit_test(test_daemon_second_daemon_refused_and_stale_socket_removed),
        cmocka_unit_test(test_daemon_second_daemon_leaves_the_first_ones_files),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = 0;
    failed += cmocka_run_group_tests_name("daemon_main", tests, NULL, NULL);
    return failed;
}
