/* thresholds.c: thresholds from the scenario and DATA/thresholds.cfg,
 * evaluation and saving (see thresholds.h).  Invariant: a load never
 * half-applies a file: it parses into a copy and commits on success. */
#include "report/thresholds.h"
#include "core/options.h"

#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

void mb_thresholds_init(struct mb_thresholds *t, const struct mb_scenario *sc,
			const struct mb_storage_cfg *st)
{
	memset(t, 0, sizeof(*t));
	if (sc)
		memcpy(t->counter, sc->thresholds, sizeof(t->counter));
	/* the storage file's limits, unless the scenario sets the counters */
	struct mb_threshold *rd = &t->counter[MB_C_STRESS_READ_MS];
	struct mb_threshold *lg = &t->counter[MB_C_STRESS_LOG_MS];
	if (rd->cmp == MB_CMP_NONE)
		*rd = (struct mb_threshold){MB_CMP_LT, st ? st->db_read_avg_ms_max : 20.0};
	if (lg->cmp == MB_CMP_NONE)
		*lg = (struct mb_threshold){MB_CMP_LT, st ? st->log_write_avg_ms_max : 10.0};
}

enum mb_verdict mb_storage_verdict(const struct mb_thresholds *t, bool has_read, double read_ms,
				   bool has_log, double log_ms)
{
	enum mb_verdict r = mb_threshold_eval(&t->counter[MB_C_STRESS_READ_MS], has_read, read_ms);
	enum mb_verdict l = mb_threshold_eval(&t->counter[MB_C_STRESS_LOG_MS], has_log, log_ms);
	if (r == MB_VERDICT_FAIL || l == MB_VERDICT_FAIL)
		return MB_VERDICT_FAIL;
	if (r == MB_VERDICT_PASS && l == MB_VERDICT_PASS)
		return MB_VERDICT_PASS;
	return MB_VERDICT_NONE;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void set_err(struct mb_cfg_error *err, const char *file, int line, const char *field,
		    const char *msg)
{
	if (!err)
		return;
	copy_str(err->file, sizeof(err->file), file);
	err->line = line;
	copy_str(err->field, sizeof(err->field), field);
	copy_str(err->message, sizeof(err->message), msg);
}

static int get_number(const config_setting_t *s, double *out)
{
	int type = config_setting_type(s);
	if (type == CONFIG_TYPE_FLOAT)
		*out = config_setting_get_float(s);
	else if (type == CONFIG_TYPE_INT)
		*out = config_setting_get_int(s);
	else if (type == CONFIG_TYPE_INT64)
		*out = (double)config_setting_get_int64(s);
	else
		return MB_EINVAL;
	return 0;
}

int mb_thresholds_load(struct mb_thresholds *t, const char *path, struct mb_cfg_error *err)
{
	if (access(path, F_OK) != 0)
		return MB_ENOTFOUND;
	config_t cfg;
	config_init(&cfg);
	if (config_read_file(&cfg, path) != CONFIG_TRUE) {
		set_err(err, path, config_error_line(&cfg), "",
			config_error_text(&cfg) ? config_error_text(&cfg) : "cannot read");
		config_destroy(&cfg);
		return MB_ECONFIG;
	}
	struct mb_thresholds n = *t;
	int rc = 0;
	char field[160];
	config_setting_t *cs = config_lookup(&cfg, "counters");
	if (cs && !config_setting_is_group(cs)) {
		set_err(err, path, config_setting_source_line(cs), "counters", "must be a group");
		rc = MB_ECONFIG;
		goto out;
	}
	for (int i = 0; cs && i < config_setting_length(cs); i++) {
		config_setting_t *e = config_setting_get_elem(cs, (unsigned)i);
		const char *key = config_setting_name(e);
		enum mb_counter_id id;
		snprintf(field, sizeof(field), "counters.%s", key ? key : "?");
		if (!key || mb_counter_find(key, &id)) {
			set_err(err, path, config_setting_source_line(e), field, "unknown counter");
			rc = MB_ECONFIG;
			goto out;
		}
		const char *cmp = NULL;
		enum mb_cmp c;
		if (!config_setting_is_group(e) || !config_setting_lookup_string(e, "cmp", &cmp) ||
		    mb_cmp_parse(cmp, &c)) {
			set_err(err, path, config_setting_source_line(e), field,
				"needs cmp = \"<\", \"<=\", \">\", \">=\" or \"none\"");
			rc = MB_ECONFIG;
			goto out;
		}
		double v = 0;
		config_setting_t *vs = config_setting_get_member(e, "value");
		if (c != MB_CMP_NONE && (!vs || get_number(vs, &v))) {
			set_err(err, path, config_setting_source_line(e), field,
				"needs a numeric value");
			rc = MB_ECONFIG;
			goto out;
		}
		n.counter[id].cmp = c;
		n.counter[id].value = v;
	}
	config_setting_t *ss = config_lookup(&cfg, "storage");
	if (ss) {
		/* an older file: the two storage counters as "< X" */
		static const char *const keys[] = {"db_read_avg_ms_max", "log_write_avg_ms_max"};
		static const enum mb_counter_id ids[] = {MB_C_STRESS_READ_MS, MB_C_STRESS_LOG_MS};
		for (int k = 0; k < 2; k++) {
			config_setting_t *v = config_setting_get_member(ss, keys[k]);
			double x = 0;
			if (!v)
				continue;
			snprintf(field, sizeof(field), "storage.%s", keys[k]);
			if (get_number(v, &x) || !(x > MB_LATENCY_LIMIT_MIN) ||
			    x > MB_LATENCY_LIMIT_MAX) {
				/* the storage test's --read-ms-max / --log-ms-max range */
				set_err(err, path, config_setting_source_line(v), field,
					"must be a positive number (at most 1e12)");
				rc = MB_ECONFIG;
				goto out;
			}
			n.counter[ids[k]] = (struct mb_threshold){MB_CMP_LT, x};
		}
	}
	*t = n;
out:
	config_destroy(&cfg);
	return rc;
}

/* The file is built and written with libconfig (config_write), so it is
 * exactly what mb_thresholds_load reads back. */
int mb_thresholds_save(const struct mb_thresholds *t, const char *path)
{
	config_t cfg;
	config_init(&cfg);
	int rc = MB_ENOMEM;
	config_setting_t *root = config_root_setting(&cfg);
	config_setting_t *cs = config_setting_add(root, "counters", CONFIG_TYPE_GROUP);
	if (!cs)
		goto out;
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		const struct mb_threshold *th = &t->counter[i];
		config_setting_t *g = config_setting_add(cs, mb_counters[i].key, CONFIG_TYPE_GROUP);
		config_setting_t *c = g ? config_setting_add(g, "cmp", CONFIG_TYPE_STRING) : NULL;
		if (!c || !config_setting_set_string(
			      c, th->cmp == MB_CMP_NONE ? "none" : mb_cmp_str(th->cmp)))
			goto out;
		if (th->cmp != MB_CMP_NONE) {
			config_setting_t *v = config_setting_add(g, "value", CONFIG_TYPE_FLOAT);
			if (!v || !config_setting_set_float(v, th->value))
				goto out;
		}
	}

	char tmp[MB_PATH_MAX + 16];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		rc = MB_EIO;
		goto out;
	}
	fprintf(f, "# thresholds.cfg: pass/fail thresholds edited in the mailbench console.\n"
		   "# counters: cmp is <, <=, >, >= or none.\n");
	config_write(&cfg, f);
	int bad = ferror(f);
	if (fflush(f) || fsync(fileno(f)))
		bad = 1;
	if (fclose(f))
		bad = 1;
	if (bad || rename(tmp, path)) {
		unlink(tmp);
		rc = MB_EIO;
		goto out;
	}
	rc = 0;
out:
	config_destroy(&cfg);
	return rc;
}
