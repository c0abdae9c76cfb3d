/* optcmd.c: single values and command lines from the option tables
 * (see opt.h).  mb_opt_set is the one parser of a single value (scenario
 * files' overrides, flags, the console's editor); mb_opt_text prints one.
 * A command row's getopt_long table, value checks, --help, man page
 * sections and child argv all come from the row's option entries.
 */
#include "core/opt.h"
#include "core/opt_int.h"
#include "core/error.h"
#include "core/options.h"
#include "core/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Part 2: single values                                                */

const char *const mb_onoff[] = {"off", "on", NULL};
const char *const mb_tls_modes[] = {"off", "starttls", "implicit", NULL};

static void num_text(char *buf, size_t len, double v) { snprintf(buf, len, "%.15g", v); }

/* "1..1000000", "(0, 1]", "on|off", "" (no range). */
static void mb_opt_range_text(const struct mb_opt *o, char *buf, size_t len)
{
	char lo[32], hi[32];
	num_text(lo, sizeof(lo), o->min);
	num_text(hi, sizeof(hi), o->max);
	buf[0] = '\0';
	switch (o->type) {
	case MB_OT_INT:
	case MB_OT_INT_LIST:
		snprintf(buf, len, "%s..%s%s", lo, hi,
			 o->type == MB_OT_INT_LIST
			     ? ((o->flags & MB_OPT_AUTO) ? ", comma-separated, or auto"
							 : ", comma-separated")
			     : "");
		break;
	case MB_OT_DOUBLE:
		snprintf(buf, len, "%c%s, %s]", (o->flags & MB_OPT_LO_OPEN) ? '(' : '[', lo, hi);
		break;
	case MB_OT_ENUM:
	case MB_OT_SCHOICE: {
		size_t used = 0;
		for (int k = 0; o->choices && o->choices[k] && used < len; k++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? "|" : "",
						 o->choices[k]);
		break;
	}
	default:
		break;
	}
}

static bool in_range(const struct mb_opt *o, double v)
{
	if (!isfinite(v) || v > o->max || v < o->min)
		return false;
	return !((o->flags & MB_OPT_LO_OPEN) && v == o->min);
}

static int parse_int(const struct mb_opt *o, const char *s, int *out, char *why, size_t len)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || !in_range(o, (double)v)) {
		snprintf(why, len, "'%s' must be an integer from %.15g to %.15g", s, o->min,
			 o->max);
		return MB_EINVAL;
	}
	*out = (int)v;
	return 0;
}

int mb_opt_set(const struct mb_opt *o, void *obj, const char *text, char *why, size_t len)
{
	char *base = obj;
	char rt[256];
	if (!text)
		text = "";
	switch (o->type) {
	case MB_OT_INT: {
		int v;
		if (parse_int(o, text, &v, why, len))
			return MB_EINVAL;
		*(int *)(base + o->off) = v;
		break;
	}
	case MB_OT_DOUBLE: {
		char *end;
		errno = 0;
		double v = strtod(text, &end);
		if (errno || end == text || *end || !in_range(o, v)) {
			mb_opt_range_text(o, rt, sizeof(rt));
			snprintf(why, len, "'%s' must be a number in %s", text, rt);
			return MB_EINVAL;
		}
		*(double *)(base + o->off) = v;
		break;
	}
	case MB_OT_BOOL:
		if (!strcmp(text, "true") || !strcmp(text, "on"))
			*(bool *)(base + o->off) = true;
		else if (!strcmp(text, "false") || !strcmp(text, "off"))
			*(bool *)(base + o->off) = false;
		else {
			snprintf(why, len, "'%s' must be on or off", text);
			return MB_EINVAL;
		}
		break;
	case MB_OT_FLAG:
		*(bool *)(base + o->off) = true;
		break;
	case MB_OT_ENUM:
	case MB_OT_SCHOICE: {
		int k = mb__opt_choice_index(o->choices, text);
		if (k < 0) {
			mb_opt_range_text(o, rt, sizeof(rt));
			snprintf(why, len, "'%s' must be one of %s", text, rt);
			return MB_EINVAL;
		}
		if (o->type == MB_OT_ENUM)
			*(int *)(base + o->off) = k;
		else
			snprintf(base + o->off, o->size, "%s", text);
		break;
	}
	case MB_OT_STRING:
	case MB_OT_ARG:
		if ((o->flags & MB_OPT_NONEMPTY) && !text[0]) {
			snprintf(why, len, "'' must not be empty");
			return MB_EINVAL;
		}
		if (o->type == MB_OT_ARG) {
			*(const char **)(base + o->off) = text;
			break;
		}
		if (strlen(text) >= o->size) {
			snprintf(why, len, "'%.40s...' is too long (at most %zu characters)", text,
				 o->size - 1);
			return MB_EINVAL;
		}
		memcpy(base + o->off, text, strlen(text) + 1);
		break;
	case MB_OT_INT_LIST: {
		int vals[256], n = 0;
		if ((o->flags & MB_OPT_AUTO) && !strcmp(text, "auto")) {
			*(int *)(base + o->aux) = -1;
			break;
		}
		const char *p = text;
		for (;;) {
			char item[64];
			size_t il = strcspn(p, ",");
			if (il == 0 || il >= sizeof(item) || n >= (int)o->size || n >= 256) {
				mb_opt_range_text(o, rt, sizeof(rt));
				snprintf(why, len,
					 "'%s' must be a list of at most %zu integers (%s)", text,
					 o->size, rt);
				return MB_EINVAL;
			}
			memcpy(item, p, il);
			item[il] = '\0';
			if (parse_int(o, item, &vals[n], why, len))
				return MB_EINVAL;
			n++;
			if (!p[il])
				break;
			p += il + 1;
		}
		memcpy(base + o->off, vals, (size_t)n * sizeof(int));
		*(int *)(base + o->aux) = n;
		break;
	}
	case MB_OT_THRESHOLD: {
		struct mb_threshold th;
		memset(&th, 0, sizeof(th));
		if (text[0] && mb_threshold_parse(text, &th) != 0) {
			snprintf(why, len, "'%s' must be a comparison such as \"< 80\"", text);
			return MB_EINVAL;
		}
		*(struct mb_threshold *)(base + o->off) = th;
		break;
	}
	case MB_OT_LIST:
	case MB_OT_BASE:
	case MB_OT_KIND:
		snprintf(why, len, "cannot be set from a single value");
		return MB_EINVAL;
	}
	if (o->flags & MB_OPT_HAS)
		*(bool *)(base + o->aux) = true;
	return 0;
}

void mb_opt_text(const struct mb_opt *o, const void *obj, char *buf, size_t len)
{
	const char *base = obj;
	buf[0] = '\0';
	switch (o->type) {
	case MB_OT_INT:
		snprintf(buf, len, "%d", *(const int *)(base + o->off));
		break;
	case MB_OT_DOUBLE:
		snprintf(buf, len, "%.10g", *(const double *)(base + o->off));
		break;
	case MB_OT_BOOL:
	case MB_OT_FLAG:
		snprintf(buf, len, "%s", *(const bool *)(base + o->off) ? "on" : "off");
		break;
	case MB_OT_ENUM: {
		int k = *(const int *)(base + o->off), n = 0;
		while (o->choices[n])
			n++;
		if (k >= 0 && k < n)
			snprintf(buf, len, "%s", o->choices[k]);
		break;
	}
	case MB_OT_STRING:
	case MB_OT_SCHOICE:
		snprintf(buf, len, "%s", base + o->off);
		break;
	case MB_OT_ARG: {
		const char *v = *(const char *const *)(base + o->off);
		snprintf(buf, len, "%s", v ? v : "");
		break;
	}
	case MB_OT_INT_LIST: {
		int n = *(const int *)(base + o->aux);
		size_t used = 0;
		if (n < 0)
			snprintf(buf, len, "auto");
		for (int k = 0; k < n && used < len; k++)
			used += (size_t)snprintf(buf + used, len - used, "%s%d", k ? "," : "",
						 ((const int *)(base + o->off))[k]);
		break;
	}
	case MB_OT_THRESHOLD:
		mb_threshold_format((const struct mb_threshold *)(const void *)(base + o->off), buf,
				    len);
		break;
	case MB_OT_LIST:
	case MB_OT_BASE:
	case MB_OT_KIND:
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Part 2: commands                                                     */

const struct mb_opt *mb_cmd_opt(const struct mb_cmd_entry *e, const char *name)
{
	for (int i = 0; i < e->nopts; i++)
		if ((e->opts[i].flag && !strcmp(e->opts[i].flag, name)) ||
		    (e->opts[i].path && !strcmp(e->opts[i].path, name)))
			return &e->opts[i];
	return NULL;
}

#define VAL_BASE 1000 /* getopt_long val of option i: VAL_BASE + i */
#define VAL_CHECK 999 /* --check-args */

static void cmd_defaults(const struct mb_cmd_entry *e, void *args)
{
	struct mb_opt_table t = {e->name, e->opts, e->nopts, NULL};
	/* the row's init first (fields no option sets), then every option's
	 * default from the table */
	if (e->init)
		e->init(args);
	mb__opt_defaults(&t, args);
}

int mb_cmd_parse(const struct mb_cmd_entry *e, int argc, char **argv, void **out, int *first,
		 bool *help, bool *check_only)
{
	struct option *lo = calloc((size_t)e->nopts + 3, sizeof(*lo));
	bool *seen = calloc((size_t)e->nopts + 1, sizeof(*seen));
	void *args = calloc(1, e->args_size ? e->args_size : 1);
	char shorts[256];
	size_t ns = 0;
	int n = 0, rc = 0;

	*out = NULL;
	*help = *check_only = false;
	if (!lo || !seen || !args) {
		free(lo);
		free(seen);
		free(args);
		fprintf(stderr, "mailbench %s: out of memory\n", e->name);
		return MB_EXIT_RUNTIME;
	}
	cmd_defaults(e, args);
	shorts[ns++] = ':';
	for (int i = 0; i < e->nopts; i++) {
		const struct mb_opt *o = &e->opts[i];
		if (!o->flag)
			continue;
		lo[n].name = o->flag;
		lo[n].has_arg = o->type == MB_OT_FLAG ? no_argument : required_argument;
		lo[n].val = VAL_BASE + i;
		n++;
		if (o->sflag && ns + 3 < sizeof(shorts)) {
			shorts[ns++] = (char)o->sflag;
			if (o->type != MB_OT_FLAG)
				shorts[ns++] = ':';
		}
	}
	lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
	lo[n++] = (struct option){"check-args", no_argument, NULL, VAL_CHECK};
	shorts[ns++] = 'h';
	shorts[ns] = '\0';

	optind = 1;
	opterr = 0;
	int c;
	while (rc == 0 && (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		int idx = -1;
		if (c >= VAL_BASE)
			idx = c - VAL_BASE;
		else
			for (int i = 0; i < e->nopts; i++)
				if (e->opts[i].flag && e->opts[i].sflag == c)
					idx = i;
		if (idx >= 0) {
			const struct mb_opt *o = &e->opts[idx];
			char why[512];
			if (mb_opt_set(o, args, optarg, why, sizeof(why))) {
				fprintf(stderr, "mailbench %s: --%s: %s\n", e->name, o->flag, why);
				rc = MB_EXIT_USAGE;
			}
			seen[idx] = true;
			continue;
		}
		switch (c) {
		case 'h':
			*help = true;
			break;
		case VAL_CHECK:
			*check_only = true;
			break;
		case ':':
			fprintf(stderr,
				"mailbench %s: %s needs a value (see mailbench %s --help)\n",
				e->name, argv[optind - 1], e->name);
			rc = MB_EXIT_USAGE;
			break;
		default:
			if (optopt && optopt != '?')
				fprintf(stderr,
					"mailbench %s: unknown option '-%c' (see mailbench %s "
					"--help)\n",
					e->name, optopt, e->name);
			else
				fprintf(
				    stderr,
				    "mailbench %s: unknown option '%s' (see mailbench %s --help)\n",
				    e->name, argv[optind - 1], e->name);
			rc = MB_EXIT_USAGE;
			break;
		}
	}
	if (rc == 0 && !*help && !(e->flags & MB_CMD_OPERANDS) && optind < argc) {
		fprintf(stderr, "mailbench %s: unexpected argument '%s'\n", e->name, argv[optind]);
		rc = MB_EXIT_USAGE;
	}
	for (int i = 0; rc == 0 && !*help && i < e->nopts; i++)
		if ((e->opts[i].flags & MB_OPT_REQ) && e->opts[i].flag && !seen[i]) {
			fprintf(stderr,
				"mailbench %s: --%s %s is required (see mailbench %s --help)\n",
				e->name, e->opts[i].flag,
				e->opts[i].metavar ? e->opts[i].metavar : "", e->name);
			rc = MB_EXIT_USAGE;
		}
	*first = optind;
	free(lo);
	free(seen);
	if (rc) {
		free(args);
		return rc;
	}
	*out = args;
	return 0;
}

int mb_cmd_exec(const struct mb_cmd_entry *e, int argc, char **argv)
{
	void *args;
	int first;
	bool help, check_only;
	int rc = mb_cmd_parse(e, argc, argv, &args, &first, &help, &check_only);
	if (rc)
		return rc;
	if (help) {
		mb_cmd_help(stdout, e);
		free(args);
		return MB_EXIT_OK;
	}
	if (e->check && (rc = e->check(args)) != 0) {
		free(args);
		return rc;
	}
	if (check_only) {
		printf("mailbench %s: arguments ok\n", e->name);
		free(args);
		return MB_EXIT_OK;
	}
	rc = e->run(args, argc - first, argv + first);
	free(args);
	return rc;
}

/* "-u, --users N" */
static void flag_text(const struct mb_opt *o, char *buf, size_t len)
{
	char s[8] = "    ";
	if (o->sflag)
		snprintf(s, sizeof(s), "-%c, ", o->sflag);
	char mv[64] = "";
	if (o->type != MB_OT_FLAG) {
		if (o->metavar)
			snprintf(mv, sizeof(mv), " %s", o->metavar);
		else if (o->choices)
			mb_opt_range_text(o, mv + 1, sizeof(mv) - 1), mv[0] = ' ';
	}
	snprintf(buf, len, "%s--%s%s", s, o->flag, mv);
}

/* What --help and the man page say after an option's help line. */
static void range_note(const struct mb_opt *o, char *buf, size_t len)
{
	buf[0] = '\0';
	if (o->type == MB_OT_INT || o->type == MB_OT_DOUBLE || o->type == MB_OT_INT_LIST)
		mb_opt_range_text(o, buf, len);
}

/* An option's help line with its default, range and "required" after it:
 * "simulated users (default: X; 1..1000000; required)". */
static void help_line(const struct mb_opt *o, char *buf, size_t len)
{
	char rn[128];
	range_note(o, rn, sizeof(rn));
	bool req = (o->flags & MB_OPT_REQ) != 0;
	bool any = o->dtext || rn[0] || req;
	snprintf(buf, len, "%s%s%s%s%s%s%s%s", o->help, any ? " (" : "",
		 o->dtext ? "default: " : "", o->dtext ? o->dtext : "",
		 o->dtext && rn[0] ? "; " : "", rn,
		 req ? (o->dtext || rn[0] ? "; required" : "required") : "", any ? ")" : "");
}

#define HELP_COL 29
#define HELP_WIDTH 79

/* TEXT from column HELP_COL, wrapped at HELP_WIDTH (the first line starts
 * at column COL). */
static void wrap(FILE *f, int col, const char *text)
{
	const char *p = text;
	if (col > HELP_COL) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", HELP_COL - col, "");
	col = HELP_COL;
	while (*p) {
		size_t w = strcspn(p, " ");
		if (col > HELP_COL && col + 1 + (int)w > HELP_WIDTH) {
			fprintf(f, "\n%*s", HELP_COL, "");
			col = HELP_COL;
		} else if (col > HELP_COL) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, w, f);
		col += (int)w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

void mb_cmd_help(FILE *f, const struct mb_cmd_entry *e)
{
	fprintf(f, "usage: mailbench %s %s\n\n", e->name, e->usage);
	if (e->about)
		fprintf(f, "%s\n\n", e->about);
	fprintf(f, "options:\n");
	for (int i = 0; i < e->nopts; i++) {
		const struct mb_opt *o = &e->opts[i];
		char ft[128], hl[1024];
		if (!o->flag)
			continue;
		flag_text(o, ft, sizeof(ft));
		help_line(o, hl, sizeof(hl));
		fprintf(f, "  %s", ft);
		wrap(f, 2 + (int)strlen(ft), hl);
	}
	fprintf(f, "  -h, --help");
	wrap(f, 12, "this help");
	fprintf(f, "      --check-args");
	wrap(f, 18, "check the arguments and exit 0 (2 when one is bad); start nothing");
	if (e->epilog)
		fprintf(f, "\n%s\n", e->epilog);
}

/* Text for roff: backslashes doubled, '-' escaped, lines starting with
 * '.' or '\'' protected. */
static void roff(FILE *f, const char *s)
{
	bool bol = true;
	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
		bol = *s == '\n';
	}
}

void mb_cmd_man_synopsis(FILE *f, const struct mb_cmd_entry *e)
{
	fprintf(f, ".B mailbench ");
	roff(f, e->name);
	fputc('\n', f);
	roff(f, e->usage);
	fprintf(f, "\n.br\n");
}

void mb_cmd_man_section(FILE *f, const struct mb_cmd_entry *e)
{
	fprintf(f, ".SS \"mailbench ");
	roff(f, e->name);
	fputc(' ', f);
	roff(f, e->usage);
	fprintf(f, "\"\n");
	if (e->about) {
		roff(f, e->about);
		fputc('\n', f);
	}
	for (int k = 0; k < e->nopts; k++) {
		const struct mb_opt *o = &e->opts[k];
		char rn[1024], mv[128] = "";
		if (!o->flag)
			continue;
		fprintf(f, ".TP\n.BR ");
		if (o->sflag)
			fprintf(f, "\\-%c \", \" ", o->sflag);
		fprintf(f, "\\-\\-");
		roff(f, o->flag);
		if (o->type != MB_OT_FLAG) {
			if (o->metavar)
				snprintf(mv, sizeof(mv), "%s", o->metavar);
			else
				mb_opt_range_text(o, mv, sizeof(mv));
			fprintf(f, " \" \\fI");
			roff(f, mv);
			fprintf(f, "\\fR\"");
		}
		fputc('\n', f);
		help_line(o, rn, sizeof(rn));
		roff(f, rn);
		fprintf(f, ".\n");
	}
	if (e->epilog) {
		fprintf(f, ".PP\n");
		roff(f, e->epilog);
		fputc('\n', f);
	}
}

/* ------------------------------------------------------------------ */
/* Part 2: child argv                                                   */

void mb_argv_init(struct mb_argv *a, const struct mb_cmd_entry *e)
{
	memset(a, 0, sizeof(*a));
	a->e = e;
	a->scratch = calloc(1, e->args_size ? e->args_size : 1);
	if (!a->scratch) {
		a->err = MB_ENOMEM;
		snprintf(a->why, sizeof(a->why), "out of memory");
	}
	a->v[a->n++] = e->name;
}

static void argv_push(struct mb_argv *a, const char *flag, const char *value, bool copy)
{
	if (a->err)
		return;
	const struct mb_opt *o = mb_cmd_opt(a->e, flag);
	if (!o || !o->flag) {
		a->err = MB_EINVAL;
		snprintf(a->why, sizeof(a->why), "mailbench %s has no option --%s", a->e->name,
			 flag);
		return;
	}
	char why[200];
	if (mb_opt_set(o, a->scratch, value, why, sizeof(why))) {
		a->err = MB_EINVAL;
		snprintf(a->why, sizeof(a->why), "mailbench %s --%s: %s", a->e->name, o->flag, why);
		return;
	}
	if (a->n + 2 > MB_ARGV_MAX) {
		a->err = MB_ETOOBIG;
		snprintf(a->why, sizeof(a->why), "too many arguments for mailbench %s", a->e->name);
		return;
	}
	/* the flag as the table spells it: "--" + flag, kept in vals */
	snprintf(a->vals[a->n], sizeof(a->vals[a->n]), "--%s", o->flag);
	a->v[a->n] = a->vals[a->n];
	a->n++;
	if (o->type == MB_OT_FLAG)
		return;
	if (copy) {
		snprintf(a->vals[a->n], sizeof(a->vals[a->n]), "%s", value);
		a->v[a->n] = a->vals[a->n];
	} else {
		a->v[a->n] = value;
	}
	a->n++;
}

void mb_argv_add(struct mb_argv *a, const char *flag, const char *value)
{
	argv_push(a, flag, value, false);
}

void mb_argv_addf(struct mb_argv *a, const char *flag, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		if (!a->err) {
			a->err = MB_ETOOBIG;
			snprintf(a->why, sizeof(a->why), "--%s: value too long", flag);
		}
		return;
	}
	argv_push(a, flag, buf, true);
}

const char *const *mb_argv_done(struct mb_argv *a)
{
	free(a->scratch);
	a->scratch = NULL;
	if (a->err)
		return NULL;
	a->v[a->n] = NULL;
	return a->v;
}
