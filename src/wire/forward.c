/* The Forward protocol decoder (protocol §1): one msgpack unpacker per
 * connection, fed incrementally. Each message is pre-scanned against the
 * limits (scan.c) and handed to msgpack-c only once it is complete and
 * known to be within them, so msgpack-c never sees a hostile header and
 * msgpack_unpacker_next never returns a partial result. */
#include "wire_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct ut_fwd_decoder {
    msgpack_unpacker unpacker;
    msgpack_zone entry_zone;    /* the objects of the PackedForward entry being dispatched */
    ut__scan scan;              /* of the message at the unpacker's offset */
    uint64_t message_offset;    /* stream offset of that message's first byte */
    ut__record_validator validator;
    struct route_slot *routes;  /* route_of's cache (ROUTE_SLOTS), NULL until first used */
    ut_status failed;           /* sticky: once set, every feed returns it */
    ut_fwd_label_fn on_label;   /* NULL: uitrail.label entries are ignored */
    void *label_ud;
    ut_buf label_tab;           /* the cleaned tab of the label being reported */
    ut_buf inflated;            /* a CompressedPackedForward body, inflated (freed after it) */
    uint64_t error_offset;
    char error[256];
};

/* Top-level values: a Forward message of 2-4 elements, or nil. */
static const ut__scan_limits message_limits = {
    .frame_max_bytes = UT_FRAME_MAX_BYTES,
    .bound_name = "the frame limit",
    .root_name = "Forward message",
    .root_min_elements = 2,
    .root_max_elements = 4,
    .allow_nil_root = true,
    .allow_large_body = true,
};

ut_status ut_fwd_decoder_new(ut_fwd_decoder **out)
{
    *out = NULL;
    ut_fwd_decoder *d = ut_calloc(1, sizeof *d);
    if (!d)
        return UT_ENOMEM;
    if (ut__record_validator_init(&d->validator) != UT_OK) {
        ut_free(d);
        return UT_ENOMEM;
    }
    if (!msgpack_unpacker_init(&d->unpacker, UT__DECODER_INITIAL_BYTES)) {
        ut__record_validator_free(&d->validator);
        ut_free(d);
        return UT_ENOMEM;
    }
    if (!msgpack_zone_init(&d->entry_zone, UT__DECODER_ZONE_CHUNK_BYTES)) {
        msgpack_unpacker_destroy(&d->unpacker);
        ut__record_validator_free(&d->validator);
        ut_free(d);
        return UT_ENOMEM;
    }
    ut__scan_reset(&d->scan);
    *out = d;
    return UT_OK;
}

void ut_fwd_decoder_free(ut_fwd_decoder *d)
{
    if (!d)
        return;
    msgpack_zone_destroy(&d->entry_zone);
    ut_free(d->routes);
    msgpack_unpacker_destroy(&d->unpacker);
    ut__record_validator_free(&d->validator);
    ut_buf_free(&d->label_tab);
    ut_buf_free(&d->inflated);
    ut_free(d);
}

void ut_fwd_decoder_set_label_fn(ut_fwd_decoder *d, ut_fwd_label_fn fn, void *ud)
{
    d->on_label = fn;
    d->label_ud = ud;
    ut_free(d->routes); /* a label tag routes differently now */
    d->routes = NULL;
}

size_t ut_fwd_decoder_pending(const ut_fwd_decoder *d)
{
    /* The unpacker is only ever asked for complete messages, so between
     * feeds it has parsed nothing and this is the bytes it holds. */
    return msgpack_unpacker_message_size(&d->unpacker);
}

const char *ut_fwd_decoder_error(const ut_fwd_decoder *d)
{
    return d->error;
}

uint64_t ut_fwd_decoder_error_offset(const ut_fwd_decoder *d)
{
    return d->error_offset;
}

static ut_status protocol_error(ut_fwd_decoder *d, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static ut_status protocol_error(ut_fwd_decoder *d, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->error, sizeof d->error, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof d->error)
        snprintf(d->error + n, sizeof d->error - (size_t)n, " at offset %" PRIu64, offset);
    d->error_offset = offset;
    return UT_EPROTO;
}

/* Where a message's entries go. */
typedef enum route {
    ROUTE_EVENT,        /* uitrail.<known kind>: validate and deliver */
    ROUTE_KIND_FIELD,   /* the one tag "uitrail": the record's "kind" names the kind */
    ROUTE_UNKNOWN_KIND, /* uitrail.<unknown>: reject each entry */
    ROUTE_LABEL,        /* uitrail.label with a label hook set: validate and report */
    ROUTE_IGNORED,      /* any other tag, recordings' uitrail.meta, and uitrail.label without a hook */
} route;

typedef struct message_ctx {
    ut_fwd_decoder *d;
    const ut_fwd_sink *sink;
    msgpack_object_str tag;
    route route;
    ut_kind kind;
} message_ctx;

/* Recording headers and labels (protocol §5) travel in the stream but are
 * not events: ut_kind_from_tag sorts them with foreign tags, so that a
 * recording replays through this same decoder. */
static route route_uncached(const ut_fwd_decoder *d, ut_str name, ut_kind *kind)
{
    if (ut_str_eq_cstr(name, UT_ONE_TAG))
        return ROUTE_KIND_FIELD;
    switch (ut_kind_from_tag(name, kind)) {
    case UT_OK: return ROUTE_EVENT;
    case UT_EINVAL: return ROUTE_UNKNOWN_KIND;
    default: return d->on_label && ut_str_eq_cstr(name, UT_LABEL_TAG) ? ROUTE_LABEL : ROUTE_IGNORED;
    }
}

/* A sender repeats a handful of tags: the route of each short tag is
 * remembered in a slot chosen by its length and last byte, so that most
 * messages cost one memcmp instead of a walk over the kind names. */
#define ROUTE_SLOTS 16
#define ROUTE_TAG_MAX 32
struct route_slot {
    uint8_t len; /* 0: empty */
    char tag[ROUTE_TAG_MAX];
    route route;
    ut_kind kind;
};

static route route_of(ut_fwd_decoder *d, msgpack_object_str tag, ut_kind *kind)
{
    ut_str name = ut_str_from(tag.ptr, tag.size);
    if (tag.size == 0 || tag.size > ROUTE_TAG_MAX)
        return route_uncached(d, name, kind);
    if (!d->routes && !(d->routes = ut_calloc(ROUTE_SLOTS, sizeof *d->routes)))
        return route_uncached(d, name, kind);
    struct route_slot *slot = &d->routes[(tag.size * 7u + (uint8_t)tag.ptr[tag.size - 1]) % ROUTE_SLOTS];
    if (slot->len == tag.size && memcmp(slot->tag, tag.ptr, tag.size) == 0) {
        *kind = slot->kind;
        return slot->route;
    }
    ut_kind k = (ut_kind)0;
    route r = route_uncached(d, name, &k);
    *slot = (struct route_slot){.len = (uint8_t)tag.size, .route = r, .kind = k};
    memcpy(slot->tag, tag.ptr, tag.size);
    *kind = k;
    return r;
}

static void report_reject(message_ctx *m, ut_reject why, const char *detail)
{
    if (m->sink->on_reject)
        m->sink->on_reject(m->sink->ud, why, detail);
}

/* Validates one uitrail.label entry and reports it to the label hook when
 * it says the page settled. Its record is a map with "tab" (text, as in
 * an event) and "settled" (a boolean); other keys are ignored, so labels
 * may grow new fields. */
static ut_status deliver_label(message_ctx *m, int64_t time_us, const msgpack_object *record)
{
    ut_fwd_decoder *d = m->d;
    if (record->type != MSGPACK_OBJECT_MAP) {
        report_reject(m, UT_REJECT_NOT_MAP, "uitrail.label: the record must be a map");
        return UT_OK;
    }
    const msgpack_object *tab = NULL, *settled = NULL;
    for (uint32_t i = 0; i < record->via.map.size; i++) {
        const msgpack_object *k = &record->via.map.ptr[i].key;
        if (k->type != MSGPACK_OBJECT_STR)
            continue;
        ut_str key = ut_str_from(k->via.str.ptr, k->via.str.size);
        if (ut_str_eq_cstr(key, "tab"))
            tab = &record->via.map.ptr[i].val;
        else if (ut_str_eq_cstr(key, "settled"))
            settled = &record->via.map.ptr[i].val;
    }
    if (!tab || !settled) {
        report_reject(m, UT_REJECT_MISSING_FIELD,
                      !tab ? "uitrail.label: field \"tab\" is missing" : "uitrail.label: field \"settled\" is missing");
        return UT_OK;
    }
    if (tab->type != MSGPACK_OBJECT_STR || settled->type != MSGPACK_OBJECT_BOOLEAN) {
        report_reject(m, UT_REJECT_WRONG_TYPE, tab->type != MSGPACK_OBJECT_STR
                                                   ? "uitrail.label: field \"tab\" must be a string"
                                                   : "uitrail.label: field \"settled\" must be a boolean");
        return UT_OK;
    }
    if (tab->via.str.size == 0 || tab->via.str.size > UT_TAB_MAX_BYTES) {
        char detail[96];
        snprintf(detail, sizeof detail, "uitrail.label: field \"tab\" must hold 1 to %d bytes", UT_TAB_MAX_BYTES);
        report_reject(m, UT_REJECT_BAD_VALUE, detail);
        return UT_OK;
    }
    if (!settled->via.boolean) {
        /* Nothing settled: a label of no use to the hook, counted like
         * any other entry that is not an event. */
        if (m->sink->on_ignored)
            m->sink->on_ignored(m->sink->ud, ut_str_from(m->tag.ptr, m->tag.size));
        return UT_OK;
    }
    /* Cleaned as an event's tab is, so that a label names the same tab. */
    ut_buf_reset(&d->label_tab);
    if (ut_text_clean(ut_str_from(tab->via.str.ptr, tab->via.str.size), UT_TAB_MAX_BYTES, &d->label_tab) != UT_OK)
        return UT_ENOMEM;
    d->on_label(d->label_ud, ut_buf_str(&d->label_tab), time_us);
    return UT_OK;
}

/* The kind of a record sent under the one tag "uitrail": its "kind" field,
 * one of the seven kinds. False (and the record rejected) otherwise. */
static bool kind_of_record(message_ctx *m, const msgpack_object *record, ut_kind *kind)
{
    if (record->type != MSGPACK_OBJECT_MAP) {
        report_reject(m, UT_REJECT_NOT_MAP, UT_ONE_TAG ": the record must be a map");
        return false;
    }
    const msgpack_object *field = NULL;
    for (uint32_t i = 0; i < record->via.map.size; i++) {
        const msgpack_object *k = &record->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && ut_str_eq_cstr(ut_str_from(k->via.str.ptr, k->via.str.size), "kind")) {
            field = &record->via.map.ptr[i].val;
            break;
        }
    }
    if (!field) {
        report_reject(m, UT_REJECT_MISSING_FIELD, UT_ONE_TAG ": field \"kind\" is missing (or send the tag uitrail.<kind>)");
        return false;
    }
    if (field->type != MSGPACK_OBJECT_STR) {
        report_reject(m, UT_REJECT_WRONG_TYPE, UT_ONE_TAG ": field \"kind\" must be a string");
        return false;
    }
    if (ut_kind_from_name(ut_str_from(field->via.str.ptr, field->via.str.size), kind) != UT_OK) {
        report_reject(m, UT_REJECT_UNKNOWN_KIND, UT_ONE_TAG ": field \"kind\" is not one of nav, click, change, "
                      "alert, dialog, mutation, close");
        return false;
    }
    return true;
}

/* Validates and delivers one [time, record] entry. */
static ut_status deliver(message_ctx *m, const msgpack_object *time, const msgpack_object *record)
{
    char detail[200];
    if (m->route == ROUTE_UNKNOWN_KIND) {
        int n = m->tag.size < 64 ? (int)m->tag.size : 64;
        snprintf(detail, sizeof detail, "%.*s: unknown kind; known kinds are nav, click, change, "
                 "alert, dialog, mutation, close, unload, app, invalid", n, m->tag.ptr);
        for (char *p = detail; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
                *p = '?';
        report_reject(m, UT_REJECT_UNKNOWN_KIND, detail);
        return UT_OK;
    }
    int64_t time_us;
    if (!ut__wire_time_us(time, &time_us)) {
        snprintf(detail, sizeof detail, "uitrail.%s: time must be an EventTime (ext 0 of 8 bytes) "
                 "or seconds since the epoch up to %u, not %s",
                 m->route == ROUTE_LABEL ? "label" : m->route == ROUTE_KIND_FIELD ? "<kind>" : ut_kind_name(m->kind),
                 UT_WIRE_TIME_MAX_S,
                 ut__msgpack_type_name(time));
        report_reject(m, UT_REJECT_BAD_TIME, detail);
        return UT_OK;
    }
    if (m->route == ROUTE_LABEL)
        return deliver_label(m, time_us, record);
    ut_kind kind = m->kind;
    if (m->route == ROUTE_KIND_FIELD && !kind_of_record(m, record, &kind))
        return UT_OK;
    ut_event ev;
    ut_status st = ut__record_validate(&m->d->validator, kind, time_us, record, &ev);
    if (st == UT_EINVAL) {
        report_reject(m, m->d->validator.why, m->d->validator.detail);
        return UT_OK;
    }
    if (st != UT_OK)
        return st;
    return m->sink->on_event ? m->sink->on_event(m->sink->ud, &ev) : UT_OK;
}

/* Checks `option` (a map, or NULL), finds its chunk and whether the body
 * is gzipped. */
static ut_status read_option(message_ctx *m, const msgpack_object *option,
                             const msgpack_object **chunk, bool *gzip)
{
    ut_fwd_decoder *d = m->d;
    *chunk = NULL;
    *gzip = false;
    if (!option)
        return UT_OK;
    if (option->type != MSGPACK_OBJECT_MAP)
        return protocol_error(d, d->message_offset, "the option of a Forward message must be a map, not %s",
                              ut__msgpack_type_name(option));
    for (uint32_t i = 0; i < option->via.map.size; i++) {
        const msgpack_object *k = &option->via.map.ptr[i].key, *v = &option->via.map.ptr[i].val;
        if (k->type != MSGPACK_OBJECT_STR)
            continue;
        ut_str key = ut_str_from(k->via.str.ptr, k->via.str.size);
        if (ut_str_eq_cstr(key, "chunk")) {
            if (v->type != MSGPACK_OBJECT_STR)
                return protocol_error(d, d->message_offset, "option \"chunk\" must be a string, not %s",
                                      ut__msgpack_type_name(v));
            *chunk = v;
        } else if (ut_str_eq_cstr(key, "compressed")) {
            /* Fluentd marks uncompressed PackedForward as "text". */
            ut_str how = v->type == MSGPACK_OBJECT_STR ? ut_str_from(v->via.str.ptr, v->via.str.size) : UT_STR_NULL;
            if (ut_str_eq_cstr(how, "gzip"))
                *gzip = true;
            else if (!ut_str_eq_cstr(how, "text"))
                return protocol_error(d, d->message_offset,
                                      "option \"compressed\" must be \"gzip\" or \"text\"");
        }
    }
    return UT_OK;
}

static ut_status decode_forward(message_ctx *m, const msgpack_object *entries)
{
    ut_fwd_decoder *d = m->d;
    const msgpack_object_array *a = &entries->via.array;
    if (a->size > UT_FORWARD_ENTRIES_MAX)
        return protocol_error(d, d->message_offset, "Forward message of %" PRIu32 " entries exceeds the limit of %d",
                              a->size, UT_FORWARD_ENTRIES_MAX);
    /* The whole message is checked before any entry is delivered, so a
     * malformed message delivers nothing. */
    for (uint32_t i = 0; i < a->size; i++) {
        const msgpack_object *e = &a->ptr[i];
        if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 2)
            return protocol_error(d, d->message_offset,
                                  "entry %" PRIu32 " of a Forward message must be [time, record]", i);
    }
    if (m->route == ROUTE_IGNORED)
        return UT_OK;
    for (uint32_t i = 0; i < a->size; i++) {
        ut_status st = deliver(m, &a->ptr[i].via.array.ptr[0], &a->ptr[i].via.array.ptr[1]);
        if (st != UT_OK)
            return st;
    }
    return UT_OK;
}

/* msgpack_zone_clear, which in msgpack-c 4 dereferences the zone's first
 * chunk: that chunk (and the unpacker's zone itself) exists only after the
 * first allocation (a stream of heartbeats allocates nothing), so one is
 * made first. Runs the zone's finalizers and keeps its first chunk for
 * reuse. */
static ut_status zone_clear(msgpack_zone *z)
{
    if (!z)
        return UT_OK;
    if (!z->chunk_list.head && !msgpack_zone_malloc(z, 1))
        return UT_ENOMEM;
    msgpack_zone_clear(z);
    return UT_OK;
}

/* A PackedForward body: [time, record] entries back to back, each scanned
 * against the same limits as a message before msgpack-c unpacks it. */
static ut_status decode_packed(message_ctx *m, const char *body, size_t len)
{
    ut_fwd_decoder *d = m->d;
    ut__scan scan;
    ut__scan_limits lim = {
        .bound_name = "the rest of the PackedForward body",
        .root_name = "PackedForward entry",
        .root_min_elements = 2,
        .root_max_elements = 2,
    };
    uint32_t entries = 0;
    for (size_t off = 0; off < len; off += scan.pos) {
        if (++entries > UT_FORWARD_ENTRIES_MAX)
            return protocol_error(d, d->message_offset, "PackedForward body holds more than %d entries",
                                  UT_FORWARD_ENTRIES_MAX);
        lim.frame_max_bytes = len - off;
        ut__scan_reset(&scan);
        ut__scan_result r = ut__scan_run(&scan, &lim, (const uint8_t *)body + off, len - off);
        if (r == UT__SCAN_NEED_MORE)
            return protocol_error(d, d->message_offset,
                                  "PackedForward body ends inside entry %" PRIu32, entries - 1);
        if (r == UT__SCAN_INVALID)
            return protocol_error(d, d->message_offset, "PackedForward entry %" PRIu32 ": %s (body byte %zu)",
                                  entries - 1, scan.error, off + scan.error_pos);
    }
    if (m->route == ROUTE_IGNORED)
        return UT_OK;
    /* One zone for every entry, cleared after each (msgpack_unpack_next
     * would make a zone per entry). */
    size_t off = 0;
    while (off < len) {
        msgpack_object e;
        msgpack_unpack_return r = msgpack_unpack(body, len, &off, &d->entry_zone, &e);
        if (r == MSGPACK_UNPACK_NOMEM_ERROR)
            return UT_ENOMEM;
        if (r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES)
            return protocol_error(d, d->message_offset, "PackedForward body is not valid msgpack");
        ut_status st = deliver(m, &e.via.array.ptr[0], &e.via.array.ptr[1]);
        if (zone_clear(&d->entry_zone) != UT_OK && st == UT_OK)
            st = UT_ENOMEM;
        if (st != UT_OK)
            return st;
    }
    return UT_OK;
}

/* A CompressedPackedForward body: inflated (up to
 * UT_FORWARD_INFLATED_MAX_BYTES), then decoded as a PackedForward body.
 * The inflated bytes are freed at once: a connection holds them only
 * while its message is decoded. */
static ut_status decode_compressed(message_ctx *m, ut_str body)
{
    ut_fwd_decoder *d = m->d;
    char why[160];
    ut_buf_reset(&d->inflated);
    ut_status st = ut__wire_gunzip(body, UT_FORWARD_INFLATED_MAX_BYTES, &d->inflated, why, sizeof why);
    if (st == UT_EPROTO || st == UT_ELIMIT)
        st = protocol_error(d, d->message_offset, "CompressedPackedForward: %s", why);
    else if (st == UT_OK)
        st = decode_packed(m, d->inflated.data, d->inflated.len);
    ut_buf_free(&d->inflated);
    return st;
}

/* Decodes one complete, pre-scanned top-level value. */
static ut_status dispatch(ut_fwd_decoder *d, const msgpack_object *root, const ut_fwd_sink *sink)
{
    if (root->type == MSGPACK_OBJECT_NIL)
        return UT_OK; /* a heartbeat */

    const msgpack_object *el = root->via.array.ptr;
    const uint32_t n = root->via.array.size;
    if (el[0].type != MSGPACK_OBJECT_STR)
        return protocol_error(d, d->message_offset, "the tag of a Forward message must be a string, not %s",
                              ut__msgpack_type_name(&el[0]));

    message_ctx m = {.d = d, .sink = sink, .tag = el[0].via.str};
    m.route = route_of(d, m.tag, &m.kind);

    const msgpack_object *chunk = NULL;
    bool gzip = false;
    ut_status st;
    const msgpack_object_type second = el[1].type;
    if (second == MSGPACK_OBJECT_ARRAY || second == MSGPACK_OBJECT_STR || second == MSGPACK_OBJECT_BIN) {
        if (n > 3)
            return protocol_error(d, d->message_offset,
                                  "a Forward or PackedForward message has 2 or 3 elements, not %" PRIu32, n);
        if ((st = read_option(&m, n == 3 ? &el[2] : NULL, &chunk, &gzip)) != UT_OK)
            return st;
        if (second == MSGPACK_OBJECT_ARRAY) {
            if (gzip)
                return protocol_error(d, d->message_offset,
                                      "option \"compressed\": \"gzip\" needs a PackedForward body (bin or str)");
            st = decode_forward(&m, &el[1]);
        } else {
            ut_str body = second == MSGPACK_OBJECT_STR ? ut_str_from(el[1].via.str.ptr, el[1].via.str.size)
                                                       : ut_str_from(el[1].via.bin.ptr, el[1].via.bin.size);
            st = gzip ? decode_compressed(&m, body) : decode_packed(&m, body.ptr, body.len);
        }
    } else {
        if (n < 3)
            return protocol_error(d, d->message_offset,
                                  "a Message-mode message is [tag, time, record], but it has 2 elements");
        if ((st = read_option(&m, n == 4 ? &el[3] : NULL, &chunk, &gzip)) != UT_OK)
            return st;
        if (gzip)
            return protocol_error(d, d->message_offset,
                                  "option \"compressed\": \"gzip\" needs a PackedForward body (bin or str)");
        st = m.route == ROUTE_IGNORED ? UT_OK : deliver(&m, &el[1], &el[2]);
    }
    if (st != UT_OK)
        return st;
    if (m.route == ROUTE_IGNORED && sink->on_ignored)
        sink->on_ignored(sink->ud, ut_str_from(m.tag.ptr, m.tag.size));
    if (chunk && sink->on_ack)
        sink->on_ack(sink->ud, ut_str_from(chunk->via.str.ptr, chunk->via.str.size));
    return UT_OK;
}

/* Forgets the message just dispatched: the zone holding its objects is
 * cleared for the next one (its chunk kept), and the bytes its strings
 * pointed at may be reused (flush_zone hands the buffer's reference to the
 * zone, which the clear drops). */
static ut_status release_message(msgpack_unpacker *u)
{
    if (!msgpack_unpacker_flush_zone(u) || zone_clear(u->z) != UT_OK)
        return UT_ENOMEM;
    msgpack_unpacker_reset(u);
    return UT_OK;
}

/* Decodes every complete message the unpacker holds. */
static ut_status drain(ut_fwd_decoder *d, const ut_fwd_sink *sink)
{
    msgpack_unpacker *u = &d->unpacker;
    for (;;) {
        const uint8_t *start = (const uint8_t *)u->buffer + u->off;
        ut__scan_result r = ut__scan_run(&d->scan, &message_limits, start, u->used - u->off);
        if (r == UT__SCAN_NEED_MORE)
            return UT_OK;
        if (r == UT__SCAN_INVALID)
            return protocol_error(d, d->message_offset + d->scan.error_pos, "%s", d->scan.error);

        const size_t message_bytes = d->scan.pos;
        const size_t off_before = u->off;
        /* msgpack_unpacker_next would hand each message a zone of its own
         * (a malloc and a free per message); the unpacker's one zone is
         * cleared and reused instead (release_message). */
        int ret = msgpack_unpacker_execute(u);
        if (ret == MSGPACK_UNPACK_NOMEM_ERROR)
            return UT_ENOMEM;
        if (ret <= 0 || u->off - off_before != message_bytes)
            return protocol_error(d, d->message_offset, "msgpack-c rejected a message the scan accepted");

        msgpack_object root = msgpack_unpacker_data(u);
        ut_status st = dispatch(d, &root, sink);
        if (release_message(u) != UT_OK && st == UT_OK)
            st = UT_ENOMEM;
        d->message_offset += message_bytes;
        ut__scan_reset(&d->scan);
        if (st != UT_OK)
            return st;
    }
}

ut_status ut_fwd_decoder_feed(ut_fwd_decoder *d, const void *data, size_t len, const ut_fwd_sink *sink)
{
    if (d->failed != UT_OK)
        return d->failed;
    const char *in = data;
    while (len > 0) {
        size_t step = len < UT__FEED_STEP_BYTES ? len : UT__FEED_STEP_BYTES;
        if (!msgpack_unpacker_reserve_buffer(&d->unpacker, step))
            return d->failed = UT_ENOMEM;
        memcpy(msgpack_unpacker_buffer(&d->unpacker), in, step);
        msgpack_unpacker_buffer_consumed(&d->unpacker, step);
        in += step;
        len -= step;
        ut_status st = drain(d, sink);
        if (st != UT_OK)
            return d->failed = st;
    }
    return UT_OK;
}
