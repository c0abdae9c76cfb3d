/* session_summary.c: the summary of a run (struct mb_run_summary,
 * report.h): built from what session_measure.c gathered (averages after
 * the warm-up, histograms, the load engine's counts), the data state, the
 * target and the thresholds; at the run's end completed with its health
 * (connections, the ack check of a real server or after a fault) and saved
 * in DATA/runs with its series.  Invariants: a summary only reads the
 * session; the final one (s->last) is built once per run, when the run
 * is DONE or FAILED, and is what mb_session_summary returns afterwards
 * (with the thresholds as they are now). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "report/compare.h"
#include "report/session_int.h"

/* The failed actions' causes, most first (at most MB_RUN_FAIL_CAUSES; the
 * rest are left out of the list, not of the failed counts). */
static void fill_fail_causes(const struct mb_load_stats *lx, struct mb_run_health *h)
{
	bool used[MB_LOAD_FAIL_CAUSES] = {false};
	h->nfail_causes = 0;
	while (h->nfail_causes < MB_RUN_FAIL_CAUSES) {
		int best = -1;
		for (int i = 0; i < MB_LOAD_FAIL_CAUSES; i++)
			if (!used[i] && lx->failed_by[i] &&
			    (best < 0 || lx->failed_by[i] > lx->failed_by[best]))
				best = i;
		if (best < 0)
			break;
		used[best] = true;
		struct mb_fail_cause *c = &h->fail_causes[h->nfail_causes++];
		snprintf(c->cause, sizeof(c->cause), "%s", mb_load_fail_cause_name(best));
		snprintf(c->what, sizeof(c->what), "%s", mb_load_fail_cause_text(best));
		c->n = (double)lx->failed_by[best];
	}
}

static void build_summary(const struct mb_session *s, struct mb_run_summary *o)
{
	memset(o, 0, sizeof(*o));
	char stamp[32];
	snprintf(stamp, sizeof(stamp), "%s", s->started);
	/* id: 20261129-211500-online */
	char compact[32];
	size_t k = 0;
	for (const char *q = stamp; *q && k < sizeof(compact) - 1; q++) {
		if (*q == 'T')
			compact[k++] = '-';
		else if (isdigit((unsigned char)*q))
			compact[k++] = *q;
	}
	compact[k] = '\0';
	snprintf(o->id, sizeof(o->id), "%.20s-%.40s", compact, s->sc.name);
	snprintf(o->started, sizeof(o->started), "%s", s->started);
	snprintf(o->scenario, sizeof(o->scenario), "%s", s->sc.name);
	snprintf(o->title, sizeof(o->title), "%s", s->sc.title);
	o->scenario_number = s->sc.number;
	o->mode = s->sc.mode;
	o->users = mb_session_users(s);
	o->scale = mb_session_scale(s);
	o->accel = mb_session_accel(s);
	/* in force: asked, and the target has it */
	o->compression = mb_session_compression(s) && mb_session_compression_applies(s);
	o->duration_s = mb_session_elapsed(s);
	o->warmup_s = mb_session_measure_from(s);
	o->has_first_downloads = s->sc.mode == MB_MODE_CACHED && s->load_t0 > 0;
	o->first_downloads = mb_session_first_downloads(s);
	o->first_downloads_s = s->first_syncs_at > 0 ? s->first_syncs_at - s->load_t0 : -1;
	/* seconds of the store's and the load engine's windows after warm-up */
	o->measured_s = 0;
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		enum mb_counter_source src = mb_counters[i].source;
		if ((src == MB_SRC_STORE || src == MB_SRC_LOAD) && s->wdt[i] > o->measured_s)
			o->measured_s = s->wdt[i];
	}
	o->storage_test = s->stress != NULL || mb_histset_count(s->stress_hists) > 0;
	o->cache_mb = mb_session_cache_mb(s);
	o->seed = mb_session_seed(s);
	if (s->has_data_info) {
		o->data.has = true;
		o->data.reused = s->p.reuse;
		o->data.restored = s->data_info.restored;
		o->data.saved = s->data_info.saved;
		o->data.links = s->data_info.links;
		o->data.reflinks = s->data_info.reflinks;
		o->data.copies = s->data_info.copies;
		o->data.bytes = (double)s->data_info.bytes_data;
		o->data.db_bytes = (double)s->data_info.bytes_db;
		snprintf(o->data.fingerprint, sizeof(o->data.fingerprint), "%s",
			 s->data_info.fingerprint);
	}
	snprintf(o->platform, sizeof(o->platform), "%s", s->platform);
	mb_session_engine(s, o->engine, sizeof(o->engine));
	mb_session_client_mode(s, o->client_mode, sizeof(o->client_mode));
	o->smt = s->smt;
	mb_session_average(s, o->avg, o->has);
	/* the one LoadSim score (core/score.h), the same value as the counter */
	o->has_score = o->has[MB_C_LOADSIM_SCORE_MS];
	o->score_ms = o->avg[MB_C_LOADSIM_SCORE_MS];
	snprintf(o->target, sizeof(o->target), "%s", s->target_str);
	o->embedded = s->embedded;
	snprintf(o->unmeasured, sizeof(o->unmeasured), "%s", s->unmeasured);

	const struct mb_hist *h = mb_histset_find(s->hists_warm, MB_HIST_RPC);
	mb_latency_from_hist(h, &o->rpc_latency);
	struct mb_hist *all = NULL;
	if (mb_hist_create(&all) == 0) {
		mb_histset_merge_prefix(s->hists_warm, MB_HIST_ACTION_PREFIX, all);
		mb_latency_from_hist(all, &o->action_latency);
		mb_hist_destroy(all);
	}
	/* per-user-day figures: counts over the whole run / the load engine's
	 * user-days over the whole run (n/a when it did not report them) */
	double days = s->has_user_days ? s->user_days : 0;
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		struct mb_action_figures *a = &o->actions[i];
		char name[128];
		snprintf(name, sizeof(name), "%s%s", MB_HIST_ACTION_PREFIX, mb_actions[i].key);
		mb_latency_from_hist(mb_histset_find(s->hists_warm, name), &a->latency);
		a->unsupported = (s->unsupported >> i) & 1u;
		if (s->has_x) {
			a->has_counts = true;
			a->scheduled = (double)s->lx->scheduled[i];
			a->done = (double)s->lx->done[i];
			a->failed = (double)s->lx->failed[i];
			a->cut = (double)s->lx->cut[i];
			if (days > 0) {
				a->has_per_user_day = true;
				a->per_user_day = a->done / days;
			}
		}
	}
	if (days > 0 && s->has_msgs_sent) {
		o->has_messages_sent = true;
		o->messages_sent_per_user_day = (double)s->lx->n.msgs_sent / days;
	}
	if (days > 0 && s->has_deliveries) {
		o->has_messages_received = true;
		o->messages_received_per_user_day = (double)s->lx->n.deliveries / days;
	}
	mb_summary_compare(o, &s->sc, s->sc.column_count - 1);
	mb_faults_fill(s->faults, &o->health);
	fill_fail_causes(s->lx, &o->health);
	o->load = s->ranks;
	if (s->mpi) {
		/* one saturated rank makes the run's figures misleading: named */
		mb_load_ranks_saturated(&s->ranks, o->invalid_why, sizeof(o->invalid_why));
		o->invalid = o->invalid_why[0] != '\0';
	}
	o->thresholds = s->th;
	o->failed = s->failed;
	if (s->failed)
		snprintf(o->failure, sizeof(o->failure), "%.1000s",
			 s->fail_msg[0] ? s->fail_msg : s->message);
	mb_summary_evaluate(o);
}

/* A fault the store did not recover from by the end of the run: what the
 * store said (its ERROR state and recovery lines), one message a line. */
static void emit_store_tail(struct mb_session *s)
{
	const struct mb_run_health *h = &s->last.health;
	bool unrecovered = false;
	for (int i = 0; i < h->nfaults; i++)
		unrecovered |= !h->faults[i].has_recovery;
	if (!unrecovered || !s->store_tail[0])
		return;
	mb__emit_msg(s, "a fault without recovery; the store's last lines:");
	for (char *p = s->store_tail; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		mb__emit_msg(s, "  %s", p);
		p = nl ? nl + 1 : NULL;
	}
	s->store_tail[0] = '\0';
}

/* The run is over (DONE or FAILED): its final summary. */
void mb__conclude_run(struct mb_session *s)
{
	build_summary(s, &s->last);
	if (s->has_conn) {
		struct mb_run_health *h = &s->last.health;
		h->has_conn = true;
		h->conn_lost = (double)s->lx->n.connections_lost;
		h->reconnects = (double)s->lx->n.reconnects;
		h->connect_failures = (double)s->lx->n.connect_failures;
		h->logon_failures = (double)s->lx->n.logon_failures;
		h->server_restarts = s->lab_restarts;
	}
	if (s->imap) {
		struct mb_run_health *h = &s->last.health;
		h->ack_checked = s->check_ran;
		h->acks_checked = s->ack_must;
		h->acks_lost = s->ack_missing;
		snprintf(h->ack_note, sizeof(h->ack_note), "%s", s->check_note);
		mb_summary_evaluate(&s->last);
	}
	if (mb_faults_count(s->faults) > 0 && !s->store && !s->imap) {
		/* every write the load saw acknowledged must have survived */
		mb_faults_ack_check(s->p.data_dir, s->ack_log, &s->last.health);
		mb_summary_evaluate(&s->last);
	}
	emit_store_tail(s);
	s->have_last = true;
	if (s->p.save_runs) {
		int rc =
		    mb_summary_save(&s->last, s->p.data_dir, s->saved_path, sizeof(s->saved_path));
		if (rc)
			mb__emit_msg(s, "cannot save the run summary in %s/runs: %s", s->p.data_dir,
				     mb_strerror(rc));
		else
			mb_runseries_attach(s->saved_path, s->series, s->timeline,
					    mb_session_load_offset(s));
		if (!rc && !s->failed)
			mb__emit_msg(s, "load stopped: run %s saved (F6 lists saved runs)",
				     s->last.id);
	} else if (!s->failed) {
		mb__emit_msg(s, "load stopped");
	}
}

int mb_session_summary(const struct mb_session *s, struct mb_run_summary *out)
{
	if (!s->configured)
		return MB_ESTATE;
	if (!mb_session_load_active(s) && s->have_last) {
		*out = s->last;
		out->thresholds = s->th;
		mb_summary_evaluate(out);
		return 0;
	}
	build_summary(s, out);
	return 0;
}

const char *mb_session_saved_path(const struct mb_session *s) { return s->saved_path; }
