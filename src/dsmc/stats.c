/* The stats file of a DSMC run ([output] stats_file and stats_columns, docs/dsmc.md): a row of
 * the chosen columns every stats_every steps, as CSV or JSON lines. */
#include "kedr/dsmc.h"

#include <stdio.h>

const char *kedr_dsmc_stat_name(kedr_dsmc_stat s)
{
    static const char *const names[KEDR_DSMC_NSTATS] = {
        "step",         "time",         "particles",   "collisions",      "candidates",
        "generated",    "total_collisions", "total_generated", "mcs_mfp", "samples",
        "t_generation", "t_move",       "t_indexing",  "t_collisions",    "t_sampling",
        "wall",         "T_vib",        "reactions"};
    return (unsigned)s < KEDR_DSMC_NSTATS ? names[s] : "?";
}

/* Counts print as integers, the rest with 9 digits. */
static void value(FILE *out, kedr_dsmc_stat s, const kedr_dsmc_stats *st, double wall)
{
    switch (s) {
    case KEDR_DSMC_STAT_STEP: fprintf(out, "%lld", (long long)st->step); return;
    case KEDR_DSMC_STAT_TIME: fprintf(out, "%.9g", st->time); return;
    case KEDR_DSMC_STAT_PARTICLES: fprintf(out, "%zu", st->particles); return;
    case KEDR_DSMC_STAT_COLLISIONS: fprintf(out, "%llu", (unsigned long long)st->collisions); return;
    case KEDR_DSMC_STAT_CANDIDATES: fprintf(out, "%llu", (unsigned long long)st->candidates); return;
    case KEDR_DSMC_STAT_GENERATED: fprintf(out, "%llu", (unsigned long long)st->generated); return;
    case KEDR_DSMC_STAT_TOTAL_COLLISIONS:
        fprintf(out, "%llu", (unsigned long long)st->total_collisions);
        return;
    case KEDR_DSMC_STAT_TOTAL_GENERATED:
        fprintf(out, "%llu", (unsigned long long)st->total_generated);
        return;
    case KEDR_DSMC_STAT_MCS_MFP: fprintf(out, "%.9g", st->mcs_mfp); return;
    case KEDR_DSMC_STAT_SAMPLES: fprintf(out, "%lld", (long long)st->samples); return;
    case KEDR_DSMC_STAT_T_GENERATION:
    case KEDR_DSMC_STAT_T_MOVE:
    case KEDR_DSMC_STAT_T_INDEXING:
    case KEDR_DSMC_STAT_T_COLLISIONS:
    case KEDR_DSMC_STAT_T_SAMPLING:
        fprintf(out, "%.9g", st->stage_seconds[s - KEDR_DSMC_STAT_T_GENERATION]);
        return;
    case KEDR_DSMC_STAT_WALL: fprintf(out, "%.9g", wall); return;
    case KEDR_DSMC_STAT_T_VIB: fprintf(out, "%.9g", st->temperature_vib); return;
    case KEDR_DSMC_STAT_REACTIONS: fprintf(out, "%llu", (unsigned long long)st->reactions); return;
    case KEDR_DSMC_NSTATS: break;
    }
    fprintf(out, "null"); /* not a column: kedr_dsmc_case_check refuses it */
}

void kedr_dsmc_stats_header(void *file, const kedr_dsmc_case *c, int jsonl)
{
    FILE *out = file;
    if (jsonl)
        return;
    for (int k = 0; k < c->nstats_columns; k++)
        fprintf(out, "%s%s", k ? "," : "", kedr_dsmc_stat_name(c->stats_columns[k]));
    fputc('\n', out);
}

void kedr_dsmc_stats_row(void *file, const kedr_dsmc_case *c, const kedr_dsmc_stats *st,
                         double wall_seconds, int jsonl)
{
    FILE *out = file;
    if (jsonl)
        fputc('{', out);
    for (int k = 0; k < c->nstats_columns; k++) {
        if (k)
            fputs(jsonl ? ", " : ",", out);
        if (jsonl)
            fprintf(out, "\"%s\": ", kedr_dsmc_stat_name(c->stats_columns[k]));
        value(out, c->stats_columns[k], st, wall_seconds);
    }
    fputs(jsonl ? "}\n" : "\n", out);
}
