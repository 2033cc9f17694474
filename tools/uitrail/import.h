/* uitrail import (issue 26): the recording of one imported session.
 *
 * import.c runs the importer (tools/import, Node: the sender over the DOM
 * rebuilt from an rrweb recording), whose output is the sender's Forward
 * stream; this room drives that stream through an engine, as the daemon
 * does live (validation, redaction first), and writes what the engine
 * accepted with the recording writer of record.h, the one owner of the
 * format. */
#ifndef UITRAIL_CLI_IMPORT_H
#define UITRAIL_CLI_IMPORT_H

#include <stdio.h>

#include "uitrail/engine.h"
#include "uitrail/record.h"

/* What the import of one input did. */
typedef struct ut_cli_import_rec {
    /* Set by the caller before ut_cli_import_rec_run. */
    const char *out_dir;      /* where the recording goes */
    const char *input_path;   /* the input, for the meta and messages */
    ut_str from;              /* "rrweb" or "posthog" */
    const char *const *gaps;  /* what the format lacks (meta `import.gaps`) */
    size_t n_gaps;
    bool keep_tz;             /* --tz was given: nav records keep their tz */

    /* Filled by the run. */
    uint64_t written_by_kind[UT_KIND__COUNT];
    uint64_t written, not_written, rejected, other_tabs;
    uint64_t file_bytes;      /* the recording's size */
    char path[4096];          /* the recording written, "" when none */
} ut_cli_import_rec;

/* Reads the Forward stream on `in` to its end, drives it through an
 * engine with the default parameters and writes the accepted events of
 * its first tab into a recording in out_dir (named as the daemon names
 * its recordings). Returns UT_OK; UT_EIO when the stream was damaged or
 * the recording could not be written (said on stderr); UT_ENOMEM. */
ut_status ut_cli_import_rec_run(ut_cli_import_rec *r, FILE *in);

/* The inputs of one run (import_inputs.c). */
typedef struct ut_cli_import_inputs {
    char **paths;
    size_t n, cap;
} ut_cli_import_inputs;

/* A stable hash of the name of `path` (not its directory): it names an
 * input's tab and picks its shard, the same on every machine. */
uint64_t ut_cli_import_name_hash(const char *path);

/* Appends each of `args`, a FILE as it is, a DIR as its regular files in
 * name order, and keeps those whose name hash is `shard` modulo `nshards`
 * (every one when nshards is 1). A DIR that cannot be read is said on
 * stderr and gives UT_ENOENT after the rest was collected; UT_ENOMEM. */
ut_status ut_cli_import_inputs_collect(ut_cli_import_inputs *in, char **args, int nargs, uint32_t shard,
                                       uint32_t nshards);
void ut_cli_import_inputs_free(ut_cli_import_inputs *in);

#endif
