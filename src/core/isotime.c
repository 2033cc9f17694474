/* ISO-8601 times for JSON traces and event dumps, without printf or
 * gmtime_r (a JSON trace writes one or two per entry). */
#include "isotime.h"

#include <inttypes.h>

#include "num.h"

#define US_PER_S INT64_C(1000000)
#define US_PER_MS INT64_C(1000)
#define SECONDS_PER_DAY INT64_C(86400)
#define ISO_TIME_LEN 26 /* "\"YYYY-MM-DDTHH:MM:SS.mmmZ\"" */

/* The proleptic Gregorian date of day `days` since 1970-01-01 (Howard
 * Hinnant's civil_from_days): pure arithmetic, where gmtime_r takes the
 * time zone lock for every entry of a JSON trace. */
static void civil_from_days(int64_t days, int64_t *year, unsigned *month, unsigned *day)
{
    int64_t z = days + 719468;
    int64_t era = ut__floor_div(z, 146097);
    unsigned doe = (unsigned)(z - era * 146097);                          /* [0, 146096] */
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
    unsigned mp = (5 * doy + 2) / 153;                                    /* [0, 11] */
    *day = doy - (153 * mp + 2) / 5 + 1;
    *month = mp < 10 ? mp + 3 : mp - 9;
    *year = (int64_t)yoe + era * 400 + (*month <= 2);
}

/* Writes `v` as `width` digits ending before `end`. */
static void put_digits(char *end, unsigned v, int width)
{
    for (int i = 0; i < width; i++) {
        *--end = (char)('0' + v % 10);
        v /= 10;
    }
}

ut_status ut__buf_append_iso_time(ut_buf *out, int64_t time_us)
{
    int64_t secs = ut__floor_div(time_us, US_PER_S);
    /* Not time_us - secs * US_PER_S: that overflows at INT64_MIN. */
    unsigned ms = (unsigned)((time_us % US_PER_S + US_PER_S) % US_PER_S / US_PER_MS);
    int64_t days = ut__floor_div(secs, SECONDS_PER_DAY);
    unsigned sod = (unsigned)(secs - days * SECONDS_PER_DAY);
    int64_t year;
    unsigned month, day;
    civil_from_days(days, &year, &month, &day);
    if (year < 0 || year > 9999) /* "%04d" would write a sign or a fifth digit */
        return ut_buf_printf(out, "\"%04" PRId64 "-%02u-%02uT%02u:%02u:%02u.%03uZ\"", year, month,
                             day, sod / 3600, sod / 60 % 60, sod % 60, ms);
    char iso[ISO_TIME_LEN] = "\"0000-00-00T00:00:00.000Z\"";
    put_digits(iso + 5, (unsigned)year, 4);
    put_digits(iso + 8, month, 2);
    put_digits(iso + 11, day, 2);
    put_digits(iso + 14, sod / 3600, 2);
    put_digits(iso + 17, sod / 60 % 60, 2);
    put_digits(iso + 20, sod % 60, 2);
    put_digits(iso + 24, ms, 3);
    return ut_buf_append(out, iso, sizeof iso);
}
