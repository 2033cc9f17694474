/* uitrail: shared vocabulary of every module — byte strings, status codes,
 * growable buffers and the pluggable allocator.
 *
 * Nothing here does I/O or reads a clock. */
#ifndef UITRAIL_COMMON_H
#define UITRAIL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A borrowed, length-delimited byte string. It is not NUL-terminated and it
 * never owns its bytes: the struct that hands one out says how long the
 * bytes live. */
typedef struct ut_str {
    const char *ptr;
    size_t len;
} ut_str;

#define UT_STR_NULL ((ut_str){NULL, 0})
/* A ut_str over a string literal. */
#define UT_STR_LIT(s) ((ut_str){"" s, sizeof(s) - 1})

static inline ut_str ut_str_from(const char *ptr, size_t len)
{
    return (ut_str){ptr, len};
}
ut_str ut_str_cstr(const char *s);
bool ut_str_eq(ut_str a, ut_str b);
bool ut_str_eq_cstr(ut_str a, const char *s);

/* Status codes. Every fallible function returns UT_OK (0) or one of these
 * negative values; there is no global error state to inspect. */
typedef enum ut_status {
    UT_OK = 0,
    UT_ENOMEM = -1,    /* an allocation failed */
    UT_EINVAL = -2,    /* invalid record or argument */
    UT_EDUP = -3,      /* duplicate (seq not above the last applied one) */
    UT_ENOENT = -4,    /* unknown tab or file */
    UT_ELIMIT = -5,    /* a named limit was exceeded */
    UT_EPROTO = -6,    /* malformed stream: the connection must close */
    UT_EAGAIN = -7,    /* need more input */
    UT_EIGNORED = -8,  /* well-formed but not for us (unknown tag) */
    UT_EIO = -9,       /* a read or write failed */
    UT_ECORRUPT = -10, /* stored data failed its checksum or is torn */
} ut_status;

/* A short, stable, lower-case name for a status ("out of memory"). */
const char *ut_status_str(ut_status st);

/* The allocator every uitrail module allocates through. Tests install a
 * failing one to walk the out-of-memory paths; ut_malloc and friends are
 * the only allocation calls in src/. */
typedef struct ut_allocator {
    void *(*malloc_fn)(size_t size);
    void *(*calloc_fn)(size_t n, size_t size);
    void *(*realloc_fn)(void *ptr, size_t size);
    void (*free_fn)(void *ptr);
} ut_allocator;

/* Installs `a` (NULL restores the C library's). Not thread-safe: call it
 * before any other uitrail function. Returns the previous allocator. */
ut_allocator ut_set_allocator(const ut_allocator *a);
void *ut_malloc(size_t size);
void *ut_calloc(size_t n, size_t size);
void *ut_realloc(void *ptr, size_t size);
void ut_free(void *ptr);
/* Copies `s` into a fresh NUL-terminated allocation; NULL on failure. */
char *ut_strndup(const char *s, size_t len);

/* A growable byte buffer. `data` is always NUL-terminated when len > 0 or
 * cap > 0, so text written into it can be handed to printf("%s"). A failed
 * append sets `oom` and leaves the content as it was; callers check `oom`
 * (or the return value) once at the end instead of after every append. */
typedef struct ut_buf {
    char *data;
    size_t len;
    size_t cap;
    bool oom;
} ut_buf;

#define UT_BUF_INIT ((ut_buf){NULL, 0, 0, false})

void ut_buf_free(ut_buf *b);
void ut_buf_reset(ut_buf *b); /* len = 0, keeps the storage, clears oom */
ut_status ut_buf_reserve(ut_buf *b, size_t extra);
ut_status ut_buf_append(ut_buf *b, const void *data, size_t len);
ut_status ut_buf_append_str(ut_buf *b, ut_str s);
ut_status ut_buf_append_cstr(ut_buf *b, const char *s);
ut_status ut_buf_printf(ut_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Decimal integers without printf (the trace and HTTP answers write many):
 * the same digits as "%" PRIu64 / "%" PRId64. */
ut_status ut_buf_append_u64(ut_buf *b, uint64_t v);
ut_status ut_buf_append_i64(ut_buf *b, int64_t v);
/* Appends `s` as a JSON string literal, quotes included, escaping what
 * RFC 8259 requires, and the characters of PROTOCOL.md §4.5 marked for
 * JSON (as \uXXXX). `s` must be valid UTF-8 (core text always is). */
ut_status ut_buf_append_json_str(ut_buf *b, ut_str s);
/* Appends JSON text that another encoder wrote (Jansson's, in `uitrail
 * mcp`) with the characters ut_buf_append_json_str escapes beyond JSON's
 * own ('<', '>', U+2028, U+2029, invisible characters: PROTOCOL.md §4.5)
 * escaped too. Sound because in JSON they can only stand inside strings. */
ut_status ut_buf_append_json_protected(ut_buf *b, ut_str json);
static inline ut_str ut_buf_str(const ut_buf *b)
{
    return (ut_str){b->data, b->len};
}

/* Cuts `b` back to its first `len` bytes (len <= b->len; a larger `len`
 * leaves `b` as it is). `oom` is untouched. */
void ut_buf_truncate(ut_buf *b, size_t len);

/* A transaction over a buffer: appends kept together or not at all, so
 * that no caller ever sees half an entry. ut_buf_begin notes where `b`
 * ends and clears `oom`; ut_buf_end keeps what was appended when every
 * append succeeded and `st` is UT_OK, and otherwise cuts `b` back to the
 * mark. Either way `oom` is left as it was before the transaction.
 * Returns UT_ENOMEM when an append failed, else `st`. */
typedef struct ut_buf_mark {
    size_t len;
    bool oom;
} ut_buf_mark;

ut_buf_mark ut_buf_begin(ut_buf *b);
ut_status ut_buf_end(ut_buf *b, ut_buf_mark m, ut_status st);

#endif
