/* cli.h: small helpers shared by the subcommands' option parsing.
 * Invariants: a helper that fails has already printed one line on stderr,
 * "mailbench CMD: --flag: 'VALUE' must be ...", and returns MB_EINVAL; the
 * caller then exits with MB_EXIT_USAGE (2).  Nothing is written to *out on
 * failure. */
#ifndef MB_CORE_CLI_H
#define MB_CORE_CLI_H

/* S as a whole decimal number in LO..HI (leading blanks and a sign allowed,
 * nothing after the digits). */
int mb_cli_long(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out);

/* S as a finite number in LO..HI (or, with LO_OPEN, in (LO, HI]). */
int mb_cli_double(const char *cmd, const char *flag, const char *s, double lo, double hi,
		  int lo_open, double *out);

/* After getopt_long: 0 when no operand is left, else prints
 * "mailbench CMD: unexpected argument 'X'" and returns MB_EINVAL. */
int mb_cli_no_operands(const char *cmd, int argc, char **argv);

#endif
