/* cli.c: numeric option values and leftover operands for the subcommands
 * (see cli.h).  Invariant: one wording for every command's bad-value error,
 * printed here and nowhere else. */
#include "core/cli.h"
#include "core/error.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int mb_cli_long(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "mailbench %s: %s: '%s' must be an integer from %ld to %ld\n", cmd,
			flag, s, lo, hi);
		return MB_EINVAL;
	}
	*out = v;
	return 0;
}

int mb_cli_double(const char *cmd, const char *flag, const char *s, double lo, double hi,
		  int lo_open, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || (lo_open && v == lo) ||
	    v > hi) {
		fprintf(stderr, "mailbench %s: %s: '%s' must be a number in %c%g, %g]\n", cmd, flag,
			s, lo_open ? '(' : '[', lo, hi);
		return MB_EINVAL;
	}
	*out = v;
	return 0;
}

int mb_cli_no_operands(const char *cmd, int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	fprintf(stderr, "mailbench %s: unexpected argument '%s'\n", cmd, argv[optind]);
	return MB_EINVAL;
}
