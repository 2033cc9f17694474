/* uitrail tune --partial / --merge: the result of an unlabelled run over
 * some sessions as a file, read back and added up (tune.h), so that N
 * shards on N machines give the report one process over every session
 * gives. The format is PROTOCOL.md §5.3; a partial result comes from
 * another machine, so the reader trusts nothing in it: every count is
 * bounded and checked against the others. */
#include "tune.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PARTIAL_FORMAT "uitrail-tune-partial"
#define PARTIAL_VERSION 1

ut_status ut_tune_observed_alloc(ut_tune_observed *o)
{
    o->obs = ut_calloc(o->nsettings ? o->nsettings : 1, sizeof *o->obs);
    o->latency = ut_calloc(o->nsettings ? o->nsettings : 1, sizeof *o->latency);
    return o->obs && o->latency ? UT_OK : UT_ENOMEM;
}

void ut_tune_observed_free(ut_tune_observed *o)
{
    for (size_t k = 0; o->latency && k < o->nsettings; k++)
        ut_tune_hist_free(&o->latency[k]);
    ut_free(o->obs);
    ut_free(o->latency);
    *o = (ut_tune_observed){0};
}

/* ---- Writing ---- */

/* A count as a JSON integer (counts stay below UT_TUNE_COUNT_MAX). */
static json_t *count_json(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *grid_json(const ut_tune_grid *g)
{
    json_t *grid = json_object();
    for (size_t i = 0; grid && i < UT_TUNE_NPARAMS; i++) {
        json_t *values = json_array();
        for (size_t k = 0; values && k < g->nvalues[i]; k++) {
            double v = g->values[i][k];
            json_array_append_new(values, ut_stab_param_table[i].type == UT_STAB_PARAM_U32
                                              ? json_integer((json_int_t)v)
                                              : json_real(v));
        }
        json_object_set_new(grid, ut_tune_param_name(i), values);
    }
    return grid;
}

static json_t *setting_json(const ut_tune_obs *o, const ut_tune_hist *h)
{
    json_t *bins = json_array();
    for (size_t i = 0; bins && i < h->n; i++)
        json_array_append_new(bins, json_pack("[iI]", (int)h->bins[i].ms, (json_int_t)h->bins[i].count));
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "marks", count_json(o->marks), "flaps", count_json(o->flaps),
                     "caps", count_json(o->caps), "settled", count_json(o->settled), "unsettled",
                     count_json(o->unsettled), "latency_ms", bins);
}

ut_status ut_tune_observed_write(FILE *out, const ut_tune_observed *o)
{
    json_t *settings = json_array();
    for (size_t k = 0; settings && k < o->nsettings; k++)
        if (json_array_append_new(settings, setting_json(&o->obs[k], &o->latency[k])) != 0) {
            json_decref(settings);
            settings = NULL;
        }
    json_t *doc = settings ? json_pack("{s:s,s:i,s:o,s:o,s:o,s:o,s:o,s:o}", "format", PARTIAL_FORMAT, "version",
                                       PARTIAL_VERSION, "grid", grid_json(&o->grid), "sessions",
                                       count_json(o->sessions), "tabs", count_json(o->tabs), "answered",
                                       count_json(o->answered), "span_us", count_json(o->span_us), "settings",
                                       settings)
                           : NULL;
    if (!doc)
        return UT_ENOMEM;
    int rc = json_dumpf(doc, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (rc != 0 || fputc('\n', out) == EOF)
        return UT_EIO;
    return UT_OK;
}

/* ---- Reading ---- */

typedef struct reader {
    char *why;
    size_t whylen;
} reader;

static ut_status bad(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static ut_status bad(reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, r->whylen, fmt, ap);
    va_end(ap);
    return UT_EPROTO;
}

/* Reads the count `key` of `obj` into *out: an integer from 0 to
 * UT_TUNE_COUNT_MAX. */
static ut_status get_count(reader *r, const json_t *obj, const char *key, uint64_t *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (double)json_integer_value(v) > UT_TUNE_COUNT_MAX)
        return bad(r, "\"%s\": want a whole number from 0 to 2^53-1", key);
    *out = (uint64_t)json_integer_value(v);
    return UT_OK;
}

/* Refuses a key of `obj` that is not one of the `n` `known`. */
static ut_status only_keys(reader *r, const json_t *obj, const char *const *known, size_t n, const char *what)
{
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        size_t i = 0;
        while (i < n && strcmp(known[i], key) != 0)
            i++;
        if (i == n)
            return bad(r, "%s: unknown field (one of %zu expected)", what, n);
    }
    return UT_OK;
}

static ut_status read_grid(reader *r, const json_t *grid, ut_tune_grid *g)
{
    if (!json_is_object(grid) || json_object_size(grid) != UT_TUNE_NPARAMS)
        return bad(r, "\"grid\": want an object with every parameter of the scorer (%d)", UT_TUNE_NPARAMS);
    for (size_t i = 0; i < UT_TUNE_NPARAMS; i++) {
        const json_t *values = json_object_get(grid, ut_tune_param_name(i));
        size_t n = json_array_size(values);
        if (!json_is_array(values) || n == 0 || n > UT_TUNE_GRID_VALUES_MAX)
            return bad(r, "\"grid\": %s: want 1 to %d values", ut_tune_param_name(i), UT_TUNE_GRID_VALUES_MAX);
        for (size_t k = 0; k < n; k++) {
            const json_t *v = json_array_get(values, k);
            if (!json_is_number(v) || !ut_stab_param_ok(&ut_stab_param_table[i], json_number_value(v)))
                return bad(r, "\"grid\": %s: a value out of its bounds", ut_tune_param_name(i));
            g->values[i][k] = json_number_value(v);
        }
        g->nvalues[i] = n;
    }
    if (!ut_tune_grid_count(g))
        return bad(r, "\"grid\": more than %d settings", UT_TUNE_SETTINGS_MAX);
    return UT_OK;
}

/* Reads the latency histogram of one setting: [[ms, count], ...], ms
 * strictly ascending within [0, UT_TUNE_ACTION_SETTLE_MAX_MS], counts
 * from 1, adding up to `settled`. */
static ut_status read_hist(reader *r, const json_t *bins, uint64_t settled, ut_tune_hist *h)
{
    size_t n = json_array_size(bins);
    if (!json_is_array(bins) || n > settled)
        return bad(r, "\"latency_ms\": want an array of at most \"settled\" [ms, count] pairs");
    h->bins = ut_calloc(n ? n : 1, sizeof *h->bins);
    if (!h->bins)
        return UT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const json_t *pair = json_array_get(bins, i);
        const json_t *ms = json_array_get(pair, 0), *count = json_array_get(pair, 1);
        if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_integer(ms) || !json_is_integer(count) ||
            json_integer_value(ms) < 0 || json_integer_value(ms) > UT_TUNE_ACTION_SETTLE_MAX_MS ||
            json_integer_value(count) < 1 || (uint64_t)json_integer_value(count) > settled - h->total)
            return bad(r, "\"latency_ms\": want [ms from 0 to %d, count from 1] with counts adding up to \"settled\"",
                       UT_TUNE_ACTION_SETTLE_MAX_MS);
        uint32_t v = (uint32_t)json_integer_value(ms);
        if (h->n > 0 && v <= h->bins[h->n - 1].ms)
            return bad(r, "\"latency_ms\": the ms must be strictly ascending");
        h->bins[h->n++] = (ut_tune_hist_bin){v, (uint64_t)json_integer_value(count)};
        h->total += (uint64_t)json_integer_value(count);
    }
    if (h->total != settled)
        return bad(r, "\"latency_ms\": the counts add up to %llu, not \"settled\" %llu", (unsigned long long)h->total,
                   (unsigned long long)settled);
    return UT_OK;
}

static ut_status read_setting(reader *r, const json_t *s, uint64_t answered, ut_tune_obs *o, ut_tune_hist *h)
{
    static const char *const keys[] = {"marks", "flaps", "caps", "settled", "unsettled", "latency_ms"};
    if (!json_is_object(s))
        return bad(r, "\"settings\": want objects");
    ut_status st = only_keys(r, s, keys, sizeof keys / sizeof keys[0], "a setting");
    if (st == UT_OK)
        st = get_count(r, s, "marks", &o->marks);
    if (st == UT_OK)
        st = get_count(r, s, "flaps", &o->flaps);
    if (st == UT_OK)
        st = get_count(r, s, "caps", &o->caps);
    if (st == UT_OK)
        st = get_count(r, s, "settled", &o->settled);
    if (st == UT_OK)
        st = get_count(r, s, "unsettled", &o->unsettled);
    if (st != UT_OK)
        return st;
    if (o->flaps > o->marks || o->caps > o->marks)
        return bad(r, "a setting has more flaps or cap hits than stable marks");
    if (o->settled > answered || o->unsettled != answered - o->settled)
        return bad(r, "a setting's settled and unsettled actions do not add up to \"answered\"");
    return read_hist(r, json_object_get(s, "latency_ms"), o->settled, h);
}

/* The document once parsed: its header, grid and settings. */
static ut_status read_doc(reader *r, const json_t *doc, ut_tune_observed *o)
{
    static const char *const keys[] = {"format", "version", "grid", "sessions", "tabs", "answered", "span_us", "settings"};
    const json_t *format = json_object_get(doc, "format"), *version = json_object_get(doc, "version");
    if (!json_is_object(doc) || !json_is_string(format) || strcmp(json_string_value(format), PARTIAL_FORMAT) != 0)
        return bad(r, "not a partial result of uitrail tune (want {\"format\":\"%s\", ...})", PARTIAL_FORMAT);
    if (!json_is_integer(version) || json_integer_value(version) != PARTIAL_VERSION)
        return bad(r, "\"version\": this uitrail reads version %d", PARTIAL_VERSION);
    ut_status st = only_keys(r, doc, keys, sizeof keys / sizeof keys[0], "the partial result");
    if (st == UT_OK)
        st = read_grid(r, json_object_get(doc, "grid"), &o->grid);
    if (st == UT_OK)
        st = get_count(r, doc, "sessions", &o->sessions);
    if (st == UT_OK)
        st = get_count(r, doc, "tabs", &o->tabs);
    if (st == UT_OK)
        st = get_count(r, doc, "answered", &o->answered);
    if (st == UT_OK)
        st = get_count(r, doc, "span_us", &o->span_us);
    if (st != UT_OK)
        return st;
    const json_t *settings = json_object_get(doc, "settings");
    o->nsettings = o->grid.nsettings + UT_TUNE_NREFS;
    if (!json_is_array(settings) || json_array_size(settings) != o->nsettings)
        return bad(r, "\"settings\": want %zu (the grid's and the default and DOMQuake settings)", o->nsettings);
    if ((st = ut_tune_observed_alloc(o)) != UT_OK)
        return st;
    for (size_t k = 0; k < o->nsettings && st == UT_OK; k++)
        st = read_setting(r, json_array_get(settings, k), o->answered, &o->obs[k], &o->latency[k]);
    return st;
}

ut_status ut_tune_observed_parse(const char *data, size_t len, ut_tune_observed *o, char *why, size_t whylen)
{
    *o = (ut_tune_observed){0};
    reader r = {why, whylen};
    if (len > UT_TUNE_PARTIAL_MAX_BYTES) {
        snprintf(why, whylen, "over %u bytes", UT_TUNE_PARTIAL_MAX_BYTES);
        return UT_ELIMIT;
    }
    json_error_t err;
    json_t *doc = json_loadb(data, len, JSON_REJECT_DUPLICATES, &err);
    if (!doc) {
        snprintf(why, whylen, "bad JSON at byte %d: %s", err.position, err.text);
        return UT_EPROTO;
    }
    ut_status st = read_doc(&r, doc, o);
    json_decref(doc);
    if (st != UT_OK)
        ut_tune_observed_free(o);
    return st;
}

/* ---- Merging ---- */

static bool same_grid(const ut_tune_grid *a, const ut_tune_grid *b)
{
    for (size_t i = 0; i < UT_TUNE_NPARAMS; i++) {
        if (a->nvalues[i] != b->nvalues[i])
            return false;
        for (size_t k = 0; k < a->nvalues[i]; k++)
            if (a->values[i][k] != b->values[i][k])
                return false;
    }
    return true;
}

/* *into += add, false when the sum would pass UT_TUNE_COUNT_MAX. */
static bool add_count(uint64_t *into, uint64_t add)
{
    if ((double)*into + (double)add > UT_TUNE_COUNT_MAX)
        return false;
    *into += add;
    return true;
}

ut_status ut_tune_observed_merge(ut_tune_observed *into, const ut_tune_observed *add, char *why, size_t whylen)
{
    if (into->nsettings != add->nsettings || !same_grid(&into->grid, &add->grid)) {
        snprintf(why, whylen, "made with another grid: run every shard with the same --grid");
        return UT_EINVAL;
    }
    bool ok = add_count(&into->sessions, add->sessions) && add_count(&into->tabs, add->tabs) &&
              add_count(&into->answered, add->answered) && add_count(&into->span_us, add->span_us);
    for (size_t k = 0; ok && k < into->nsettings; k++) {
        ut_tune_obs *o = &into->obs[k];
        const ut_tune_obs *a = &add->obs[k];
        ok = add_count(&o->marks, a->marks) && add_count(&o->flaps, a->flaps) && add_count(&o->caps, a->caps) &&
             add_count(&o->settled, a->settled) && add_count(&o->unsettled, a->unsettled);
        ut_status st = ok ? ut_tune_hist_add(&into->latency[k], &add->latency[k]) : UT_ELIMIT;
        if (st == UT_ENOMEM)
            return st;
        ok = st == UT_OK;
    }
    if (!ok) {
        snprintf(why, whylen, "a count passes 2^53-1");
        return UT_ELIMIT;
    }
    return UT_OK;
}
