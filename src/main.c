/* main.c: the mailbench program: dispatches to a subcommand.
 * The table below is the only list of subcommands; --help prints it.
 * With no subcommand (or only options), the console runs. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "core/error.h"

struct mb_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	const char *summary;
};

static const struct mb_command commands[] = {
	{"console", mb_cmd_console, "[console] [-s SCENARIO] [--users N] ...", "the ncurses console (default)"},
	{"run", mb_cmd_run, "run -s SCENARIO [--duration S] [--json F]", "headless run: table, JSON and CSV"},
	{"init", mb_cmd_init, "init -s SCENARIO [--users N] [--data DIR] [--scale F]", "create and populate the mailbox databases"},
	{"store", mb_cmd_store, "store --data DIR [--listen ADDR:PORT] [--stats-fd N]", "the mailbox store server"},
	{"load", mb_cmd_load, "load -s SCENARIO --target ADDR:PORT --topology F", "the load engine: simulated Outlook users"},
	{"storage-test", mb_cmd_storage_test, "storage-test [--threads LIST|auto] [--mode transactions|io] ...", "Jetstress-style storage test of the engine"},
	{"check", mb_cmd_check, "check --data DIR [--ack-log FILE] [--quiet]", "integrity check of the databases and logs"},
	{"scenario", mb_cmd_scenario, "scenario list | show NAME [--json] | fields",
	 "list the scenarios, or print one loaded and validated"},
	{"counters", mb_cmd_counters, "counters [--json|--markdown]", "print the counters table"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: mailbench [COMMAND] [OPTIONS]\n\n"
		   "A benchmark console for mailbox servers: simulated Outlook users\n"
		   "drive a MAPI-style mailbox store; a Jetstress-style test stresses\n"
		   "its storage engine.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  mailbench %s\n      %s\n", commands[i].usage, commands[i].summary);
	fprintf(f, "\n  mailbench COMMAND --help     options of one command\n"
		   "  mailbench --version\n\n"
		   "exit codes: 0 ok, 1 thresholds failed, 2 usage or input error, 3 runtime failure\n");
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (name && (!strcmp(name, "--help") || !strcmp(name, "-h"))) {
		usage(stdout);
		return MB_EXIT_OK;
	}
	if (name && !strcmp(name, "--version")) {
		printf("%s\n", PACKAGE_STRING);
		return MB_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (name && !strcmp(name, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	}
	/* No subcommand, or options only: the console. */
	if (!name || name[0] == '-')
		return mb_cmd_console(argc, argv);
	fprintf(stderr, "mailbench: unknown command '%s'\n", name);
	usage(stderr);
	return MB_EXIT_USAGE;
}
