/* ISO-8601 UTC times (isotime.c), for the JSON a trace or an event dump
 * writes. Internal to src/core and its tests. */
#ifndef UITRAIL_CORE_ISOTIME_H
#define UITRAIL_CORE_ISOTIME_H

#include "uitrail/common.h"

/* Appends `time_us` (microseconds since the epoch, any int64) as a quoted
 * JSON string, "\"YYYY-MM-DDTHH:MM:SS.mmmZ\"": exactly what
 * "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" of gmtime_r writes, years before
 * 0 and after 9999 included. */
ut_status ut__buf_append_iso_time(ut_buf *out, int64_t time_us);

#endif
