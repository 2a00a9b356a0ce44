/*
 * bench/report.c -- reads the TSV rows written by hark_bench (and the ruby rows that
 * bench/run.sh converts to the same shape), prints the results table with ratios to
 * each case's baseline, checks the budgets of the benchmark issue and prints one
 * PASS/MISS/SKIP line per budget, and writes the JSON files.
 *
 *   hark_bench_report [--json FILE] [--budgets FILE] [--markdown] ROWS.tsv...
 *
 * Every ratio is taken between rows of the same run; the verdicts use medians, and
 * the ratio of minima is shown beside them. The exit status is 0 whatever the
 * verdicts: a budget is reported, never enforced on the build.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 256
#define SHARED_SUFFIX "@shared"

typedef struct row {
    char name[128], kind[16], status[8], linkage[32], note[256], extras[512];
    double ns_min, ns_median, allocs; /* allocs < 0: not measured */
    long long iters;
    int reps, threads, has_ns;
} row;

static row rows[MAX_ROWS];
static int nrows;

static row *find(const char *name)
{
    for (int i = 0; i < nrows; i++)
        if (strcmp(rows[i].name, name) == 0)
            return rows[i].has_ns ? &rows[i] : NULL;
    return NULL;
}

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static void read_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return;
    }
    char line[4096];
    while (fgets(line, sizeof line, f) && nrows < MAX_ROWS) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        char *field[12] = {0};
        char *p = line;
        for (int i = 0; i < 12 && p; i++)
            field[i] = strsep(&p, "\t");
        if (field[0] == NULL || field[0][0] == '\0')
            continue;
        row *r = &rows[nrows];
        /* A later row of the same name (a re-run) replaces the earlier one. */
        for (int i = 0; i < nrows; i++)
            if (strcmp(rows[i].name, field[0]) == 0)
                r = &rows[i];
        if (r == &rows[nrows])
            nrows++;
        memset(r, 0, sizeof *r);
        copy(r->name, sizeof r->name, field[0]);
        copy(r->kind, sizeof r->kind, field[1]);
        copy(r->status, sizeof r->status, field[2]);
        r->has_ns =
            field[3] && field[3][0] && field[4] && field[4][0] && strcmp(r->status, "skip") != 0;
        r->ns_min = r->has_ns ? strtod(field[3], NULL) : NAN;
        r->ns_median = r->has_ns ? strtod(field[4], NULL) : NAN;
        r->allocs = field[5] && field[5][0] ? strtod(field[5], NULL) : -1;
        r->iters = field[6] && field[6][0] ? atoll(field[6]) : 0;
        r->reps = field[7] && field[7][0] ? atoi(field[7]) : 0;
        r->threads = field[8] && field[8][0] ? atoi(field[8]) : 0;
        copy(r->linkage, sizeof r->linkage, field[9]);
        copy(r->note, sizeof r->note, field[10]);
        copy(r->extras, sizeof r->extras, field[11]);
    }
    fclose(f);
}

/* The row a case is compared with in the table's ratio column. */
static const char *reference(const char *name)
{
    static const struct {
        const char *c, *ref;
    } refs[] = {
        {"baseline/flag_guard", "baseline/empty_loop"},
        {"hark/unsubscribed", "baseline/flag_guard"},
        {"hark/silenced", "hark/unsubscribed"},
        {"hark/silenced_dynamic", "hark/unsubscribed"},
        {"hark/logsub_sql_silenced", "hark/unsubscribed"},
        {"hark/by_name_unsubscribed", "baseline/flag_guard"},
        {"hark/by_name_lookup_unsubscribed", "baseline/flag_guard"},
        {"hark/timed", "baseline/naive_timed10"},
        {"hark/timed_monotonic", "baseline/naive_timed10"},
        {"hark/pattern_timed", "baseline/naive_timed10"},
        {"hark/evented", "baseline/naive_evented10"},
        {"hark/event_object", "baseline/naive_timed10_cpu"},
        {"hark/event_object_nocpu", "baseline/naive_timed10"},
        {"hark/timed_2threads", "baseline/naive_timed10_2threads"},
        {"hark/logsub_sql_active", "baseline/fprintf_devnull"},
        {"hark/logsub_sql_active_async", "baseline/fprintf_devnull"},
        {"hark/logsub_sql_active_async_printf", "baseline/fprintf_devnull"},
        {"hark/logsub_sql_event_only", "baseline/fprintf_devnull"},
        {"hark/logsub_sql_active_json", "hark/logsub_sql_active"},
        {"hark/metrics_histogram", "baseline/metrics_histogram"},
        {"hark/metrics_histogram_shared", "hark/metrics_histogram"},
        {"hark/trace_file", "baseline/trace_by_hand"},
        {"hark/trace_record", "baseline/trace_by_hand"},
        {"hark/trace_record_sql", "hark/trace_record"},
        {"hark/lttng_idle", "hark/unsubscribed"},
        {"hark/otlp_span", "hark/trace_record"},
        {"hark/otlp_unsampled", "hark/timed_1sub"},
        {"hark/recorder", "hark/trace_record_sql"}, /* the same payload */
        {"hark/recorder_nopayload", "hark/timed_1sub"},
        {"hark/recorder_idle", "hark/unsubscribed"},
    };
    char base[128];
    copy(base, sizeof base, name);
    char *at = strchr(base, '@'); /* @shared, @tsc, @vdso: the same case run another way */
    if (at)
        *at = '\0';
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
        if (strcmp(refs[i].c, base) == 0)
            return refs[i].ref;
    return NULL;
}

/* ---- budgets ----------------------------------------------------------------------- */

enum { AT_MOST, AT_LEAST_FASTER, AT_MOST_NS, AT_MOST_MIN, OVERHEAD_AT_MOST };

typedef struct budget {
    const char *lhs, *rhs;
    double limit;
    int type;         /* AT_MOST: lhs/rhs <= limit; AT_LEAST_FASTER: rhs/lhs >= limit;
                         AT_MOST_NS: lhs's median <= limit ns (rhs unused);
                         AT_MOST_MIN: lhs/rhs <= limit for the medians and for the minimums;
                         OVERHEAD_AT_MOST: (lhs - base) / (rhs - base) <= limit */
    const char *base; /* OVERHEAD_AT_MOST: the row without instrumentation */
    const char *note; /* printed after the budget: what the comparison is, when it is
                         not like for like */
} budget;

static const budget budgets[] = {
    {"hark/unsubscribed", "baseline/flag_guard", 1.5, AT_MOST},
    {"hark/silenced", "hark/unsubscribed", 1.2, AT_MOST},
    {"hark/logsub_sql_silenced", "hark/unsubscribed", 1.2, AT_MOST},
    {"hark/by_name_unsubscribed", "baseline/flag_guard", 3.0, AT_MOST},
    {"hark/timed", "baseline/naive_timed10", 1.15, AT_MOST},
    {"hark/timed_monotonic", "baseline/naive_timed10", 1.15, AT_MOST},
    {"hark/evented", "baseline/naive_evented10", 1.15, AT_MOST},
    /* min/min too: the row must hold in a loaded run as well as a quiet one */
    {"hark/event_object", "baseline/naive_timed10_cpu", 1.15, AT_MOST_MIN},
    {"hark/timed_2threads", "baseline/naive_timed10_2threads", 1.2, AT_MOST},
    {"hark/logsub_sql_active", "baseline/fprintf_devnull", 2.0, AT_MOST},
    {"hark/logsub_sql_active_async", "baseline/fprintf_devnull", 0.6, AT_MOST},
    {"hark/logsub_sql_active_json", "hark/logsub_sql_active", 1.5, AT_MOST},
    {"hark/metrics_histogram", "baseline/metrics_histogram", 1.5, AT_MOST},
    /* shared mode (servers that fork): the counters in a mapped file cost what they cost in
     * the heap, and a scrape sums 16 workers' files of 200 event names in 50 ms */
    {"hark/metrics_histogram_shared", "hark/metrics_histogram", 1.3, AT_MOST},
    {"hark/metrics_scrape_shared", NULL, 50e6, AT_MOST_NS},
    {"hark/lttng_idle", "hark/unsubscribed", 1.2, AT_MOST},
    {"hark/otlp_span", "hark/trace_record", 1.5, AT_MOST},
    {"hark/otlp_unsampled", "hark/timed_1sub", 1.2, AT_MOST},
    /* the flight recorder (issue 31): recording with the SQL payload costs no more than
     * the trace file's recording without one (as the issue writes it: not like for like,
     * and judged on the minimums too, as the trace row's median carries its writer
     * thread on the same cores) and, like for like, no more than the trace file's
     * recording of the same payload; a dump of 64 MiB takes at most a second */
    {"hark/recorder", "hark/trace_record", 1.0, AT_MOST_MIN, NULL, "[SQL payload vs an empty one]"},
    {"hark/recorder", "hark/trace_record_sql", 1.0, AT_MOST, NULL, "[the same payload]"},
    {"hark/recorder_nopayload", "hark/timed_1sub", 1.3, AT_MOST},
    {"hark/recorder_idle", "hark/unsubscribed", 1.2, AT_MOST},
    {"hark/recorder_dump_64mib", NULL, 1e9, AT_MOST_NS},
    /* the OTLP worker encodes at least a million spans per second on one core */
    {"hark/otlp_encode", NULL, 1000, AT_MOST_NS},
    {"hark/metrics_scrape_tls", NULL, 50e6, AT_MOST_NS},
    /* subscribing and unsubscribing one anchored regex over 10,000 names */
    {"hark/subscribe_unsubscribe_regex", NULL, 150000, AT_MOST_NS},
    /* The TSC clock source (HARK_CLOCK=tsc), key rows and their baselines run again
     * in one process of the same run: the floor with this clock is naive_timed10_tsc. */
    {"hark/timed@tsc", "baseline/naive_timed10_tsc@tsc", 1.15, AT_MOST},
    {"hark/timed@tsc", "baseline/naive_timed10@tsc", 0.75, AT_MOST},
    {"hark/logsub_sql_active_async@tsc", "baseline/fprintf_devnull@tsc", 0.55, AT_MOST},
    {"hark/logsub_sql_event_only@tsc", "baseline/fprintf_devnull@tsc", 0.4, AT_MOST},
    {"hark/timed", "ruby/timed", 50, AT_LEAST_FASTER},
    {"hark/silenced", "ruby/silenced", 500, AT_LEAST_FASTER},
    /* hark's fanout behind ActiveSupport::Notifications (bindings/ruby) against Rails
     * 7.2's own, the seed benchmark run twice in the same run */
    {"hark_rb/unsubscribed", "rails72/unsubscribed", 2.0, AT_LEAST_FASTER},
    {"hark_rb/silenced", "rails72/silenced", 5.0, AT_LEAST_FASTER},
    {"hark_rb/logsub_sql_silenced", "rails72/logsub_sql_silenced", 5.0, AT_LEAST_FASTER},
    {"hark_rb/timed", "rails72/timed", 1.5, AT_LEAST_FASTER},
    {"hark_rb/timed_monotonic", "rails72/timed_monotonic", 1.5, AT_LEAST_FASTER},
    {"hark_rb/event_object", "rails72/event_object", 1.5, AT_LEAST_FASTER},
    {"hark_rb/evented", "rails72/evented", 1.5, AT_LEAST_FASTER},
    {"hark_rb/logsub_sql_active", "rails72/logsub_sql_active", 1.0, AT_LEAST_FASTER},
    /* an ActiveRecord 7.2 application (bench/ar_bench.rb): one sql.active_record event as
     * ActiveRecord instruments it, and Model.find(id) on SQLite, whose overhead is what
     * the find costs beyond the same find with instrument reduced to a bare yield */
    {"hark_ar/ar_sql_event_info", "ar72/ar_sql_event_info", 3.0, AT_LEAST_FASTER},
    {"hark_ar/ar_sql_event_debug", "ar72/ar_sql_event_debug", 1.0, AT_LEAST_FASTER},
    {"hark_ar/find_info@ir", "ar72/find_info@ir", 0.20, OVERHEAD_AT_MOST, "ar72_noop/find_info@ir"},
    {"hark_ar/find_debug", "ar72/find_debug", 1.0, AT_LEAST_FASTER},
    /* the Rails application of examples/rails, its index page (50 partials and a
     * collection of 50): what notifications cost a request over the same request with
     * instrument reduced to a bare yield, in instructions (callgrind, GC off) */
    {"hark_app/index_info@ir", "rails_app/index_info@ir", 0.25, OVERHEAD_AT_MOST,
     "rails_app_noop/index_info@ir"},
    {"hark_app/index_debug@ir", "rails_app/index_debug@ir", 0.60, OVERHEAD_AT_MOST,
     "rails_app_noop/index_debug@ir"},
    /* telemetry on the same page: what Hark::OTLP and Hark::Metrics (on hark's fanout) add
     * to the request with Rails' fanout and no telemetry, against what opentelemetry-ruby
     * and yabeda/prometheus-client (on Rails' fanout) add to it */
    {"hark_otlp_app/index_info@ir", "otel_app/index_info@ir", 0.10, OVERHEAD_AT_MOST,
     "rails_app/index_info@ir"},
    {"hark_metrics_app/index_info@ir", "prom_app/index_info@ir", 0.20, OVERHEAD_AT_MOST,
     "rails_app/index_info@ir"},
};

/* Ratios worth reading that carry no budget: printed as INFO lines. */
static const budget infos[] = {
    {"hark/evented", "baseline/naive_evented10_noclock", 0, AT_MOST},
    {"hark/event_object_nocpu", "baseline/naive_timed10", 0, AT_MOST},
    {"hark/timed_1sub", "baseline/naive_timed10", 0, AT_MOST},
    {"hark/silenced_dynamic", "hark/silenced", 0, AT_MOST},
    {"hark/by_name_lookup_unsubscribed", "hark/by_name_unsubscribed", 0, AT_MOST},
    {"hark/logsub_sql_active_fd", "baseline/write_devnull", 0, AT_MOST},
    {"hark/trace_file", "baseline/trace_by_hand", 0, AT_MOST},
    {"hark/trace_record", "baseline/trace_by_hand", 0, AT_MOST},
    {"hark/timed@shared", "hark/timed", 0, AT_MOST},
    {"hark/metrics_histogram", "baseline/metrics_histogram_unsync", 0, AT_MOST},
    {"hark/evented@shared", "hark/evented", 0, AT_MOST},
    {"hark/timed@tsc", "hark/timed@vdso", 0, AT_MOST},
    {"hark/timed_monotonic@tsc", "baseline/naive_timed10_tsc@tsc", 0, AT_MOST},
    {"hark/logsub_sql_active_async@tsc", "hark/logsub_sql_active_async@vdso", 0, AT_MOST},
    {"hark/logsub_sql_event_only@tsc", "hark/logsub_sql_event_only@vdso", 0, AT_MOST},
    {"hark/logsub_sql_event_only@vdso", "baseline/fprintf_devnull@vdso", 0, AT_MOST},
    {"baseline/naive_timed10_tsc@tsc", "baseline/naive_timed10@tsc", 0, AT_MOST},
    /* find_info's overhead and the application's notification cost in thread CPU time,
     * beside the budgets' @ir */
    {"hark_ar/find_info", "ar72/find_info", 0, OVERHEAD_AT_MOST, "ar72_noop/find_info"},
    {"hark_app/index_info", "rails_app/index_info", 0, OVERHEAD_AT_MOST,
     "rails_app_noop/index_info"},
    {"hark_app/index_debug", "rails_app/index_debug", 0, OVERHEAD_AT_MOST,
     "rails_app_noop/index_debug"},
    /* what each telemetry stack adds to its own fanout's request: the exporters' cost
     * apart from the fanout's (the budgets above count the fanout's saving too) */
    {"hark_otlp_app/index_info@ir", "hark_app/index_info@ir", 0, AT_MOST},
    {"otel_app/index_info@ir", "rails_app/index_info@ir", 0, AT_MOST},
    {"hark_metrics_app/index_info@ir", "hark_app/index_info@ir", 0, AT_MOST},
    {"prom_app/index_info@ir", "rails_app/index_info@ir", 0, AT_MOST},
};

typedef struct verdict {
    char what[320], verdict[8];
    double ratio, ratio_min;
} verdict;

static verdict verdicts[128];
static int nverdicts, npass, nmiss, nskip;

static void record(const char *what, const char *v, double ratio, double ratio_min,
                   const char *detail)
{
    printf("%-4s  %-66s %s\n", v, what, detail);
    if (nverdicts < (int)(sizeof verdicts / sizeof verdicts[0])) {
        verdict *x = &verdicts[nverdicts++];
        copy(x->what, sizeof x->what, what);
        copy(x->verdict, sizeof x->verdict, v);
        x->ratio = ratio;
        x->ratio_min = ratio_min;
    }
    if (strcmp(v, "PASS") == 0)
        npass++;
    else if (strcmp(v, "MISS") == 0)
        nmiss++;
    else
        nskip++;
}

/* What a row's figures count: instructions (kind "ir", callgrind) or nanoseconds. */
static const char *unit(const row *r)
{
    return r && strcmp(r->kind, "ir") == 0 ? "instructions" : "ns";
}

static void check_budget(const budget *bg, const char *lhs_name, const char *rhs_name)
{
    char what[320], detail[160];
    row *l = find(lhs_name);
    if (bg->type == AT_MOST_NS) {
        snprintf(what, sizeof what, "%s <= %.0f ns", lhs_name, bg->limit);
        if (l == NULL) {
            snprintf(detail, sizeof detail, "(no figures for %s)", lhs_name);
            record(what, "SKIP", NAN, NAN, detail);
            return;
        }
        snprintf(detail, sizeof detail, "%.0f ns (min %.0f ns)", l->ns_median, l->ns_min);
        record(what, l->ns_median <= bg->limit ? "PASS" : "MISS", l->ns_median / bg->limit,
               l->ns_min / bg->limit, detail);
        return;
    }
    row *r = find(rhs_name);
    if (bg->type == OVERHEAD_AT_MOST) {
        row *b = find(bg->base);
        snprintf(what, sizeof what, "%s overhead <= %.0f%% of %s's (over %s)", lhs_name,
                 bg->limit * 100, rhs_name, bg->base);
        if (l == NULL || r == NULL || b == NULL) {
            snprintf(detail, sizeof detail, "(no figures for %s)",
                     l == NULL   ? lhs_name
                     : r == NULL ? rhs_name
                                 : bg->base);
            record(what, "SKIP", NAN, NAN, detail);
            return;
        }
        double mine = l->ns_median - b->ns_median, theirs = r->ns_median - b->ns_median;
        double ratio = theirs > 0 ? mine / theirs : NAN;
        double ratio_min =
            r->ns_min - b->ns_min > 0 ? (l->ns_min - b->ns_min) / (r->ns_min - b->ns_min) : NAN;
        snprintf(detail, sizeof detail, "%.0f%% (%.0f vs %.0f %s over %.0f)", ratio * 100, mine,
                 theirs, unit(l), b->ns_median);
        record(what, isfinite(ratio) && ratio <= bg->limit ? "PASS" : "MISS", ratio, ratio_min,
               detail);
        return;
    }
    const char *note = bg->note ? bg->note : "", *sp = bg->note ? " " : "";
    if (bg->type == AT_MOST)
        snprintf(what, sizeof what, "%s <= %.2fx %s%s%s", lhs_name, bg->limit, rhs_name, sp, note);
    else if (bg->type == AT_MOST_MIN)
        snprintf(what, sizeof what, "%s <= %.2fx %s (median and min/min)%s%s", lhs_name, bg->limit,
                 rhs_name, sp, note);
    else
        snprintf(what, sizeof what, "%s >= %gx faster than %s", lhs_name, bg->limit, rhs_name);
    if (l == NULL || r == NULL) {
        snprintf(detail, sizeof detail, "(no figures for %s)", l == NULL ? lhs_name : rhs_name);
        record(what, "SKIP", NAN, NAN, detail);
        return;
    }
    double ratio, ratio_min;
    int ok;
    if (bg->type == AT_MOST || bg->type == AT_MOST_MIN) {
        ratio = l->ns_median / r->ns_median;
        ratio_min = l->ns_min / r->ns_min;
        ok = ratio <= bg->limit && (bg->type == AT_MOST || ratio_min <= bg->limit);
        snprintf(detail, sizeof detail, "%.2fx (min/min %.2fx; %.2f vs %.2f ns)", ratio, ratio_min,
                 l->ns_median, r->ns_median);
    } else {
        ratio = r->ns_median / l->ns_median;
        ratio_min = r->ns_min / l->ns_min;
        ok = ratio >= bg->limit;
        snprintf(detail, sizeof detail, "%.*fx faster (%.2f vs %.1f ns)", ratio < 10 ? 2 : 0, ratio,
                 l->ns_median, r->ns_median);
    }
    record(what, ok ? "PASS" : "MISS", ratio, ratio_min, detail);
}

static void check_budgets(void)
{
    printf("\n== budgets (verdict on the median ratio; the bench never fails the build) ==\n");
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++)
        check_budget(&budgets[i], budgets[i].lhs, budgets[i].rhs);
    /* The same budgets against the shared library, where those rows exist. */
    /* ... and with HARK_CLOCK=vdso, where every row keeps its budget. */
    static const char *const suffixes[] = {SHARED_SUFFIX, "@vdso"};
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++)
        for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
            char lhs[128], rhs[128];
            if (strchr(budgets[i].lhs, '@'))
                continue;
            snprintf(lhs, sizeof lhs, "%s%s", budgets[i].lhs, suffixes[k]);
            if (find(lhs) == NULL || !budgets[i].rhs)
                continue;
            snprintf(rhs, sizeof rhs, "%s%s", budgets[i].rhs, suffixes[k]);
            if (find(rhs) == NULL)
                copy(rhs, sizeof rhs, budgets[i].rhs);
            check_budget(&budgets[i], lhs, rhs);
        }
    /* Dynamic silence: what asking one dynamic subscriber costs an event, from the
     * ten of hark/silenced_dynamic over the guard of hark/unsubscribed. */
    {
        const row *d = find("hark/silenced_dynamic"), *u = find("hark/unsubscribed");
        const char *what = "(hark/silenced_dynamic - hark/unsubscribed) / 10 <= 2 ns";
        if (d == NULL || u == NULL) {
            record(what, "SKIP", NAN, NAN, "(no figures)");
        } else {
            double per = (d->ns_median - u->ns_median) / 10, per_min = (d->ns_min - u->ns_min) / 10;
            char detail[96];
            snprintf(detail, sizeof detail, "%.2f ns per subscriber (min %.2f ns)", per, per_min);
            record(what, per <= 2.0 ? "PASS" : "MISS", per / 2.0, per_min / 2.0, detail);
        }
    }
    /* No heap allocation on any instrument path. */
    for (int i = 0; i < nrows; i++) {
        row *r = &rows[i];
        if (strcmp(r->kind, "instrument") != 0)
            continue;
        char what[320], detail[64];
        snprintf(what, sizeof what, "%s allocs_per_op == 0", r->name);
        if (!r->has_ns || r->allocs < 0) {
            record(what, "SKIP", NAN, NAN, "(not measured)");
            continue;
        }
        snprintf(detail, sizeof detail, "%.4f allocs/op", r->allocs);
        record(what, r->allocs == 0 ? "PASS" : "MISS", r->allocs, r->allocs, detail);
    }
    printf("%d PASS, %d MISS, %d SKIP\n", npass, nmiss, nskip);

    printf("\n== other ratios (no budget) ==\n");
    for (size_t i = 0; i < sizeof infos / sizeof infos[0]; i++) {
        const row *l = find(infos[i].lhs), *r = find(infos[i].rhs);
        if (l == NULL || r == NULL)
            continue;
        char what[320];
        if (infos[i].type == OVERHEAD_AT_MOST) {
            const row *b = find(infos[i].base);
            if (b == NULL)
                continue;
            double mine = l->ns_median - b->ns_median, theirs = r->ns_median - b->ns_median;
            snprintf(what, sizeof what, "%.90s overhead / %.90s's (over %.90s)", l->name, r->name,
                     b->name);
            printf("INFO  %-66s %.0f%% (%.0f vs %.0f %s over %.0f)\n", what, 100 * mine / theirs,
                   mine, theirs, unit(l), b->ns_median);
            continue;
        }
        snprintf(what, sizeof what, "%s / %s", l->name, r->name);
        printf("INFO  %-66s %.2fx (min/min %.2fx; %.2f vs %.2f ns)\n", what,
               l->ns_median / r->ns_median, l->ns_min / r->ns_min, l->ns_median, r->ns_median);
    }
}

/* ---- table ---------------------------------------------------------------------------- */

/* Ruby rows and the rows they are compared with: "<of>x" against "<with>x", how
 * many decimals the factor gets. */
static const struct {
    const char *of, *with;
    int decimals;
} ruby_pairs[] = {{"rails72/", "hark_rb/", 2},
                  {"ar72/", "hark_ar/", 2},
                  {"rails_app/", "hark_app/", 2},
                  {"ruby/", "hark/", 0}};

static void ratio_text(const row *r, char *out, size_t cap)
{
    out[0] = '\0';
    if (!r->has_ns)
        return;
    for (size_t i = 0; i < sizeof ruby_pairs / sizeof ruby_pairs[0]; i++) {
        size_t n = strlen(ruby_pairs[i].of);
        if (strncmp(r->name, ruby_pairs[i].of, n) != 0)
            continue;
        char hark[128];
        snprintf(hark, sizeof hark, "%s%s", ruby_pairs[i].with, r->name + n);
        const row *h = find(hark);
        if (h)
            snprintf(out, cap, "%s is %.*fx faster", hark, ruby_pairs[i].decimals,
                     r->ns_median / h->ns_median);
        return;
    }
    const char *ref = reference(r->name);
    if (ref == NULL)
        return;
    /* The reference run the same way (same suffix) when it was, else the plain one. */
    char same_ref[160];
    const char *suffix = strchr(r->name, '@');
    snprintf(same_ref, sizeof same_ref, "%s%s", ref, suffix ? suffix : "");
    const row *b = suffix && find(same_ref) ? find(same_ref) : find(ref);
    if (b)
        snprintf(out, cap, "%.2fx %s", r->ns_median / b->ns_median, b->name);
}

static void print_table(int markdown)
{
    char ratio[200];
    if (markdown) {
        printf("| case | min ns | median ns | allocs/op | ratio (median) |\n");
        printf("|---|---:|---:|---:|---|\n");
    } else {
        printf("== results (ns per operation: min and median of the repeated runs) ==\n");
        printf("%-40s %10s %10s %9s  %s\n", "case", "min", "median", "allocs/op", "ratio (median)");
    }
    for (int i = 0; i < nrows; i++) {
        row *r = &rows[i];
        char allocs[32] = "-";
        if (r->allocs >= 0 && r->has_ns && strcmp(r->kind, "baseline") != 0)
            snprintf(allocs, sizeof allocs, "%.3f", r->allocs);
        ratio_text(r, ratio, sizeof ratio);
        if (!r->has_ns) {
            if (markdown)
                printf("| `%s` | | | | %s |\n", r->name, r->note);
            else
                printf("%-40s %s\n", r->name, r->note[0] ? r->note : "no figures");
            continue;
        }
        if (markdown) {
            printf("| `%s` | %.2f | %.2f | %s | %s |\n", r->name, r->ns_min, r->ns_median, allocs,
                   ratio);
        } else {
            printf("%-40s %10.2f %10.2f %9s  %s\n", r->name, r->ns_min, r->ns_median, allocs,
                   ratio);
            if (strcmp(r->status, "fail") == 0 || r->extras[0])
                printf("%-40s   %s%s%s\n", "", r->note, r->note[0] && r->extras[0] ? "  " : "",
                       r->extras);
        }
    }
}

/* ---- JSON ------------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

static void write_results_json(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return;
    }
    int first = 1;
    fprintf(f, "[\n");
    for (int i = 0; i < nrows; i++) {
        row *r = &rows[i];
        if (!r->has_ns)
            continue; /* skipped cases have no figures; the table lists them */
        fprintf(f, "%s  {\"case\": ", first ? "" : ",\n");
        first = 0;
        json_string(f, r->name);
        fprintf(f, ", \"kind\": ");
        json_string(f, r->kind);
        fprintf(f, ", \"status\": ");
        json_string(f, r->status);
        fprintf(f, ", \"ns_min\": ");
        json_number(f, r->ns_min);
        fprintf(f, ", \"ns_median\": ");
        json_number(f, r->ns_median);
        if (strncmp(r->name, "hark/", 5) == 0 && r->allocs >= 0) {
            fprintf(f, ", \"allocs_per_op\": ");
            json_number(f, r->allocs);
        }
        if (r->iters) {
            fprintf(f, ", \"iterations\": %lld, \"repeats\": %d, \"threads\": %d", r->iters,
                    r->reps, r->threads);
        }
        fprintf(f, ", \"linkage\": ");
        json_string(f, r->linkage);
        if (r->note[0]) {
            fprintf(f, ", \"note\": ");
            json_string(f, r->note);
        }
        char extras[512];
        copy(extras, sizeof extras, r->extras);
        for (char *p = extras, *kv; (kv = strsep(&p, ";")) != NULL;) {
            char *eq = strchr(kv, '=');
            if (eq == NULL)
                continue;
            *eq = '\0';
            fprintf(f, ", ");
            json_string(f, kv);
            fprintf(f, ": ");
            json_number(f, strtod(eq + 1, NULL));
        }
        const char *ref = reference(r->name);
        const row *b = ref ? find(ref) : NULL;
        if (b) {
            fprintf(f, ", \"baseline\": ");
            json_string(f, b->name);
            fprintf(f, ", \"ratio_median\": ");
            json_number(f, r->ns_median / b->ns_median);
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n]\n");
    fclose(f);
}

static void write_budgets_json(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return;
    }
    fprintf(f, "[\n");
    for (int i = 0; i < nverdicts; i++) {
        fprintf(f, "%s  {\"budget\": ", i ? ",\n" : "");
        json_string(f, verdicts[i].what);
        fprintf(f, ", \"verdict\": ");
        json_string(f, verdicts[i].verdict);
        fprintf(f, ", \"value\": ");
        json_number(f, verdicts[i].ratio);
        fprintf(f, ", \"value_min\": ");
        json_number(f, verdicts[i].ratio_min);
        fprintf(f, "}");
    }
    fprintf(f, "\n]\n");
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *json = NULL, *budgets_json = NULL;
    int markdown = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json = argv[++i];
        else if (strcmp(argv[i], "--budgets") == 0 && i + 1 < argc)
            budgets_json = argv[++i];
        else if (strcmp(argv[i], "--markdown") == 0)
            markdown = 1;
        else
            read_rows(argv[i]);
    }
    if (nrows == 0) {
        fprintf(stderr,
                "usage: hark_bench_report [--json F] [--budgets F] [--markdown] ROWS.tsv...\n");
        return 2;
    }
    print_table(markdown);
    if (!markdown)
        check_budgets();
    if (json)
        write_results_json(json);
    if (budgets_json)
        write_budgets_json(budgets_json);
    return 0;
}
