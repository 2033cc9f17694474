/* The option table's defaults (src/daemon/config.c): the settings start
 * from the rows, the engine's rows agree with the core's defaults (so that
 * `uitrail replay` and the daemon run the same engine), and --help and the
 * option reference print each row's default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "config_table.h"
#include "uitrail/daemon.h"
#include "uitrail/engine.h"
#include "uitrail/limits.h"

static void load_defaults(ut__settings *s)
{
    char *argv[] = {"uitraild", NULL};
    ut__cli_action action;
    char err[256];
    assert_int_equal(ut__settings_load(1, argv, s, &action, err, sizeof err), UT_OK);
    assert_int_equal(action, UT__CLI_RUN);
}

static void test_config_settings_start_from_the_rows(void **state)
{
    (void)state;
    ut__settings s;
    load_defaults(&s);
    size_t n;
    const opt_desc *all = ut__config_options(&n);
    size_t numeric = 0;
    for (size_t i = 0; i < n; i++) {
        const char *at = (const char *)&s + all[i].offset;
        if (all[i].kind == OPT_UINT) {
            uint32_t v;
            memcpy(&v, at, sizeof v);
            assert_int_equal(v, all[i].def);
            assert_true(all[i].def >= all[i].min && all[i].def <= all[i].max);
            numeric++;
        } else if (all[i].kind == OPT_BYTES) {
            uint64_t v;
            memcpy(&v, at, sizeof v);
            assert_int_equal(v, all[i].def);
            numeric++;
        }
    }
    assert_true(numeric >= 10);
    /* The text defaults went through their options' parsers. */
    assert_true(s.http_tcp.enabled);
    assert_string_equal(s.http_tcp.text, UT_HTTP_TCP_DEFAULT);
    assert_false(s.forward_tcp.enabled);
    assert_int_equal(s.log_level, UT__LOG_INFO);
    assert_int_equal(s.fsync, UT__FSYNC_NEVER);
    ut__settings_free(&s);
}

static void test_config_engine_rows_equal_the_core_defaults(void **state)
{
    (void)state;
    ut__settings s;
    ut_config core;
    load_defaults(&s);
    ut_config_defaults(&core);
    assert_int_equal(s.engine.ring_size, core.ring_size);
    assert_int_equal(s.engine.max_tabs, core.max_tabs);
    assert_int_equal(s.engine.max_memory, core.max_memory);
    assert_int_equal(s.engine.idle_ms, core.idle_ms);
    assert_int_equal(s.engine.debounce_ms, core.debounce_ms);
    assert_int_equal(s.engine.reorder_ms, core.reorder_ms);
    assert_int_equal(s.engine.reset_on_load, core.reset_on_load);
    assert_int_equal(s.engine.stab.model, core.stab.model);
    for (size_t k = 0; k < UT_STAB_PARAM_COUNT; k++) {
        const ut_stab_param_desc *d = &ut_stab_param_table[k];
        assert_true(ut_stab_param_get(&s.engine.stab, d) == ut_stab_param_get(&core.stab, d));
    }
    ut__settings_free(&s);
}

/* What `print` writes, as one string (free it). */
static char *printed(void (*print)(FILE *))
{
    FILE *f = tmpfile();
    assert_non_null(f);
    print(f);
    long len = ftell(f);
    assert_true(len > 0);
    rewind(f);
    char *text = malloc((size_t)len + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    text[len] = '\0';
    fclose(f);
    return text;
}

static void test_config_texts_print_each_rows_default(void **state)
{
    (void)state;
    char *help = printed(ut__settings_usage);
    char *reference = printed(ut__settings_reference);
    char *example = printed(ut__settings_example_config);
    size_t n;
    const opt_desc *all = ut__config_options(&n);
    for (size_t i = 0; i < n; i++) {
        if (all[i].kind != OPT_UINT && all[i].kind != OPT_BYTES)
            continue;
        char want[160];
        /* --help: the option's line ends with its default. */
        snprintf(want, sizeof want, "--%s %s ", all[i].name, all[i].arg);
        const char *line = strstr(help, want);
        assert_non_null(line);
        snprintf(want, sizeof want, "(default %llu)\n", (unsigned long long)all[i].def);
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        assert_memory_equal(end + 1 - strlen(want), want, strlen(want));
        snprintf(want, sizeof want, "| `--%s %s` | `%llu` |", all[i].name, all[i].arg,
                 (unsigned long long)all[i].def);
        assert_non_null(strstr(reference, want));
        snprintf(want, sizeof want, "\n# %s = %llu\n", all[i].name, (unsigned long long)all[i].def);
        assert_non_null(strstr(example, want));
    }
    /* No help text types a default of its own. */
    for (size_t i = 0; i < n; i++)
        assert_null(strstr(all[i].help, "default"));
    free(help);
    free(reference);
    free(example);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_settings_start_from_the_rows),
        cmocka_unit_test(test_config_engine_rows_equal_the_core_defaults),
        cmocka_unit_test(test_config_texts_print_each_rows_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
