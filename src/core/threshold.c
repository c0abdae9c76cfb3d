/* threshold.c: thresholds' text forms and verdicts (see threshold.h).
 * Invariant: one table of comparison names, one comparison (mb_threshold_ok). */
#include "core/threshold.h"
#include "core/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cmp_names[] = {"", "<", "<=", ">", ">="};

const char *mb_cmp_str(enum mb_cmp c) { return (unsigned)c <= MB_CMP_GE ? cmp_names[c] : ""; }

int mb_cmp_parse(const char *s, enum mb_cmp *out)
{
	if (!strcmp(s, "none") || !*s) {
		*out = MB_CMP_NONE;
		return 0;
	}
	for (int i = MB_CMP_LT; i <= MB_CMP_GE; i++) {
		if (!strcmp(s, cmp_names[i])) {
			*out = (enum mb_cmp)i;
			return 0;
		}
	}
	return MB_EINVAL;
}

int mb_threshold_parse(const char *text, struct mb_threshold *out)
{
	const char *p = text;
	enum mb_cmp cmp;

	while (isspace((unsigned char)*p))
		p++;
	if (p[0] == '<' && p[1] == '=')
		cmp = MB_CMP_LE, p += 2;
	else if (p[0] == '>' && p[1] == '=')
		cmp = MB_CMP_GE, p += 2;
	else if (p[0] == '<')
		cmp = MB_CMP_LT, p += 1;
	else if (p[0] == '>')
		cmp = MB_CMP_GT, p += 1;
	else
		return MB_EINVAL;
	while (isspace((unsigned char)*p))
		p++;
	char *end;
	errno = 0;
	double v = strtod(p, &end);
	if (end == p || errno == ERANGE || !isfinite(v))
		return MB_EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return MB_EINVAL;
	out->cmp = cmp;
	out->value = v;
	return 0;
}

int mb_threshold_parse_limit(const char *text, double lo, double hi, struct mb_threshold *out)
{
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	if (!strcmp(p, "none")) {
		*out = (struct mb_threshold){MB_CMP_NONE, 0};
		return 0;
	}
	if (*p == '<' || *p == '>')
		return mb_threshold_parse(p, out);
	char *end;
	errno = 0;
	double v = strtod(p, &end);
	if (end == p || errno == ERANGE || !isfinite(v) || !(v > lo) || v > hi)
		return MB_EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return MB_EINVAL;
	*out = (struct mb_threshold){MB_CMP_LT, v};
	return 0;
}

void mb_threshold_format(const struct mb_threshold *t, char *buf, size_t len)
{
	if (t->cmp == MB_CMP_NONE || (unsigned)t->cmp > MB_CMP_GE)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%s %.15g", cmp_names[t->cmp], t->value);
}

void mb_threshold_text(const struct mb_threshold *th, enum mb_counter_id id, char *buf, size_t len)
{
	if (th->cmp == MB_CMP_NONE) {
		snprintf(buf, len, "%s", "");
		return;
	}
	/* the counter's decimals, unless they would hide the value set */
	char v[48];
	snprintf(v, sizeof(v), "%.*f", mb_counters[id].decimals, th->value);
	if (strtod(v, NULL) != th->value)
		snprintf(v, sizeof(v), "%.6g", th->value);
	snprintf(buf, len, "%s %s", mb_cmp_str(th->cmp), v);
}

bool mb_threshold_ok(const struct mb_threshold *t, double v)
{
	switch (t->cmp) {
	case MB_CMP_LT:
		return v < t->value;
	case MB_CMP_LE:
		return v <= t->value;
	case MB_CMP_GT:
		return v > t->value;
	case MB_CMP_GE:
		return v >= t->value;
	default:
		return true;
	}
}

enum mb_verdict mb_threshold_eval(const struct mb_threshold *th, bool has, double v)
{
	if (!has || th->cmp == MB_CMP_NONE)
		return MB_VERDICT_NONE;
	return mb_threshold_ok(th, v) ? MB_VERDICT_PASS : MB_VERDICT_FAIL;
}

const char *mb_verdict_str(enum mb_verdict v)
{
	return v == MB_VERDICT_PASS ? "pass" : v == MB_VERDICT_FAIL ? "fail" : "n/a";
}
