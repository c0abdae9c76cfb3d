/* cmd_scenario.c: `mailbench scenario list | show NAME [--json] | fields`.
 *
 * Everything printed comes from the loader's tables (scenario.c) and the
 * counters table; nothing here names a field.  Invariant: an invalid file
 * prints exactly one line "FILE:LINE: FIELD: message" on stderr and exits
 * 2; stdout then holds nothing.
 */
#include "cmd.h"
#include "core/counters.h"
#include "core/error.h"
#include "core/scenario.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	mb_cmd_help(f, &mb_cmd_scenario_entry);
	fprintf(f, "scenario directory: %s\n", mb_scenario_dir());
}

/* A loaded file of either kind. */
struct loaded {
	bool storage;
	struct mb_scenario sc;
	struct mb_storage_cfg st;
};

/* Load NAME as a scenario, or as a storage file when its kind says so. */
static int load_either(const char *name, struct loaded *l, struct mb_cfg_error *err)
{
	int rc = mb_scenario_load(name, &l->sc, err);
	if (rc == MB_ECONFIG && strcmp(err->field, "kind") == 0) {
		struct mb_cfg_error err2;
		int rc2 = mb_storage_cfg_load(name, &l->st, &err2);
		if (rc2 == 0 || strcmp(err2.field, "kind") != 0) {
			/* it is a storage file: report its own errors */
			*err = err2;
			l->storage = true;
			return rc2;
		}
	}
	l->storage = false;
	return rc;
}

static int report_error(int rc, const struct mb_cfg_error *err)
{
	if (rc == MB_ECONFIG) {
		char line[MB_PATH_MAX + 512];
		mb_cfg_error_format(err, line, sizeof(line));
		fprintf(stderr, "%s\n", line);
		return MB_EXIT_USAGE;
	}
	fprintf(stderr, "mailbench scenario: %s\n", mb_strerror(rc));
	return MB_EXIT_RUNTIME;
}

static int print_json(json_t *o)
{
	if (!o || json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) != 0) {
		json_decref(o);
		fprintf(stderr, "mailbench scenario: cannot write JSON\n");
		return MB_EXIT_RUNTIME;
	}
	json_decref(o);
	printf("\n");
	return MB_EXIT_OK;
}

/* The published columns as a table: counter rows, one column each. */
static void print_published(const struct mb_scenario *s)
{
	if (s->column_count == 0)
		return;
	printf("\n%s\n", s->results_title[0] ? s->results_title : "published results");
	for (int c = 0; c < s->column_count; c++)
		printf("  %s\n", s->columns[c].heading);
	printf("\n%-30s", "counter");
	for (int c = 0; c < s->column_count; c++)
		printf(" %10s", s->columns[c].id);
	printf("\n%-30s", "SMT (Hyper-Threading)");
	for (int c = 0; c < s->column_count; c++)
		printf(" %10s", s->columns[c].smt ? "on" : "off");
	printf("\n");
	for (int i = 0; i < MB_PUBLISHED_COUNT; i++) {
		printf("%-30s", mb_counters[i].label);
		for (int c = 0; c < s->column_count; c++) {
			if (s->columns[c].has[i])
				printf(" %10.15g", s->columns[c].value[i]);
			else
				printf(" %10s", "");
		}
		printf("\n");
	}
	if (s->results_note[0])
		printf("\n%s\n", s->results_note);
}

static void print_storage_ref(const struct mb_storage_cfg *c)
{
	if (c->ref_count == 0)
		return;
	printf("\n%s\n%s\n\n%8s %12s %14s %14s\n", c->ref_heading, c->ref_notes, "threads",
	       "total IOPS", "db read (ms)", "log write (ms)");
	for (int i = 0; i < c->ref_count; i++)
		printf("%8d %12.0f %14.2f %14.2f\n", c->ref[i].threads, c->ref[i].iops,
		       c->ref[i].db_read_ms, c->ref[i].log_write_ms);
}

mb_scenario_target_fn mb_scenario_target_check;

/* The target's support of the scenario's actions (when the program knows
 * its drivers): an unknown driver is an input error. */
static int target_support(const struct mb_scenario *sc, uint32_t *unsupported)
{
	*unsupported = 0;
	if (!mb_scenario_target_check)
		return 0;
	if (mb_scenario_target_check(sc, unsupported) != 0) {
		fprintf(stderr, "%s: target.driver: unknown driver '%s'\n", sc->path,
			sc->target_driver);
		return MB_EXIT_USAGE;
	}
	return 0;
}

static int cmd_show(const char *name, bool json)
{
	struct loaded *l = calloc(1, sizeof(*l));
	struct mb_cfg_error err;
	if (!l)
		return MB_EXIT_RUNTIME;
	int rc = load_either(name, l, &err);
	if (rc != 0) {
		free(l);
		return report_error(rc, &err);
	}
	uint32_t unsup = 0;
	if (!l->storage && (rc = target_support(&l->sc, &unsup)) != 0) {
		free(l);
		return rc;
	}
	if (json) {
		json_t *j = l->storage ? mb_storage_cfg_json(&l->st) : mb_scenario_json(&l->sc);
		if (j && !l->storage) {
			json_t *un = json_object();
			for (int a = 0; a < MB_ACTION_COUNT; a++)
				if (unsup >> a & 1u)
					json_object_set_new(
					    un, mb_actions[a].key,
					    json_string("not supported by the target"));
			json_object_set_new(j, "target_unsupported", un);
		}
		rc = print_json(j);
	} else if (l->storage) {
		mb_storage_cfg_print(stdout, &l->st);
		print_storage_ref(&l->st);
	} else {
		mb_scenario_print(stdout, &l->sc);
		for (int a = 0; a < MB_ACTION_COUNT; a++)
			if (unsup >> a & 1u)
				printf("%s: not supported by the target (%s): never scheduled, "
				       "never failed\n",
				       mb_actions[a].key, l->sc.target_driver);
		print_published(&l->sc);
	}
	free(l);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmd_list(bool json)
{
	const char *dir = mb_scenario_dir();
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "%s: cannot open the scenario directory: %s\n", dir,
			strerror(errno));
		return MB_EXIT_USAGE;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len <= 4 || strcmp(de->d_name + len - 4, ".cfg") != 0 || de->d_name[0] == '.')
			continue;
		char **nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn)
			break;
		names = nn;
		names[n] = strndup(de->d_name, len - 4);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);

	struct loaded *l = calloc(1, sizeof(*l));
	json_t *arr = json ? json_array() : NULL;
	if (!json)
		printf("%-16s %-8s %-40s %s\n", "NAME", "KIND", "TITLE", "PATH");
	for (size_t i = 0; l && i < n; i++) {
		struct mb_cfg_error err;
		char path[MB_PATH_MAX], msg[MB_PATH_MAX + 512] = "";
		int rc = load_either(names[i], l, &err);
		if (mb_scenario_resolve(names[i], path, sizeof(path)) != 0)
			path[0] = '\0';
		const char *kind = rc != 0 ? "invalid" : l->storage ? "storage" : "mailbox";
		const char *title = "";
		if (rc == 0)
			title = l->storage ? l->st.title : l->sc.title;
		else
			mb_cfg_error_format(&err, msg, sizeof(msg));
		if (json) {
			json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "name", names[i], "kind",
					      kind, "title", rc == 0 ? title : msg, "path", path);
			json_array_append_new(arr, o);
		} else {
			printf("%-16s %-8s %-40s %s\n", names[i], kind, rc == 0 ? title : msg,
			       path);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(l);
	return json ? print_json(arr) : MB_EXIT_OK;
}

struct scenario_args {
	bool json, storage;
};

static int scenario_main(void *args, int argc, char **argv)
{
	const struct scenario_args *a = args;
	bool json = a->json, storage = a->storage;
	int first = 0; /* argv holds the operands only */
	const char *action = first < argc ? argv[first] : NULL;
	int rest = argc - first - 1;
	if (action && !strcmp(action, "list") && rest == 0 && !storage)
		return cmd_list(json);
	if (action && !strcmp(action, "show") && rest == 1 && !storage)
		return cmd_show(argv[first + 1], json);
	if (action && !strcmp(action, "fields") && rest == 0 && !json) {
		mb_cfg_fields_print(stdout, storage);
		return MB_EXIT_OK;
	}
	if (!action)
		fprintf(stderr, "mailbench scenario: say list, show SCENARIO or fields\n");
	else
		fprintf(stderr, "mailbench scenario: bad arguments for '%s'\n", action);
	usage(stderr);
	return MB_EXIT_USAGE;
}

#define SCA struct scenario_args
static const struct mb_opt scenario_opts[] = {
    {.path = "json",
     .flag = "json",
     .sflag = 'j',
     .type = MB_OT_FLAG,
     .off = offsetof(SCA, json),
     .help = "print JSON instead of text (list, show)"},
    {.path = "storage",
     .flag = "storage",
     .sflag = 's',
     .type = MB_OT_FLAG,
     .off = offsetof(SCA, storage),
     .help = "(fields) the keys of storage-test files"},
};

const struct mb_cmd_entry mb_cmd_scenario_entry = {
    .name = "scenario",
    .usage = "list [--json] | show SCENARIO [--json] | fields [--storage]",
    .summary = "list the scenarios, or print one loaded and validated",
    .about = "list: the scenario files of the scenario directory: name, kind, title, path.\n"
	     "show: load and validate SCENARIO (online, cached, storage, a NAME in the scenario\n"
	     "directory, or a path to a .cfg file) and print every field and every published\n"
	     "figure.  fields: every key a scenario file (or, with --storage, a storage-test\n"
	     "file) may set: type, default, range and meaning.",
    .epilog = "scenario directory: $MAILBENCH_SCENARIOS, else the source tree when run from the\n"
	      "build tree, else the installed data directory.\n"
	      "exit codes: 0 ok, 2 invalid file or usage (one line FILE:LINE: FIELD: message)",
    .opts = scenario_opts,
    .nopts = (int)(sizeof(scenario_opts) / sizeof(scenario_opts[0])),
    .args_size = sizeof(struct scenario_args),
    .flags = MB_CMD_OPERANDS,
    .run = scenario_main,
};
