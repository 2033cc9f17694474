/* The uitrail.meta entry that leads a recording: packing and parsing.
 *
 * The parameters are described once, in tables, and both directions walk
 * the same tables, so a parameter added to ut_config is recorded and read
 * back by adding one line. */
#include "record_int.h"
#include "wire_internal.h"

#include <math.h>
#include <msgpack.h>
#include <stddef.h>
#include <string.h>

typedef enum param_type { PARAM_U32, PARAM_BOOL, PARAM_DOUBLE } param_type;

typedef struct param_desc {
    const char *name;
    param_type type;
    size_t offset;
} param_desc;

static const param_desc engine_params[] = {
    {"ring_size", PARAM_U32, offsetof(ut_config, ring_size)},
    {"max_tabs", PARAM_U32, offsetof(ut_config, max_tabs)},
    {"idle_ms", PARAM_U32, offsetof(ut_config, idle_ms)},
    {"debounce_ms", PARAM_U32, offsetof(ut_config, debounce_ms)},
    {"reset_on_load", PARAM_BOOL, offsetof(ut_config, reset_on_load)},
    {"reorder_ms", PARAM_U32, offsetof(ut_config, reorder_ms)},
};

/* Every row of UT_STAB_PARAM_TABLE (stab_params.h): a parameter added
 * there is recorded and read back. */
#define PARAM_TYPE_U32 PARAM_U32
#define PARAM_TYPE_DOUBLE PARAM_DOUBLE
#define STAB_PARAM(name, type, min, min_open, max, def, unit, help) \
    {#name, PARAM_TYPE_##type, offsetof(ut_stab_params, name)},
static const param_desc stab_params[] = {UT_STAB_PARAM_TABLE(STAB_PARAM)};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Packing ---- */

static void pack_cstr(msgpack_packer *pk, const char *s)
{
    size_t len = strlen(s);
    msgpack_pack_str(pk, len);
    msgpack_pack_str_body(pk, s, len);
}

static void pack_str(msgpack_packer *pk, ut_str s)
{
    msgpack_pack_str(pk, s.len);
    msgpack_pack_str_body(pk, s.ptr, s.len);
}

static void pack_params(msgpack_packer *pk, const param_desc *descs, size_t n, const void *base)
{
    for (size_t i = 0; i < n; i++) {
        const char *field = (const char *)base + descs[i].offset;
        pack_cstr(pk, descs[i].name);
        switch (descs[i].type) {
        case PARAM_U32: {
            uint32_t v;
            memcpy(&v, field, sizeof v);
            msgpack_pack_uint32(pk, v);
            break;
        }
        case PARAM_BOOL: {
            bool v;
            memcpy(&v, field, sizeof v);
            if (v)
                msgpack_pack_true(pk);
            else
                msgpack_pack_false(pk);
            break;
        }
        case PARAM_DOUBLE: {
            double v;
            memcpy(&v, field, sizeof v);
            msgpack_pack_double(pk, v);
            break;
        }
        }
    }
}

static void pack_import(msgpack_packer *pk, const ut_rec_import *im)
{
    size_t n_gaps = im->n_gaps < UT_REC_IMPORT_GAPS_MAX ? im->n_gaps : UT_REC_IMPORT_GAPS_MAX;
    pack_cstr(pk, "import");
    msgpack_pack_map(pk, 3);
    pack_cstr(pk, "from");
    pack_str(pk, im->from);
    pack_cstr(pk, "file");
    pack_str(pk, im->file);
    pack_cstr(pk, "gaps");
    msgpack_pack_array(pk, n_gaps);
    for (size_t i = 0; i < n_gaps; i++)
        pack_str(pk, im->gaps[i]);
}

static void pack_event_time(msgpack_packer *pk, int64_t time_us)
{
    /* Times before the epoch cannot be an EventTime; they are packed as
     * the epoch rather than wrapped into the far future. */
    int64_t t = time_us > 0 ? time_us : 0;
    uint32_t sec = (uint32_t)(t / 1000000);
    uint32_t nsec = (uint32_t)(t % 1000000) * 1000u;
    char body[8] = {
        (char)(sec >> 24), (char)(sec >> 16), (char)(sec >> 8), (char)sec,
        (char)(nsec >> 24), (char)(nsec >> 16), (char)(nsec >> 8), (char)nsec,
    };
    msgpack_pack_ext(pk, sizeof body, 0);
    msgpack_pack_ext_body(pk, body, sizeof body);
}

ut_status ut__rec_pack_meta(const ut_rec_meta *meta, ut_buf *out)
{
    ut_buf_mark mark = ut_buf_begin(out);
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, ut__msgpack_write_buf);

    msgpack_pack_array(&pk, 3);
    pack_cstr(&pk, UT_REC_META_TAG);
    pack_event_time(&pk, meta->time_us);
    /* A journal's meta entry names no tab: its entries are many tabs'. */
    msgpack_pack_map(&pk, 4u + (meta->has_config ? 1u : 0u) + (meta->has_import ? 1u : 0u)
                              - (meta->journal ? 1u : 0u));
    pack_cstr(&pk, "format");
    pack_cstr(&pk, meta->journal ? UT_REC_JOURNAL_FORMAT : UT_REC_FORMAT);
    pack_cstr(&pk, "version");
    msgpack_pack_uint32(&pk, UT_REC_VERSION);
    pack_cstr(&pk, "daemon");
    pack_str(&pk, meta->daemon);
    if (!meta->journal) {
        pack_cstr(&pk, "tab");
        pack_str(&pk, meta->tab);
    }
    if (meta->has_config) {
        const ut_config *c = &meta->config;
        pack_cstr(&pk, "params");
        msgpack_pack_map(&pk, COUNT_OF(engine_params) + 2);
        pack_params(&pk, engine_params, COUNT_OF(engine_params), c);
        /* The patterns themselves are not recorded: the recording is
         * already redacted, and a pattern can name what it hides. */
        pack_cstr(&pk, "extra_redact_patterns");
        msgpack_pack_uint64(&pk, c->n_redact_patterns);
        pack_cstr(&pk, "stab");
        msgpack_pack_map(&pk, COUNT_OF(stab_params) + 1);
        pack_cstr(&pk, "model");
        pack_cstr(&pk, ut_stab_model_name(c->stab.model));
        pack_params(&pk, stab_params, COUNT_OF(stab_params), &c->stab);
    }
    if (meta->has_import)
        pack_import(&pk, &meta->import);

    /* A failed append may have been followed by smaller ones that
     * succeeded: the transaction drops the whole entry. */
    return ut_buf_end(out, mark, UT_OK);
}

/* ---- Parsing ---- */

/* Measures the msgpack object at p[*off] and moves *off past it. Returns
 * false for a truncated or malformed object, nesting deeper than
 * UT_WIRE_DEPTH_MAX, or a container announcing more elements than bytes
 * remain. msgpack-c reserves an array's storage from its header alone, so
 * this check is what keeps a hostile 5-byte header from asking it for
 * gigabytes (shared/style.md). */
static bool msgpack_measure(const uint8_t *p, size_t len, size_t *off, unsigned depth)
{
    if (*off >= len)
        return false;
    uint8_t b = p[(*off)++];
    size_t rest = len - *off;
    uint64_t payload = 0;    /* bytes of a str, bin or ext body */
    uint64_t elements = 0;   /* objects of an array or map */
    size_t width = 0;        /* bytes of the length field */
    bool container = false;

    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
        return true;
    if (b >= 0x80 && b <= 0x8f) {
        elements = 2u * (b & 0x0fu);
        container = true;
    } else if (b >= 0x90 && b <= 0x9f) {
        elements = b & 0x0fu;
        container = true;
    } else if (b >= 0xa0 && b <= 0xbf) {
        payload = b & 0x1fu;
    } else {
        switch (b) {
        case 0xc4: case 0xd9: width = 1; break;                 /* bin8, str8 */
        case 0xc5: case 0xda: width = 2; break;                 /* bin16, str16 */
        case 0xc6: case 0xdb: width = 4; break;                 /* bin32, str32 */
        case 0xc7: width = 1; payload = 1; break;               /* ext8 (+type) */
        case 0xc8: width = 2; payload = 1; break;               /* ext16 */
        case 0xc9: width = 4; payload = 1; break;               /* ext32 */
        case 0xca: case 0xce: case 0xd2: payload = 4; break;    /* 32-bit numbers */
        case 0xcb: case 0xcf: case 0xd3: payload = 8; break;    /* 64-bit numbers */
        case 0xcc: case 0xd0: payload = 1; break;
        case 0xcd: case 0xd1: payload = 2; break;
        case 0xd4: payload = 2; break;                          /* fixext1 */
        case 0xd5: payload = 3; break;
        case 0xd6: payload = 5; break;
        case 0xd7: payload = 9; break;
        case 0xd8: payload = 17; break;
        case 0xdc: width = 2; container = true; break;          /* array16 */
        case 0xdd: width = 4; container = true; break;          /* array32 */
        case 0xde: width = 2; container = true; break;          /* map16 */
        case 0xdf: width = 4; container = true; break;          /* map32 */
        default: return false;                                  /* 0xc1 */
        }
        if (width) {
            if (rest < width)
                return false;
            uint64_t n = 0;
            for (size_t i = 0; i < width; i++)
                n = (n << 8) | p[*off + i];
            *off += width;
            rest -= width;
            if (container)
                elements = (b == 0xde || b == 0xdf) ? 2 * n : n;
            else
                payload += n;
        }
    }
    if (container) {
        if (depth >= UT_WIRE_DEPTH_MAX || elements > rest)
            return false;
        for (uint64_t i = 0; i < elements; i++)
            if (!msgpack_measure(p, len, off, depth + 1))
                return false;
        return true;
    }
    if (payload > rest)
        return false;
    *off += (size_t)payload;
    return true;
}

static bool obj_is_str(const msgpack_object *o, const char *s)
{
    return o->type == MSGPACK_OBJECT_STR && ut_str_eq_cstr(ut_str_from(o->via.str.ptr, o->via.str.size), s);
}

static bool obj_to_double(const msgpack_object *o, double *out)
{
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: *out = (double)o->via.u64; return true;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: *out = (double)o->via.i64; return true;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: *out = o->via.f64; return isfinite(o->via.f64);
    default: return false;
    }
}

/* Reads an EventTime, or integer or float seconds (protocol §1). */
static bool obj_to_time_us(const msgpack_object *o, int64_t *out)
{
    if (o->type == MSGPACK_OBJECT_EXT && o->via.ext.type == 0 && o->via.ext.size == 8) {
        const uint8_t *b = (const uint8_t *)o->via.ext.ptr;
        uint32_t sec = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        uint32_t nsec = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
        *out = (int64_t)sec * 1000000 + nsec / 1000;
        return true;
    }
    double sec;
    if (!obj_to_double(o, &sec) || sec < 0 || sec > 1e11)
        return false;
    *out = (int64_t)(sec * 1e6);
    return true;
}

/* Sets the parameter of `descs` named by `key` in `base`. Unknown names
 * are skipped, so that a newer daemon's recording still reads; a known
 * name with a value of the wrong type is an error. */
static bool parse_param(const param_desc *descs, size_t n, void *base, const msgpack_object *key,
                        const msgpack_object *val)
{
    for (size_t i = 0; i < n; i++) {
        if (!obj_is_str(key, descs[i].name))
            continue;
        char *field = (char *)base + descs[i].offset;
        switch (descs[i].type) {
        case PARAM_U32: {
            if (val->type != MSGPACK_OBJECT_POSITIVE_INTEGER || val->via.u64 > UINT32_MAX)
                return false;
            uint32_t v = (uint32_t)val->via.u64;
            memcpy(field, &v, sizeof v);
            return true;
        }
        case PARAM_BOOL: {
            if (val->type != MSGPACK_OBJECT_BOOLEAN)
                return false;
            bool v = val->via.boolean;
            memcpy(field, &v, sizeof v);
            return true;
        }
        case PARAM_DOUBLE: {
            double v;
            if (!obj_to_double(val, &v))
                return false;
            memcpy(field, &v, sizeof v);
            return true;
        }
        }
    }
    return true;
}

static bool parse_stab(const msgpack_object *o, ut_stab_params *stab)
{
    if (o->type != MSGPACK_OBJECT_MAP)
        return false;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *key = &o->via.map.ptr[i].key;
        const msgpack_object *val = &o->via.map.ptr[i].val;
        if (obj_is_str(key, "model")) {
            size_t m = 0;
            while (m < UT_STAB_MODEL__COUNT && !obj_is_str(val, ut_stab_model_name((ut_stab_model)m)))
                m++;
            if (m == UT_STAB_MODEL__COUNT)
                return false;
            stab->model = (ut_stab_model)m;
        } else if (!parse_param(stab_params, COUNT_OF(stab_params), stab, key, val)) {
            return false;
        }
    }
    return true;
}

static bool parse_params(const msgpack_object *o, ut_config *cfg)
{
    if (o->type != MSGPACK_OBJECT_MAP)
        return false;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *key = &o->via.map.ptr[i].key;
        const msgpack_object *val = &o->via.map.ptr[i].val;
        if (obj_is_str(key, "stab")) {
            if (!parse_stab(val, &cfg->stab))
                return false;
        } else if (!parse_param(engine_params, COUNT_OF(engine_params), cfg, key, val)) {
            return false;
        }
    }
    return true;
}

/* Reads the `import` map; unknown keys are skipped, as elsewhere. */
static bool parse_import(const msgpack_object *o, ut_rec_import *im)
{
    if (o->type != MSGPACK_OBJECT_MAP)
        return false;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *key = &o->via.map.ptr[i].key;
        const msgpack_object *val = &o->via.map.ptr[i].val;
        if (obj_is_str(key, "from") || obj_is_str(key, "file")) {
            if (val->type != MSGPACK_OBJECT_STR)
                return false;
            ut_str s = ut_str_from(val->via.str.ptr, val->via.str.size);
            if (obj_is_str(key, "from"))
                im->from = s;
            else
                im->file = s;
        } else if (obj_is_str(key, "gaps")) {
            if (val->type != MSGPACK_OBJECT_ARRAY || val->via.array.size > UT_REC_IMPORT_GAPS_MAX)
                return false;
            for (uint32_t g = 0; g < val->via.array.size; g++) {
                const msgpack_object *gap = &val->via.array.ptr[g];
                if (gap->type != MSGPACK_OBJECT_STR)
                    return false;
                im->gaps[g] = ut_str_from(gap->via.str.ptr, gap->via.str.size);
            }
            im->n_gaps = val->via.array.size;
        }
    }
    return true;
}

/* Fills `meta` from the record map of a meta entry; strings point into
 * the msgpack buffer. */
static bool parse_meta_record(const msgpack_object *rec, ut_rec_meta *meta)
{
    if (rec->type != MSGPACK_OBJECT_MAP)
        return false;
    bool has_format = false, has_version = false;
    for (uint32_t i = 0; i < rec->via.map.size; i++) {
        const msgpack_object *key = &rec->via.map.ptr[i].key;
        const msgpack_object *val = &rec->via.map.ptr[i].val;
        if (obj_is_str(key, "format")) {
            meta->journal = obj_is_str(val, UT_REC_JOURNAL_FORMAT);
            if (!meta->journal && !obj_is_str(val, UT_REC_FORMAT))
                return false;
            has_format = true;
        } else if (obj_is_str(key, "version")) {
            if (val->type != MSGPACK_OBJECT_POSITIVE_INTEGER || val->via.u64 > UINT32_MAX)
                return false;
            meta->version = (uint32_t)val->via.u64;
            has_version = true;
        } else if (obj_is_str(key, "daemon")) {
            if (val->type != MSGPACK_OBJECT_STR)
                return false;
            meta->daemon = ut_str_from(val->via.str.ptr, val->via.str.size);
        } else if (obj_is_str(key, "tab")) {
            if (val->type != MSGPACK_OBJECT_STR)
                return false;
            meta->tab = ut_str_from(val->via.str.ptr, val->via.str.size);
        } else if (obj_is_str(key, "params")) {
            if (!parse_params(val, &meta->config))
                return false;
            meta->has_config = true;
        } else if (obj_is_str(key, "import")) {
            if (!parse_import(val, &meta->import))
                return false;
            meta->has_import = true;
        }
    }
    /* A tab names what a per-tab recording holds; in a journal it would
     * claim all of it for one tab. */
    return has_format && has_version && !(meta->journal && meta->tab.len > 0);
}

ut_status ut_rec_meta_parse(ut_str content, ut_rec_meta *meta, size_t *consumed)
{
    static const char tag_prefix[] = "\x93\xac" UT_REC_META_TAG; /* [ "uitrail.meta" */
    *consumed = 0;
    if (content.len < sizeof tag_prefix - 1 || memcmp(content.ptr, tag_prefix, sizeof tag_prefix - 1) != 0)
        return UT_ENOENT;

    size_t span = 0;
    size_t limit = content.len < UT_REC_META_MAX_BYTES ? content.len : UT_REC_META_MAX_BYTES;
    if (!msgpack_measure((const uint8_t *)content.ptr, limit, &span, 0))
        return UT_ECORRUPT;
    *consumed = span;

    memset(meta, 0, sizeof *meta);
    ut_config_defaults(&meta->config);
    /* A recording that names no reorder window was made by a daemon that
     * had none: it applied every event as it came. */
    meta->config.reorder_ms = 0;
    meta->config.redact_patterns = NULL;
    meta->config.n_redact_patterns = 0;

    /* msgpack-c's zone allocates with the C library's malloc, which no
     * uitrail allocator reaches; the measure above bounds what it takes to
     * a small multiple of UT_REC_META_MAX_BYTES. */
    msgpack_unpacked unpacked;
    msgpack_unpacked_init(&unpacked);
    size_t off = 0;
    ut_status st = UT_ECORRUPT;
    if (msgpack_unpack_next(&unpacked, content.ptr, span, &off) == MSGPACK_UNPACK_SUCCESS) {
        const msgpack_object *entry = &unpacked.data;
        if (parse_meta_record(&entry->via.array.ptr[2], meta)
            && obj_to_time_us(&entry->via.array.ptr[1], &meta->time_us))
            st = UT_OK;
    }
    msgpack_unpacked_destroy(&unpacked);
    return st;
}
