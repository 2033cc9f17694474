/* A fail-after-N allocator for the out-of-memory walks of the tests: it
 * is installed with ut_set_allocator, counts every allocation call, fails
 * the chosen one (or every one from it on), and counts the blocks still
 * live so that a walk can check nothing leaked. */
#ifndef UT_TEST_FAIL_ALLOC_H
#define UT_TEST_FAIL_ALLOC_H

#include <stdbool.h>

/* Installs the allocator: the `fail_at`-th allocation call from now on
 * (1-based) fails, and with `sticky` every later one too; `fail_at` 0 only
 * counts. Resets every counter. */
void fail_alloc_install(long fail_at, bool sticky);
/* Restores the C library's allocator. */
void fail_alloc_remove(void);
/* Allocation calls since fail_alloc_install. */
long fail_alloc_calls(void);
/* Whether some call failed. */
bool fail_alloc_failed(void);
/* Blocks taken since fail_alloc_install and not freed. */
long fail_alloc_live(void);

#endif
