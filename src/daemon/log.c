/* Logging: one line per event worth a line, on stderr, with a timestamp.
 * Samples of bad input pass through ut__sanitize so that a hostile peer
 * can neither forge log lines nor flood them; and every line, whatever its
 * arguments (a tab id, a path, an origin), is escaped once more on its way
 * out (escape_line), so that no argument can end it or start another. */
#include "log.h"

#include "clock.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static ut__log_level log_threshold = UT__LOG_INFO;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void ut__log_set_level(ut__log_level level)
{
    log_threshold = level;
}

bool ut__log_enabled(ut__log_level level)
{
    return level <= log_threshold;
}

const char *ut__log_level_name(ut__log_level level)
{
    return level <= UT__LOG_DEBUG ? level_names[level] : "?";
}

bool ut__log_level_parse(const char *name, ut__log_level *out)
{
    for (size_t i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
        if (strcasecmp(name, level_names[i]) == 0) {
            *out = (ut__log_level)i;
            return true;
        }
    }
    return false;
}

/* Copies the NUL-terminated `in` into `out` (`cap` bytes, not
 * terminated), returning the length, with every byte that could end a
 * line or hide one written as \xNN: ASCII controls and DEL, and the UTF-8
 * of the C1 controls (U+0080..U+009F, NEL among them) and of U+2028 and
 * U+2029, which some log viewers split lines at. */
static size_t escape_line(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)in;
    size_t o = 0;
    for (size_t i = 0; p[i]; i++) {
        unsigned char ch = p[i];
        size_t run = 0; /* bytes to escape from here */
        if (ch < 0x20 || ch == 0x7f)
            run = 1;
        else if (ch == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
            run = 2;
        else if (ch == 0xe2 && p[i + 1] == 0x80 && (p[i + 2] == 0xa8 || p[i + 2] == 0xa9))
            run = 3;
        if (run == 0) {
            if (o + 1 > cap)
                break;
            out[o++] = (char)ch;
            continue;
        }
        if (o + 4 * run > cap)
            break;
        for (size_t k = 0; k < run; k++) {
            unsigned char b = p[i + k];
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[b >> 4];
            out[o++] = hex[b & 15];
        }
        i += run - 1;
    }
    return o;
}

void ut__log(ut__log_level level, const char *fmt, ...)
{
    if (!ut__log_enabled(level))
        return;
    int64_t now_us = ut__clock_wall_us();
    time_t now_s = (time_t)(now_us / 1000000);
    struct tm tm;
    gmtime_r(&now_s, &tm);
    char line[1024];
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ uitraild %s: ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, (long)(now_us % 1000000 / 1000), level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    char out[4 * sizeof line + 2];
    size_t len = escape_line(line, out, sizeof out - 1);
    out[len++] = '\n';
    /* One write per line keeps lines whole when stderr is shared. */
    fwrite(out, 1, len, stderr);
    fflush(stderr);
}

void ut__sanitize(const void *data, size_t len, char *out, size_t outlen)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = data;
    size_t o = 0;
    if (outlen == 0)
        return;
    if (len > UT_LOG_SAMPLE_MAX_BYTES)
        len = UT_LOG_SAMPLE_MAX_BYTES;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = p[i];
        char esc[4];
        size_t n;
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            n = 2;
        } else if (ch >= 0x20 && ch < 0x7f) {
            esc[0] = (char)ch;
            n = 1;
        } else {
            esc[0] = '\\';
            esc[1] = 'x';
            esc[2] = hex[ch >> 4];
            esc[3] = hex[ch & 15];
            n = 4;
        }
        if (o + n >= outlen)
            break;
        memcpy(out + o, esc, n);
        o += n;
    }
    out[o] = '\0';
}

bool ut__log_throttle_pass(ut__log_throttle *t, uint64_t now_ms, uint32_t burst, uint32_t interval_ms,
                           uint64_t *held)
{
    t->seen++;
    bool pass = t->seen <= burst || t->last_ms == 0 || now_ms - t->last_ms >= interval_ms;
    if (!pass) {
        t->held++;
        return false;
    }
    *held = t->held;
    t->held = 0;
    t->last_ms = now_ms ? now_ms : 1;
    return true;
}
