/* uitrail: recorded sessions (protocol §5, issue 6).
 *
 * A recording is a file of zstd frames. Each frame is complete on its own,
 * carries its content size and a content checksum, and holds whole Forward
 * Message-mode entries [tag, EventTime, record]; decompressed one after the
 * other, the frames form the msgpack stream the daemon applied (after
 * redaction), each record with `rt`. The first entry of a file is
 * ["uitrail.meta", time, {...}].
 *
 * Nothing here does I/O or reads a clock. The writer turns events into the
 * bytes of whole frames and the caller writes each frame with one write(2);
 * the reader walks a recording held in memory (read or mmap'ed by the
 * caller). A file cut short by a crash therefore loses at most the frame
 * that was being written, and the reader says how many bytes it dropped. */
#ifndef UITRAIL_RECORD_H
#define UITRAIL_RECORD_H

#include "uitrail/common.h"
#include "uitrail/engine.h"
#include "uitrail/event.h"
#include "uitrail/limits.h"
#include "uitrail/wire.h"

/* The tag of a recording's first entry, and the values of its `format` and
 * `version` fields. */
#define UT_REC_META_TAG "uitrail.meta"
#define UT_REC_FORMAT "uitrail-recording"
#define UT_REC_VERSION 1
/* The `format` of a journal's meta entry (protocol §5.1): one file of many
 * tabs' events, each data frame led by a tab index. */
#define UT_REC_JOURNAL_FORMAT "uitrail-journal"
/* The magic of a journal frame's tab index: a zstd skippable frame
 * (ZSTD_MAGIC_SKIPPABLE_START + 5), which any zstd reader steps over. */
#define UT_REC_INDEX_MAGIC 0x184D2A55u
/* The file name extension. */
#define UT_REC_FILE_SUFFIX ".uitrail"

/* Where an imported recording came from (`uitrail import`, protocol §5.2):
 * the format it was read from, the input file, and what that format does
 * not record, one short phrase each, so that no reader takes a gap for a
 * fact. */
typedef struct ut_rec_import {
    ut_str from;  /* "rrweb" */
    ut_str file;  /* the input's file name */
    size_t n_gaps;
    ut_str gaps[UT_REC_IMPORT_GAPS_MAX];
} ut_rec_import;

/* What a recording says about itself. Written as the first entry; read back
 * by ut_rec_read. */
typedef struct ut_rec_meta {
    int64_t time_us;  /* time of the entry: the tab's first event (sender clock) */
    ut_str daemon;    /* version of the daemon that recorded */
    ut_str tab;       /* the tab this file records; empty in a journal */
    bool journal;     /* format "uitrail-journal": events of many tabs */
    uint32_t version; /* format version (reading: as found in the file) */
    /* The engine and stability parameters the daemon ran with (`params`).
     * Writing: taken from here when has_config. Reading: ut_config_defaults
     * overridden by every parameter found; redact_patterns stays NULL, since
     * a recording is already redacted and stores only the pattern count. */
    bool has_config;
    ut_config config;
    /* An imported recording (`import`); strings as for the others. */
    bool has_import;
    ut_rec_import import;
} ut_rec_meta;

/* ---- Writer ---- */

/* A zstd compression context with its output buffer (some 600 KiB at the
 * default level). Writers driven from one thread share one, so that a
 * daemon recording a thousand tabs holds one context, not a thousand. */
typedef struct ut_rec_compressor ut_rec_compressor;

/* Creates a compressor at `zstd_level` (ZSTD_minCLevel()..ZSTD_maxCLevel(),
 * else UT_EINVAL). */
ut_status ut_rec_compressor_new(int zstd_level, ut_rec_compressor **out);
void ut_rec_compressor_free(ut_rec_compressor *c);

typedef struct ut_rec_writer_opts {
    /* A frame is cut as soon as its content reaches this many bytes;
     * UT_REC_FRAME_CUT_MIN_BYTES..UT_REC_FRAME_CUT_MAX_BYTES. */
    uint32_t frame_bytes;
    /* ... or when its first entry is this old (ut_rec_writer_flush_due);
     * UT_REC_FRAME_INTERVAL_MIN_MS..UT_REC_FRAME_INTERVAL_MAX_MS. */
    uint32_t frame_interval_ms;
    /* zstd compression level (ZSTD_minCLevel()..ZSTD_maxCLevel()); used
     * when the writer makes its own compressor. */
    int zstd_level;
    /* A compressor shared with other writers of the same thread, owned by
     * the caller and outliving the writers; NULL: the writer has its own.
     * A frame handed back by a writer then stays valid only until the next
     * call on any writer sharing it. */
    ut_rec_compressor *compressor;
    /* A journal (protocol §5.1): the meta entry names no tab (meta.tab is
     * ignored), and every frame handed back is the frame's tab index (a
     * skippable frame) followed by the data frame, to be written together
     * with one write(2). */
    bool journal;
} ut_rec_writer_opts;

#define UT_REC_ZSTD_LEVEL_DEFAULT 3
/* A journal's frames hold many tabs' events (64 KiB of content): level 1
 * writes them as small as level 3 does on the bench-journal stream (13.6
 * bytes an event both) for ~10 % less of zstd's CPU. */
#define UT_REC_ZSTD_LEVEL_JOURNAL 1

/* Fills `o` with the defaults: 64 KiB, 1000 ms, level 3, own compressor. */
void ut_rec_writer_opts_defaults(ut_rec_writer_opts *o);

typedef struct ut_rec_writer ut_rec_writer;

/* Creates the writer of one recording and queues its meta entry, which
 * leads the first frame. Options out of range give UT_EINVAL with the
 * reason in `err`. `meta` is copied. */
ut_status ut_rec_writer_new(const ut_rec_writer_opts *opts, const ut_rec_meta *meta,
                            ut_rec_writer **out, char *err, size_t errlen);
void ut_rec_writer_free(ut_rec_writer *w);

/* The three calls below hand back the bytes of a finished frame in
 * `*frame`, or frame->len == 0 when no frame was finished. The bytes live
 * until the next call on `w`; the caller writes them with one write(2) so
 * that a crash tears at most this frame.
 *
 * Time: the writer's clock is the engine's (rt_us when set, else time_us).
 * A frame is due frame_interval_ms after the clock of its first entry.
 *
 * A frame that could not be compressed (UT_ENOMEM; UT_EIO for any other
 * zstd failure, which would be a bug) stays queued, whole, and the next
 * call that finishes a frame retries it. */

/* Queues `ev` (already redacted: the engine's on_applied) in the pending
 * frame, and finishes that frame if its content reached frame_bytes.
 * UT_ELIMIT: the entry alone exceeds UT_REC_ENTRY_MAX_BYTES and is not
 * recorded. UT_EINVAL: ut_wire_pack_event refused the event (a time or an
 * enum out of range); it is not recorded. UT_ENOMEM: the event is not
 * recorded, or it is queued but the frame could not be compressed yet (a
 * later call retries). Either way the writer stays usable and earlier
 * events are kept. */
ut_status ut_rec_writer_append(ut_rec_writer *w, const ut_event *ev, ut_str *frame);

/* Finishes the pending frame if its first entry is frame_interval_ms old
 * at `now_us`. The daemon calls it from the timer it arms on
 * ut_rec_writer_deadline. */
ut_status ut_rec_writer_flush_due(ut_rec_writer *w, int64_t now_us, ut_str *frame);

/* Finishes the pending frame now, whatever its size or age (tab closed,
 * shutdown, or a `chunk` to acknowledge). */
ut_status ut_rec_writer_flush(ut_rec_writer *w, ut_str *frame);

/* The clock time at which ut_rec_writer_flush_due will finish the pending
 * frame; INT64_MAX when nothing is pending. */
int64_t ut_rec_writer_deadline(const ut_rec_writer *w);

typedef struct ut_rec_writer_stats {
    uint64_t frames;           /* frames finished */
    uint64_t entries;          /* entries in finished frames, meta included */
    uint64_t content_bytes;    /* their decompressed size */
    uint64_t compressed_bytes; /* their compressed size (what was handed out) */
    uint32_t pending_entries;  /* queued for the next frame */
    size_t pending_bytes;
} ut_rec_writer_stats;

void ut_rec_writer_stats_get(const ut_rec_writer *w, ut_rec_writer_stats *out);

/* Appends the file name of a recording, `<time>-<tab>.uitrail`, to `out`.
 * <time> is the first event's time in UTC, `20240131T143205.123456Z`, so
 * names sort by time. <tab> keeps the bytes A-Z a-z 0-9 '.' '_' '-' and
 * writes every other byte as %XX (upper-case hex), so the name has no '/',
 * no NUL, is plain ASCII and maps back to the tab; an escaped tab longer
 * than UT_REC_FILE_TAB_MAX_BYTES is cut (never inside a %XX) and ends with
 * '~' and the 16 hex digits of the XXH64 of the whole tab id. A tab id
 * never starts the name, so "." and ".." need no special case. */
ut_status ut_rec_file_name(int64_t first_event_us, ut_str tab, ut_buf *out);

/* ---- Reader ---- */

typedef enum ut_rec_step_kind {
    UT_REC_STEP_FRAME,  /* a frame that decompressed and passed its checksum */
    UT_REC_STEP_DAMAGE, /* bytes that had to be skipped or dropped */
    UT_REC_STEP_END,    /* nothing more */
} ut_rec_step_kind;

typedef enum ut_rec_damage {
    UT_REC_DAMAGE_NONE,
    /* The data ends inside a frame (a crash during its write): the tail
     * is dropped. */
    UT_REC_DAMAGE_TORN_TAIL,
    /* A frame whose boundary is known failed to decompress: checksum
     * mismatch or a corrupt block. It is skipped; the next frame is read. */
    UT_REC_DAMAGE_BAD_FRAME,
    /* A frame declares more than UT_REC_FRAME_CONTENT_MAX_BYTES of content
     * (or no size, and holds more): skipped without being decompressed. */
    UT_REC_DAMAGE_OVERSIZE,
    /* Bytes that are not a frame: skipped up to the next zstd frame magic
     * at which a whole frame starts, or to the end of the data. */
    UT_REC_DAMAGE_GARBAGE,
    /* A good frame whose content is not a valid Forward stream (ut_rec_read
     * only): the rest of that frame is skipped. */
    UT_REC_DAMAGE_BAD_CONTENT,
} ut_rec_damage;

/* "torn tail", "bad frame", ... */
const char *ut_rec_damage_name(ut_rec_damage d);

typedef struct ut_rec_step {
    ut_rec_step_kind kind;
    uint64_t frame;   /* FRAME, and damage of a frame: its 0-based number */
    uint64_t offset;  /* byte offset in the data of the frame or damage */
    uint64_t bytes;   /* FRAME: compressed size; DAMAGE: bytes skipped */
    ut_str content;   /* FRAME: decompressed bytes, valid until the next call */
    ut_rec_damage damage;
    /* DAMAGE: one line for a person, e.g.
     * "frame 12 at byte 40960: checksum mismatch, 812 bytes skipped" or
     * "torn tail at byte 90112: 37 bytes dropped". */
    char detail[192];
    /* FRAME of a journal, with ut_rec_reader_only_tab set: the frame's
     * index does not list that tab, and it was stepped over without being
     * decompressed (`content` is empty). `offset` and `bytes` of a journal
     * frame cover its index and the data frame. */
    bool skipped;
} ut_rec_step;

typedef struct ut_rec_reader ut_rec_reader;

/* A reader keeps its decompression context and content buffer across
 * recordings: reuse one for many files. */
ut_status ut_rec_reader_new(ut_rec_reader **out);
void ut_rec_reader_free(ut_rec_reader *r);

/* Starts walking `len` bytes at `data`, which must stay valid and
 * unchanged until the walk ends or the next reset. */
void ut_rec_reader_reset(ut_rec_reader *r, const void *data, size_t len);

/* Frames of a journal whose tab index does not list `tab` are stepped
 * over without being decompressed (FRAME steps with `skipped`), except the
 * first frame of the data and a frame that starts with the meta entry. An index that is malformed or
 * fails its checksum is ignored: its frame is read. `tab` must outlive the
 * reader's use of it; UT_STR_NULL reads every frame again. The filter
 * stays across resets. */
void ut_rec_reader_only_tab(ut_rec_reader *r, ut_str tab);

/* The key under which a journal index lists `tab`: the low 32 bits of the
 * XXH3 64-bit hash of its bytes. */
uint32_t ut_rec_index_key(ut_str tab);

/* Fills `step` with the next frame, the next damage, or the end. Damage
 * never stops the walk: call again to go on. Returns UT_OK, or UT_ENOMEM
 * (the step is not consumed: a later call retries it). */
ut_status ut_rec_reader_next(ut_rec_reader *r, ut_rec_step *step);

/* If `content` starts with the uitrail.meta entry, parses it into `meta`
 * (strings point into `content`) and returns UT_OK. UT_ENOENT when the
 * first entry has another tag; UT_ECORRUPT when it is a meta entry that is
 * malformed or larger than UT_REC_META_MAX_BYTES. `*consumed` is the size
 * of the entry whenever it could be measured (UT_OK, and UT_ECORRUPT for
 * well-formed msgpack with wrong fields), else 0. */
ut_status ut_rec_meta_parse(ut_str content, ut_rec_meta *meta, size_t *consumed);

/* Callbacks of ut_rec_read; any may be NULL. Pointers live for the call. */
typedef struct ut_rec_handlers {
    /* The meta entry that leads the first good frame. */
    void (*on_meta)(void *ud, const ut_rec_meta *meta);
    /* Each good frame, before its entries go to the decoder. */
    void (*on_frame)(void *ud, const ut_rec_step *frame);
    /* Each damage, in file order. */
    void (*on_damage)(void *ud, const ut_rec_step *damage);
    void *ud;
} ut_rec_handlers;

/* Walks a whole recording or journal: reports meta, frames and damage to `h` and
 * decodes the entries of every good frame through a ut_fwd_decoder into
 * `events` (the meta entry excepted). A frame whose content is not a valid
 * Forward stream is reported as UT_REC_DAMAGE_BAD_CONTENT and decoding
 * starts afresh at the next frame; so does it after any damage, since an
 * entry cut by a lost frame cannot be completed. Returns UT_OK once the end
 * is reached, whatever the damage; UT_ENOMEM; or the error an `events`
 * callback returned, which stops the walk. */
ut_status ut_rec_read(ut_rec_reader *r, const void *data, size_t len, const ut_rec_handlers *h,
                      const ut_fwd_sink *events);

#endif
