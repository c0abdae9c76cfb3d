/* report.c: run summaries as JSON (jansson), CSV, saved runs, number
 * formatting (see report.h).  Invariants: unmeasured figures are JSON null
 * and read back as not measured; files are replaced atomically. */
#include "report/report.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

void mb_format_number(double v, int decimals, char *buf, size_t len)
{
	char raw[64];
	if (!isfinite(v)) {
		snprintf(buf, len, "n/a");
		return;
	}
	snprintf(raw, sizeof(raw), "%.*f", decimals, v);
	/* insert thousands separators in the integer part */
	const char *p = raw;
	char out[96];
	size_t o = 0;
	if (*p == '-')
		out[o++] = *p++;
	size_t intlen = strcspn(p, ".");
	for (size_t i = 0; i < intlen; i++) {
		out[o++] = p[i];
		size_t left = intlen - i - 1;
		if (left > 0 && left % 3 == 0)
			out[o++] = ',';
	}
	snprintf(out + o, sizeof(out) - o, "%s", p + intlen);
	/* "-0" and "-0.0" read as zero */
	if (out[0] == '-' && strspn(out + 1, "0.,") == strlen(out + 1))
		memmove(out, out + 1, strlen(out));
	snprintf(buf, len, "%s", out);
}

void mb_format_value(enum mb_counter_id id, bool has, double v, char *buf, size_t len)
{
	if (!has) {
		snprintf(buf, len, "n/a");
		return;
	}
	mb_format_number(v, mb_counters[id].decimals, buf, len);
}

void mb_summary_label(const struct mb_run_summary *s, char *buf, size_t len)
{
	const char *hm = strchr(s->started, 'T');
	snprintf(buf, len, "%s %du%s %.5s", s->scenario, s->users, s->compression ? "" : " nocomp",
		 hm ? hm + 1 : "");
}

void mb_latency_from_hist(const struct mb_hist *h, struct mb_latency *out)
{
	memset(out, 0, sizeof(*out));
	if (!h || mb_hist_count(h) == 0)
		return;
	out->has = true;
	out->count = mb_hist_count(h);
	out->mean_ms = mb_hist_mean_ns(h) / 1e6;
	out->p50_ms = (double)mb_hist_percentile_ns(h, 50) / 1e6;
	out->p95_ms = (double)mb_hist_percentile_ns(h, 95) / 1e6;
	out->p99_ms = (double)mb_hist_percentile_ns(h, 99) / 1e6;
	out->max_ms = (double)mb_hist_max_ns(h) / 1e6;
}

void mb_summary_evaluate(struct mb_run_summary *s)
{
	s->overall = MB_VERDICT_NONE;
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		s->verdict[i] = mb_threshold_eval(&s->thresholds.counter[i], s->has[i], s->avg[i]);
		if (s->verdict[i] == MB_VERDICT_FAIL)
			s->overall = MB_VERDICT_FAIL;
		else if (s->verdict[i] == MB_VERDICT_PASS && s->overall == MB_VERDICT_NONE)
			s->overall = MB_VERDICT_PASS;
	}
	s->storage_verdict = MB_VERDICT_NONE;
	if (s->storage_test) {
		s->storage_verdict = mb_storage_verdict(
		    &s->thresholds, s->has[MB_C_STRESS_READ_MS], s->avg[MB_C_STRESS_READ_MS],
		    s->has[MB_C_STRESS_LOG_MS], s->avg[MB_C_STRESS_LOG_MS]);
		if (s->storage_verdict == MB_VERDICT_FAIL)
			s->overall = MB_VERDICT_FAIL;
		else if (s->storage_verdict == MB_VERDICT_PASS && s->overall == MB_VERDICT_NONE)
			s->overall = MB_VERDICT_PASS;
	}
	if (s->failed)
		s->overall = MB_VERDICT_FAIL;
}

/* ---- JSON ---- */

static json_t *num_or_null(bool has, double v)
{
	return has && isfinite(v) ? json_real(v) : json_null();
}

static json_t *latency_json(const struct mb_latency *l)
{
	if (!l->has)
		return json_null();
	return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f}", "count", (json_int_t)l->count, "mean_ms",
			 l->mean_ms, "p50_ms", l->p50_ms, "p95_ms", l->p95_ms, "p99_ms", l->p99_ms,
			 "max_ms", l->max_ms);
}

json_t *mb_summary_to_json(const struct mb_run_summary *s)
{
	json_t *root = json_object();
	if (!root)
		return NULL;
	json_object_set_new(root, "schema", json_string(MB_RUN_SCHEMA));
	json_object_set_new(root, "id", json_string(s->id));
	json_object_set_new(root, "started", json_string(s->started));
	json_object_set_new(root, "scenario",
			    json_pack("{s:s,s:s,s:i,s:s}", "name", s->scenario, "title", s->title,
				      "number", s->scenario_number, "mode",
				      s->mode == MB_MODE_CACHED ? "cached" : "online"));
	json_object_set_new(root, "parameters",
			    json_pack("{s:i,s:f,s:f,s:b,s:f,s:f,s:f,s:b}", "users", s->users,
				      "scale", s->scale, "accel", s->accel, "compression",
				      s->compression, "duration_s", s->duration_s, "warmup_s",
				      s->warmup_s, "measured_s", s->measured_s, "storage_test",
				      s->storage_test));
	json_object_set_new(root, "header",
			    json_pack("{s:s,s:s,s:s,s:o}", "platform", s->platform, "engine",
				      s->engine, "client_mode", s->client_mode, "smt",
				      s->smt < 0 ? json_null() : json_boolean(s->smt)));
	json_t *c = json_object();
	for (int i = 0; i < MB_COUNTER_COUNT; i++)
		json_object_set_new(c, mb_counters[i].key, num_or_null(s->has[i], s->avg[i]));
	json_object_set_new(root, "counters", c);
	json_object_set_new(root, "latency",
			    json_pack("{s:o,s:o,s:o}", "rpc", latency_json(&s->rpc_latency),
				      "actions", latency_json(&s->action_latency), "score_ms",
				      num_or_null(s->has_score, s->score_ms)));
	json_t *acts = json_object();
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		const struct mb_action_figures *a = &s->actions[i];
		json_object_set_new(acts, mb_actions[i].key,
				    json_pack("{s:o,s:o,s:o,s:o,s:o}", "scheduled",
					      num_or_null(a->has_counts, a->scheduled), "done",
					      num_or_null(a->has_counts, a->done), "failed",
					      num_or_null(a->has_counts, a->failed), "per_user_day",
					      num_or_null(a->has_per_user_day, a->per_user_day),
					      "latency", latency_json(&a->latency)));
	}
	json_object_set_new(root, "actions", acts);
	json_object_set_new(
	    root, "per_user_day",
	    json_pack("{s:o,s:o}", "messages_sent",
		      num_or_null(s->has_messages_sent, s->messages_sent_per_user_day),
		      "messages_received",
		      num_or_null(s->has_messages_received, s->messages_received_per_user_day)));
	json_t *th = json_object();
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		const struct mb_threshold *t = &s->thresholds.counter[i];
		if (t->cmp == MB_CMP_NONE)
			continue;
		json_object_set_new(th, mb_counters[i].key,
				    json_pack("{s:s,s:f,s:s}", "cmp", mb_cmp_str(t->cmp), "value",
					      t->value, "verdict", mb_verdict_str(s->verdict[i])));
	}
	json_object_set_new(root, "thresholds",
			    json_pack("{s:o,s:{s:f,s:f,s:s}}", "counters", th, "storage",
				      "db_read_avg_ms_max", s->thresholds.storage_read_ms_max,
				      "log_write_avg_ms_max", s->thresholds.storage_log_ms_max,
				      "verdict", mb_verdict_str(s->storage_verdict)));
	json_object_set_new(root, "verdict", json_string(mb_verdict_str(s->overall)));
	json_object_set_new(root, "failed", json_boolean(s->failed));
	json_object_set_new(root, "failure", s->failed ? json_string(s->failure) : json_null());
	return root;
}

static int rd_num(const json_t *o, const char *key, bool *has, double *v)
{
	json_t *x = json_object_get(o, key);
	if (!x || json_is_null(x)) {
		if (has)
			*has = false;
		return 0;
	}
	if (!json_is_number(x))
		return MB_EPROTO;
	*v = json_number_value(x);
	if (has)
		*has = true;
	return 0;
}

static void rd_str(const json_t *o, const char *key, char *dst, size_t len)
{
	const char *v = json_string_value(json_object_get(o, key));
	snprintf(dst, len, "%s", v ? v : "");
}

static int rd_latency(const json_t *o, struct mb_latency *l)
{
	memset(l, 0, sizeof(*l));
	if (!o || json_is_null(o))
		return 0;
	if (!json_is_object(o))
		return MB_EPROTO;
	double count = 0;
	if (rd_num(o, "count", NULL, &count) || rd_num(o, "mean_ms", NULL, &l->mean_ms) ||
	    rd_num(o, "p50_ms", NULL, &l->p50_ms) || rd_num(o, "p95_ms", NULL, &l->p95_ms) ||
	    rd_num(o, "p99_ms", NULL, &l->p99_ms) || rd_num(o, "max_ms", NULL, &l->max_ms))
		return MB_EPROTO;
	l->count = (uint64_t)count;
	l->has = true;
	return 0;
}

#define WHY(msg)                                                                                   \
	do {                                                                                       \
		if (why)                                                                           \
			snprintf(why, whylen, "%s", msg);                                          \
		return MB_EPROTO;                                                                  \
	} while (0)

int mb_summary_from_json(const json_t *j, struct mb_run_summary *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	if (!json_is_object(j))
		WHY("not a JSON object");
	const char *schema = json_string_value(json_object_get(j, "schema"));
	if (!schema || strcmp(schema, MB_RUN_SCHEMA))
		WHY("schema: expected " MB_RUN_SCHEMA);
	rd_str(j, "id", out->id, sizeof(out->id));
	rd_str(j, "started", out->started, sizeof(out->started));
	const json_t *sc = json_object_get(j, "scenario");
	if (!json_is_object(sc))
		WHY("scenario: missing");
	rd_str(sc, "name", out->scenario, sizeof(out->scenario));
	rd_str(sc, "title", out->title, sizeof(out->title));
	out->scenario_number = (int)json_integer_value(json_object_get(sc, "number"));
	const char *mode = json_string_value(json_object_get(sc, "mode"));
	out->mode = mode && !strcmp(mode, "cached") ? MB_MODE_CACHED : MB_MODE_ONLINE;
	const json_t *p = json_object_get(j, "parameters");
	if (!json_is_object(p))
		WHY("parameters: missing");
	double users = 0;
	if (rd_num(p, "users", NULL, &users) || rd_num(p, "scale", NULL, &out->scale) ||
	    rd_num(p, "accel", NULL, &out->accel) ||
	    rd_num(p, "duration_s", NULL, &out->duration_s) ||
	    rd_num(p, "warmup_s", NULL, &out->warmup_s) ||
	    rd_num(p, "measured_s", NULL, &out->measured_s))
		WHY("parameters: a field is not a number");
	out->users = (int)users;
	out->compression = json_is_true(json_object_get(p, "compression"));
	out->storage_test = json_is_true(json_object_get(p, "storage_test"));
	const json_t *h = json_object_get(j, "header");
	rd_str(h, "platform", out->platform, sizeof(out->platform));
	rd_str(h, "engine", out->engine, sizeof(out->engine));
	rd_str(h, "client_mode", out->client_mode, sizeof(out->client_mode));
	const json_t *smt = json_object_get(h, "smt");
	out->smt = json_is_boolean(smt) ? json_is_true(smt) : -1;
	const json_t *c = json_object_get(j, "counters");
	if (!json_is_object(c))
		WHY("counters: missing");
	for (int i = 0; i < MB_COUNTER_COUNT; i++)
		if (rd_num(c, mb_counters[i].key, &out->has[i], &out->avg[i]))
			WHY("counters: a value is not a number");
	const json_t *lat = json_object_get(j, "latency");
	if (rd_latency(json_object_get(lat, "rpc"), &out->rpc_latency) ||
	    rd_latency(json_object_get(lat, "actions"), &out->action_latency) ||
	    rd_num(lat, "score_ms", &out->has_score, &out->score_ms))
		WHY("latency: malformed");
	const json_t *acts = json_object_get(j, "actions");
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		const json_t *a = json_object_get(acts, mb_actions[i].key);
		struct mb_action_figures *f = &out->actions[i];
		if (!a)
			continue;
		if (rd_num(a, "scheduled", &f->has_counts, &f->scheduled) ||
		    rd_num(a, "done", &f->has_counts, &f->done) ||
		    rd_num(a, "failed", &f->has_counts, &f->failed) ||
		    rd_num(a, "per_user_day", &f->has_per_user_day, &f->per_user_day) ||
		    rd_latency(json_object_get(a, "latency"), &f->latency))
			WHY("actions: malformed");
	}
	const json_t *pud = json_object_get(j, "per_user_day");
	if (rd_num(pud, "messages_sent", &out->has_messages_sent,
		   &out->messages_sent_per_user_day) ||
	    rd_num(pud, "messages_received", &out->has_messages_received,
		   &out->messages_received_per_user_day))
		WHY("per_user_day: malformed");
	mb_thresholds_init(&out->thresholds, NULL, NULL);
	const json_t *th = json_object_get(j, "thresholds");
	const json_t *thc = json_object_get(th, "counters");
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)thc, key, val)
	{
		enum mb_counter_id id;
		enum mb_cmp cmp;
		const char *cs = json_string_value(json_object_get(val, "cmp"));
		if (mb_counter_find(key, &id) || !cs || mb_cmp_parse(cs, &cmp) ||
		    rd_num(val, "value", NULL, &out->thresholds.counter[id].value))
			WHY("thresholds: malformed");
		out->thresholds.counter[id].cmp = cmp;
	}
	const json_t *ts = json_object_get(th, "storage");
	rd_num(ts, "db_read_avg_ms_max", NULL, &out->thresholds.storage_read_ms_max);
	rd_num(ts, "log_write_avg_ms_max", NULL, &out->thresholds.storage_log_ms_max);
	out->failed = json_is_true(json_object_get(j, "failed"));
	rd_str(j, "failure", out->failure, sizeof(out->failure));
	mb_summary_evaluate(out);
	return 0;
}

int mb_summary_write(const struct mb_run_summary *s, const char *path)
{
	json_t *j = mb_summary_to_json(s);
	if (!j)
		return MB_ENOMEM;
	char tmp[MB_PATH_MAX + 16];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int rc = json_dump_file(j, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(j);
	if (rc || rename(tmp, path)) {
		unlink(tmp);
		return MB_EIO;
	}
	return 0;
}

int mb_summary_read(const char *path, struct mb_run_summary *out, char *why, size_t whylen)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);
	if (!j) {
		if (why)
			snprintf(why, whylen, "%s:%d: %s", path, e.line, e.text);
		return MB_EPROTO;
	}
	int rc = mb_summary_from_json(j, out, why, whylen);
	json_decref(j);
	return rc;
}

int mb_summary_save(const struct mb_run_summary *s, const char *data_dir, char *path_out,
		    size_t len)
{
	char dir[MB_PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/runs", data_dir);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return mb_from_errno(errno);
	char path[MB_PATH_MAX + 80];
	snprintf(path, sizeof(path), "%s/%s.json", dir, s->id);
	int rc = mb_summary_write(s, path);
	if (rc == 0 && path_out)
		snprintf(path_out, len, "%s", path);
	return rc;
}

struct run_entry {
	char *path;
	struct mb_run_summary sum;
};

struct mb_run_list {
	struct run_entry *e;
	size_t len;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct run_entry *x = a, *y = b;
	int c = strcmp(y->sum.started, x->sum.started);
	return c ? c : strcmp(y->sum.id, x->sum.id);
}

int mb_run_list_load(const char *data_dir, struct mb_run_list **out)
{
	struct mb_run_list *l = calloc(1, sizeof(*l));
	if (!l)
		return MB_ENOMEM;
	char dir[MB_PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/runs", data_dir);
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		size_t cap = 0;
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);
			if (n < 6 || strcmp(de->d_name + n - 5, ".json"))
				continue;
			if (l->len == cap) {
				cap = cap ? cap * 2 : 16;
				struct run_entry *e = realloc(l->e, cap * sizeof(*e));
				if (!e)
					break;
				l->e = e;
			}
			struct run_entry *e = &l->e[l->len];
			char path[MB_PATH_MAX + 300];
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (mb_summary_read(path, &e->sum, NULL, 0))
				continue; /* not a run summary: skipped */
			e->path = strdup(path);
			if (e->path)
				l->len++;
		}
		closedir(d);
	}
	if (l->len > 1)
		qsort(l->e, l->len, sizeof(*l->e), entry_cmp);
	*out = l;
	return 0;
}

void mb_run_list_destroy(struct mb_run_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->len; i++)
		free(l->e[i].path);
	free(l->e);
	free(l);
}

size_t mb_run_list_count(const struct mb_run_list *l) { return l->len; }

const struct mb_run_summary *mb_run_list_at(const struct mb_run_list *l, size_t i)
{
	return i < l->len ? &l->e[i].sum : NULL;
}

const char *mb_run_list_path(const struct mb_run_list *l, size_t i)
{
	return i < l->len ? l->e[i].path : NULL;
}

int mb_csv_write(FILE *f, const struct mb_series *s, double t_offset)
{
	fprintf(f, "t_s,counter,value\n");
	for (size_t i = 0; i < mb_series_len(s); i++) {
		double t = mb_series_time(s, i) - t_offset;
		for (int c = 0; c < MB_COUNTER_COUNT; c++) {
			double v;
			if (mb_series_get(s, i, (enum mb_counter_id)c, &v))
				fprintf(f, "%.3f,%s,%.*f\n", t, mb_counters[c].key,
					mb_counters[c].decimals + 2, v);
		}
	}
	return ferror(f) ? MB_EIO : 0;
}

int mb_csv_write_file(const struct mb_series *s, double t_offset, const char *path)
{
	char tmp[MB_PATH_MAX + 16];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return mb_from_errno(errno);
	int rc = mb_csv_write(f, s, t_offset);
	if (fclose(f))
		rc = MB_EIO;
	if (rc || rename(tmp, path)) {
		unlink(tmp);
		return rc ? rc : MB_EIO;
	}
	return 0;
}
