/* Fuzz target: a partial result of `uitrail tune --unlabelled --partial`
 * (tools/uitrail/tune_partial.c), as `uitrail tune --merge` reads it from
 * another machine. A result it takes is consistent (the counts add up),
 * written back it reads as the same bytes, and merged with itself it
 * doubles; one it refuses has a reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tune.h"

/* Writes `o` to a string (caller frees with free: open_memstream's). */
static char *write_result(const ut_tune_observed *o, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    FUZZ_HARNESS_CHECK(f != NULL, "open_memstream");
    ut_status st = ut_tune_observed_write(f, o);
    fclose(f);
    if (st != UT_OK) {
        free(text);
        return NULL;
    }
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ut_tune_observed o, again;
    char why[256] = "";
    ut_status st = ut_tune_observed_parse((const char *)data, size, &o, why, sizeof why);
    if (st != UT_OK) {
        FUZZ_CHECK(st == UT_ENOMEM || why[0] != '\0', "a refusal has a reason");
        return 0;
    }
    for (size_t k = 0; k < o.nsettings; k++) {
        FUZZ_CHECK(o.obs[k].settled + o.obs[k].unsettled == o.answered, "the actions add up");
        FUZZ_CHECK(o.latency[k].total == o.obs[k].settled, "the latencies add up");
        FUZZ_CHECK(o.obs[k].flaps <= o.obs[k].marks, "no more flaps than marks");
    }
    size_t len = 0, len2 = 0;
    char *text = write_result(&o, &len);
    if (text && ut_tune_observed_parse(text, len, &again, why, sizeof why) == UT_OK) {
        char *text2 = write_result(&again, &len2);
        FUZZ_CHECK(text2 && len2 == len && memcmp(text, text2, len) == 0, "written back, it reads the same");
        free(text2);
        if (ut_tune_observed_merge(&again, &o, why, sizeof why) == UT_OK) {
            FUZZ_CHECK(again.sessions == 2 * o.sessions, "merged with itself, it doubles");
            for (size_t k = 0; k < o.nsettings; k++)
                FUZZ_CHECK(again.latency[k].total == 2 * o.latency[k].total, "its latencies double");
        }
        ut_tune_observed_free(&again);
    } else {
        FUZZ_CHECK(text == NULL, "what it wrote, it reads");
    }
    free(text);
    ut_tune_observed_free(&o);
    return 0;
}
