/* The libFuzzer entry point every target defines. Built with -Dfuzz=true
 * it is driven by libFuzzer; otherwise fuzz_replay_main.c calls it on each
 * file of the target's seed corpus. */
#ifndef UITRAIL_FUZZ_H
#define UITRAIL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with `what` on stderr: an oracle of the target was violated. */
#define FUZZ_CHECK(cond, what)                                                       \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", what, __FILE__, __LINE__); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

#endif
