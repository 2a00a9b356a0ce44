/*
 * bench/main.c -- runs the benchmark cases and writes one TSV row per case.
 *
 *   hark_bench [--only LIST] [--tsv FILE] [--suffix S] [--list] [--strict]
 *   hark_bench CASE N icount          (icount mode, see bench.h)
 *
 * LIST is comma-separated; an item selects every case whose name contains it, or
 * exactly one case when it ends with '$'. BENCH_TARGET_MS, BENCH_REPEAT and
 * BENCH_ROUNDS tune the harness: every selected case is measured once per round,
 * BENCH_REPEAT runs each time, and min and median are taken over all the runs.
 * With --strict the exit status is 1 when a case failed its sanity checks (wrong
 * subscriber call counts, unexpected state word, a hark call failing in setup). bench/report.c
 * turns the TSV rows into the table, ratios and budgets.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "harness.h"

#ifndef BENCH_LINKAGE
#define BENCH_LINKAGE "none"
#endif

typedef struct table {
    const bench_case *cases;
    const size_t *count;
    int needs_hark;
} table;

static const table tables[] = {
    {bench_baseline_cases, &bench_baseline_case_count, 0},
#ifndef BENCH_NO_HARK
    {bench_hark_cases, &bench_hark_case_count, 1},
    {bench_logsub_cases, &bench_logsub_case_count, 1},
    {bench_export_cases, &bench_export_case_count, 1},
#endif
#ifdef BENCH_HAVE_TRACE
    {bench_trace_cases, &bench_trace_case_count, 1},
    {bench_recorder_cases, &bench_recorder_case_count, 1},
#endif
#ifdef BENCH_HAVE_OTLP
    {bench_otlp_cases, &bench_otlp_case_count, 1},
    {bench_scrape_cases, &bench_scrape_case_count, 1},
#endif
};

static int selected(const char *name, const char *only)
{
    if (only == NULL || *only == '\0')
        return 1;
    const char *p = only;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len > 0) {
            int exact = p[len - 1] == '$';
            size_t cmp = exact ? len - 1 : len;
            if (exact) {
                if (strlen(name) == cmp && strncmp(name, p, cmp) == 0)
                    return 1;
            } else {
                for (const char *s = name; *s; s++)
                    if (strncmp(s, p, cmp) == 0)
                        return 1;
            }
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

static const char *kind_name(bench_kind k)
{
    switch (k) {
    case BENCH_KIND_INSTRUMENT:
        return "instrument";
    case BENCH_KIND_REGISTRY:
        return "registry";
    default:
        return "baseline";
    }
}

static void write_row(FILE *f, const bench_ctx *b, const char *name)
{
    const char *status = b->skipped ? "skip" : b->failed ? "fail" : "ok";
    fprintf(f, "%s\t%s\t%s\t", name, kind_name(b->c->kind), status);
    if (b->measured && !b->cfg->icount_n)
        fprintf(f, "%.4f\t%.4f\t%.6f\t%llu\t%d\t%d\t", b->ns_min, b->ns_median, b->allocs_per_op,
                (unsigned long long)b->iters, b->reps, b->threads);
    else
        fprintf(f, "\t\t\t\t\t\t");
    fprintf(f, "%s\t%s\t", BENCH_LINKAGE, b->note);
    for (int i = 0; i < b->nextra; i++)
        fprintf(f, "%s%s=%.2f", i ? ";" : "", b->extra[i].key, b->extra[i].value);
    fprintf(f, "\n");
    fflush(f);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: hark_bench [--only LIST] [--tsv FILE] [--suffix S] [--list] [--strict]\n"
               "       hark_bench CASE N icount\n");
}

int main(int argc, char **argv)
{
    bench_config cfg;
    bench_config_from_env(&cfg);
    const char *only = getenv("ONLY");
    const char *tsv_path = NULL, *suffix = "";
    int list = 0, strict = 0;

    if (argc == 4 && strcmp(argv[3], "icount") == 0) {
        char *end;
        cfg.icount_n = strtoull(argv[2], &end, 10);
        if (*end != '\0' || cfg.icount_n == 0) {
            usage(stderr);
            return 2;
        }
        size_t len = strlen(argv[1]);
        char *exact = malloc(len + 2);
        if (exact == NULL)
            return 1;
        memcpy(exact, argv[1], len);
        memcpy(exact + len, "$", 2);
        only = exact; /* intentionally kept until exit */
    } else {
        for (int i = 1; i < argc; i++) {
            if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
                only = argv[++i];
            else if (strcmp(argv[i], "--tsv") == 0 && i + 1 < argc)
                tsv_path = argv[++i];
            else if (strcmp(argv[i], "--suffix") == 0 && i + 1 < argc)
                suffix = argv[++i];
            else if (strcmp(argv[i], "--list") == 0)
                list = 1;
            else if (strcmp(argv[i], "--strict") == 0)
                strict = 1;
            else {
                usage(strcmp(argv[i], "--help") == 0 ? stdout : stderr);
                return strcmp(argv[i], "--help") == 0 ? 0 : 2;
            }
        }
    }

    FILE *tsv = NULL;
    if (tsv_path) {
        tsv = fopen(tsv_path, "w");
        if (tsv == NULL) {
            perror(tsv_path);
            return 1;
        }
    }

    bench_baselines_init();

    /* The selected cases, in table order. */
    size_t total = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        total += *tables[t].count;
    bench_ctx *ctx = calloc(total ? total : 1, sizeof *ctx);
    char(*names)[128] = calloc(total ? total : 1, sizeof *names);
    int *needs_hark = calloc(total ? total : 1, sizeof *needs_hark);
    if (ctx == NULL || names == NULL || needs_hark == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    size_t ncases = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        for (size_t i = 0; i < *tables[t].count; i++) {
            const bench_case *c = &tables[t].cases[i];
            snprintf(names[ncases], sizeof names[ncases], "%s%s", c->name, suffix);
            if (!selected(names[ncases], only) && !selected(c->name, only))
                continue;
            if (list) {
                printf("%-40s %s\n", names[ncases], c->what);
                continue;
            }
            ctx[ncases].cfg = &cfg;
            ctx[ncases].c = c;
            needs_hark[ncases] = tables[t].needs_hark;
            ncases++;
        }
    }
    if (list)
        return 0;
    if (ncases == 0) {
        fprintf(stderr, "bench: no case matches \"%s\"\n", only ? only : "");
        return 2;
    }

    int hark_ready = 0;
    int rounds = cfg.icount_n ? 1 : cfg.rounds;
    for (int round = 0; round < rounds; round++) {
        if (rounds > 1) {
            fprintf(stderr, "bench: round %d of %d\n", round + 1, rounds);
        }
        for (size_t i = 0; i < ncases; i++) {
            bench_ctx *b = &ctx[i];
            if (b->skipped)
                continue;
#ifndef BENCH_NO_HARK
            if (needs_hark[i] && !hark_ready) {
                hark_ready = 1;
                int rc = bench_hark_init();
                if (rc < 0)
                    fprintf(stderr, "bench: hark setup failed (%d); affected cases are skipped\n",
                            rc);
            }
#endif
            b->measured_this_round = 0;
            b->c->fn(b);
        }
    }
    (void)hark_ready;
    if (cfg.icount_n)
        return 0;

    int failed = 0;
    for (size_t i = 0; i < ncases; i++) {
        bench_ctx *b = &ctx[i];
        failed += b->failed;
        bench_finish(b);
        if (b->measured && !b->skipped)
            printf("%-40s %10.2f %10.2f ns/op  %8.3f allocs/op%s%s\n", names[i], b->ns_min,
                   b->ns_median, b->allocs_per_op, b->note[0] ? "  " : "", b->note);
        else
            printf("%-40s %s\n", names[i], b->note[0] ? b->note : "not measured");
        if (tsv)
            write_row(tsv, b, names[i]);
    }
    if (tsv)
        fclose(tsv);
    free(ctx);
    free(names);
    free(needs_hark);
    if (strict && failed) {
        fprintf(stderr, "bench: %d case(s) failed their sanity checks\n", failed);
        return 1;
    }
    return 0;
}
