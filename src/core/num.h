/* Integer helpers of the core, one copy each, for times that may come
 * from a hostile or wrong sender clock (any int64 value). */
#ifndef UITRAIL_CORE_NUM_H
#define UITRAIL_CORE_NUM_H

#include <stdint.h>

/* Division rounding toward minus infinity (b != 0), so that times before
 * an origin or the epoch fall in the slice, second or day they belong to. */
static inline int64_t ut__floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* a + b, saturating at INT64_MIN and INT64_MAX instead of wrapping, so a
 * hostile event time near either end of int64 cannot cause undefined
 * behaviour. */
static inline int64_t ut__add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

#endif
