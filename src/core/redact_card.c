/* Card numbers within a run of digit groups: see redact_card.h. */
#include "redact_card.h"

#include <stdbool.h>
#include <stdint.h>

/* One digit of the run: where it is, and the Luhn prefix sums of the
 * digits before it (index < this digit's), split by the parity of their
 * index: plain[p] adds the digits of parity p as they are, doubled[p] as
 * the Luhn check doubles them. */
struct ut__card_digit {
    size_t pos;
    uint32_t plain[2];
    uint32_t doubled[2];
};

static bool is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = ut_realloc(p, n * size);
    if (q)
        *cap = n;
    return q;
}

/* The Luhn check of digits [s, e] (indices into the run): the last digit
 * is not doubled, the one before it is, and so on. d has one more entry
 * than the run has digits: the sums after the last digit. */
static bool luhn_window(const struct ut__card_digit *d, size_t s, size_t e)
{
    unsigned p = e & 1u; /* digits of e's parity are taken as they are */
    uint32_t sum = d[e + 1].plain[p] - d[s].plain[p] + d[e + 1].doubled[p ^ 1u] - d[s].doubled[p ^ 1u];
    return sum % 10 == 0;
}

static bool may_start(const unsigned char *t, size_t pos)
{
    return pos == 0 || !is_alnum(t[pos - 1]);
}

static bool may_end(const unsigned char *t, size_t len, size_t pos)
{
    size_t next = pos + 1;
    if (next == len)
        return true;
    if (is_alnum(t[next]))
        return false;
    return !((t[next] == '.' || t[next] == ',') && next + 1 < len && is_digit(t[next + 1]));
}

ut_status ut__card_find(ut__card_scan *scan, const char *text, size_t len, size_t run_start,
                        size_t run_end)
{
    const unsigned char *t = (const unsigned char *)text;
    scan->nspans = 0;
    size_t n = 0;
    for (size_t i = run_start; i < run_end; i++)
        n += is_digit(t[i]);
    struct ut__card_digit *d = grow(scan->digits, &scan->digits_cap, n + 1, sizeof *d);
    if (!d)
        return UT_ENOMEM;
    scan->digits = d;

    d[0] = (struct ut__card_digit){0};
    size_t k = 0;
    for (size_t i = run_start; i < run_end; i++) {
        if (!is_digit(t[i]))
            continue;
        uint32_t v = t[i] - '0';
        uint32_t twice = v * 2 > 9 ? v * 2 - 9 : v * 2;
        d[k].pos = i;
        d[k + 1] = d[k];
        d[k + 1].plain[k & 1] += v;
        d[k + 1].doubled[k & 1] += twice;
        k++;
    }

    size_t s = 0;
    while (s + UT__CARD_MIN_DIGITS <= n) {
        bool found = false;
        if (may_start(t, d[s].pos)) {
            size_t longest = n - s < UT__CARD_MAX_DIGITS ? n - s : UT__CARD_MAX_DIGITS;
            for (size_t l = longest; l >= UT__CARD_MIN_DIGITS && !found; l--) {
                size_t e = s + l - 1;
                if (!may_end(t, len, d[e].pos) || !luhn_window(d, s, e))
                    continue;
                ut__card_span *sp = grow(scan->spans, &scan->spans_cap, scan->nspans + 1, sizeof *sp);
                if (!sp)
                    return UT_ENOMEM;
                scan->spans = sp;
                sp[scan->nspans++] = (ut__card_span){d[s].pos, d[e].pos + 1};
                s = e + 1;
                found = true;
            }
        }
        if (!found)
            s++;
    }
    return UT_OK;
}

void ut__card_scan_free(ut__card_scan *scan)
{
    ut_free(scan->digits);
    ut_free(scan->spans);
    *scan = (ut__card_scan){0};
}
