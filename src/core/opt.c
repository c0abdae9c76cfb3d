/* opt.c: the option-table engine (see opt.h).
 *
 * Part 1, files: a table with its families expanded ("instances") is
 * matched against a libconfig file.  Loading walks the FILE, not the
 * table: every setting must match an entry (else "unknown key", with a
 * "did you mean"), so typos never pass silently.  A file may name a base
 * file (`base = "online";`): the base is loaded first, then the file's
 * settings are applied on top; a list replaces the base's list whole.
 * Required entries are checked after the chain.  Invariant: a successful
 * load leaves every field either from a file or from its default, in
 * range; a failed load returns MB_ECONFIG and fills struct mb_cfg_error
 * with the file and line of the offending setting.
 *
 * The table's JSON and text dumps are in optout.c; single values, command
 * lines, --help, man sections and child argv in optcmd.c; what the three
 * share is in opt_int.h.
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
/* Instances: the table with families expanded                          */

int mb__opt_insts_build(const struct mb_opt_table *t, struct insts *out)
{
	int n = 0;
	for (int i = 0; i < t->n; i++)
		n += t->opts[i].fam ? t->opts[i].fam->count : 1;
	out->v = calloc((size_t)n, sizeof(*out->v));
	if (!out->v)
		return MB_ENOMEM;
	out->n = 0;
	for (int i = 0; i < t->n; i++) {
		const struct mb_opt *o = &t->opts[i];
		int m = o->fam ? o->fam->count : 1;
		for (int k = 0; k < m; k++) {
			struct inst *in = &out->v[out->n++];
			in->o = o;
			in->gfile = -1;
			in->file = -1;
			if (o->fam) {
				snprintf(in->path, sizeof(in->path), "%s.%s", o->path,
					 o->fam->key(k));
				in->off = o->off + (size_t)k * o->stride;
				in->aux = o->aux + (size_t)k * o->aux_stride;
				in->label = o->fam->label(k);
			} else {
				snprintf(in->path, sizeof(in->path), "%s", o->path);
				in->off = o->off;
				in->aux = o->aux;
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Load context and errors                                              */

#define MB_MAX_FILES 32
#define MB_MAX_DEPTH 8

struct mb_opt_ld {
	struct mb_cfg_error *err;
	struct insts *is;	   /* the top-level instances (for checks) */
	const char *topfile;	   /* the file as given */
	char *files[MB_MAX_FILES]; /* names of the files seen, for locations */
	int nfiles;
	char chain[MB_MAX_DEPTH][PATH_MAX]; /* real paths of the base chain */
	int depth;
	char curfile[MB_PATH_MAX]; /* the file being applied, as named */
	char curdir[MB_PATH_MAX];  /* its directory: where @include looks */
	char fixed[MB_PATH_MAX];   /* scratch for fix_name */
};

/* libconfig names a setting from an @include by the name written in the
 * file; name it by the path it was read from (the including file's
 * directory joined with it) so that messages point at the right file. */
static const char *fix_name(struct mb_opt_ld *ld, const char *name)
{
	if (!name || name == ld->fixed || !*name || name[0] == '/' ||
	    strcmp(name, ld->curfile) == 0 || strcmp(ld->curdir, ".") == 0 || !ld->curdir[0])
		return name;
	int n = snprintf(ld->fixed, sizeof(ld->fixed), "%s/%s", ld->curdir, name);
	return n > 0 && (size_t)n < sizeof(ld->fixed) ? ld->fixed : name;
}

static int file_index(struct mb_opt_ld *ld, const char *name)
{
	if (!name)
		name = "";
	for (int i = 0; i < ld->nfiles; i++)
		if (strcmp(ld->files[i], name) == 0)
			return i;
	if (ld->nfiles == MB_MAX_FILES)
		return ld->nfiles - 1;
	ld->files[ld->nfiles] = strdup(name);
	if (!ld->files[ld->nfiles])
		return -1;
	return ld->nfiles++;
}

static void ld_free(struct mb_opt_ld *ld)
{
	for (int i = 0; i < ld->nfiles; i++)
		free(ld->files[i]);
	ld->nfiles = 0;
}

static int fail_at(struct mb_opt_ld *ld, const char *file, int line, const char *field,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_at(struct mb_opt_ld *ld, const char *file, int line, const char *field,
		   const char *fmt, ...)
{
	struct mb_cfg_error *e = ld->err;
	va_list ap;

	snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
	e->line = line;
	snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return MB_ECONFIG;
}

static const char *fix_name(struct mb_opt_ld *ld, const char *name);
static const char *setting_file(struct mb_opt_ld *ld, const config_setting_t *s)
{
	const char *f = config_setting_source_file(s);
	return f ? fix_name(ld, f) : "";
}

void mb_cfg_error_format(const struct mb_cfg_error *e, char *buf, size_t len)
{
	char where[MB_PATH_MAX + 32];

	if (e->line > 0)
		snprintf(where, sizeof(where), "%s:%d", e->file, e->line);
	else
		snprintf(where, sizeof(where), "%s", e->file);
	if (e->field[0])
		snprintf(buf, len, "%s: %s: %s", where, e->field, e->message);
	else
		snprintf(buf, len, "%s: %s", where, e->message);
}

/* ------------------------------------------------------------------ */
/* Defaults                                                             */

static void inst_default(const struct inst *in, void *obj)
{
	char *base = obj;
	const struct mb_opt *o = in->o;

	switch (o->type) {
	case MB_OT_INT:
		*(int *)(base + in->off) = (int)o->def;
		break;
	case MB_OT_DOUBLE:
		*(double *)(base + in->off) = o->def;
		break;
	case MB_OT_BOOL:
		*(bool *)(base + in->off) = o->def != 0;
		break;
	case MB_OT_STRING:
	case MB_OT_SCHOICE:
		snprintf(base + in->off, o->size, "%s", o->sdef ? o->sdef : "");
		break;
	case MB_OT_ENUM:
		*(int *)(base + in->off) = (int)o->def;
		for (int k = 0; o->choices[k]; k++)
			if (o->sdef && strcmp(o->sdef, o->choices[k]) == 0)
				*(int *)(base + in->off) = k;
		break;
	case MB_OT_INT_LIST: {
		/* "[4, 8, 12]" */
		int *v = (int *)(base + in->off), n = 0;
		const char *p = o->sdef ? o->sdef : "";
		while (*p && n < (int)o->size) {
			if (isdigit((unsigned char)*p)) {
				v[n++] = (int)strtol(p, (char **)&p, 10);
				continue;
			}
			p++;
		}
		*(int *)(base + in->aux) = n;
		break;
	}
	case MB_OT_THRESHOLD: {
		struct mb_threshold *th = (struct mb_threshold *)(base + in->off);
		th->cmp = MB_CMP_NONE;
		th->value = 0;
		if (o->sdef)
			mb_threshold_parse(o->sdef, th);
		break;
	}
	case MB_OT_LIST:
		for (size_t k = 0; k < o->size; k++)
			mb__opt_defaults(o->sub, base + in->off + k * o->elem_size);
		*(int *)(base + in->aux) = 0;
		break;
	case MB_OT_FLAG:
		*(bool *)(base + in->off) = o->def != 0;
		break;
	case MB_OT_ARG:
		*(const char **)(base + in->off) = o->sdef;
		break;
	case MB_OT_BASE:
	case MB_OT_KIND:
		break;
	}
	if (o->flags & MB_OPT_HAS)
		*(bool *)(base + in->aux) = false;
}

/* Every entry's default into obj. */
void mb__opt_defaults(const struct mb_opt_table *t, void *obj)
{
	struct insts is;

	if (mb__opt_insts_build(t, &is) != 0)
		return;
	for (int i = 0; i < is.n; i++)
		inst_default(&is.v[i], obj);
	free(is.v);
}

/* ------------------------------------------------------------------ */
/* Applying a file's settings                                           */

static const char *type_name(int type)
{
	switch (type) {
	case CONFIG_TYPE_GROUP:
		return "a group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "an integer";
	case CONFIG_TYPE_FLOAT:
		return "a number";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_ARRAY:
		return "an array";
	case CONFIG_TYPE_LIST:
		return "a list";
	default:
		return "something else";
	}
}

static int wrong_type(struct mb_opt_ld *ld, const config_setting_t *s, const char *field,
		      const char *want)
{
	return fail_at(ld, setting_file(ld, s), config_setting_source_line(s), field,
		       "must be %s, not %s", want, type_name(config_setting_type(s)));
}

static int check_range(struct mb_opt_ld *ld, const config_setting_t *s, const char *field,
		       const struct mb_opt *o, double v)
{
	if ((o->flags & MB_OPT_LO_OPEN) && (!isfinite(v) || v <= o->min || v > o->max))
		return fail_at(ld, setting_file(ld, s), config_setting_source_line(s), field,
			       "must be above %.15g and at most %.15g", o->min, o->max);
	if (!isfinite(v) || v < o->min || v > o->max)
		return fail_at(ld, setting_file(ld, s), config_setting_source_line(s), field,
			       o->min == o->max ? "must be %.15g (fixed)"
						: "must be between %.15g and %.15g",
			       o->min, o->max);
	return 0;
}

int mb__opt_choice_index(const char *const *choices, const char *v)
{
	for (int k = 0; choices[k]; k++)
		if (strcmp(choices[k], v) == 0)
			return k;
	return -1;
}

void mb__opt_choices_text(const char *const *choices, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int k = 0; choices[k] && used < len; k++)
		used +=
		    (size_t)snprintf(buf + used, len - used, "%s\"%s\"", k ? ", " : "", choices[k]);
}

static int apply_group(struct mb_opt_ld *ld, struct insts *is, const config_setting_t *grp,
		       const char *rel, const char *errprefix, void *obj, bool top);
static int check_required(struct mb_opt_ld *ld, struct insts *is, const char *errprefix,
			  const char *topfile);

static int apply_value(struct mb_opt_ld *ld, struct inst *in, const config_setting_t *s,
		       const char *field, void *obj)
{
	char *base = obj;
	const struct mb_opt *o = in->o;
	int type = config_setting_type(s);
	int rc;

	switch (o->type) {
	case MB_OT_INT: {
		if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
			return wrong_type(ld, s, field, "an integer");
		long long v = config_setting_get_int64(s);
		if ((rc = check_range(ld, s, field, o, (double)v)) != 0)
			return rc;
		*(int *)(base + in->off) = (int)v;
		break;
	}
	case MB_OT_DOUBLE: {
		if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64 &&
		    type != CONFIG_TYPE_FLOAT)
			return wrong_type(ld, s, field, "a number");
		double v = type == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
						     : (double)config_setting_get_int64(s);
		if ((rc = check_range(ld, s, field, o, v)) != 0)
			return rc;
		*(double *)(base + in->off) = v;
		break;
	}
	case MB_OT_BOOL:
		if (type != CONFIG_TYPE_BOOL)
			return wrong_type(ld, s, field, "true or false");
		*(bool *)(base + in->off) = config_setting_get_bool(s) != 0;
		break;
	case MB_OT_STRING:
	case MB_OT_SCHOICE:
	case MB_OT_KIND:
	case MB_OT_ENUM: {
		if (type != CONFIG_TYPE_STRING)
			return wrong_type(ld, s, field, "a string");
		const char *v = config_setting_get_string(s);
		if (o->choices) {
			int k = mb__opt_choice_index(o->choices, v);
			if (k < 0) {
				char ch[256];
				mb__opt_choices_text(o->choices, ch, sizeof(ch));
				/* a file of another kind: say what each kind is for */
				return fail_at(ld, setting_file(ld, s),
					       config_setting_source_line(s), field,
					       "must be one of %s, not \"%s\"%s%s", ch, v,
					       o->type == MB_OT_KIND ? "; " : "",
					       o->type == MB_OT_KIND ? o->help : "");
			}
			if (o->type == MB_OT_ENUM)
				*(int *)(base + in->off) = k;
			if (o->type == MB_OT_ENUM || o->type == MB_OT_KIND)
				break;
		}
		if (strlen(v) >= o->size)
			return fail_at(ld, setting_file(ld, s), config_setting_source_line(s),
				       field, "is too long (at most %zu characters)", o->size - 1);
		memcpy(base + in->off, v, strlen(v) + 1);
		break;
	}
	case MB_OT_INT_LIST: {
		if (type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST)
			return wrong_type(ld, s, field, "an array of integers");
		int n = config_setting_length(s);
		if (n < 1 || n > (int)o->size)
			return fail_at(ld, setting_file(ld, s), config_setting_source_line(s),
				       field, "must have between 1 and %zu entries", o->size);
		int *v = (int *)(base + in->off);
		for (int k = 0; k < n; k++) {
			const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
			char ef[512];
			snprintf(ef, sizeof(ef), "%s[%d]", field, k);
			if (config_setting_type(e) != CONFIG_TYPE_INT &&
			    config_setting_type(e) != CONFIG_TYPE_INT64)
				return wrong_type(ld, e, ef, "an integer");
			long long x = config_setting_get_int64(e);
			if ((rc = check_range(ld, e, ef, o, (double)x)) != 0)
				return rc;
			v[k] = (int)x;
		}
		*(int *)(base + in->aux) = n;
		break;
	}
	case MB_OT_THRESHOLD: {
		if (type != CONFIG_TYPE_STRING)
			return wrong_type(ld, s, field, "a string such as \"< 80\"");
		struct mb_threshold th;
		memset(&th, 0, sizeof(th)); /* padding too: loads compare equal */
		const char *v = config_setting_get_string(s);
		if (v[0] == '\0') {
			th.cmp = MB_CMP_NONE;
			th.value = 0;
		} else if (mb_threshold_parse(v, &th) != 0) {
			return fail_at(
			    ld, setting_file(ld, s), config_setting_source_line(s), field,
			    "must be a comparison such as \"< 80\" or \">= 5\", not \"%s\"", v);
		}
		*(struct mb_threshold *)(base + in->off) = th;
		break;
	}
	case MB_OT_LIST: {
		if (type != CONFIG_TYPE_LIST)
			return wrong_type(ld, s, field, "a list of groups ( {...}, {...} )");
		int n = config_setting_length(s);
		if (n > (int)o->size)
			return fail_at(ld, setting_file(ld, s), config_setting_source_line(s),
				       field, "must have at most %zu entries", o->size);
		struct insts sub;
		if ((rc = mb__opt_insts_build(o->sub, &sub)) != 0)
			return rc;
		/* a list replaces the base's list whole */
		for (size_t k = 0; k < o->size; k++)
			mb__opt_defaults(o->sub, base + in->off + k * o->elem_size);
		for (int k = 0; k < n && rc == 0; k++) {
			const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
			char ef[512];
			snprintf(ef, sizeof(ef), "%s[%d]", field, k);
			if (config_setting_type(e) != CONFIG_TYPE_GROUP) {
				rc = wrong_type(ld, e, ef, "a group { ... }");
				break;
			}
			for (int j = 0; j < sub.n; j++) {
				sub.v[j].set = false;
				sub.v[j].gfile = -1;
				sub.v[j].file = -1;
			}
			void *elem = base + in->off + (size_t)k * o->elem_size;
			rc = apply_group(ld, &sub, e, NULL, ef, elem, false);
			if (rc == 0)
				rc = check_required(ld, &sub, ef, setting_file(ld, e));
		}
		free(sub.v);
		if (rc != 0)
			return rc;
		*(int *)(base + in->aux) = n;
		break;
	}
	case MB_OT_BASE:
	case MB_OT_FLAG:
	case MB_OT_ARG:
		break;
	}
	if (o->flags & MB_OPT_HAS)
		*(bool *)(base + in->aux) = true;
	in->set = true;
	in->file = file_index(ld, setting_file(ld, s));
	in->line = config_setting_source_line(s);
	return 0;
}

/* Edit distance, for "did you mean". */
static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	int d[64][64];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			d[i][j] = c;
		}
	return d[la][lb];
}

/* The key names valid directly inside group REL (NULL = root). */
static int unknown_key(struct mb_opt_ld *ld, struct insts *is, const config_setting_t *s,
		       const char *rel, const char *field)
{
	const char *name = config_setting_name(s);
	size_t rl = rel ? strlen(rel) : 0;
	const char *best = NULL;
	size_t bestlen = 0;
	int bestd = 3;

	for (int i = 0; i < is->n; i++) {
		const char *p = is->v[i].path;
		if (rel) {
			if (strncmp(p, rel, rl) != 0 || p[rl] != '.')
				continue;
			p += rl + 1;
		}
		size_t len = strcspn(p, ".");
		char cand[128];
		snprintf(cand, sizeof(cand), "%.*s", (int)len, p);
		int d = distance(name, cand);
		if (d < bestd) {
			bestd = d;
			best = p;
			bestlen = len;
		}
	}
	if (best)
		return fail_at(ld, setting_file(ld, s), config_setting_source_line(s), field,
			       "unknown key (did you mean \"%.*s\"?)", (int)bestlen, best);
	return fail_at(ld, setting_file(ld, s), config_setting_source_line(s), field,
		       "unknown key");
}

static int apply_group(struct mb_opt_ld *ld, struct insts *is, const config_setting_t *grp,
		       const char *rel, const char *errprefix, void *obj, bool top)
{
	size_t rl = rel ? strlen(rel) : 0;
	int gfile = file_index(ld, setting_file(ld, grp));
	int gline = config_setting_source_line(grp);

	/* remember where each member's group is, for "missing" errors */
	for (int i = 0; i < is->n; i++) {
		const char *p = is->v[i].path;
		if (rel && (strncmp(p, rel, rl) != 0 || p[rl] != '.'))
			continue;
		if (strchr(rel ? p + rl + 1 : p, '.') == NULL) {
			is->v[i].gfile = gfile;
			is->v[i].gline = gline;
		}
	}
	int n = config_setting_length(grp);
	for (int k = 0; k < n; k++) {
		const config_setting_t *s = config_setting_get_elem(grp, (unsigned)k);
		const char *name = config_setting_name(s);
		char path[256], field[384];
		int rc;

		if (rel)
			snprintf(path, sizeof(path), "%s.%s", rel, name);
		else
			snprintf(path, sizeof(path), "%s", name);
		if (errprefix)
			snprintf(field, sizeof(field), "%s.%s", errprefix, path);
		else
			snprintf(field, sizeof(field), "%s", path);

		struct inst *in = NULL;
		bool is_group_prefix = false;
		size_t pl = strlen(path);
		for (int i = 0; i < is->n; i++) {
			if (strcmp(is->v[i].path, path) == 0) {
				in = &is->v[i];
				break;
			}
			if (strncmp(is->v[i].path, path, pl) == 0 && is->v[i].path[pl] == '.')
				is_group_prefix = true;
		}
		if (in && (in->o->type == MB_OT_BASE || in->o->type == MB_OT_KIND)) {
			if (!top)
				return unknown_key(ld, is, s, rel, field);
			continue; /* handled by load_file */
		}
		if (in) {
			if ((rc = apply_value(ld, in, s, field, obj)) != 0)
				return rc;
			continue;
		}
		if (is_group_prefix) {
			if (config_setting_type(s) != CONFIG_TYPE_GROUP)
				return wrong_type(ld, s, field, "a group { ... }");
			if ((rc = apply_group(ld, is, s, path, errprefix, obj, false)) != 0)
				return rc;
			continue;
		}
		return unknown_key(ld, is, s, rel, field);
	}
	return 0;
}

static int check_required(struct mb_opt_ld *ld, struct insts *is, const char *errprefix,
			  const char *topfile)
{
	for (int i = 0; i < is->n; i++) {
		struct inst *in = &is->v[i];
		if (!(in->o->flags & MB_OPT_REQ) || in->set)
			continue;
		char field[384];
		if (errprefix)
			snprintf(field, sizeof(field), "%s.%s", errprefix, in->path);
		else
			snprintf(field, sizeof(field), "%s", in->path);
		if (in->gfile >= 0 && in->gline > 0)
			return fail_at(ld, ld->files[in->gfile], in->gline, field,
				       "required but missing");
		return fail_at(ld, topfile, 0, field, "required but missing");
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Files and the base chain                                             */

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* snprintf that reports truncation (paths are checked, never cut short). */
static int pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? MB_ETOOBIG : 0;
}

/* Resolve a base name seen in FROM (a file path): next to FROM first, then
 * in the scenario directory.  A name is NAME.cfg; a path stays a path. */
static int resolve_base(const char *from, const char *name, char *out, size_t len)
{
	bool is_path = strchr(name, '/') != NULL;
	size_t nl = strlen(name);
	bool has_ext = nl > 4 && strcmp(name + nl - 4, ".cfg") == 0;
	char file[MB_PATH_MAX], alt[MB_PATH_MAX];

	if (pathf(file, sizeof(file), "%s%s", name, has_ext || is_path ? "" : ".cfg"))
		return MB_ETOOBIG;
	if (name[0] == '/')
		return pathf(out, len, "%s", file);
	const char *slash = strrchr(from, '/');
	int rc = slash ? pathf(out, len, "%.*s/%s", (int)(slash - from), from, file)
		       : pathf(out, len, "%s", file);
	if (rc || file_exists(out) || is_path)
		return rc;
	if (pathf(alt, sizeof(alt), "%s/%s", mb_scenario_dir(), file) == 0 && file_exists(alt))
		return pathf(out, len, "%s", alt);
	return 0;
}

/* For a failed @include: the quoted file name on LINE of FILE, and where
 * libconfig looked for it, as ": \"x.cfg\" (in DIR)". */
static void include_name(const char *file, int line, const char *dir, char *out, size_t len)
{
	FILE *f = fopen(file, "r");
	char buf[1024];

	if (!f)
		return;
	for (int n = 1; fgets(buf, sizeof(buf), f); n++) {
		if (n < line)
			continue;
		char *a = strchr(buf, '"'), *b = a ? strchr(a + 1, '"') : NULL;
		if (b)
			pathf(out, len, ": %.*s (looked in %s)", (int)(b - a + 1), a, dir);
		break;
	}
	fclose(f);
}

static int load_file(struct mb_opt_ld *ld, const struct mb_opt_table *t, struct insts *is,
		     const char *path, void *obj)
{
	config_t cfg;
	char dir[MB_PATH_MAX];
	int rc = 0;

	FILE *f = fopen(path, "r");
	if (!f)
		return fail_at(ld, path, 0, NULL, "cannot open: %s", strerror(errno));
	fclose(f);
	char real[PATH_MAX];
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (int i = 0; i < ld->depth; i++)
		if (strcmp(ld->chain[i], real) == 0)
			return fail_at(ld, path, 0, "base", "base files form a loop");
	if (ld->depth == MB_MAX_DEPTH)
		return fail_at(ld, path, 0, "base", "more than %d base files", MB_MAX_DEPTH);
	snprintf(ld->chain[ld->depth++], PATH_MAX, "%s", real);

	config_init(&cfg);
	const char *slash = strrchr(path, '/');
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	config_set_include_dir(&cfg, dir);
	char savefile[MB_PATH_MAX], savedir[MB_PATH_MAX];
	memcpy(savefile, ld->curfile, sizeof(savefile));
	memcpy(savedir, ld->curdir, sizeof(savedir));
	pathf(ld->curfile, sizeof(ld->curfile), "%s", path);
	pathf(ld->curdir, sizeof(ld->curdir), "%s", dir);
	if (config_read_file(&cfg, path) != CONFIG_TRUE) {
		const char *ef = config_error_file(&cfg);
		char quoted[512] = "";
		ef = fix_name(ld, ef ? ef : path);
		if (strstr(config_error_text(&cfg), "include"))
			include_name(ef, config_error_line(&cfg), dir, quoted, sizeof(quoted));
		rc = fail_at(ld, ef, config_error_line(&cfg), NULL, "%s%s", config_error_text(&cfg),
			     quoted);
		goto out;
	}
	const config_setting_t *root = config_root_setting(&cfg);
	/* the kind first: a file of the other kind fails on "kind", not on
	 * the first key this table does not know */
	const config_setting_t *k = config_setting_get_member(root, "kind");
	for (int i = 0; k && i < is->n; i++)
		if (is->v[i].o->type == MB_OT_KIND &&
		    (rc = apply_value(ld, &is->v[i], k, "kind", obj)) != 0)
			goto out;
	const config_setting_t *b = config_setting_get_member(root, "base");
	if (b) {
		if (config_setting_type(b) != CONFIG_TYPE_STRING) {
			rc = wrong_type(ld, b, "base", "a string (scenario name or path)");
			goto out;
		}
		char bpath[MB_PATH_MAX];
		if (resolve_base(path, config_setting_get_string(b), bpath, sizeof(bpath)) != 0 ||
		    !file_exists(bpath)) {
			rc = fail_at(ld, setting_file(ld, b), config_setting_source_line(b), "base",
				     "cannot find \"%s\" (looked for %s and in %s)",
				     config_setting_get_string(b), bpath, mb_scenario_dir());
			goto out;
		}
		if ((rc = load_file(ld, t, is, bpath, obj)) != 0)
			goto out;
	}
	rc = apply_group(ld, is, root, NULL, NULL, obj, true);
out:
	memcpy(ld->curfile, savefile, sizeof(savefile));
	memcpy(ld->curdir, savedir, sizeof(savedir));
	config_destroy(&cfg);
	ld->depth--;
	return rc;
}

/* Cross-field checks report at the field's recorded location. */
int mb_opt_fail_field(struct mb_opt_ld *ld, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int mb_opt_fail_field(struct mb_opt_ld *ld, const char *field, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	const char *file = ld->topfile;
	int line = 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (int i = 0; ld->is && i < ld->is->n; i++) {
		struct inst *in = &ld->is->v[i];
		if (strcmp(in->path, field) == 0 && in->set && in->file >= 0) {
			file = ld->files[in->file];
			line = in->line;
		}
	}
	return fail_at(ld, file, line, field, "%s", msg);
}

int mb_opt_load(const struct mb_opt_table *t, const char *name, void *obj, size_t objsize,
		size_t name_off, size_t path_off, struct mb_cfg_error *err)
{
	struct mb_cfg_error dummy;
	struct mb_opt_ld ld;
	struct insts is;
	char path[MB_PATH_MAX];
	int rc;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	memset(&ld, 0, sizeof(ld));
	ld.err = err;
	if (!name || !*name)
		return fail_at(&ld, "", 0, NULL, "no scenario given");
	if (mb_scenario_resolve(name, path, sizeof(path)) != 0)
		return fail_at(&ld, name, 0, NULL, "name too long");
	if ((rc = mb__opt_insts_build(t, &is)) != 0)
		return rc;
	char *tmp = calloc(1, objsize);
	if (!tmp) {
		free(is.v);
		return MB_ENOMEM;
	}
	ld.is = &is;
	ld.topfile = path;
	mb__opt_defaults(t, tmp);
	rc = load_file(&ld, t, &is, path, tmp);
	if (rc == 0)
		rc = check_required(&ld, &is, NULL, path);
	if (rc == 0 && t->check)
		rc = t->check(&ld, t, tmp);
	if (rc == 0) {
		const char *slash = strrchr(path, '/');
		const char *stem = slash ? slash + 1 : path;
		size_t sl = strlen(stem);
		if (sl > 4 && strcmp(stem + sl - 4, ".cfg") == 0)
			sl -= 4;
		snprintf(tmp + name_off, MB_NAME_MAX, "%.*s", (int)sl, stem);
		snprintf(tmp + path_off, MB_PATH_MAX, "%s", path);
		memcpy(obj, tmp, objsize);
	}
	free(tmp);
	free(is.v);
	ld_free(&ld);
	return rc;
}
