/* The libFuzzer entry point every target defines. Built with -Dfuzz=true
 * it is driven by libFuzzer; otherwise fuzz_replay_main.c calls it on each
 * file of the target's seed corpus. */
#ifndef UITRAIL_FUZZ_H
#define UITRAIL_FUZZ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with `what` on stderr: an oracle of the target was violated. */
#define FUZZ_CHECK(cond, what)                                                       \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", what, __FILE__, __LINE__); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* The exit status of a harness failure (sysexits' EX_TEMPFAIL): tools/fuzz
 * reports it as such, not as a finding. */
#define FUZZ_HARNESS_EXIT 75

/* Exits with FUZZ_HARNESS_EXIT and `what` and errno's reason on stderr:
 * the harness could not do its own part (a socket, a temporary file), which
 * says nothing about the code under test. _exit, not abort: libFuzzer
 * neither saves the input nor calls it a crash. */
#define FUZZ_HARNESS_CHECK(cond, what)                                              \
    do {                                                                            \
        if (!(cond)) {                                                              \
            int fuzz_errno_ = errno;                                                \
            fprintf(stderr, "fuzz harness failed: %s: %s (errno %d) (%s:%d)\n", what, \
                    strerror(fuzz_errno_), fuzz_errno_, __FILE__, __LINE__);        \
            fflush(stderr);                                                         \
            _exit(FUZZ_HARNESS_EXIT);                                               \
        }                                                                           \
    } while (0)

#endif
