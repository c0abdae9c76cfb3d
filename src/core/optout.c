/* optout.c: an option table's contents as JSON (mb_opt_json), as
 * "path = value" text (mb_opt_print) and as a field list with types and
 * ranges (mb_opt_fields_print), all walking the table's instances (its
 * families expanded), so every output names the same fields.
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
/* JSON, text dump and help, all from the tables                        */

json_t *mb_opt_json(const struct mb_opt_table *t, const void *obj);

static json_t *inst_json(const struct inst *in, const void *obj)
{
	const char *base = obj;
	const struct mb_opt *o = in->o;

	if ((o->flags & MB_OPT_HAS) && !*(const bool *)(base + in->aux))
		return json_null();
	switch (o->type) {
	case MB_OT_INT:
		return json_integer(*(const int *)(base + in->off));
	case MB_OT_DOUBLE:
		return json_real(*(const double *)(base + in->off));
	case MB_OT_BOOL:
		return json_boolean(*(const bool *)(base + in->off));
	case MB_OT_STRING:
	case MB_OT_SCHOICE:
		return json_string(base + in->off);
	case MB_OT_ENUM:
		return json_string(o->choices[*(const int *)(base + in->off)]);
	case MB_OT_KIND:
		return json_string(o->choices[0]);
	case MB_OT_INT_LIST: {
		json_t *a = json_array();
		int n = *(const int *)(base + in->aux);
		for (int k = 0; k < n; k++)
			json_array_append_new(a, json_integer(((const int *)(base + in->off))[k]));
		return a;
	}
	case MB_OT_THRESHOLD: {
		const struct mb_threshold *th = (const void *)(base + in->off);
		char buf[64];
		if (th->cmp == MB_CMP_NONE)
			return NULL;
		mb_threshold_format(th, buf, sizeof(buf));
		return json_string(buf);
	}
	case MB_OT_LIST: {
		json_t *a = json_array();
		int n = *(const int *)(base + in->aux);
		for (int k = 0; k < n; k++)
			json_array_append_new(
			    a, mb_opt_json(o->sub, base + in->off + (size_t)k * o->elem_size));
		return a;
	}
	case MB_OT_FLAG:
		return json_boolean(*(const bool *)(base + in->off));
	case MB_OT_ARG: {
		const char *v = *(const char *const *)(base + in->off);
		return v ? json_string(v) : json_null();
	}
	case MB_OT_BASE:
		break;
	}
	return NULL;
}

json_t *mb_opt_json(const struct mb_opt_table *t, const void *obj)
{
	struct insts is;
	json_t *root = json_object();

	if (!root || mb__opt_insts_build(t, &is) != 0)
		return root;
	for (int i = 0; i < is.n; i++) {
		json_t *v = inst_json(&is.v[i], obj);
		if (!v)
			continue;
		/* walk/create the groups of the dotted path */
		json_t *g = root;
		char path[128];
		snprintf(path, sizeof(path), "%s", is.v[i].path);
		char *p = path, *dot;
		while ((dot = strchr(p, '.')) != NULL) {
			*dot = '\0';
			json_t *next = json_object_get(g, p);
			if (!next) {
				next = json_object();
				json_object_set_new(g, p, next);
			}
			g = next;
			p = dot + 1;
		}
		json_object_set_new(g, p, v);
	}
	free(is.v);
	return root;
}

void mb_opt_print(FILE *f, const struct mb_opt_table *t, const void *obj, const char *prefix)
{
	struct insts is;
	const char *base = obj;

	if (mb__opt_insts_build(t, &is) != 0)
		return;
	for (int i = 0; i < is.n; i++) {
		const struct inst *in = &is.v[i];
		const struct mb_opt *o = in->o;
		char key[256];
		snprintf(key, sizeof(key), "%s%s%s", prefix ? prefix : "", prefix ? "." : "",
			 in->path);
		if (o->type == MB_OT_BASE)
			continue;
		if (o->type == MB_OT_LIST) {
			int n = *(const int *)(base + in->aux);
			for (int k = 0; k < n; k++) {
				char sub[300];
				snprintf(sub, sizeof(sub), "%s[%d]", key, k);
				mb_opt_print(f, o->sub, base + in->off + (size_t)k * o->elem_size,
					     sub);
			}
			continue;
		}
		if (o->type == MB_OT_THRESHOLD &&
		    ((const struct mb_threshold *)(base + in->off))->cmp == MB_CMP_NONE)
			continue;
		json_t *v = inst_json(in, obj);
		char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
		fprintf(f, "%s = %s%s\n", key, json_is_null(v) ? "" : (text ? text : ""),
			json_is_null(v) ? "(not published)" : "");
		free(text);
		json_decref(v);
	}
	free(is.v);
}

static const char *opt_type_name(const struct mb_opt *o)
{
	switch (o->type) {
	case MB_OT_INT:
		return "integer";
	case MB_OT_DOUBLE:
		return "number";
	case MB_OT_BOOL:
		return "boolean";
	case MB_OT_STRING:
		return "string";
	case MB_OT_ENUM:
	case MB_OT_SCHOICE:
	case MB_OT_KIND:
		return "choice";
	case MB_OT_INT_LIST:
		return "integer array";
	case MB_OT_THRESHOLD:
		return "comparison";
	case MB_OT_LIST:
		return "list of groups";
	case MB_OT_BASE:
	case MB_OT_ARG:
		return "string";
	case MB_OT_FLAG:
		return "flag";
	}
	return "?";
}

void mb_opt_fields_print(FILE *f, const struct mb_opt_table *t, const char *prefix)
{
	struct insts is;

	if (mb__opt_insts_build(t, &is) != 0)
		return;
	for (int i = 0; i < is.n; i++) {
		const struct inst *in = &is.v[i];
		const struct mb_opt *o = in->o;
		char key[256], dflt[128] = "", range[128] = "";
		snprintf(key, sizeof(key), "%s%s", prefix ? prefix : "", in->path);
		switch (o->type) {
		case MB_OT_INT:
		case MB_OT_DOUBLE:
			if (o->flags & MB_OPT_LO_OPEN)
				snprintf(range, sizeof(range), "(%.15g, %.15g]", o->min, o->max);
			else
				snprintf(range, sizeof(range), "%.15g..%.15g", o->min, o->max);
			if (!(o->flags & (MB_OPT_REQ | MB_OPT_HAS)))
				snprintf(dflt, sizeof(dflt), "%.15g", o->def);
			break;
		case MB_OT_BOOL:
			if (!(o->flags & MB_OPT_REQ))
				snprintf(dflt, sizeof(dflt), "%s", o->def ? "true" : "false");
			break;
		case MB_OT_INT_LIST:
			snprintf(range, sizeof(range), "1..%zu entries of %.15g..%.15g", o->size,
				 o->min, o->max);
			snprintf(dflt, sizeof(dflt), "%s", o->sdef ? o->sdef : "");
			break;
		case MB_OT_ENUM:
		case MB_OT_SCHOICE:
		case MB_OT_KIND:
			mb__opt_choices_text(o->choices, range, sizeof(range));
			if (!(o->flags & MB_OPT_REQ))
				snprintf(dflt, sizeof(dflt), "\"%s\"", o->sdef ? o->sdef : "");
			break;
		case MB_OT_STRING:
			snprintf(range, sizeof(range), "at most %zu characters", o->size - 1);
			break;
		case MB_OT_THRESHOLD:
			snprintf(range, sizeof(range), "\"< X\", \"<= X\", \"> X\", \">= X\"");
			break;
		case MB_OT_LIST:
			snprintf(range, sizeof(range), "at most %zu entries", o->size);
			break;
		case MB_OT_BASE:
		case MB_OT_FLAG:
		case MB_OT_ARG:
			break;
		}
		char line[1024];
		snprintf(line, sizeof(line), "%-44s %-14s %s%s%s%s%s%s", key, opt_type_name(o),
			 (o->flags & MB_OPT_REQ) ? "required; " : "",
			 (o->flags & MB_OPT_PUB) ? "published; " : "", dflt[0] ? "default " : "",
			 dflt, dflt[0] ? "; " : "", range);
		size_t ll = strlen(line);
		while (ll > 0 && (line[ll - 1] == ' ' || line[ll - 1] == ';'))
			line[--ll] = '\0';
		fprintf(f, "%s\n", line);
		fprintf(f, "%-44s   %s%s%s%s\n", "", o->help, in->label ? " (" : "",
			in->label ? in->label : "", in->label ? ")" : "");
		if (o->type == MB_OT_LIST) {
			char sub[300];
			snprintf(sub, sizeof(sub), "%s[N].", key);
			mb_opt_fields_print(f, o->sub, sub);
		}
	}
	free(is.v);
}
