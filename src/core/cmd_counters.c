/* cmd_counters.c: `mailbench counters [--json|--markdown]` prints the
 * counters table (src/core/counters.h) so that docs and scripts are
 * generated from the one table.  Invariant: every row and every column
 * printed comes from mb_counters[]; nothing is repeated here. */
#include "cmd.h"
#include "core/cli.h"
#include "core/counters.h"
#include "core/error.h"

#include <getopt.h>
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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mailbench counters [--json | --markdown]\n"
		"\n"
		"Print the counters table: JSON key, label, unit, kind (rate per second or\n"
		"gauge), the process that measures it, and its definition.  The first %d\n"
		"rows are the rows of the published tables, in the published order.\n"
		"\n"
		"  -j, --json       a JSON array of objects\n"
		"  -m, --markdown   a Markdown table (for the docs)\n"
		"  -h, --help       this help\n",
		MB_PUBLISHED_COUNT);
}

int mb_cmd_counters(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"markdown", no_argument, NULL, 'm'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, format = 0; /* 0 text, 1 json, 2 markdown */

	optind = 1;
	while ((c = getopt_long(argc, argv, "jmh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			format = 1;
			break;
		case 'm':
			format = 2;
			break;
		case 'h':
			usage(stdout);
			return MB_EXIT_OK;
		default:
			usage(stderr);
			return MB_EXIT_USAGE;
		}
	}
	if (mb_cli_no_operands("counters", argc, argv)) {
		usage(stderr);
		return MB_EXIT_USAGE;
	}
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
