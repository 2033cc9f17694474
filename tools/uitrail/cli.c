/* What the `uitrail` commands share (cli.h): usage errors, number parsing,
 * URL escaping. Below every command; main.c's table sits above them. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uitrail/limits.h"

int ut_cli_usage_error(const ut_cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "uitrail %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: uitrail %s %s\n(uitrail %s --help for more)\n", cmd->name, cmd->usage, cmd->name);
    return UT_CLI_USAGE;
}

int ut_cli_option_error(const ut_cli_command *cmd, int opt, char **argv)
{
    if (opt == ':')
        return ut_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
    return ut_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

int ut_cli_bad_option(const ut_cli_command *self, char **argv)
{
    return ut_cli_usage_error(self, "unknown option or missing value: %s", argv[optind - 1]);
}

void ut_cli_append_escaped(ut_buf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            ut_buf_append(out, p, 1);
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            ut_buf_append(out, esc, 3);
        }
    }
}

bool ut_cli_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

bool ut_cli_parse_shard(const char *s, uint32_t *shard, uint32_t *nshards)
{
    const char *slash = strchr(s, '/');
    if (!slash || slash == s || (size_t)(slash - s) >= 16)
        return false;
    char index[16];
    memcpy(index, s, (size_t)(slash - s));
    index[slash - s] = '\0';
    return ut_cli_parse_u32(index, 0, UT_IMPORT_SHARDS_MAX - 1, shard) &&
           ut_cli_parse_u32(slash + 1, 1, UT_IMPORT_SHARDS_MAX, nshards) && *shard < *nshards;
}
