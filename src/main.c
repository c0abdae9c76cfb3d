/* main.c: the mailbench program: dispatches to a command row.
 * The rows are listed once, in mb_commands (src/commands.c); --help prints
 * them.  With no command (or only options), the console runs. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "core/error.h"
#include "core/scenario.h"
#include "load/target.h"
#if MB_HAVE_MPI
#include "load/mpi.h"
#endif

static void usage(FILE *f)
{
	fprintf(f, "usage: mailbench [COMMAND] [OPTIONS]\n\n"
		   "A benchmark console for mailbox servers: simulated Outlook users\n"
		   "drive a MAPI-style mailbox store; a Jetstress-style test stresses\n"
		   "its storage engine.\n\ncommands:\n");
	mb_cmd_list(f);
	fprintf(
	    f,
	    "\n  mailbench COMMAND --help     options of one command\n"
	    "  mailbench init --target imap://HOST:PORT ...   provision an IMAP server\n"
	    "  mailbench check --target imap://HOST:PORT ...  read it back\n"
	    "  mailbench --version\n\n"
	    "exit codes: 0 ok, 1 thresholds failed, 2 usage or input error, 3 runtime failure\n");
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;
	/* Every socket and pipe write checks its result: a peer that went away
	 * is an EPIPE of that write, never the death of a command (children
	 * started through libuv get the default disposition back). */
	signal(SIGPIPE, SIG_IGN);
	mb_scenario_target_check = mb_target_scenario_check; /* `scenario show` knows the drivers */
#if MB_HAVE_MPI
	mb_dist_register(&mb_mpi_dist_ops); /* `mailbench load --mpi` */
#endif

	if (name && (!strcmp(name, "--help") || !strcmp(name, "-h"))) {
		usage(stdout);
		return MB_EXIT_OK;
	}
	if (name && !strcmp(name, "--version")) {
		printf("%s\n", PACKAGE_STRING);
		return MB_EXIT_OK;
	}
	const struct mb_cmd_entry *e = mb_cmd_find(name);
	/* init and check of an external IMAP server: rows of their own */
	if (e && (e == &mb_cmd_init_entry || e == &mb_cmd_check_entry) &&
	    mb_cmd_imap_target(argc - 1, argv + 1))
		e = e == &mb_cmd_init_entry ? &mb_cmd_init_imap_entry : &mb_cmd_check_imap_entry;
	if (e)
		return mb_cmd_exec(e, argc - 1, argv + 1);
	/* No command, or options only: the default command (the console). */
	if (!name || name[0] == '-') {
		for (int i = 0; mb_commands[i]; i++)
			if (mb_commands[i]->flags & MB_CMD_DEFAULT)
				return mb_cmd_exec(mb_commands[i], argc, argv);
	}
	fprintf(stderr, "mailbench: unknown command '%s'\n", name);
	usage(stderr);
	return MB_EXIT_USAGE;
}
