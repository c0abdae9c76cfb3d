/* report.c: run summaries as JSON (jansson), CSV, saved runs, number
 * formatting (see report.h).  Invariants: unmeasured figures are JSON null
 * and read back as not measured; files are replaced atomically. */
#include "report/report.h"
#include "core/sampler.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "report/compare.h"

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
	snprintf(buf, len, "%s %du%s %.5s", s->scenario, s->users,
		 strcmp(mb_summary_compression(s), "off") ? "" : " nocomp", hm ? hm + 1 : "");
}

const char *mb_summary_compression(const struct mb_run_summary *s)
{
	if (!mb_compare_target_compresses(s->target))
		return "n/a";
	return s->compression ? "on" : "off";
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

static json_t *num_or_null(bool has, double v)
{
	return has && isfinite(v) ? json_real(v) : json_null();
}

static void add_reason(struct mb_run_summary *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_reason(struct mb_run_summary *s, const char *fmt, ...)
{
	size_t n = strlen(s->reason);
	if (n + 4 >= sizeof(s->reason))
		return;
	if (n)
		n += (size_t)snprintf(s->reason + n, sizeof(s->reason) - n, "; ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->reason + n, sizeof(s->reason) - n, fmt, ap);
	va_end(ap);
}

void mb_summary_evaluate(struct mb_run_summary *s)
{
	s->overall = MB_VERDICT_NONE;
	s->reason[0] = '\0';
	/* failed actions, % of done, over the whole run */
	double done = 0, failed = 0;
	bool counts = false;
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		if (s->actions[i].has_counts) {
			counts = true;
			done += s->actions[i].done;
			failed += s->actions[i].failed;
		}
	/* actions that failed while an injected fault was open are the fault's
	 * figures (failed_during), not the run's */
	for (int i = 0; i < s->health.nfaults && i < MB_RUN_MAX_FAULTS; i++)
		failed -= s->health.faults[i].failed_during;
	if (failed < 0)
		failed = 0;
	s->has[MB_C_ACTIONS_FAILED_PCT] = counts && (done > 0 || failed > 0);
	s->avg[MB_C_ACTIONS_FAILED_PCT] = done > 0 ? 100.0 * failed / done : 100.0;
	if (s->failed)
		add_reason(s, "the run failed: %.300s", s->failure);
	if (s->health.sg_error_groups > 0)
		add_reason(s, "storage group error: %s", s->health.sg_errors);
	if (s->health.ack_checked && s->health.acks_lost > 0)
		add_reason(s, "%.0f acknowledged writes lost", s->health.acks_lost);
	bool unrecovered = false;
	for (int i = 0; i < s->health.nfaults && i < MB_RUN_MAX_FAULTS; i++)
		if (!s->health.faults[i].has_recovery) {
			unrecovered = true;
			add_reason(s, "fault %s: no successful action after it",
				   s->health.faults[i].spec);
		}
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		s->verdict[i] = mb_threshold_eval(&s->thresholds.counter[i], s->has[i], s->avg[i]);
		if (s->verdict[i] == MB_VERDICT_FAIL) {
			char v[32], th[48];
			s->overall = MB_VERDICT_FAIL;
			mb_format_value((enum mb_counter_id)i, true, s->avg[i], v, sizeof(v));
			mb_threshold_text(&s->thresholds.counter[i], (enum mb_counter_id)i, th,
					  sizeof(th));
			if (i == MB_C_ACTIONS_FAILED_PCT) {
				/* with the commonest cause, when the load engine named one */
				const struct mb_fail_cause *fc =
				    s->health.nfail_causes > 0 ? &s->health.fail_causes[0] : NULL;
				add_reason(s,
					   "%.0f of %.0f actions failed (%s%% of done; threshold "
					   "%s)%s%s%s%s",
					   failed, done + failed, v, th, fc ? ", most by " : "",
					   fc ? fc->cause : "", fc ? ": " : "", fc ? fc->what : "");
			} else
				add_reason(s, "%s %s (threshold %s)", mb_counters[i].label, v, th);
		} else if (s->verdict[i] == MB_VERDICT_PASS && s->overall == MB_VERDICT_NONE) {
			s->overall = MB_VERDICT_PASS;
		}
	}
	if (s->health.sg_error_groups > 0 || (s->health.ack_checked && s->health.acks_lost > 0) ||
	    unrecovered)
		s->overall = MB_VERDICT_FAIL;
	s->storage_verdict = MB_VERDICT_NONE;
	if (s->storage_test) {
		s->storage_verdict = mb_storage_verdict(
		    &s->thresholds, s->has[MB_C_STRESS_READ_MS], s->avg[MB_C_STRESS_READ_MS],
		    s->has[MB_C_STRESS_LOG_MS], s->avg[MB_C_STRESS_LOG_MS]);
		if (s->storage_verdict == MB_VERDICT_FAIL) {
			/* the reason is the failing counter's, above */
			s->overall = MB_VERDICT_FAIL;
		} else if (s->storage_verdict == MB_VERDICT_PASS && s->overall == MB_VERDICT_NONE) {
			s->overall = MB_VERDICT_PASS;
		}
	}
	if (s->failed)
		s->overall = MB_VERDICT_FAIL;
}

static json_t *health_json(const struct mb_run_health *h)
{
	json_t *faults = json_array();
	for (int i = 0; i < h->nfaults && i < MB_RUN_MAX_FAULTS; i++) {
		const struct mb_fault_figures *f = &h->faults[i];
		json_array_append_new(
		    faults, json_pack("{s:s,s:f,s:f,s:o,s:f,s:s}", "spec", f->spec, "at_s", f->at_s,
				      "end_s", f->end_s, "recovery_s",
				      num_or_null(f->has_recovery, f->recovery_s), "failed_during",
				      f->failed_during, "note", f->note));
	}
	json_t *o = json_pack("{s:i,s:s,s:o,s:{s:b,s:o,s:o,s:s}}", "storage_group_errors",
			      h->sg_error_groups, "storage_group_error_text", h->sg_errors,
			      "faults", faults, "ack_check", "ran", h->ack_checked, "checked",
			      num_or_null(h->ack_checked, h->acks_checked), "lost",
			      num_or_null(h->ack_checked, h->acks_lost), "note", h->ack_note);
	if (o && h->has_conn)
		json_object_set_new(o, "connections",
				    json_pack("{s:f,s:f,s:f,s:f,s:i}", "lost", h->conn_lost,
					      "reconnects", h->reconnects, "connect_failures",
					      h->connect_failures, "logon_failures",
					      h->logon_failures, "server_restarts",
					      h->server_restarts));
	json_t *fc = json_array();
	for (int i = 0; fc && i < h->nfail_causes; i++)
		json_array_append_new(
		    fc, json_pack("{s:s,s:s,s:f}", "cause", h->fail_causes[i].cause, "what",
				  h->fail_causes[i].what, "n", h->fail_causes[i].n));
	if (o && fc)
		json_object_set_new(o, "failed_actions_by_cause", fc);
	else
		json_decref(fc);
	return o;
}

static void health_from_json(const json_t *j, struct mb_run_health *h)
{
	memset(h, 0, sizeof(*h));
	if (!json_is_object(j))
		return;
	h->sg_error_groups = (int)json_integer_value(json_object_get(j, "storage_group_errors"));
	const char *t = json_string_value(json_object_get(j, "storage_group_error_text"));
	snprintf(h->sg_errors, sizeof(h->sg_errors), "%s", t ? t : "");
	const json_t *fa = json_object_get(j, "faults");
	size_t i;
	const json_t *f;
	json_array_foreach(fa, i, f)
	{
		if (h->nfaults >= MB_RUN_MAX_FAULTS)
			break;
		struct mb_fault_figures *o = &h->faults[h->nfaults++];
		const char *spec = json_string_value(json_object_get(f, "spec"));
		const char *note = json_string_value(json_object_get(f, "note"));
		snprintf(o->spec, sizeof(o->spec), "%s", spec ? spec : "");
		snprintf(o->note, sizeof(o->note), "%s", note ? note : "");
		o->at_s = json_number_value(json_object_get(f, "at_s"));
		o->end_s = json_number_value(json_object_get(f, "end_s"));
		const json_t *r = json_object_get(f, "recovery_s");
		o->has_recovery = json_is_number(r);
		o->recovery_s = json_number_value(r);
		o->failed_during = json_number_value(json_object_get(f, "failed_during"));
	}
	const json_t *a = json_object_get(j, "ack_check");
	h->ack_checked = json_is_true(json_object_get(a, "ran"));
	h->acks_checked = json_number_value(json_object_get(a, "checked"));
	h->acks_lost = json_number_value(json_object_get(a, "lost"));
	const char *an = json_string_value(json_object_get(a, "note"));
	snprintf(h->ack_note, sizeof(h->ack_note), "%s", an ? an : "");
	const json_t *c = json_object_get(j, "connections");
	if (json_is_object(c)) {
		h->has_conn = true;
		h->conn_lost = json_number_value(json_object_get(c, "lost"));
		h->reconnects = json_number_value(json_object_get(c, "reconnects"));
		h->connect_failures = json_number_value(json_object_get(c, "connect_failures"));
		h->logon_failures = json_number_value(json_object_get(c, "logon_failures"));
		h->server_restarts = (int)json_integer_value(json_object_get(c, "server_restarts"));
	}
	const json_t *fc = json_object_get(j, "failed_actions_by_cause");
	json_array_foreach(fc, i, f)
	{
		if (h->nfail_causes >= MB_RUN_FAIL_CAUSES)
			break;
		struct mb_fail_cause *o = &h->fail_causes[h->nfail_causes++];
		const char *cause = json_string_value(json_object_get(f, "cause"));
		const char *what = json_string_value(json_object_get(f, "what"));
		snprintf(o->cause, sizeof(o->cause), "%s", cause ? cause : "");
		snprintf(o->what, sizeof(o->what), "%s", what ? what : "");
		o->n = json_number_value(json_object_get(f, "n"));
	}
}

/* ---- JSON ---- */

static json_t *latency_json(const struct mb_latency *l)
{
	if (!l->has)
		return json_null();
	return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f}", "count", (json_int_t)l->count, "mean_ms",
			 l->mean_ms, "p50_ms", l->p50_ms, "p95_ms", l->p95_ms, "p99_ms", l->p99_ms,
			 "max_ms", l->max_ms);
}

void mb_summary_compare(struct mb_run_summary *s, const struct mb_scenario *sc, int col)
{
	struct mb_run_comparison *c = &s->comparison;
	memset(c, 0, sizeof(*c));
	if (col < 0 || col >= sc->column_count)
		return;
	const struct mb_published_column *pc = &sc->columns[col];
	c->has = true;
	snprintf(c->column, sizeof(c->column), "%s", pc->id);
	c->mode = mb_norm_mode_of(s->users, s->accel);
	c->user_equivalents = s->users * s->accel;
	c->published_users = mb_norm_published_users(sc, pc);
	for (int id = 0; id < MB_PUBLISHED_COUNT; id++)
		mb_norm_compare_run((enum mb_counter_id)id, c->mode, s->avg, s->has,
				    c->user_equivalents, sc, pc, &c->row[id]);
}

static const char *norm_kind_str(enum mb_norm_kind k)
{
	switch (k) {
	case MB_NORM_BASE:
		return "base";
	case MB_NORM_PER_UE:
		return "per_1000_ue";
	case MB_NORM_AS_IS:
		return "as_measured";
	case MB_NORM_CACHE_RATIO:
		return "cache_to_data_ratio";
	default:
		return "not_comparable";
	}
}

static json_t *comparison_json(const struct mb_run_comparison *c)
{
	if (!c->has)
		return json_null();
	json_t *rows = json_object();
	for (int id = 0; id < MB_PUBLISHED_COUNT; id++) {
		const struct mb_norm_cmp *r = &c->row[id];
		bool figs = r->kind == MB_NORM_PER_UE || r->kind == MB_NORM_AS_IS ||
			    r->kind == MB_NORM_CACHE_RATIO;
		json_object_set_new(
		    rows, mb_counters[id].key,
		    json_pack("{s:s,s:o,s:o,s:o,s:o}", "compared", norm_kind_str(r->kind), "run",
			      num_or_null(figs && r->has_ratio, r->run), "published",
			      num_or_null(figs && r->has_ratio, r->published), "ratio",
			      num_or_null(r->has_ratio, r->ratio), "reason",
			      r->reason && !figs ? json_string(r->reason) : json_null()));
	}
	return json_pack("{s:s,s:s,s:f,s:f,s:o}", "column", c->column, "normalisation",
			 mb_norm_mode_str(c->mode), "user_equivalents", c->user_equivalents,
			 "published_users", c->published_users, "rows", rows);
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
	json_t *par = json_pack("{s:i,s:f,s:f,s:b,s:f,s:f,s:f,s:b}", "users", s->users, "scale",
				s->scale, "accel", s->accel, "compression", s->compression,
				"duration_s", s->duration_s, "warmup_s", s->warmup_s, "measured_s",
				s->measured_s, "storage_test", s->storage_test);
	json_object_set_new(par, "cache_mb", num_or_null(s->cache_mb > 0, s->cache_mb));
	json_object_set_new(par, "seed", s->seed >= 0 ? json_integer(s->seed) : json_null());
	json_object_set_new(
	    par, "first_downloads",
	    !s->has_first_downloads
		? json_null()
		: json_pack("{s:I,s:o}", "users", (json_int_t)s->first_downloads, "all_done_s",
			    num_or_null(s->first_downloads_s >= 0, s->first_downloads_s)));
	json_object_set_new(root, "parameters", par);
	json_object_set_new(root, "data",
			    !s->data.has
				? json_null()
				: json_pack("{s:s,s:f,s:f,s:s,s:i,s:i,s:i}", "start",
					    s->data.reused     ? "reused"
					    : s->data.restored ? "restored"
							       : "saved",
					    "bytes", s->data.bytes, "db_bytes", s->data.db_bytes,
					    "fingerprint", s->data.fingerprint, "linked_files",
					    s->data.links, "reflinked_files", s->data.reflinks,
					    "copied_files", s->data.copies));
	/* the machine that wrote the summary is the one the run measured */
	char machine[512];
	if (mb_machine_string(machine, sizeof(machine)))
		snprintf(machine, sizeof(machine), "n/a");
	json_object_set_new(root, "header",
			    json_pack("{s:s,s:s,s:s,s:s,s:o}", "platform", s->platform, "machine",
				      machine, "engine", s->engine, "client_mode", s->client_mode,
				      "smt", s->smt < 0 ? json_null() : json_boolean(s->smt)));
	json_object_set_new(root, "target",
			    json_pack("{s:s,s:b,s:o}", "target",
				      s->target[0] ? s->target : "mbstore", "embedded",
				      s->embedded || !s->target[0], "unmeasured",
				      s->unmeasured[0] ? json_string(s->unmeasured) : json_null()));
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
				    json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "scheduled",
					      num_or_null(a->has_counts, a->scheduled), "done",
					      num_or_null(a->has_counts, a->done), "failed",
					      num_or_null(a->has_counts, a->failed), "cut",
					      num_or_null(a->has_counts, a->cut), "per_user_day",
					      num_or_null(a->has_per_user_day, a->per_user_day),
					      "latency", latency_json(&a->latency)));
		if (a->unsupported)
			json_object_set_new(json_object_get(acts, mb_actions[i].key), "supported",
					    json_string("not supported by the target"));
	}
	json_object_set_new(root, "actions", acts);
	json_object_set_new(root, "comparison", comparison_json(&s->comparison));
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
	json_object_set_new(
	    root, "thresholds",
	    json_pack("{s:o,s:{s:f,s:f,s:s}}", "counters", th, "storage", "db_read_avg_ms_max",
		      s->thresholds.counter[MB_C_STRESS_READ_MS].value, "log_write_avg_ms_max",
		      s->thresholds.counter[MB_C_STRESS_LOG_MS].value, "verdict",
		      mb_verdict_str(s->storage_verdict)));
	json_object_set_new(root, "verdict", json_string(mb_verdict_str(s->overall)));
	json_object_set_new(root, "failed", json_boolean(s->failed));
	json_object_set_new(root, "failure", s->failed ? json_string(s->failure) : json_null());
	json_object_set_new(root, "reason", json_string(s->reason));
	json_object_set_new(root, "health", health_json(&s->health));
	json_t *load = mb_load_ranks_json(&s->load);
	if (load) {
		char desc[400];
		mb_load_ranks_desc(&s->load, desc, sizeof(desc));
		json_object_set_new(json_object_get(root, "header"), "load", json_string(desc));
		json_object_set_new(root, "load", load);
		json_object_set_new(root, "invalid",
				    s->invalid ? json_string(s->invalid_why) : json_null());
	}
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
	bool has_cache = false, has_seed = false;
	double seed = -1;
	if (rd_num(p, "cache_mb", &has_cache, &out->cache_mb) ||
	    rd_num(p, "seed", &has_seed, &seed))
		WHY("parameters: a field is not a number");
	out->seed = has_seed ? (long)seed : -1;
	out->compression = json_is_true(json_object_get(p, "compression"));
	out->storage_test = json_is_true(json_object_get(p, "storage_test"));
	const json_t *h = json_object_get(j, "header");
	rd_str(h, "platform", out->platform, sizeof(out->platform));
	rd_str(h, "engine", out->engine, sizeof(out->engine));
	rd_str(h, "client_mode", out->client_mode, sizeof(out->client_mode));
	const json_t *smt = json_object_get(h, "smt");
	out->smt = json_is_boolean(smt) ? json_is_true(smt) : -1;
	const json_t *tg =
	    json_object_get(j, "target"); /* absent before targets: the embedded store */
	rd_str(tg, "target", out->target, sizeof(out->target));
	rd_str(tg, "unmeasured", out->unmeasured, sizeof(out->unmeasured));
	out->embedded = !tg || json_is_true(json_object_get(tg, "embedded"));
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
		    rd_num(a, "cut", NULL, &f->cut) ||
		    rd_num(a, "per_user_day", &f->has_per_user_day, &f->per_user_day) ||
		    rd_latency(json_object_get(a, "latency"), &f->latency))
			WHY("actions: malformed");
		f->unsupported = json_is_string(json_object_get(a, "supported"));
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
	/* an older run's storage limits ("< X"), unless its counters have them */
	static const char *const skeys[] = {"db_read_avg_ms_max", "log_write_avg_ms_max"};
	static const enum mb_counter_id sids[] = {MB_C_STRESS_READ_MS, MB_C_STRESS_LOG_MS};
	for (int k = 0; k < 2; k++) {
		struct mb_threshold *st = &out->thresholds.counter[sids[k]];
		double v = 0;
		if (!json_object_get(thc, mb_counters[sids[k]].key) &&
		    !rd_num(ts, skeys[k], NULL, &v))
			*st = v > 0 ? (struct mb_threshold){MB_CMP_LT, v}
				    : (struct mb_threshold){MB_CMP_NONE, 0};
	}
	out->failed = json_is_true(json_object_get(j, "failed"));
	rd_str(j, "failure", out->failure, sizeof(out->failure));
	health_from_json(json_object_get(j, "health"), &out->health);
	mb_load_ranks_from_json(json_object_get(j, "load"), &out->load);
	out->invalid = json_is_string(json_object_get(j, "invalid"));
	rd_str(j, "invalid", out->invalid_why, sizeof(out->invalid_why));
	mb_summary_evaluate(out);
	return 0;
}

int mb_json_write_file(const json_t *j, const char *path)
{
	char tmp[MB_PATH_MAX + 128];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return MB_EIO;
	if (json_dump_file(j, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) || rename(tmp, path)) {
		unlink(tmp);
		return MB_EIO;
	}
	return 0;
}

int mb_summary_write(const struct mb_run_summary *s, const char *path)
{
	json_t *j = mb_summary_to_json(s);
	if (!j)
		return MB_ENOMEM;
	int rc = mb_json_write_file(j, path);
	json_decref(j);
	return rc;
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
