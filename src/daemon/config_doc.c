/* The option table written out for people: --help (and the man page
 * help2man makes from it), the option reference OPTIONS.md
 * (--print-config-reference) and the example configuration
 * tools/deploy/uitraild.conf (--print-example-config). Every default,
 * bound and help text comes from the rows in config.c, so a default is
 * written once; the committed files are compared with this output by
 * tests/docs (docs_generated). */
#include <stdio.h>

#include "config.h"
#include "config_table.h"
#include "uitrail/stability.h"

#define EXAMPLE_WIDTH 76 /* columns of a comment in the example configuration */

static void comment(FILE *to, const char *text);

/* Writes into `buf` the names of the options that SIGHUP changes at
 * once, joined as "a, b and c", `quote` around each. */
static void live_options(char *buf, size_t len, const char *quote)
{
    size_t n, live = 0, done = 0, used = 0;
    const opt_desc *all = ut__config_options(&n);
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        live += all[i].live;
    for (size_t i = 0; i < n && used < len; i++) {
        if (!all[i].live)
            continue;
        done++;
        int w = snprintf(buf + used, len - used, "%s%s%s%s",
                         done == 1 ? "" : done == live ? " and " : ", ", quote, all[i].name, quote);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* The range an option accepts, as "1 to 1000" (empty for none). */
static void option_range(const opt_desc *o, char *buf, size_t len)
{
    buf[0] = '\0';
    if (o->kind == OPT_UINT) {
        snprintf(buf, len, "%llu to %llu", (unsigned long long)o->min, (unsigned long long)o->max);
    } else if (o->kind == OPT_STAB_PARAM) {
        const ut_stab_param_desc *d = &ut_stab_param_table[o->min];
        snprintf(buf, len, d->min_open ? "above %g, up to %g" : "%g to %g", d->min, d->max);
    }
}

void ut__settings_usage(FILE *to)
{
    fprintf(to, "Usage: uitraild [OPTION]...\n"
                "Keeps the last user actions of each browser tab, fed by Forward messages,\n"
                "and serves them as traces over HTTP.\n\n");
    size_t n;
    const opt_desc *all = ut__config_options(&n);
    for (size_t i = 0; i < n; i++) {
        const opt_desc *o = &all[i];
        char left[64], def[128];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        ut__config_option_default(o, def, sizeof def);
        fprintf(to, "  %-30s %s", left, o->help);
        if (def[0] && o->kind != OPT_BOOL)
            fprintf(to, o->def_doc ? " (default: %s)" : " (default %s)", def);
        fputc('\n', to);
    }
    char live[256];
    live_options(live, sizeof live, "");
    fprintf(to, "\nEvery option can also be set in the --config file as 'name = value'\n"
                "(repeat a line for repeatable options); the command line wins.\n"
                "SIGHUP re-reads the file: %s\n"
                "change at once; other settings need a restart.\n", live);
}

/* A table cell: `|` escaped, as GitHub's tables need even in code. */
static void md_cell(FILE *to, const char *text, const char *quote)
{
    fputs(quote, to);
    for (const char *p = text; *p; p++) {
        if (*p == '|')
            fputc('\\', to);
        fputc(*p, to);
    }
    fputs(quote, to);
}

void ut__settings_reference(FILE *to)
{
    char live[256];
    live_options(live, sizeof live, "`");
    fprintf(to, "# `uitraild` options\n\n"
                "<!-- Made by `uitraild --print-config-reference` from the option table in\n"
                "     src/daemon/config.c: change the table, then run\n"
                "     `build/src/daemon/uitraild --print-config-reference > OPTIONS.md`\n"
                "     (meson test docs_generated compares the two). -->\n\n"
                "Every option also works in `--config FILE` as `name = value` (no section, or\n"
                "a `[uitraild]` section; repeat a line for a repeatable option); the command\n"
                "line wins. SIGHUP re-reads the file: %s change at once; other settings\n"
                "are logged as needing a restart.\n"
                "SIGINT and SIGTERM shut down cleanly. `tools/deploy/uitraild.conf` is an\n"
                "example configuration (`uitraild --print-example-config`), installed as\n"
                "`etc/uitrail/uitraild.conf`; `man uitraild` has the same list.\n\n"
                "| option | default | accepts | meaning |\n"
                "|---|---|---|---|\n", live);
    size_t n;
    const opt_desc *all = ut__config_options(&n);
    for (size_t i = 0; i < n; i++) {
        const opt_desc *o = &all[i];
        char left[96], def[128], range[64];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        ut__config_option_default(o, def, sizeof def);
        option_range(o, range, sizeof range);
        fputs("| ", to);
        md_cell(to, left, "`");
        fputs(" | ", to);
        md_cell(to, def, def[0] && !o->def_doc ? "`" : "");
        fputs(" | ", to);
        md_cell(to, range, "");
        fputs(" | ", to);
        md_cell(to, o->help, "");
        fputs(" |\n", to);
    }
}

/* Writes `text` as comment lines of at most EXAMPLE_WIDTH columns; a
 * newline in it starts a new line. */
static void comment(FILE *to, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t room = EXAMPLE_WIDTH - 2, line = 0, last_space = 0;
        while (p[line] && p[line] != '\n' && line < room) {
            if (p[line] == ' ')
                last_space = line;
            line++;
        }
        if (p[line] && p[line] != '\n' && last_space > 0)
            line = last_space; /* break at the last space that fits */
        fprintf(to, "# %.*s\n", (int)line, p);
        p += line;
        if (*p == ' ' || *p == '\n')
            p++;
    }
}

void ut__settings_example_config(FILE *to)
{
    char live[256], head[1024];
    live_options(live, sizeof live, "");
    snprintf(head, sizeof head,
             "uitraild's settings (uitraild(8), OPTIONS.md): every long option, as "
             "name = value. Made by `uitraild --print-example-config` from the daemon's option "
             "table: each setting is commented out at its default, or at an example value where "
             "it has none.\n"
             "The command line wins over this file; SIGHUP (systemctl reload uitraild) re-reads "
             "it: %s change at once, the rest is logged as needing a restart.",
             live);
    comment(to, head);
    fprintf(to, "\n[uitraild]\n");
    size_t n;
    const opt_desc *all = ut__config_options(&n);
    for (size_t i = 0; i < n; i++) {
        const opt_desc *o = &all[i];
        if (!ut__config_option_is_setting(o))
            continue;
        char text[1024], def[128], range[64];
        ut__config_option_default(o, def, sizeof def);
        option_range(o, range, sizeof range);
        fputc('\n', to);
        if (o->example_note)
            comment(to, o->example_note);
        snprintf(text, sizeof text, "%s%s%s: %s%s%s%s.", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "", o->help, range[0] ? " (" : "", range, range[0] ? ")" : "");
        comment(to, text);
        const char *value = o->example                          ? o->example
                            : o->kind == OPT_BOOL               ? "true"
                            : o->def_doc || !def[0]             ? o->arg
                            : o->kind == OPT_STAB_PARAM         ? NULL
                                                                : def;
        char stab[64];
        if (!value) { /* a scorer parameter: its default without the unit */
            snprintf(stab, sizeof stab, "%g", ut_stab_param_table[o->min].def);
            value = stab;
        }
        if (def[0] && (o->example || o->kind == OPT_BOOL || o->def_doc))
            fprintf(to, "# (default: %s)\n", def);
        fprintf(to, "# %s = %s\n", o->name, value);
    }
}
