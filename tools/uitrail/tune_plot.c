/* uitrail tune: the SVG plot of one session (tune_plot.h): sampling the
 * session's replay, then drawing. The SVG is written as text: it is
 * output, and every piece of input text in it goes through xml_text. */
#include "tune_plot.h"

#include <math.h>

#include "uitrail/limits.h"

/* ---- Sampling ---- */

typedef struct plot_run {
    ut_engine *engine;
    ut_str tab;
    int64_t step_us;
    int64_t next_sample_us; /* engine clock; INT64_MIN before the first event */
    int64_t offset_us;      /* engine clock minus sender time, of the tab's last event */
    ut_tune_sample *samples;
    size_t nsamples, cap;
    ut_tune_plot_mark *marks;
    size_t nmarks, cap_marks;
    ut_status failed;
} plot_run;

static ut_status plot_sample(plot_run *pr, int64_t clock_us)
{
    ut_tab_info info;
    if (ut_engine_tab_info(pr->engine, pr->tab, &info) != UT_OK)
        return UT_OK; /* the tab has not appeared yet, or is gone */
    if (pr->nsamples == UT_TUNE_SVG_SAMPLES_MAX) {
        /* The step chosen from the truth's span does not count the samples
         * taken at events nor the time around the truth: when the cap is
         * reached, every other sample goes and the step doubles, so the
         * plot keeps spanning the whole session. */
        for (size_t i = 0; i < pr->nsamples / 2; i++)
            pr->samples[i] = pr->samples[2 * i + 1];
        pr->nsamples /= 2;
        pr->step_us *= 2;
    }
    if (pr->nsamples == pr->cap) {
        size_t cap = pr->cap ? pr->cap * 2 : 1024;
        ut_tune_sample *v = ut_realloc(pr->samples, cap * sizeof *v);
        if (!v)
            return UT_ENOMEM;
        pr->samples = v;
        pr->cap = cap;
    }
    pr->samples[pr->nsamples++] = (ut_tune_sample){clock_us - pr->offset_us, info.page.intensity, info.page.busy};
    return UT_OK;
}

/* Samples every step up to `clock_us` (exclusive), advancing the engine:
 * advancing in steps gives the same marks as in one (stability.h). */
static ut_status plot_until(plot_run *pr, int64_t clock_us)
{
    if (pr->next_sample_us == INT64_MIN)
        pr->next_sample_us = clock_us;
    for (; pr->next_sample_us < clock_us; pr->next_sample_us += pr->step_us) {
        ut_engine_advance(pr->engine, pr->next_sample_us);
        ut_status st = plot_sample(pr, pr->next_sample_us);
        if (st != UT_OK)
            return st;
    }
    return UT_OK;
}

static ut_status plot_before(void *ud, const ut_event *ev)
{
    return plot_until(ud, ev->rt_us ? ev->rt_us : ev->time_us);
}

static ut_status plot_after(void *ud, const ut_event *ev)
{
    plot_run *pr = ud;
    int64_t clock = ev->rt_us ? ev->rt_us : ev->time_us;
    if (!ut_str_eq(ev->tab, pr->tab))
        return UT_OK;
    pr->offset_us = clock - ev->time_us;
    return plot_sample(pr, clock);
}

static void plot_mark(void *ud, ut_str tab, const ut_mark *m)
{
    plot_run *pr = ud;
    if (!ut_str_eq(tab, pr->tab) || pr->failed != UT_OK)
        return;
    if (pr->nmarks == pr->cap_marks) {
        size_t cap = pr->cap_marks ? pr->cap_marks * 2 : 16;
        ut_tune_plot_mark *v = ut_realloc(pr->marks, cap * sizeof *v);
        if (!v) {
            pr->failed = UT_ENOMEM;
            return;
        }
        pr->marks = v;
        pr->cap_marks = cap;
    }
    pr->marks[pr->nmarks++] = (ut_tune_plot_mark){m->time_us, m->state};
}

ut_status ut_tune_plot_sample(const ut_config *cfg, const char *path, const ut_cli_input *input, ut_str tab,
                              int64_t first_us, int64_t last_us, ut_tune_plot_data *out)
{
    *out = (ut_tune_plot_data){0};
    char err[256];
    plot_run pr = {.tab = tab, .next_sample_us = INT64_MIN};
    ut_status st = ut_engine_new(cfg, &pr.engine, err, sizeof err);
    ut_rec_reader *reader = NULL;
    if (st == UT_OK)
        st = ut_rec_reader_new(&reader);
    int64_t span = last_us > first_us ? last_us - first_us : 1;
    pr.step_us = (int64_t)UT_TUNE_SVG_STEP_MS * 1000;
    if (span / pr.step_us > UT_TUNE_SVG_SAMPLES_MAX)
        pr.step_us = span / UT_TUNE_SVG_SAMPLES_MAX + 1;
    if (st == UT_OK) {
        const ut_observer obs = {.on_mark = plot_mark, .ud = &pr};
        ut_engine_set_observer(pr.engine, &obs);
        ut_cli_drive d = {.command = "tune", .path = path, .engine = pr.engine, .quiet = true,
                          .before_event = plot_before, .after_event = plot_after, .ud = &pr};
        st = ut_cli_drive_begin(&d);
        if (st == UT_OK)
            st = ut_cli_drive_input(&d, input, reader);
        if (st == UT_EPROTO)
            st = UT_OK;
        /* Two seconds past the last event or settle, in sender time. */
        int64_t end = d.last_clock_us - pr.offset_us;
        end = (end > last_us ? end : last_us) + 2 * INT64_C(1000000);
        if (st == UT_OK && d.last_clock_us != INT64_MIN)
            st = plot_until(&pr, end + pr.offset_us);
        ut_cli_drive_end(&d);
    }
    if (st == UT_OK)
        st = pr.failed;
    ut_rec_reader_free(reader);
    ut_engine_free(pr.engine);
    *out = (ut_tune_plot_data){pr.samples, pr.nsamples, pr.marks, pr.nmarks};
    if (st != UT_OK)
        ut_tune_plot_data_free(out);
    return st;
}

void ut_tune_plot_data_free(ut_tune_plot_data *d)
{
    ut_free(d->samples);
    ut_free(d->marks);
    *d = (ut_tune_plot_data){0};
}

/* ---- Drawing ---- */

/* The drawing: a plot area inside margins for the axes, the title and
 * the legend, in SVG user units (pixels at 100 %). */
#define PLOT_WIDTH 1100.0
#define PLOT_HEIGHT 460.0
#define MARGIN_LEFT 70.0
#define MARGIN_RIGHT 190.0 /* the legend sits here */
#define MARGIN_TOP 60.0
#define MARGIN_BOTTOM 50.0
#define AREA_W (PLOT_WIDTH - MARGIN_LEFT - MARGIN_RIGHT)
#define AREA_H (PLOT_HEIGHT - MARGIN_TOP - MARGIN_BOTTOM)
#define Y_TICKS 5

typedef struct scale {
    int64_t t0_us;
    double span_us;
    double ymax;
} scale;

static double x_of(const scale *s, int64_t t_us)
{
    return MARGIN_LEFT + AREA_W * (double)(t_us - s->t0_us) / s->span_us;
}

/* Intensities above the scale are drawn at its top. */
static double y_of(const scale *s, double v)
{
    if (!(v > 0))
        v = 0;
    if (v > s->ymax)
        v = s->ymax;
    return MARGIN_TOP + AREA_H * (1.0 - v / s->ymax);
}

/* Writes `text` escaped for XML character data and attributes. Control
 * characters, which XML 1.0 forbids, become '?'. */
static void xml_text(FILE *out, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*p < 0x20 && *p != '\t' ? '?' : *p, out); break;
        }
    }
}

/* A tick step of 1, 2 or 5 times a power of ten giving at most about
 * `ticks` ticks over `span`. */
static double nice_step(double span, int ticks)
{
    double raw = span / ticks;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static scale make_scale(const ut_tune_plot *p)
{
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    double ymax = p->enter_threshold * 1.25;
    for (size_t i = 0; i < p->nsamples; i++) {
        t0 = p->samples[i].time_us < t0 ? p->samples[i].time_us : t0;
        t1 = p->samples[i].time_us > t1 ? p->samples[i].time_us : t1;
        if (p->samples[i].intensity > ymax)
            ymax = p->samples[i].intensity;
    }
    for (size_t i = 0; i < p->nmarks; i++) {
        t0 = p->marks[i].time_us < t0 ? p->marks[i].time_us : t0;
        t1 = p->marks[i].time_us > t1 ? p->marks[i].time_us : t1;
    }
    for (size_t i = 0; i < p->nsettles; i++) {
        t0 = p->settles[i] < t0 ? p->settles[i] : t0;
        t1 = p->settles[i] > t1 ? p->settles[i] : t1;
    }
    if (t0 == INT64_MAX)
        t0 = t1 = 0;
    if (!(ymax > 0) || !isfinite(ymax))
        ymax = 1;
    /* A round top for the y axis. */
    double step = nice_step(ymax, Y_TICKS);
    ymax = ceil(ymax / step) * step;
    return (scale){t0, t1 > t0 ? (double)(t1 - t0) : 1e6, ymax};
}

static void draw_axes(FILE *out, const scale *s)
{
    double bottom = MARGIN_TOP + AREA_H;
    fprintf(out, "<g class=\"axes\" stroke=\"#333\" stroke-width=\"1\">\n");
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", MARGIN_LEFT, bottom,
            MARGIN_LEFT + AREA_W, bottom);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", MARGIN_LEFT, MARGIN_TOP, MARGIN_LEFT,
            bottom);
    fprintf(out, "</g>\n<g class=\"ticks\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#333\">\n");
    double span_s = s->span_us / 1e6;
    double xstep = nice_step(span_s, 10);
    for (double t = 0; t <= span_s + 1e-9; t += xstep) {
        double x = MARGIN_LEFT + AREA_W * t / span_s;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", x, bottom, x,
                bottom + 5);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x, bottom + 18, t);
    }
    double ystep = s->ymax / Y_TICKS;
    for (int i = 0; i <= Y_TICKS; i++) {
        double v = ystep * i, y = y_of(s, v);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", MARGIN_LEFT - 5, y,
                MARGIN_LEFT, y);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", MARGIN_LEFT - 8, y + 4, v);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">seconds since the first event</text>\n",
            MARGIN_LEFT + AREA_W / 2, bottom + 38);
    fprintf(out, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">intensity "
            "(share of the page)</text>\n</g>\n", MARGIN_TOP + AREA_H / 2);
}

/* Shades each run of samples with busy > 0, up to the next sample. */
static void draw_busy(FILE *out, const scale *s, const ut_tune_plot *p)
{
    fprintf(out, "<g class=\"busy\" fill=\"#f5c542\" fill-opacity=\"0.3\">\n");
    for (size_t i = 0; i < p->nsamples;) {
        if (p->samples[i].busy == 0) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < p->nsamples && p->samples[j].busy > 0)
            j++;
        int64_t end = j < p->nsamples ? p->samples[j].time_us : p->samples[j - 1].time_us;
        double x0 = x_of(s, p->samples[i].time_us), x1 = x_of(s, end);
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", x0, MARGIN_TOP,
                x1 - x0 > 1 ? x1 - x0 : 1, AREA_H);
        i = j;
    }
    fprintf(out, "</g>\n");
}

static void draw_threshold(FILE *out, const scale *s, double v, const char *color)
{
    if (!(v > 0) || v > s->ymax)
        return;
    double y = y_of(s, v);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"6 4\"/>\n",
            MARGIN_LEFT, y, MARGIN_LEFT + AREA_W, y, color);
}

static void draw_intensity(FILE *out, const scale *s, const ut_tune_plot *p)
{
    fprintf(out, "<polyline class=\"intensity\" fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.5\" points=\"");
    for (size_t i = 0; i < p->nsamples; i++)
        fprintf(out, "%s%.1f,%.1f", i ? " " : "", x_of(s, p->samples[i].time_us), y_of(s, p->samples[i].intensity));
    fprintf(out, "\"/>\n");
}

static void draw_marks(FILE *out, const scale *s, const ut_tune_plot *p)
{
    fprintf(out, "<g class=\"marks\" stroke-width=\"1.5\">\n");
    for (size_t i = 0; i < p->nmarks; i++) {
        double x = x_of(s, p->marks[i].time_us);
        bool stable = p->marks[i].state == UT_PAGE_STABLE;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"%s/>\n", x, MARGIN_TOP, x,
                MARGIN_TOP + AREA_H, stable ? "#2e9e44" : "#d03b2f", stable ? "" : " stroke-dasharray=\"4 3\"");
    }
    fprintf(out, "</g>\n<g class=\"truth\" fill=\"#000\">\n");
    double bottom = MARGIN_TOP + AREA_H;
    for (size_t i = 0; i < p->nsettles; i++) {
        double x = x_of(s, p->settles[i]);
        fprintf(out, "<path d=\"M %.1f %.1f l -6 10 h 12 z\"/>\n", x, bottom - 10);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-dasharray=\"1 3\"/>\n",
                x, MARGIN_TOP, x, bottom - 10);
    }
    fprintf(out, "</g>\n");
}

static void draw_legend(FILE *out)
{
    static const struct {
        const char *what;
        const char *shape;
    } items[] = {
        {"intensity", "<line x1=\"0\" y1=\"0\" x2=\"24\" y2=\"0\" stroke=\"#1f5fbf\" stroke-width=\"1.5\"/>"},
        {"stable mark", "<line x1=\"12\" y1=\"-7\" x2=\"12\" y2=\"7\" stroke=\"#2e9e44\" stroke-width=\"1.5\"/>"},
        {"changing mark", "<line x1=\"12\" y1=\"-7\" x2=\"12\" y2=\"7\" stroke=\"#d03b2f\" stroke-width=\"1.5\" "
                          "stroke-dasharray=\"4 3\"/>"},
        {"true settle", "<path d=\"M 12 -5 l -6 10 h 12 z\" fill=\"#000\"/>"},
        {"busy (loading)", "<rect x=\"2\" y=\"-6\" width=\"20\" height=\"12\" fill=\"#f5c542\" fill-opacity=\"0.3\"/>"},
        {"enter threshold", "<line x1=\"0\" y1=\"0\" x2=\"24\" y2=\"0\" stroke=\"#d03b2f\" stroke-dasharray=\"6 4\"/>"},
        {"exit threshold", "<line x1=\"0\" y1=\"0\" x2=\"24\" y2=\"0\" stroke=\"#e08a1e\" stroke-dasharray=\"6 4\"/>"},
    };
    fprintf(out, "<g class=\"legend\" font-family=\"sans-serif\" font-size=\"12\">\n");
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        fprintf(out, "<g transform=\"translate(%.1f %.1f)\">%s<text x=\"32\" y=\"4\">%s</text></g>\n",
                PLOT_WIDTH - MARGIN_RIGHT + 20, MARGIN_TOP + 10 + 22.0 * (double)i, items[i].shape, items[i].what);
    }
    fprintf(out, "</g>\n");
}

bool ut_tune_plot_svg(FILE *out, const ut_tune_plot *p)
{
    scale s = make_scale(p);
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                 "viewBox=\"0 0 %.0f %.0f\">\n<title>",
            PLOT_WIDTH, PLOT_HEIGHT, PLOT_WIDTH, PLOT_HEIGHT);
    xml_text(out, p->title);
    fprintf(out, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
                 "<text x=\"%.1f\" y=\"24\" font-family=\"sans-serif\" font-size=\"15\">",
            MARGIN_LEFT);
    xml_text(out, p->title);
    fprintf(out, "</text>\n<text x=\"%.1f\" y=\"42\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#555\">",
            MARGIN_LEFT);
    xml_text(out, p->subtitle);
    fprintf(out, "</text>\n");
    draw_busy(out, &s, p);
    draw_axes(out, &s);
    draw_threshold(out, &s, p->enter_threshold, "#d03b2f");
    draw_threshold(out, &s, p->exit_threshold, "#e08a1e");
    draw_intensity(out, &s, p);
    draw_marks(out, &s, p);
    draw_legend(out);
    fprintf(out, "</svg>\n");
    return !ferror(out);
}
