/* The protocol's words (protocol §1) and the stability models' names: one
 * table each, indexed by its enum and NULL-terminated, for the record
 * validator (src/wire/validate.c), the packer (src/wire/pack.c), the
 * serializers (src/core/trace*.c), the recording's meta entry and the
 * command lines alike (declared in uitrail/event.h and
 * uitrail/stability.h). An empty word is a value no record spells. */
#include "uitrail/event.h"
#include "uitrail/stability.h"

#include <string.h>

const char *const ut_nav_how_names[UT_NAV__COUNT + 1] = {
    [UT_NAV_LOAD] = "load", [UT_NAV_RELOAD] = "reload", [UT_NAV_PUSH] = "push",
    [UT_NAV_REPLACE] = "replace", [UT_NAV_POP] = "pop", [UT_NAV_HASH] = "hash",
};

const char *const ut_ctx_kind_names[UT_CTX__COUNT + 1] = {
    [UT_CTX_NONE] = "", [UT_CTX_ROW] = "row", [UT_CTX_TOOLBAR] = "toolbar",
    [UT_CTX_GROUP] = "group", [UT_CTX_DIALOG] = "dialog", [UT_CTX_MENU] = "menu",
    [UT_CTX_TABLIST] = "tablist", [UT_CTX_FORM] = "form", [UT_CTX_NAVIGATION] = "navigation",
    [UT_CTX_REGION] = "region", [UT_CTX_LIST] = "list",
};

const char *const ut_level_names[UT_LEVEL__COUNT + 1] = {
    [UT_LEVEL_NONE] = "", [UT_LEVEL_ERROR] = "error", [UT_LEVEL_WARNING] = "warning",
    [UT_LEVEL_INFO] = "info",
};

_Static_assert(UT_STATE_CHECKED == 1u << 0 && UT_STATE_EXPANDED == 1u << 1 &&
                   UT_STATE_SELECTED == 1u << 2 && UT_STATE_PRESSED == 1u << 3,
               "ut_state_names[i] names bit 1 << i");
const char *const ut_state_names[UT_STATE__COUNT + 1] = {"checked", "expanded", "selected", "pressed"};

const char *const ut_sort_names[UT_SORT__COUNT + 1] = {
    [UT_SORT_UNSET] = "", [UT_SORT_NONE] = "none", [UT_SORT_ASCENDING] = "ascending",
    [UT_SORT_DESCENDING] = "descending", [UT_SORT_OTHER] = "other",
};

const char *const ut_actor_names[UT_ACTOR__COUNT + 1] = {
    [UT_ACTOR_USER] = "user", [UT_ACTOR_SCRIPT] = "script", [UT_ACTOR_ASSISTANT] = "assistant",
};

static const char *const stab_model_names[UT_STAB_MODEL__COUNT] = {
    [UT_STAB_MODEL_UITRAIL] = "uitrail",
    [UT_STAB_MODEL_DOMQUAKE] = "domquake",
};

const char *ut_stab_model_name(ut_stab_model m)
{
    return (unsigned)m < UT_STAB_MODEL__COUNT ? stab_model_names[m] : "unknown";
}

ut_status ut_stab_model_from_name(const char *name, ut_stab_model *out)
{
    for (unsigned m = 0; m < UT_STAB_MODEL__COUNT; m++) {
        if (strcmp(name, stab_model_names[m]) == 0) {
            *out = (ut_stab_model)m;
            return UT_OK;
        }
    }
    return UT_EINVAL;
}
