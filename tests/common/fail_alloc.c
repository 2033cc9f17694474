/* The tests' fail-after-N allocator (fail_alloc.h). */
#include "fail_alloc.h"

#include <stdlib.h>

#include "uitrail/common.h"

static long alloc_calls;   /* allocation calls since install */
static long alloc_fail_at; /* the call that fails first (1-based); -1: none */
static bool alloc_sticky;  /* every call from alloc_fail_at on fails */
static bool alloc_failed;  /* some call failed */
static long alloc_live;    /* blocks taken and not yet freed */

static bool should_fail(void)
{
    alloc_calls++;
    bool fail = alloc_fail_at > 0 &&
                (alloc_sticky ? alloc_calls >= alloc_fail_at : alloc_calls == alloc_fail_at);
    if (fail)
        alloc_failed = true;
    return fail;
}

static void *fail_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    void *p = malloc(n);
    if (p)
        alloc_live++;
    return p;
}

static void *fail_calloc(size_t n, size_t size)
{
    if (should_fail())
        return NULL;
    void *p = calloc(n, size);
    if (p)
        alloc_live++;
    return p;
}

static void *fail_realloc(void *old, size_t n)
{
    if (should_fail())
        return NULL;
    void *p = realloc(old, n);
    if (p && !old)
        alloc_live++;
    return p;
}

static void fail_free(void *p)
{
    if (p)
        alloc_live--;
    free(p);
}

void fail_alloc_install(long fail_at, bool sticky)
{
    static const ut_allocator failing = {fail_malloc, fail_calloc, fail_realloc, fail_free};
    alloc_calls = 0;
    alloc_fail_at = fail_at > 0 ? fail_at : -1;
    alloc_sticky = sticky;
    alloc_failed = false;
    alloc_live = 0;
    ut_set_allocator(&failing);
}

void fail_alloc_remove(void)
{
    ut_set_allocator(NULL);
}

long fail_alloc_calls(void) { return alloc_calls; }
bool fail_alloc_failed(void) { return alloc_failed; }
long fail_alloc_live(void) { return alloc_live; }
