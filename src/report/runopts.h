/* runopts.h: the options `mailbench run` and `mailbench console` share
 * (-s, --users, --scale, --accel, --compression, --data, --log-dir,
 * --storage-size), parsed
 * once for both.  Invariant: a bad value prints an error naming the flag
 * and returns MB_EINVAL (the caller exits 2); nothing is half-applied. */
#ifndef MB_REPORT_RUNOPTS_H
#define MB_REPORT_RUNOPTS_H

#include <getopt.h>
#include <stdio.h>

#include "report/session.h"

#define MB_RUNOPTS_MAX 9
#define MB_RUNOPTS_SHORT "s:u:"

/* Fill opts with the shared options followed by extra (terminated by a
 * zero entry); opts needs MB_RUNOPTS_MAX + entries of extra + 1. */
void mb_runopts_table(struct option *opts, const struct option *extra);
/* Apply option c: 0 when it was a shared option, MB_ENOTFOUND when it is
 * not one, MB_EINVAL (message printed) when its value is bad. */
int mb_runopts_parse(const char *cmd, int c, const char *arg, struct mb_session_params *p);
void mb_runopts_help(FILE *f);

#endif
