/* The option table of uitraild (config.c), shared with config_doc.c,
 * which writes it out as --help, the option reference (OPTIONS.md) and
 * the example configuration. Private to those two files. */
#ifndef UITRAIL_DAEMON_CONFIG_TABLE_H
#define UITRAIL_DAEMON_CONFIG_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum opt_kind {
    OPT_CONFIG,
    OPT_STRING,
    OPT_UINT,
    OPT_STAB_PARAM, /* a row of UT_STAB_PARAM_TABLE: `min` is its index */
    OPT_BYTES,      /* uint64_t */
    OPT_BOOL,       /* a flag on the command line, true/false in the file; default false */
    OPT_TCP_ADDR,
    OPT_LOG_LEVEL,
    OPT_UID_LIST,    /* repeatable */
    OPT_REDACT,      /* repeatable */
    OPT_ORIGIN_LIST, /* repeatable */
    OPT_STAB_MODEL,
    OPT_FSYNC,
    OPT_HELP,      /* --help and the other options that print and exit */
    OPT_VERSION,
    OPT_REFERENCE,
    OPT_EXAMPLE_CONFIG,
    OPT__COUNT,
} opt_kind;

/* One option: its name (the long option and the config key), how its
 * value is read, its bounds, and its default, which this row alone owns:
 * settings start from it, and --help, OPTIONS.md and the example
 * configuration print it. */
typedef struct opt_desc {
    const char *name;
    opt_kind kind;
    size_t offset;     /* into ut__settings */
    uint64_t min, max; /* OPT_UINT and OPT_BYTES bounds */
    uint64_t def;      /* OPT_UINT and OPT_BYTES: the default */
    /* Other kinds: the default as the option takes it, set through the
     * option's own parser at start (OPT_TCP_ADDR, OPT_LOG_LEVEL,
     * OPT_STAB_MODEL, OPT_FSYNC), or NULL: none (a flag: off). */
    const char *def_text;
    /* A default that is not a value (worked out at start), in words;
     * wins over the above in what is printed. */
    const char *def_doc;
    bool live;       /* takes effect on SIGHUP without a restart */
    const char *arg; /* the argument's name in --help, NULL for flags */
    const char *help;
    /* The example configuration: a value to show instead of the default
     * (commented out), and lines of advice above it. */
    const char *example;
    const char *example_note;
} opt_desc;

/* Every option, in --help order; `*n` gets their number. */
const opt_desc *ut__config_options(size_t *n);
/* Writes the default of `o` as text ("4096", "127.0.0.1:7317", "off",
 * "$XDG_RUNTIME_DIR/uitrail, else /tmp/uitrail-UID"), or "" when it has
 * none (a repeatable option, --help). */
void ut__config_option_default(const opt_desc *o, char *buf, size_t len);
/* Whether `o` is a setting (not --config, --help and their kind). */
bool ut__config_option_is_setting(const opt_desc *o);

#endif
