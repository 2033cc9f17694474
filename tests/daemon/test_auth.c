/* Who may talk to the daemon (auth.c): the TCP token, the token file, peer uids, SIGHUP and a removed uid. */
#include "daemon_test_util.h"

/* ---- security ---- */

static void test_daemon_tcp_needs_token(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    assert_true(d.http_port > 0);
    itest_response r;
    assert_true(itest_http(&d, true, NULL, "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body.data, "missing 'Authorization: Bearer TOKEN'"));
    assert_non_null(strstr(r.headers.data, "www-authenticate: Bearer"));
    itest_response_free(&r);
    assert_true(itest_http(&d, true, "Bearer 0000", "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body.data, "wrong bearer token"));
    itest_response_free(&r);
    char auth[400];
    snprintf(auth, sizeof auth, "Bearer %s", d.token);
    assert_int_equal(strlen(d.token), 2 * UT_TOKEN_RANDOM_BYTES);
    assert_true(itest_http(&d, true, auth, "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.headers.data, "access-control"));
    itest_response_free(&r);
    /* A body is refused with the token missing too, before it is read. */
    assert_true(itest_http(&d, true, NULL, "POST", "/v1/ingest", "application/json", "[]", 2, &r));
    assert_int_equal(r.status, 401);
    itest_response_free(&r);
    /* The health check needs nothing. */
    assert_true(itest_http(&d, true, NULL, "GET", "/healthz", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 200);
    itest_response_free(&r);
    /* The token file is private. */
    char path[512];
    snprintf(path, sizeof path, "%s/%s", d.runtime_dir, UT_TOKEN_FILE_NAME);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(d.runtime_dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(d.http_sock, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(itest_metric(&d, "uitrail_auth_failures_total"), 3);
    stop_clean(&d);
}

static void test_daemon_token_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/uitrail-token-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/t", dir);
    FILE *f = fopen(path, "w");
    fputs("my-configured-token\n", f);
    fclose(f);
    itest_daemon d;
    start(&d, (const char *const[]){"--token-file", path, NULL});
    assert_string_equal(d.token, "my-configured-token");
    itest_response r;
    assert_true(itest_http(&d, true, "Bearer my-configured-token", "GET", "/v1/tabs", NULL, NULL, 0, &r));
    assert_int_equal(r.status, 200);
    itest_response_free(&r);
    stop_clean(&d);
    unlink(path);
    rmdir(dir);
}

/* Runs `fn` in a child process that has dropped its privileges to the
 * user `nobody`; returns the child's exit status. */
static int as_nobody(int (*fn)(const itest_daemon *), const itest_daemon *d)
{
    struct passwd *pw = getpwnam("nobody");
    uid_t uid = pw ? pw->pw_uid : 65534;
    gid_t gid = pw ? pw->pw_gid : 65534;
    pid_t pid = fork();
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
            _exit(100);
        _exit(fn(d));
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Exit 0: http.sock answered 401 and ingest.sock was closed at once. */
static int nobody_is_refused(const itest_daemon *d)
{
    itest_response r;
    if (!itest_http(d, false, NULL, "GET", "/v1/tabs", NULL, NULL, 0, &r))
        return 1;
    int rc = r.status == 401 && strstr(r.body.data, "--allow-uid") ? 0 : 2;
    itest_response_free(&r);
    int fd = itest_connect_unix(d->ingest_sock);
    if (fd < 0 || !itest_wait_closed(fd, ITEST_TIMEOUT_MS))
        rc = 3;
    return rc;
}

/* Exit 0: http.sock answered 200. */
static int nobody_is_served(const itest_daemon *d)
{
    itest_response r;
    if (!itest_http(d, false, NULL, "GET", "/v1/tabs", NULL, NULL, 0, &r))
        return 1;
    int rc = r.status == 200 ? 0 : 2;
    itest_response_free(&r);
    return rc;
}

/* Lets another uid reach the sockets past the file permissions, so that
 * the daemon's own SO_PEERCRED check is what decides. */
static void open_up_sockets(const itest_daemon *d)
{
    assert_int_equal(chmod(d->dir, 0711), 0);
    assert_int_equal(chmod(d->runtime_dir, 0711), 0);
    assert_int_equal(chmod(d->http_sock, 0666), 0);
    assert_int_equal(chmod(d->ingest_sock, 0666), 0);
}

static void test_daemon_peer_uid_refused(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        fprintf(stderr, "test_daemon_peer_uid_refused: skipped: needs root to switch to another uid\n");
        skip();
    }
    itest_daemon d;
    start(&d, NULL);
    open_up_sockets(&d);
    assert_int_equal(as_nobody(nobody_is_refused, &d), 0);
    assert_true(itest_metric(&d, "uitrail_connections_refused_total{cause=\"peer_uid\"}") >= 2);
    stop_clean(&d);

    struct passwd *pw = getpwnam("nobody");
    char uid[32];
    snprintf(uid, sizeof uid, "%lu", (unsigned long)(pw ? pw->pw_uid : 65534));
    start(&d, (const char *const[]){"--allow-uid", uid, NULL});
    open_up_sockets(&d);
    assert_int_equal(as_nobody(nobody_is_served, &d), 0);
    stop_clean(&d);
}

/* As nobody: opens an event stream, a stable wait and an ingest
 * connection, writes a byte to `ready`, and exits 0 once the daemon has
 * closed all three. */
static int nobody_holds_streams(const itest_daemon *d, int ready)
{
    int fds[3];
    static const char *const reqs[2] = {
        "GET /v1/events?tab=* HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /v1/tabs/busy/stable?wait_ms=60000 HTTP/1.1\r\nHost: x\r\n\r\n",
    };
    for (int i = 0; i < 2; i++) {
        fds[i] = itest_connect_unix(d->http_sock);
        if (fds[i] < 0 || !itest_send(fds[i], reqs[i], strlen(reqs[i])))
            return 1;
    }
    char head[256];
    if (itest_recv(fds[0], head, sizeof head, ITEST_TIMEOUT_MS) <= 0)
        return 2; /* the stream's headers: it is subscribed */
    fds[2] = itest_connect_unix(d->ingest_sock);
    if (fds[2] < 0)
        return 3;
    if (!itest_wait_metric(d, "uitrail_stable_waiters", 1, ITEST_TIMEOUT_MS))
        return 4;
    if (write(ready, "r", 1) != 1)
        return 5;
    for (int i = 0; i < 3; i++) {
        if (!itest_wait_closed(fds[i], ITEST_TIMEOUT_MS))
            return 10 + i;
    }
    return 0;
}

/* A reload that takes an --allow-uid away closes that uid's open event
 * streams, stable waits and ingest connections. */
static void test_daemon_sighup_cuts_a_removed_uid(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        fprintf(stderr, "test_daemon_sighup_cuts_a_removed_uid: skipped: needs root to switch to another uid\n");
        skip();
    }
    struct passwd *pw = getpwnam("nobody");
    uid_t uid = pw ? pw->pw_uid : 65534;
    gid_t gid = pw ? pw->pw_gid : 65534;
    char dir[] = "/tmp/uitrail-conf-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/uitraild.conf", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "allow-uid = %lu\n", (unsigned long)uid);
    fclose(f);
    itest_daemon d;
    start(&d, (const char *const[]){"--config", path, NULL});
    open_up_sockets(&d);
    make_busy_tab(&d, "busy");
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
            _exit(100);
        _exit(nobody_holds_streams(&d, ready[1]));
    }
    close(ready[1]);
    char byte;
    struct pollfd p = {ready[0], POLLIN, 0};
    assert_true(poll(&p, 1, ITEST_TIMEOUT_MS) == 1 && read(ready[0], &byte, 1) == 1);
    close(ready[0]);
    f = fopen(path, "w");
    fputs("# nobody is no longer allowed\n", f);
    fclose(f);
    kill(d.pid, SIGHUP);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("nobody's connections: status %d", status);
    assert_true(itest_log_wait(&d, "closed 3 connections of uids no longer allowed", ITEST_TIMEOUT_MS));
    stop_clean(&d);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_tcp_needs_token),
        cmocka_unit_test(test_daemon_token_file),
        cmocka_unit_test(test_daemon_peer_uid_refused),
        cmocka_unit_test(test_daemon_sighup_cuts_a_removed_uid),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = 0;
    failed += cmocka_run_group_tests_name("daemon_auth", tests, NULL, NULL);
    return failed;
}
