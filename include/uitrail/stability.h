/* uitrail: the page-stability scorer (issue 4), one per tab, pure.
 *
 * It turns `uitrail.mutation` records into an intensity and into marks
 * (stable/changing transitions). A mark's time is computed from event
 * times, never from when ut_stab_advance happened to be called, so live and
 * replayed input give identical marks. All times are the sender's clock in
 * microseconds since the epoch. */
#ifndef UITRAIL_STABILITY_H
#define UITRAIL_STABILITY_H

#include "uitrail/common.h"
#include "uitrail/event.h"
#include "uitrail/stab_params.h"

typedef enum ut_page_state { UT_PAGE_STABLE, UT_PAGE_CHANGING } ut_page_state;

typedef enum ut_stab_model {
    UT_STAB_MODEL_UITRAIL,  /* the default: DOMQuake improved (GUIDE.md, "Page stability") */
    UT_STAB_MODEL_DOMQUAKE, /* the published DOMQuake model, for comparison */
    UT_STAB_MODEL__COUNT
} ut_stab_model;

/* A model's name ("uitrail", "domquake"; "unknown" out of range), and the
 * model a name means (UT_EINVAL for none), for options and recordings. */
const char *ut_stab_model_name(ut_stab_model m);
ut_status ut_stab_model_from_name(const char *name, ut_stab_model *out);

#define UT__STAB_TYPE_U32 uint32_t
#define UT__STAB_TYPE_DOUBLE double
#define UT__STAB_PARAM_FIELD(name, type, min, min_open, max, def, unit, help) UT__STAB_TYPE_##type name;

/* Every tunable of the scorer: the model, and one field per row of
 * UT_STAB_PARAM_TABLE (stab_params.h), which documents each. The daemon's
 * options, recordings, `uitrail replay` and `uitrail tune` set them. */
typedef struct ut_stab_params {
    ut_stab_model model;
    UT_STAB_PARAM_TABLE(UT__STAB_PARAM_FIELD)
} ut_stab_params;

/* One row of UT_STAB_PARAM_TABLE, for the code that walks them all. */
typedef enum ut_stab_param_type { UT_STAB_PARAM_U32, UT_STAB_PARAM_DOUBLE } ut_stab_param_type;
typedef struct ut_stab_param_desc {
    const char *name;   /* the field's name: recordings, `uitrail tune --grid`; the options
                         * are named after it (ut_stab_param_option) */
    ut_stab_param_type type;
    size_t offset;      /* in ut_stab_params */
    double min, max;    /* inclusive bounds, but min is excluded when min_open */
    bool min_open;
    double def;         /* the uitrail default */
    const char *unit;   /* "ms" or "" */
    const char *help;
} ut_stab_param_desc;

/* The rows, in table order: ut_stab_param_table[0 .. UT_STAB_PARAM_COUNT). */
extern const ut_stab_param_desc ut_stab_param_table[UT_STAB_PARAM_COUNT];
/* The option of `d`: "stab-" and its name with dashes for underscores
 * (uitraild's option and config key, `uitrail replay`'s option). */
#define UT_STAB_PARAM_OPTION_MAX 64
void ut_stab_param_option(const ut_stab_param_desc *d, char *buf, size_t len);
/* The row whose name or option is `name`; NULL for none. */
const ut_stab_param_desc *ut_stab_param_find(const char *name);
double ut_stab_param_get(const ut_stab_params *p, const ut_stab_param_desc *d);
/* Sets the field (a U32 one to v converted; v must be within bounds). */
void ut_stab_param_set(ut_stab_params *p, const ut_stab_param_desc *d, double v);
/* Whether `v` is a value of `d`: finite, within its bounds, whole for U32. */
bool ut_stab_param_ok(const ut_stab_param_desc *d, double v);
/* Parses the text of a value of `d` (a decimal number). UT_EINVAL with
 * ut_stab_param_bounds_text in `err` (naming the parameter, its bounds and
 * unit) when it is not a value of `d`. */
ut_status ut_stab_param_parse(const ut_stab_param_desc *d, const char *text, double *out, char *err,
                              size_t errlen);
/* Writes "NAME must be a (whole) number from MIN to MAX UNIT" for `d`. */
void ut_stab_param_bounds_text(const ut_stab_param_desc *d, char *err, size_t errlen);

/* The defaults of the uitrail model (ut_stab_params_defaults) or of the
 * published DOMQuake model (ut_stab_params_defaults_for), documented
 * field by field in stability.c. */
void ut_stab_params_defaults(ut_stab_params *p);
void ut_stab_params_defaults_for(ut_stab_params *p, ut_stab_model model);

/* UT_OK when the model is known and every parameter is a value of its row
 * (ut_stab_param_ok); UT_EINVAL otherwise. ut_stab_new checks the same. */
ut_status ut_stab_params_check(const ut_stab_params *p);
/* The name of the first parameter of `p` that is not a value of its row
 * ("model" for an unknown model); NULL when ut_stab_params_check accepts
 * `p`. */
const char *ut_stab_params_invalid(const ut_stab_params *p);

typedef struct ut_mark {
    ut_page_state state;
    int64_t time_us;
    double intensity;
    uint64_t marks; /* stable marks so far in this tab, this one included */
    uint32_t busy;
    uint32_t net;   /* requests in flight */
    bool gave_up;   /* a stable mark at a cap (busy_cap_ms, net_cap_ms): the
                     * page still showed a loading indicator or waited for
                     * requests ("stable (gave up waiting)") */
} ut_mark;

typedef struct ut_stab_status {
    ut_page_state state;
    int64_t since_us;  /* time of the last mark; 0 when none yet */
    double intensity;
    uint64_t marks;
    uint32_t busy;
    uint32_t net;       /* requests in flight, as the latest record said */
    bool gave_up;       /* stable because a cap ran out (ut_mark.gave_up) */
    bool has_mutations; /* the tab ever sent a mutation record */
} ut_stab_status;

typedef void (*ut_mark_fn)(void *ud, const ut_mark *m);

typedef struct ut_stab ut_stab;

/* A scorer with parameters `p` (NULL: the uitrail defaults). UT_EINVAL
 * when ut_stab_params_check refuses them, UT_ENOMEM; *out is NULL then.
 * A new scorer is "changing" with no marks: its page starts at the first
 * ut_stab_page_load or mutation, and its first mark is the stable mark
 * after that page's initial render. Scoring never allocates. */
ut_status ut_stab_new(const ut_stab_params *p, ut_stab **out);
void ut_stab_free(ut_stab *s);
/* The bytes a scorer from ut_stab_new holds (one allocation of a fixed
 * size, its copy of the parameters included). */
size_t ut_stab_size(void);

/* A page load or reload starts a new page: history is forgotten. */
void ut_stab_page_load(ut_stab *s, int64_t t_us, ut_mark_fn emit, void *ud);

/* What one mutation flush amounted to, for the click it may answer. */
typedef enum ut_stab_change {
    UT_STAB_CHANGE_NONE = 0, /* nothing that counts (background churn, no weight) */
    UT_STAB_CHANGE_MINOR,    /* significant for stability through the leaf floor
                                alone (text swapped in leaves): a click is not
                                dead, but its outcome is not "page changed" */
    UT_STAB_CHANGE_VISIBLE,  /* elements added, removed or restructured, with a
                                weight of at least the exit threshold before
                                the leaf floor: a click's outcome "page changed" */
    UT_STAB_CHANGE_AWAITED,  /* nothing visible, but requests a user action
                                started are in flight: the action's answer is
                                on its way (the page reads changing until it
                                came and settled) */
} ut_stab_change;

/* Scores one mutation record (ev->kind == UT_KIND_MUTATION) at ev->time_us,
 * first emitting any mark due at or before that time, and says what the
 * flush amounted to. */
ut_stab_change ut_stab_mutation(ut_stab *s, const ut_event *ev, ut_mark_fn emit, void *ud);

/* A user action (a click, a change, a submit) at `t_us`. A significant
 * flush within action_window_ms of it is its response, never background
 * churn: on a stable page it is a "changing" mark dated at the action,
 * however small. The response's stable mark ends the action. DOMQuake
 * ignores actions. */
void ut_stab_action(ut_stab *s, int64_t t_us, ut_mark_fn emit, void *ud);

/* A dialog, menu or listbox opened or closed at `t_us`: a change of the
 * page's state however few nodes it touched ("changing" on a stable page,
 * at the action when it answers one, then a stable mark quiet_ms later).
 * DOMQuake ignores dialogs. */
void ut_stab_dialog(ut_stab *s, int64_t t_us, ut_mark_fn emit, void *ud);

/* Moves the scorer's clock to `t_us`, emitting every mark due by then.
 * The clock never moves back: a time behind it emits what is due by that
 * time, and an event older than the clock is scored at the clock's time. */
void ut_stab_advance(ut_stab *s, int64_t t_us, ut_mark_fn emit, void *ud);

/* The earliest time at which a mark may become due; INT64_MAX when none
 * is pending. The daemon arms one timer on it. */
int64_t ut_stab_next_deadline(const ut_stab *s);

void ut_stab_status_get(const ut_stab *s, ut_stab_status *out);

/* "stable" or "changing". */
const char *ut_page_state_name(ut_page_state st);

/* Appends one mark as the JSON object printed by `uitrail replay --format
 * marks`, with no newline:
 * {"tab":"t","time":<ms since epoch>,"state":"stable","intensity":0.123,"marks":1}
 * time is the mark's time in whole milliseconds (rounded down), intensity
 * has three decimals; a mark that gave up waiting adds "gave_up":true. Returns UT_ENOMEM when `out` cannot grow. */
ut_status ut_mark_json(ut_buf *out, ut_str tab, const ut_mark *m);

#endif
