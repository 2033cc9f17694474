/* Fuzz target: the text of a scorer parameter's value (uitraild's
 * --stab-NAME options and config keys, `uitrail replay`, `uitrail tune
 * --grid`), parsed against every row of the parameter table. A value it
 * takes is one the scorer accepts; one it refuses has a reason naming the
 * parameter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "uitrail/stability.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    for (size_t i = 0; i < UT_STAB_PARAM_COUNT; i++) {
        const ut_stab_param_desc *d = &ut_stab_param_table[i];
        double v = 0;
        char err[200] = "";
        if (ut_stab_param_parse(d, text, &v, err, sizeof err) == UT_OK) {
            ut_stab_params p;
            ut_stab_params_defaults(&p);
            ut_stab_param_set(&p, d, v);
            FUZZ_CHECK(ut_stab_param_get(&p, d) == v, "a taken value is stored exactly");
            FUZZ_CHECK(ut_stab_params_check(&p) == UT_OK, "a taken value is one the scorer accepts");
        } else {
            FUZZ_CHECK(strncmp(err, d->name, strlen(d->name)) == 0, "a refusal names the parameter");
        }
    }
    free(text);
    return 0;
}
