/* cmd_counters.c: `mailbench counters [--json|--markdown]` prints the
 * counters table (src/core/counters.h) so that docs and scripts are
 * generated from the one table.  Invariant: every row and every column
 * printed comes from mb_counters[]; nothing is repeated here. */
#include "cmd.h"
#include "core/counters.h"
#include "core/error.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *kind_name(enum mb_counter_kind k) { return k == MB_RATE ? "rate" : "gauge"; }

static const char *source_name(enum mb_counter_source s)
{
	switch (s) {
	case MB_SRC_STORE:
		return "store";
	case MB_SRC_LOAD:
		return "load";
	case MB_SRC_STRESS:
		return "storage-test";
	case MB_SRC_HOST:
		return "machine";
	}
	return "?";
}

struct counters_args {
	bool json, markdown;
};

static int counters_main(void *args, int argc, char **argv)
{
	const struct counters_args *ca = args;
	int format = ca->json ? 1 : ca->markdown ? 2 : 0; /* 0 text, 1 json, 2 markdown */
	(void)argc;
	(void)argv;
	if (format == 1) {
		json_t *a = json_array();
		for (int i = 0; i < MB_COUNTER_COUNT; i++) {
			const struct mb_counter_def *d = &mb_counters[i];
			json_array_append_new(
			    a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:b, s:s}", "key", d->key,
					 "label", d->label, "unit", d->unit, "kind",
					 kind_name(d->kind), "source", source_name(d->source),
					 "decimals", d->decimals, "published",
					 mb_counter_published(d->id), "definition", d->definition));
		}
		int rc = json_dumpf(a, stdout, JSON_INDENT(2));
		json_decref(a);
		printf("\n");
		return rc == 0 ? MB_EXIT_OK : MB_EXIT_RUNTIME;
	}
	if (format == 2) {
		printf("| key | label | unit | kind | source | definition |\n"
		       "|---|---|---|---|---|---|\n");
		for (int i = 0; i < MB_COUNTER_COUNT; i++) {
			const struct mb_counter_def *d = &mb_counters[i];
			printf("| `%s` | %s%s%s | %s | %s | %s | %s |\n", d->key,
			       mb_counter_published(d->id) ? "**" : "", d->label,
			       mb_counter_published(d->id) ? "**" : "", d->unit, kind_name(d->kind),
			       source_name(d->source), d->definition);
		}
		printf("\nRows in bold are the rows of the published tables, in the published "
		       "order.\n");
		return MB_EXIT_OK;
	}
	printf("%-30s %-32s %-7s %-6s %-13s %s\n", "KEY", "LABEL", "UNIT", "KIND", "SOURCE",
	       "DEFINITION");
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		const struct mb_counter_def *d = &mb_counters[i];
		printf("%-30s %-32s %-7s %-6s %-13s %s\n", d->key, d->label, d->unit,
		       kind_name(d->kind), source_name(d->source), d->definition);
		if (i == MB_PUBLISHED_COUNT - 1)
			printf("%-30s (the rows above are the published rows, in order)\n", "");
	}
	return MB_EXIT_OK;
}

#define CNA struct counters_args
static const struct mb_opt counters_opts[] = {
    {.path = "json",
     .flag = "json",
     .sflag = 'j',
     .type = MB_OT_FLAG,
     .off = offsetof(CNA, json),
     .help = "a JSON array of objects"},
    {.path = "markdown",
     .flag = "markdown",
     .sflag = 'm',
     .type = MB_OT_FLAG,
     .off = offsetof(CNA, markdown),
     .help = "a Markdown table (for the docs)"},
};

const struct mb_cmd_entry mb_cmd_counters_entry = {
    .name = "counters",
    .usage = "[--json | --markdown]",
    .summary = "print the counters table",
    .about = "Print the counters table: JSON key, label, unit, kind (rate per second or gauge),\n"
	     "the process that measures it, and its definition.  The first rows are the rows of\n"
	     "the published tables, in the published order.",
    .opts = counters_opts,
    .nopts = (int)(sizeof(counters_opts) / sizeof(counters_opts[0])),
    .args_size = sizeof(struct counters_args),
    .run = counters_main,
};
