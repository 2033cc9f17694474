/* `uitrail token`: mints a signed per-tab ingest token (uitrail/token.h)
 * with the secret uitraild reads from --ingest-secret-file, or checks one.
 * For an app's backend written in a shell, for trying the signed mode out,
 * and for telling why a daemon refused a token. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uitrail/daemon.h"
#include "uitrail/token.h"

/* A token lives an hour unless told otherwise; at most a week. */
#define TOKEN_TTL_DEFAULT_S 3600u
#define TOKEN_TTL_MAX_S ((uint32_t)UT_INGEST_TOKEN_TTL_MAX_S)

typedef struct token_args {
    const char *secret_file;
    const char *tab;
    const char *origin;
    const char *verify;
    uint32_t ttl_s;
} token_args;

static int parse_args(const ut_cli_command *self, int argc, char **argv, token_args *a)
{
    enum { OPT_SECRET = 256, OPT_TAB, OPT_TTL, OPT_ORIGIN, OPT_VERIFY };
    static const struct option opts[] = {
        {"secret-file", required_argument, NULL, OPT_SECRET},
        {"tab", required_argument, NULL, OPT_TAB},
        {"ttl", required_argument, NULL, OPT_TTL},
        {"origin", required_argument, NULL, OPT_ORIGIN},
        {"verify", required_argument, NULL, OPT_VERIFY},
        {NULL, 0, NULL, 0},
    };
    *a = (token_args){.ttl_s = TOKEN_TTL_DEFAULT_S};
    int ch;
    optind = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case OPT_SECRET: a->secret_file = optarg; break;
        case OPT_TAB: a->tab = optarg; break;
        case OPT_ORIGIN: a->origin = optarg; break;
        case OPT_VERIFY: a->verify = optarg; break;
        case OPT_TTL:
            if (!ut_cli_parse_u32(optarg, 1, TOKEN_TTL_MAX_S, &a->ttl_s))
                return ut_cli_usage_error(self, "--ttl '%s': expected seconds from 1 to %u", optarg,
                                          TOKEN_TTL_MAX_S);
            break;
        default:
            return ut_cli_usage_error(self, "unknown option or missing value: %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return ut_cli_usage_error(self, "unexpected argument '%s'", argv[optind]);
    if (!a->secret_file)
        return ut_cli_usage_error(self, "--secret-file is required: the file uitraild reads with "
                                        "--ingest-secret-file");
    if (!a->verify && !a->tab)
        return ut_cli_usage_error(self, "--tab is required: the tab id the page's sender uses");
    if (a->verify && (a->tab || a->origin))
        return ut_cli_usage_error(self, "--verify checks a token: it takes no --tab or --origin");
    return UT_CLI_OK;
}

static int verify(const char *token, ut_str secret)
{
    ut_token_claims c;
    const char *why = NULL;
    int64_t now = (int64_t)time(NULL);
    ut_token_verdict v = ut_token_verify(ut_str_cstr(token), secret, now, &c, &why);
    if (v != UT_TOKEN_VALID) {
        fprintf(stderr, "uitrail token: refused (%s): %s\n", ut_token_verdict_name(v), why);
        return UT_CLI_FAILED;
    }
    printf("valid: tab \"%s\", expires in %lld s (exp %lld), origin %s\n", c.tab,
           (long long)(c.exp_s - now), (long long)c.exp_s, c.origin_len ? c.origin : "any");
    return UT_CLI_OK;
}

static int run_token(const ut_cli_command *self, int argc, char **argv)
{
    token_args a;
    int rc = parse_args(self, argc, argv, &a);
    if (rc != UT_CLI_OK)
        return rc;
    char secret[UT_INGEST_SECRET_MAX_BYTES + 1], why[160];
    size_t secret_len = 0;
    if (ut_secret_file_read(a.secret_file, secret, sizeof secret, &secret_len, why, sizeof why) != UT_OK) {
        fprintf(stderr, "uitrail token: --secret-file %s: %s\n", a.secret_file, why);
        return UT_CLI_FAILED;
    }
    if (secret_len < UT_INGEST_SECRET_MIN_BYTES) {
        fprintf(stderr, "uitrail token: --secret-file %s: the secret must be at least %d bytes, as "
                        "uitraild requires (openssl rand -hex 32 > FILE)\n",
                a.secret_file, UT_INGEST_SECRET_MIN_BYTES);
        explicit_bzero(secret, sizeof secret);
        return UT_CLI_FAILED;
    }
    ut_str key = ut_str_from(secret, secret_len);
    if (a.verify) {
        rc = verify(a.verify, key);
        explicit_bzero(secret, sizeof secret);
        return rc;
    }
    ut_buf out = UT_BUF_INIT;
    ut_status st = ut_token_mint(ut_str_cstr(a.tab), (int64_t)time(NULL) + a.ttl_s,
                                 a.origin ? ut_str_cstr(a.origin) : UT_STR_NULL, key, &out);
    explicit_bzero(secret, sizeof secret);
    if (st == UT_EINVAL) {
        ut_buf_free(&out);
        return ut_cli_usage_error(self, "--tab must be 1 to %d bytes of UTF-8 without control "
                                        "characters; --origin printable ASCII such as "
                                        "https://app.example.com",
                                  UT_TAB_MAX_BYTES);
    }
    if (st != UT_OK) {
        ut_buf_free(&out);
        fprintf(stderr, "uitrail token: out of memory\n");
        return UT_CLI_FAILED;
    }
    printf("%s\n", out.data);
    ut_buf_free(&out);
    return UT_CLI_OK;
}

const ut_cli_command ut_cli_token = {
    .name = "token",
    .summary = "mint (or --verify) a signed per-tab ingest token for uitraild --ingest-secret-file",
    .usage = "--secret-file FILE --tab TAB [--ttl SECONDS] [--origin ORIGIN] | --secret-file FILE --verify TOKEN",
    .help = "Prints a token that lets a browser's WebSocket write events of one tab, and of no\n"
            "other, until it expires; the sender offers it as the subprotocol\n"
            "uitrail.token.<token> (its `token` option). The token is a JWT signed with\n"
            "HMAC-SHA256 (HS256) under the secret uitraild reads with --ingest-secret-file.\n\n"
            "Options:\n"
            "  --secret-file FILE  the shared secret (at least 32 bytes; openssl rand -hex 32 > FILE)\n"
            "  --tab TAB           the tab id the page's sender uses (its `tab` option)\n"
            "  --ttl SECONDS       how long the token is good for (default 3600, at most 604800)\n"
            "  --origin ORIGIN     good from pages of ORIGIN only, e.g. https://app.example.com\n"
            "  --verify TOKEN      check TOKEN instead: print its tab and expiry, or why it is refused\n\n"
            "Example:\n"
            "  uitrail token --secret-file /etc/uitrail/ingest-secret --tab tab-42 --ttl 600\n",
    .run = run_token,
};
