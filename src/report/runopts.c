/* runopts.c: shared options of `run` and `console` (see runopts.h). */
#include "report/runopts.h"

#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "core/error.h"

enum { O_SCALE = 2000, O_ACCEL, O_COMPRESSION, O_DATA, O_LOGDIR, O_SSIZE };

static const struct option shared[] = {
    {"scenario", required_argument, NULL, 's'},
    {"users", required_argument, NULL, 'u'},
    {"scale", required_argument, NULL, O_SCALE},
    {"accel", required_argument, NULL, O_ACCEL},
    {"compression", required_argument, NULL, O_COMPRESSION},
    {"data", required_argument, NULL, O_DATA},
    {"log-dir", required_argument, NULL, O_LOGDIR},
    {"storage-size", required_argument, NULL, O_SSIZE},
};

void mb_runopts_table(struct option *opts, const struct option *extra)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		opts[n++] = shared[i];
	for (size_t i = 0; extra && extra[i].name; i++)
		opts[n++] = extra[i];
	memset(&opts[n], 0, sizeof(opts[n]));
}

static int bad(const char *flag, const char *want, const char *arg)
{
	fprintf(stderr, "mailbench: %s: expected %s, got '%s'\n", flag, want, arg);
	return MB_EINVAL;
}

static int copy_path(char *dst, size_t len, const char *flag, const char *arg)
{
	if (!*arg || strlen(arg) >= len)
		return bad(flag, "a path", arg);
	memcpy(dst, arg, strlen(arg) + 1);
	return 0;
}

int mb_runopts_parse(const char *cmd, int c, const char *arg, struct mb_session_params *p)
{
	long n;
	double v;
	switch (c) {
	case 's':
		return copy_path(p->scenario, sizeof(p->scenario), "--scenario", arg);
	case 'u':
		if (mb_cli_long(cmd, "--users", arg, 1, 10000000, &n))
			return MB_EINVAL;
		p->users = (int)n;
		return 0;
	case O_SCALE:
		return mb_cli_double(cmd, "--scale", arg, 0, 1, 1, &p->scale);
	case O_ACCEL:
		return mb_cli_double(cmd, "--accel", arg, 0, 100000, 1, &p->accel);
	case O_COMPRESSION:
		if (!strcmp(arg, "on"))
			p->compression = 1;
		else if (!strcmp(arg, "off"))
			p->compression = 0;
		else
			return bad("--compression", "on or off", arg);
		return 0;
	case O_DATA:
		return copy_path(p->data_dir, sizeof(p->data_dir), "--data", arg);
	case O_LOGDIR:
		return copy_path(p->log_dir, sizeof(p->log_dir), "--log-dir", arg);
	case O_SSIZE:
		if (mb_cli_double(cmd, "--storage-size", arg, 0, 100000, 1, &v))
			return MB_EINVAL;
		p->stress_size_gb = v;
		return 0;
	}
	return MB_ENOTFOUND;
}

void mb_runopts_help(FILE *f)
{
	fprintf(
	    f,
	    "  -s, --scenario SCENARIO online (scenario 1), cached (scenario 2) or a .cfg path\n"
	    "  -u, --users N           simulated users (default: the scenario's run_users)\n"
	    "      --scale F           mailbox contents and cache scale, (0, 1] (1 = published)\n"
	    "      --accel X           8-hour-day acceleration factor\n"
	    "      --compression on|off  RPC payload compression\n"
	    "      --data DIR          data directory (default: mailbench-data)\n"
	    "      --log-dir DIR       transaction logs elsewhere\n"
	    "      --storage-size GB   storage test databases size (default: storage.cfg's)\n");
}
