/* Integration tests of `uitraild --demo`: the demo files, their refusals,
 * /demo/config.json and the read-only demo token. The daemon serves a
 * private copy of a demo tree, so that escapes (symlinks, dot files) can
 * be planted without touching the source tree. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

typedef struct demo_tree {
    char root[64];
    char path[16][160];
    size_t n;
} demo_tree;

static void tree_add(demo_tree *t, const char *rel, const char *content, const char *link_to)
{
    char *p = t->path[t->n++];
    size_t root_len = strlen(t->root);
    memcpy(p, t->root, root_len);
    snprintf(p + root_len, sizeof t->path[0] - root_len, "/%s", rel);
    if (link_to) {
        assert_int_equal(symlink(link_to, p), 0);
    } else if (!content) {
        assert_int_equal(mkdir(p, 0700), 0);
    } else {
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
    }
}

/* Where the demo and the sender are below a demo root: a source tree,
 * or the data directory `meson install` fills (share/uitrail). */
typedef struct demo_layout {
    const char *parents[2]; /* directories made first, NULL: none */
    const char *demo;
    const char *sender;
} demo_layout;

static const demo_layout source_tree = {{"fixtures", "tools"}, "fixtures/demo", "tools/sender"};
static const demo_layout installed = {{NULL, NULL}, "demo", "sender"};

/* tree_add for `name` below the directory `dir` of the tree. */
static void tree_add_in(demo_tree *t, const char *dir, const char *name, const char *content,
                        const char *link_to)
{
    char rel[128];
    snprintf(rel, sizeof rel, "%s%s%s", dir, name[0] ? "/" : "", name);
    tree_add(t, rel, content, link_to);
}

/* The demo and the sender, laid out as `l`, with a few files, a symlink
 * out of the tree, a symlinked directory and a dot file. */
static void tree_make(demo_tree *t, const demo_layout *l)
{
    memset(t, 0, sizeof *t);
    snprintf(t->root, sizeof t->root, "/tmp/uitrail-demo-XXXXXX");
    assert_non_null(mkdtemp(t->root));
    tree_add(t, "outside.js", "secret outside the tree", NULL);
    for (size_t i = 0; i < 2 && l->parents[i]; i++)
        tree_add(t, l->parents[i], NULL, NULL);
    /* As deep below the root as in a source tree, so that the escapes
     * below reach outside.js in either layout. */
    const char *up = l->parents[0] ? "../../outside.js" : "../outside.js";
    tree_add_in(t, l->demo, "", NULL, NULL);
    tree_add_in(t, l->demo, "index.html", "<!doctype html><title>Catalog</title>", NULL);
    tree_add_in(t, l->demo, "app.js", "export {};", NULL);
    tree_add_in(t, l->demo, ".env.js", "hidden", NULL);
    tree_add_in(t, l->demo, "escape.js", NULL, up);
    tree_add_in(t, l->demo, "linked", NULL, l->parents[0] ? "../.." : "..");
    tree_add_in(t, l->sender, "", NULL, NULL);
    tree_add_in(t, l->sender, "uitrail.js", "export default {};", NULL);
    tree_add_in(t, l->sender, "package.json", "{}", NULL);
    tree_add_in(t, l->sender, "lib", NULL, NULL);
    tree_add_in(t, l->sender, "lib/tracker.js", "export function start() {}", NULL);
}

static void tree_remove(demo_tree *t)
{
    for (size_t i = t->n; i-- > 0;) {
        if (unlink(t->path[i]) != 0)
            rmdir(t->path[i]);
    }
    rmdir(t->root);
}

/* GET over TCP with a Host header; the status, and the body when `body`. */
static int get_tcp(const itest_daemon *d, const char *target, const char *host, char **body,
                   char **headers)
{
    int fd = itest_connect_tcp(d->http_port);
    assert_true(fd >= 0);
    char req[1024];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target,
             host);
    itest_response r;
    assert_true(itest_send(fd, req, strlen(req)) && itest_read_response(fd, &r, ITEST_TIMEOUT_MS));
    close(fd);
    int status = r.status;
    if (body)
        *body = ut_strndup(r.body.data ? r.body.data : "", r.body.len);
    if (headers)
        *headers = ut_strndup(r.headers.data ? r.headers.data : "", r.headers.len);
    itest_response_free(&r);
    return status;
}

/* Serves the files of a tree laid out as `l` and refuses every escape. */
static void serves_files_and_refuses_escapes(const demo_layout *l)
{
    demo_tree t;
    tree_make(&t, l);
    itest_daemon d;
    assert_true(itest_start(&d, (const char *const[]){"--demo", "--demo-root", t.root, NULL}));
    char host[64];
    snprintf(host, sizeof host, "127.0.0.1:%d", d.http_port);
    const struct {
        const char *target;
        int status;
        const char *type;
        const char *body;
    } cases[] = {
        {"/demo/", 200, "text/html; charset=utf-8", "<title>Catalog</title>"},
        {"/demo", 200, "text/html; charset=utf-8", "<title>Catalog</title>"},
        {"/demo/settings", 200, "text/html; charset=utf-8", "<title>Catalog</title>"},
        {"/demo/app.js", 200, "text/javascript; charset=utf-8", "export {};"},
        {"/sender/uitrail.js", 200, "text/javascript; charset=utf-8", "export default"},
        {"/sender/lib/tracker.js", 200, "text/javascript; charset=utf-8", "export function start"},
        {"/sender/lib/../package.json", 404, NULL, NULL},
        {"/sender/lib/", 404, NULL, NULL},
        {"/demo/missing.js", 404, NULL, NULL},
        {"/demo/escape.js", 404, NULL, NULL},          /* a symlink out of the tree */
        {"/demo/linked/outside.js", 404, NULL, NULL},  /* through a symlinked directory */
        {"/demo/../../outside.js", 404, NULL, NULL},
        {"/demo/%2e%2e/%2e%2e/outside.js", 404, NULL, NULL},
        {"/demo/.env.js", 404, NULL, NULL},
        {"/demo//app.js", 404, NULL, NULL},
        {"/sender/package.json", 404, NULL, NULL},     /* only the sender, its modules and its msgpack build */
        {"/sender/", 404, NULL, NULL},
        {"/demo/fixtures.js", 404, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *body, *headers;
        int status = get_tcp(&d, cases[i].target, host, &body, &headers);
        if (status != cases[i].status)
            fail_msg("%s: %d, not %d: %s", cases[i].target, status, cases[i].status, body);
        if (cases[i].type) {
            char want[128];
            snprintf(want, sizeof want, "content-type: %s\n", cases[i].type);
            assert_non_null(strstr(headers, want));
            assert_non_null(strstr(body, cases[i].body));
        }
        assert_null(strstr(body, "secret outside"));
        assert_null(strstr(headers, "access-control"));
        ut_free(body);
        ut_free(headers);
    }
    /* A page under another host name (DNS rebinding) is refused. */
    assert_int_equal(get_tcp(&d, "/demo/", "evil.test:80", NULL, NULL), 403);
    assert_int_equal(get_tcp(&d, "/demo/config.json", "evil.test:80", NULL, NULL), 403);
    snprintf(host, sizeof host, "localhost:%d", d.http_port);
    assert_int_equal(get_tcp(&d, "/demo/", host, NULL, NULL), 200);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    tree_remove(&t);
}

static void test_demo_serves_files_and_refuses_escapes(void **state)
{
    (void)state;
    serves_files_and_refuses_escapes(&source_tree);
}

/* The same files from an installed share/uitrail (demo/ and sender/),
 * given as --demo-root. */
static void test_demo_serves_an_installed_data_directory(void **state)
{
    (void)state;
    serves_files_and_refuses_escapes(&installed);
}

static void test_demo_token_reads_only_what_the_panel_needs(void **state)
{
    (void)state;
    demo_tree t;
    tree_make(&t, &source_tree);
    itest_daemon d;
    assert_true(itest_start(&d, (const char *const[]){"--demo", "--demo-root", t.root, NULL}));
    char host[64];
    snprintf(host, sizeof host, "127.0.0.1:%d", d.http_port);
    char *config;
    assert_int_equal(get_tcp(&d, "/demo/config.json", host, &config, NULL), 200);
    const char *at = strstr(config, "\"demoToken\":\"");
    assert_non_null(at);
    char token[128];
    assert_int_equal(sscanf(at + 13, "%127[0-9a-f]", token), 1);
    assert_int_equal(strlen(token), 64);
    assert_non_null(strstr(config, "\"transport\":\"websocket\""));
    assert_non_null(strstr(config, "\"ingestToken\":null"));
    /* The demo token is not the bearer token. */
    assert_string_not_equal(token, d.token);
    ut_free(config);

    char target[256];
    const struct {
        const char *path; /* the token is appended */
        bool with_token;
        int status;
    } cases[] = {
        {"/v1/tabs?token=", true, 200},
        {"/v1/tabs/none/trace?format=text&token=", true, 404},
        {"/v1/tabs/none/stable?token=", true, 404},
        {"/v1/events?tab=none&token=", false, 401},
        {"/v1/tabs?token=", false, 401},
        {"/metrics?token=", true, 401},
        {"/v1/ingest?token=", true, 401},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(target, sizeof target, "%s%s", cases[i].path, cases[i].with_token ? token : "wrong");
        int status = get_tcp(&d, target, host, NULL, NULL);
        if (status != cases[i].status)
            fail_msg("%s: %d, not %d", target, status, cases[i].status);
    }
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    tree_remove(&t);
}

/* A request over TCP without a Host (HTTP/1.0, or HTTP/1.1 that breaks
 * the rule) or with an empty one is refused: the Host check never reads an
 * absent header (UBSan once caught a NULL handed to strncasecmp here), and
 * neither does the Origin check of a WebSocket. */
static void test_demo_requests_without_host(void **state)
{
    (void)state;
    demo_tree t;
    tree_make(&t, &source_tree);
    itest_daemon d;
    assert_true(itest_start(&d, (const char *const[]){"--demo", "--demo-root", t.root, NULL}));
    static const char *const requests[] = {
        "GET /demo/config.json HTTP/1.1\r\nConnection: close\r\n\r\n",
        "GET /demo/config.json HTTP/1.0\r\n\r\n",
        "GET /demo/ HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n",
        "GET /sender/uitrail.js HTTP/1.1\r\nHost: \r\nOrigin:\r\nConnection: close\r\n\r\n",
        "GET /v1/ingest HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Origin:\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        int fd = itest_connect_tcp(d.http_port);
        assert_true(fd >= 0);
        itest_response r;
        assert_true(itest_send(fd, requests[i], strlen(requests[i])));
        if (!itest_read_response(fd, &r, ITEST_TIMEOUT_MS))
            fail_msg("request %zu: no answer", i);
        if (r.status < 400)
            fail_msg("request %zu: served with %d", i, r.status);
        itest_response_free(&r);
        close(fd);
    }
    char *log = itest_log(&d);
    if (strstr(log, "runtime error"))
        fail_msg("the daemon hit undefined behaviour:\n%s", log);
    ut_free(log);
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
    tree_remove(&t);
}

static void test_demo_off_is_not_found(void **state)
{
    (void)state;
    itest_daemon d;
    assert_true(itest_start(&d, NULL));
    char host[64];
    snprintf(host, sizeof host, "127.0.0.1:%d", d.http_port);
    static const char *const targets[] = {"/demo/", "/demo/config.json", "/sender/uitrail.js"};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        /* Without --demo these paths do not exist: 401 before a 404 over
         * TCP, and 404 over the Unix socket. */
        assert_int_equal(get_tcp(&d, targets[i], host, NULL, NULL), 401);
        char *body = itest_get(&d, targets[i], 404);
        assert_non_null(body);
        ut_free(body);
    }
    assert_int_equal(itest_stop(&d, SIGTERM), 0);
}

static void test_demo_root_must_hold_the_demo(void **state)
{
    (void)state;
    itest_daemon d;
    assert_false(itest_start(&d, (const char *const[]){"--demo", "--demo-root", "/tmp", NULL}));
    itest_stop(&d, SIGKILL);
    assert_false(itest_start(&d, (const char *const[]){"--demo", "--demo-root", "/nonexistent", NULL}));
    itest_stop(&d, SIGKILL);
    /* Found from the executable (the build tree is in the source tree). */
    if (getenv("UT_SOURCE_ROOT") && strstr(getenv("UITRAILD"), getenv("UT_SOURCE_ROOT")) == getenv("UITRAILD")) {
        assert_true(itest_start(&d, (const char *const[]){"--demo", NULL}));
        char *page = itest_get(&d, "/demo/", 200);
        assert_non_null(page);
        ut_free(page);
        assert_int_equal(itest_stop(&d, SIGTERM), 0);
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    /* UT_TEST_FILTER=PATTERN runs only the cases whose names match. */
    if (getenv("UT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("UT_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demo_serves_files_and_refuses_escapes),
        cmocka_unit_test(test_demo_serves_an_installed_data_directory),
        cmocka_unit_test(test_demo_token_reads_only_what_the_panel_needs),
        cmocka_unit_test(test_demo_requests_without_host),
        cmocka_unit_test(test_demo_off_is_not_found),
        cmocka_unit_test(test_demo_root_must_hold_the_demo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
