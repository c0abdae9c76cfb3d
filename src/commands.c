/* commands.c: the one command table (mb_commands, see core/opt.h) and
 * `mailbench help`, which prints a command's help, the man page's
 * generated sections (docs/mailbench.1 between its "generated" markers)
 * and, hidden, every flag with its range (the range-edge test reads it).
 * Invariant: adding a command is one row in its own file plus one line
 * here; main.c, --help, the man page and the tests follow. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "core/error.h"

const struct mb_cmd_entry *const mb_commands[] = {
    &mb_cmd_console_entry, &mb_cmd_run_entry,	   &mb_cmd_capacity_entry,
    &mb_cmd_compare_entry, &mb_cmd_report_entry,   &mb_cmd_init_entry,
    &mb_cmd_store_entry,   &mb_cmd_load_entry,	   &mb_cmd_storage_test_entry,
    &mb_cmd_check_entry,   &mb_cmd_scenario_entry, &mb_cmd_counters_entry,
    &mb_cmd_lab_entry,	   &mb_cmd_help_entry,	   NULL,
};

const struct mb_cmd_entry *mb_cmd_find(const char *name)
{
	for (int i = 0; name && mb_commands[i]; i++)
		if (!strcmp(mb_commands[i]->name, name))
			return mb_commands[i];
	return NULL;
}

void mb_cmd_list(FILE *f)
{
	for (int i = 0; mb_commands[i]; i++)
		fprintf(f, "  mailbench %s %s\n      %s\n", mb_commands[i]->name,
			mb_commands[i]->usage, mb_commands[i]->summary);
}

/* The man page's generated sections: "synopsis" or "commands". */
static int mb_cmd_man(FILE *f, const char *section)
{
	bool syn = !strcmp(section, "synopsis");
	if (!syn && strcmp(section, "commands"))
		return MB_EINVAL;
	for (int i = 0; mb_commands[i]; i++) {
		if (syn)
			mb_cmd_man_synopsis(f, mb_commands[i]);
		else
			mb_cmd_man_section(f, mb_commands[i]);
	}
	return 0;
}

struct help_args {
	const char *man;
	bool options;
};

static const char *kind(const struct mb_opt *o)
{
	switch (o->type) {
	case MB_OT_INT:
		return "int";
	case MB_OT_DOUBLE:
		return "num";
	case MB_OT_ENUM:
	case MB_OT_SCHOICE:
		return "enum";
	case MB_OT_INT_LIST:
		return "list";
	case MB_OT_FLAG:
		return "flag";
	default:
		return "string";
	}
}

/* One line per flag: command, flag, kind, min, max, min excluded,
 * required, choices (comma-separated). */
static void print_options(void)
{
	for (int i = 0; mb_commands[i]; i++) {
		const struct mb_cmd_entry *e = mb_commands[i];
		for (int k = 0; k < e->nopts; k++) {
			const struct mb_opt *o = &e->opts[k];
			if (!o->flag)
				continue;
			printf("%s\t%s\t%s\t%.15g\t%.15g\t%d\t%d\t", e->name, o->flag, kind(o),
			       o->min, o->max, (o->flags & MB_OPT_LO_OPEN) ? 1 : 0,
			       (o->flags & MB_OPT_REQ) ? 1 : 0);
			for (int c = 0; o->choices && o->choices[c]; c++)
				printf("%s%s", c ? "," : "", o->choices[c]);
			printf("%s\n", (o->flags & MB_OPT_AUTO) ? "auto" : "");
		}
	}
}

static int help_run(void *args, int argc, char **argv)
{
	struct help_args *a = args;
	if (a->options) {
		print_options();
		return MB_EXIT_OK;
	}
	if (a->man) {
		if (argc || mb_cmd_man(stdout, a->man)) {
			fprintf(stderr,
				"mailbench help: --man: '%s' must be synopsis or commands\n",
				a->man);
			return MB_EXIT_USAGE;
		}
		return MB_EXIT_OK;
	}
	if (argc > 1) {
		fprintf(stderr, "mailbench help: unexpected argument '%s'\n", argv[1]);
		return MB_EXIT_USAGE;
	}
	if (argc == 0) {
		mb_cmd_list(stdout);
		return MB_EXIT_OK;
	}
	const struct mb_cmd_entry *e = mb_cmd_find(argv[0]);
	if (!e) {
		fprintf(stderr, "mailbench help: unknown command '%s'\n", argv[0]);
		return MB_EXIT_USAGE;
	}
	mb_cmd_help(stdout, e);
	return MB_EXIT_OK;
}

#define HA struct help_args
static const struct mb_opt help_opts[] = {
    {.path = "man",
     .flag = "man",
     .metavar = "SECTION",
     .type = MB_OT_ARG,
     .off = offsetof(HA, man),
     .flags = MB_OPT_NONEMPTY,
     .help = "print the man page's generated section: synopsis or commands"},
    {.path = "options",
     .flag = "options",
     .type = MB_OT_FLAG,
     .off = offsetof(HA, options),
     .help = "print every flag of every command with its range, one per line"},
};

const struct mb_cmd_entry mb_cmd_help_entry = {
    .name = "help",
    .usage = "[COMMAND] [--man synopsis|commands] [--options]",
    .summary = "the help of a command, or the man page's generated sections",
    .about = "Print the options of COMMAND (as COMMAND --help does), or the list of commands.",
    .opts = help_opts,
    .nopts = (int)(sizeof(help_opts) / sizeof(help_opts[0])),
    .args_size = sizeof(struct help_args),
    .flags = MB_CMD_OPERANDS,
    .run = help_run,
};
