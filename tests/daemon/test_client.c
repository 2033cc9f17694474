/* The `uitrail` client commands against a running daemon, and the runtime directory they trust. */
#include "daemon_test_util.h"

/* Runs the `uitrail` client ($UITRAIL) with `args`; its stdout goes into
 * `out` when not NULL. Returns its exit status. */
/* $XDG_RUNTIME_DIR for the client, when not NULL. */
static const char *client_xdg;

static int run_client_to(const char *const *args, ut_buf *out, int to_fd)
{
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], to_fd);
        if (client_xdg)
            setenv("XDG_RUNTIME_DIR", client_xdg, 1);
        close(pipefd[0]);
        const char *argv[32] = {getenv("UITRAIL")};
        size_t n = 1;
        for (size_t i = 0; args[i] && n < 31; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) > 0)
        if (out)
            ut_buf_append(out, buf, (size_t)n);
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_client(const char *const *args, ut_buf *out)
{
    return run_client_to(args, out, STDOUT_FILENO);
}

/* As run_client, with its stderr into `err`. */
static int run_client_err(const char *const *args, ut_buf *err)
{
    return run_client_to(args, err, STDERR_FILENO);
}

static void test_daemon_client_commands(void **state)
{
    const session *s = *state;
    itest_daemon d;
    start(&d, NULL);
    char *fixture = fixture_path(SESSION_FIXTURE);
    const char *rt = d.runtime_dir;
    assert_int_equal(run_client((const char *const[]){"send", fixture, "--runtime-dir", rt, NULL}, NULL), 0);
    ut_free(fixture);
    assert_int_equal(run_client((const char *const[]){"wait", s->tabs[0], "--runtime-dir", rt, NULL}, NULL), 0);
    ut_buf out = UT_BUF_INIT;
    assert_int_equal(run_client((const char *const[]){"trace", s->tabs[0], "--runtime-dir", rt, NULL}, &out), 0);
    assert_string_equal(out.data, s->reference[0]);
    ut_buf_reset(&out);
    assert_int_equal(run_client((const char *const[]){"trace", s->tabs[0], "--framed", "--limit", "2",
                                                      "--runtime-dir", rt, NULL}, &out), 0);
    assert_non_null(strstr(out.data, "--- Recent User Activity ---"));
    ut_buf_reset(&out);
    assert_int_equal(run_client((const char *const[]){"tabs", "--runtime-dir", rt, NULL}, &out), 0);
    assert_non_null(strstr(out.data, s->tabs[0]));
    ut_buf_reset(&out);
    assert_int_equal(run_client((const char *const[]){"stats", "--runtime-dir", rt, NULL}, &out), 0);
    assert_non_null(strstr(out.data, "uitrail_connections_total "));
    assert_null(strstr(out.data, "# TYPE"));
    assert_int_equal(run_client((const char *const[]){"trace", "no-such-tab", "--runtime-dir", rt, NULL}, NULL), 1);
    assert_int_equal(run_client((const char *const[]){"trace", "x", "--limit", "abc", NULL}, NULL), 2);
    assert_int_equal(run_client((const char *const[]){"wait", "no-such-tab", "--timeout", "10",
                                                      "--runtime-dir", rt, NULL}, NULL), 3);
    /* A busy page: the wait runs out. */
    make_busy_tab(&d, "busy");
    assert_int_equal(run_client((const char *const[]){"wait", "busy", "--timeout", "200",
                                                      "--runtime-dir", rt, NULL}, NULL), 1);
    /* A wait after an action: one that never arrives runs out; an action
     * time long past is settled with the page. */
    ut_buf_reset(&out);
    assert_int_equal(run_client((const char *const[]){"wait", s->tabs[0], "--after", "999999", "--timeout", "200",
                                                      "--runtime-dir", rt, NULL}, &out), 1);
    assert_non_null(strstr(out.data, "\"after\":\"unseen\""));
    assert_int_equal(run_client((const char *const[]){"wait", s->tabs[0], "--after-ms", "0",
                                                      "--runtime-dir", rt, NULL}, NULL), 0);
    assert_int_equal(run_client((const char *const[]){"wait", "x", "--after", "abc", NULL}, NULL), 2);
    assert_int_equal(run_client((const char *const[]){"wait", "x", "--after", "1", "--after-ms", "1", NULL}, NULL), 2);
    assert_int_equal(run_client((const char *const[]){"wait", "x", "--after-ms", "4294967296000", NULL}, NULL), 2);
    /* msgpack from standard input is sent as it is. */
    ut_buf_free(&out);
    stop_clean(&d);
    /* No daemon: a clear error. */
    assert_int_equal(run_client((const char *const[]){"tabs", "--runtime-dir", "/nonexistent", NULL}, NULL), 1);
}

/* In the default runtime directory ($XDG_RUNTIME_DIR/uitrail, or
 * /tmp/uitrail-UID, names anyone can predict) the client talks only to a
 * directory and sockets of its own uid, a directory no one else may enter,
 * and never through a symlink: anything else may be a stranger's daemon
 * waiting for our events and feeding us a forged trace. */
static void test_daemon_client_refuses_an_untrusted_runtime_dir(void **state)
{
    (void)state;
    itest_daemon d;
    start(&d, NULL);
    /* The daemon's directory, moved to where the client looks by default
     * (its sockets go with it). */
    char xdg_dir[400];
    snprintf(xdg_dir, sizeof xdg_dir, "%s/uitrail", d.dir);
    assert_int_equal(rename(d.runtime_dir, xdg_dir), 0);
    client_xdg = d.dir;
    ut_buf err = UT_BUF_INIT;
    assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 0);
    /* Open to others. */
    assert_int_equal(chmod(xdg_dir, 0755), 0);
    ut_buf_reset(&err);
    assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 1);
    assert_non_null(strstr(err.data, "it must be 0700: run chmod 700"));
    ut_buf_reset(&err);
    assert_int_equal(run_client_err((const char *const[]){"send", "-", NULL}, &err), 1);
    assert_non_null(strstr(err.data, "refusing to connect"));
    assert_int_equal(chmod(xdg_dir, 0700), 0);
    /* Another user's (only root can make one). */
    struct passwd *pw = getpwnam("nobody");
    if (geteuid() == 0 && pw) {
        assert_int_equal(chown(xdg_dir, pw->pw_uid, (gid_t)-1), 0);
        ut_buf_reset(&err);
        assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 1);
        assert_non_null(strstr(err.data, "not to us"));
        assert_int_equal(chown(xdg_dir, 0, (gid_t)-1), 0);
        /* A socket of another user in our directory. */
        char sock[500];
        snprintf(sock, sizeof sock, "%s/%s", xdg_dir, UT_HTTP_SOCKET_NAME);
        assert_int_equal(chown(sock, pw->pw_uid, (gid_t)-1), 0);
        ut_buf_reset(&err);
        assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 1);
        assert_non_null(strstr(err.data, "socket"));
        assert_int_equal(chown(sock, 0, (gid_t)-1), 0);
    }
    /* Through a symlink. */
    assert_int_equal(rename(xdg_dir, d.runtime_dir), 0);
    assert_int_equal(symlink(d.runtime_dir, xdg_dir), 0);
    ut_buf_reset(&err);
    assert_int_equal(run_client_err((const char *const[]){"tabs", NULL}, &err), 1);
    assert_non_null(strstr(err.data, "is a symlink"));
    unlink(xdg_dir);
    client_xdg = NULL;
    /* Named with --runtime-dir, the directory is the user's choice. */
    ut_buf_reset(&err);
    assert_int_equal(run_client_err((const char *const[]){"tabs", "--runtime-dir", d.runtime_dir, NULL}, &err), 0);
    ut_buf_free(&err);
    stop_clean(&d);
    /* The daemon refuses a symlinked directory too. */
    char dir[] = "/tmp/uitrail-link-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char target[64], via[64];
    snprintf(target, sizeof target, "%s/real", dir);
    snprintf(via, sizeof via, "%s/via", dir);
    assert_int_equal(mkdir(target, 0700), 0);
    assert_int_equal(symlink(target, via), 0);
    expect_start_failure((const char *const[]){"--runtime-dir", via, NULL}, "is a symlink");
    unlink(via);
    rmdir(target);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest session_tests[] = {
        cmocka_unit_test(test_daemon_client_commands),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_client_refuses_an_untrusted_runtime_dir),
    };
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    int failed = 0;
    failed += cmocka_run_group_tests_name("daemon_client", tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("daemon_client_sessions", session_tests, session_setup, session_teardown);
    return failed;
}
