/* File names of recordings: `<first-event-time>-<tab>.uitrail`, with the
 * tab id escaped for any file system (the mapping is in record.h). */
#include "record_int.h"

#include <time.h>
#include <xxhash.h>

static bool tab_byte_is_plain(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.'
        || c == '_' || c == '-';
}

ut_status ut_rec_file_name(int64_t first_event_us, ut_str tab, ut_buf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    ut_buf_mark mark = ut_buf_begin(out);

    /* Floor division keeps the microseconds in 0..999999 for times before
     * the epoch as well. */
    int64_t sec = first_event_us / 1000000;
    int64_t usec = first_event_us % 1000000;
    if (usec < 0) {
        usec += 1000000;
        sec -= 1;
    }
    time_t t = (time_t)sec;
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        return ut_buf_end(out, mark, UT_EINVAL);
    ut_buf_printf(out, "%04d%02d%02dT%02d%02d%02d.%06dZ-", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)usec);

    size_t escaped = 0;
    bool cut = false;
    for (size_t i = 0; i < tab.len; i++) {
        unsigned char c = (unsigned char)tab.ptr[i];
        size_t width = tab_byte_is_plain(c) ? 1 : 3;
        if (escaped + width > UT_REC_FILE_TAB_MAX_BYTES) {
            cut = true;
            break;
        }
        if (width == 1) {
            ut_buf_append(out, &tab.ptr[i], 1);
        } else {
            char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
            ut_buf_append(out, esc, sizeof esc);
        }
        escaped += width;
    }
    if (cut)
        ut_buf_printf(out, "~%016llx", (unsigned long long)XXH64(tab.ptr, tab.len, 0));
    ut_buf_append_cstr(out, UT_REC_FILE_SUFFIX);

    return ut_buf_end(out, mark, UT_OK);
}
