/* compare.c: the comparison table model (see compare.h). */
#include "report/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "core/error.h"
#include "db/db.h"
#include "report/norm.h"

void mb_compare_engine_str(const struct mb_scenario *sc, char *buf, size_t len)
{
	/* as the cache caps a write */
	char wr[48];
	uint32_t pages = mb_write_pages((uint32_t)sc->write_max_kb, (uint32_t)sc->page_kb);
	if (pages == 1)
		snprintf(wr, sizeof(wr), "a page per write");
	else
		snprintf(wr, sizeof(wr), "writes up to %u KB", pages * (uint32_t)sc->page_kb);
	snprintf(buf, len, "%s, %d KB pages, %s, %d db/%d sg", PACKAGE_STRING, sc->page_kb, wr,
		 sc->databases, sc->storage_groups);
}

void mb_compare_mode_str(enum mb_client_mode mode, bool compression, char *buf, size_t len)
{
	snprintf(buf, len, "%s, compression %s", mode == MB_MODE_CACHED ? "cached" : "online",
		 compression ? "on" : "off");
}

static const char *smt_str(int smt) { return smt < 0 ? "n/a" : smt ? "on" : "off"; }

void mb_compare_column_legend(const struct mb_scenario *sc, int col, char *buf, size_t len)
{
	if (col < 0 || col >= sc->column_count) {
		if (len)
			buf[0] = '\0';
		return;
	}
	const struct mb_published_column *pc = &sc->columns[col];
	/* the heading, then the header fields it does not already name */
	const char *fields[3] = {pc->platform, pc->engine, pc->client};
	size_t o = 0;
	int n = snprintf(buf, len, "%s", pc->heading[0] ? pc->heading : pc->id);
	o = n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
	const char *sep = "; ";
	for (int i = 0; i < 3 && o < len; i++) {
		if (!fields[i][0] || strstr(pc->heading, fields[i]))
			continue;
		n = snprintf(buf + o, len - o, "%s%s", sep, fields[i]);
		o = n < 0 ? o : o + (size_t)n < len ? o + (size_t)n : len - 1;
		sep = ", ";
	}
	if (pc->smt == 1 && !strstr(pc->heading, "Hyper-Threading") &&
	    !strstr(pc->heading, "SMT") && o < len)
		snprintf(buf + o, len - o, ", SMT on");
}

void mb_compare_run_desc(const struct mb_compare_input *in, char *buf, size_t len)
{
	char who[128] = "";
	if (in->users > 0)
		snprintf(who, sizeof(who), "; %d users, scale %g, accel x%g", in->users, in->scale,
			 in->accel);
	snprintf(buf, len, "%s; %s; %s; SMT %s%s%s%s", in->platform ? in->platform : "n/a",
		 in->engine ? in->engine : "n/a", in->client_mode ? in->client_mode : "n/a",
		 smt_str(in->smt), who, in->load && in->load[0] ? "; " : "",
		 in->load ? in->load : "");
}

/* A run's header cell in the published cells' terms (the legend has the
 * full text): platform without the machine ("Linux 6.1.0"), engine
 * without its storage details ("mailbench 0.1.0"), "compr." for
 * compression.  NULL or empty: "n/a". */
static void header_cell(int h, const char *full, char *buf, size_t len)
{
	if (!full || !full[0]) {
		snprintf(buf, len, "n/a");
		return;
	}
	snprintf(buf, len, "%s", full);
	if (h == 0) {
		char *sp1 = strchr(buf, ' ');
		char *last = strrchr(buf, ' ');
		if (sp1 && last != sp1)
			*last = '\0';
	} else if (h == 1) {
		char *comma = strchr(buf, ',');
		if (comma && comma != buf)
			*comma = '\0';
	} else if (h == 2) {
		char *at = strstr(buf, ", compression ");
		if (at)
			snprintf(at, len - (size_t)(at - buf), ", compr. %s",
				 full + (at - buf) + strlen(", compression "));
	}
}

int mb_compare_build(const struct mb_compare_input *in, struct mb_table **out)
{
	const struct mb_scenario *sc = in->sc;
	int npub = sc->column_count;
	int ncols = npub;
	int c_pin = -1, c_live = -1, c_avg = -1, c_diff = -1, c_thr;
	if (in->pinned)
		c_pin = ncols++;
	if (in->live)
		c_live = ncols++;
	if (in->avg)
		c_avg = ncols++;
	if (in->diff_col >= 0 && in->diff_col < npub)
		c_diff = ncols++;
	c_thr = ncols++;
	struct mb_table *t;
	int rc = mb_table_create(ncols, &t);
	if (rc)
		return rc;
	char sh[MB_TABLE_CELL_MAX], lg[2048], buf[MB_TABLE_CELL_MAX], desc[1024];
	mb_compare_run_desc(in, desc, sizeof(desc));
	for (int c = 0; c < npub; c++) {
		snprintf(sh, sizeof(sh), "(%s)", sc->columns[c].id);
		mb_compare_column_legend(sc, c, lg, sizeof(lg));
		mb_table_set_heading(t, c, sh, lg);
		mb_table_set_priority(t, c, c == in->diff_col ? 60 : 50 - c);
	}
	if (c_pin >= 0) {
		char label[128];
		mb_summary_label(in->pinned, label, sizeof(label));
		const struct mb_run_summary *p = in->pinned;
		snprintf(
		    lg, sizeof(lg),
		    "pinned: saved run %s (%s): %s; %s; %s; SMT %s; %d users, scale %g, accel x%g",
		    p->id, label, p->platform, p->engine, p->client_mode, smt_str(p->smt), p->users,
		    p->scale, p->accel);
		if (p->load.ranks > 0) { /* a run on several load machines names them */
			char ld[320];
			mb_load_ranks_desc(&p->load, ld, sizeof(ld));
			size_t u = strlen(lg);
			snprintf(lg + u, sizeof(lg) - u, "; load: %s", ld);
		}
		mb_table_set_heading(t, c_pin, "pinned", lg);
		mb_table_set_priority(t, c_pin, 65);
	}
	if (c_live >= 0) {
		snprintf(lg, sizeof(lg), "live: this run, last 10 seconds: %s", desc);
		mb_table_set_heading(t, c_live, "live", lg);
		mb_table_set_priority(t, c_live, 100);
	}
	if (c_avg >= 0) {
		if (c_live >= 0)
			snprintf(lg, sizeof(lg), "run avg: this run, average after the warm-up");
		else
			snprintf(lg, sizeof(lg), "run avg: this run, average after the warm-up: %s",
				 desc);
		mb_table_set_heading(t, c_avg, "run avg", lg);
		mb_table_set_priority(t, c_avg, 90);
	}
	enum mb_norm_mode nm = mb_norm_mode_of(in->users, in->accel);
	double ue = in->users * in->accel, pub_users = 0;
	if (c_diff >= 0) {
		const struct mb_published_column *pc = &sc->columns[in->diff_col];
		pub_users = mb_norm_published_users(sc, pc);
		snprintf(sh, sizeof(sh), "vs (%s)", pc->id);
		int n;
		if (nm == MB_NORM_MODE_PER_UE)
			n = snprintf(lg, sizeof(lg),
				     "vs (%s): this run (average, else live) / published (%s), "
				     "rates per 1,000 user-equivalents (%g users x accel %g = "
				     "%g UE) against per 1,000 published users (%g); latency as "
				     "measured; the cache by its cache-to-data ratio",
				     pc->id, pc->id, (double)in->users, in->accel, ue, pub_users);
		else
			n = snprintf(lg, sizeof(lg),
				     "vs (%s): this run (average, else live) / published (%s), "
				     "raw: users and accel unknown",
				     pc->id, pc->id);
		size_t o = n < 0 ? 0 : (size_t)n < sizeof(lg) ? (size_t)n : sizeof(lg) - 1;
		for (int id = 0; nm == MB_NORM_MODE_PER_UE && id < MB_PUBLISHED_COUNT; id++) {
			const struct mb_norm_rule *r = mb_norm_rule((enum mb_counter_id)id);
			if (r->kind != MB_NORM_NOT_COMPARABLE || o >= sizeof(lg) - 1)
				continue;
			n = snprintf(lg + o, sizeof(lg) - o, "; n/c %s: %s", mb_counters[id].label,
				     r->reason);
			o = n < 0 ? o : o + (size_t)n < sizeof(lg) ? o + (size_t)n : sizeof(lg) - 1;
		}
		mb_table_set_heading(t, c_diff, sh, lg);
		mb_table_set_priority(t, c_diff, 80);
	}
	mb_table_set_heading(t, c_thr, "threshold", "threshold: the row's pass/fail threshold");
	/* an empty threshold column is the first to give way */
	bool any_thr = false;
	for (int id = 0; id < MB_PUBLISHED_COUNT; id++)
		any_thr |= in->th->counter[id].cmp != MB_CMP_NONE;
	mb_table_set_priority(t, c_thr, any_thr ? 70 : 0);

	static const char *const hdr[] = {"server platform", "engine", "client mode", "SMT"};
	for (int h = 0; h < 4; h++) {
		int r;
		if ((rc = mb_table_add_row(t, hdr[h], MB_ROW_HEADER, &r)))
			goto fail;
		for (int c = 0; c < npub; c++) {
			const struct mb_published_column *pc = &sc->columns[c];
			const char *v = h == 0	 ? pc->platform
					: h == 1 ? pc->engine
					: h == 2 ? pc->client
						 : smt_str(pc->smt);
			mb_table_set_cell(t, r, c, v);
		}
		char cell[MB_TABLE_CELL_MAX];
		if (c_pin >= 0) {
			const struct mb_run_summary *p = in->pinned;
			header_cell(h,
				    h == 0   ? p->platform
				    : h == 1 ? p->engine
				    : h == 2 ? p->client_mode
					     : smt_str(p->smt),
				    cell, sizeof(cell));
			mb_table_set_cell(t, r, c_pin, cell);
		}
		const char *mine = h == 0   ? in->platform
				   : h == 1 ? in->engine
				   : h == 2 ? in->client_mode
					    : smt_str(in->smt);
		header_cell(h, mine, cell, sizeof(cell));
		if (c_live >= 0)
			mb_table_set_cell(t, r, c_live, cell);
		/* beside the live column the same text again would only take room */
		if (c_avg >= 0)
			mb_table_set_cell(t, r, c_avg,
					  c_live >= 0 ? (h == 0 ? "as live" : "") : cell);
	}
	if (c_diff >= 0) {
		/* which normalisation the vs column is in */
		int r;
		if ((rc = mb_table_add_row(t, "compared", MB_ROW_HEADER, &r)))
			goto fail;
		mb_table_set_cell(t, r, c_diff, nm == MB_NORM_MODE_PER_UE ? "per 1k UE" : "raw");
		int c_run = c_avg >= 0 ? c_avg : c_live;
		if (nm == MB_NORM_MODE_PER_UE && c_run >= 0) {
			char num[32];
			mb_format_number(ue, 0, num, sizeof(num));
			snprintf(buf, sizeof(buf), "%s UE", num);
			mb_table_set_cell(t, r, c_run, buf);
		}
	}
	if ((rc = mb_table_add_row(t, "", MB_ROW_SEPARATOR, NULL)))
		goto fail;
	/* the run's figures the vs column compares: average, else live */
	double mine_v[MB_COUNTER_COUNT];
	bool mine_has[MB_COUNTER_COUNT];
	for (int id = 0; id < MB_COUNTER_COUNT; id++) {
		bool lh = in->live && in->live_has[id];
		bool ah = in->avg && in->avg_has[id];
		mine_has[id] = ah || lh;
		mine_v[id] = ah ? in->avg[id] : lh ? in->live[id] : 0;
	}
	for (int id = 0; id < MB_PUBLISHED_COUNT; id++) {
		int r;
		if ((rc = mb_table_add_row(t, mb_compare_label(id, in->protocol), MB_ROW_NORMAL,
					   &r)))
			goto fail;
		mb_table_set_tag(t, r, id);
		for (int c = 0; c < npub; c++) {
			const struct mb_published_column *pc = &sc->columns[c];
			mb_format_value((enum mb_counter_id)id, pc->has[id], pc->value[id], buf,
					sizeof(buf));
			mb_table_set_cell(t, r, c, buf);
		}
		if (c_pin >= 0) {
			mb_format_value((enum mb_counter_id)id, in->pinned->has[id],
					in->pinned->avg[id], buf, sizeof(buf));
			mb_table_set_cell(t, r, c_pin, buf);
		}
		bool lh = in->live && in->live_has[id];
		bool ah = in->avg && in->avg_has[id];
		if (c_live >= 0) {
			mb_format_value((enum mb_counter_id)id, lh, lh ? in->live[id] : 0, buf,
					sizeof(buf));
			mb_table_set_cell(t, r, c_live, buf);
		}
		if (c_avg >= 0) {
			mb_format_value((enum mb_counter_id)id, ah, ah ? in->avg[id] : 0, buf,
					sizeof(buf));
			mb_table_set_cell(t, r, c_avg, buf);
		}
		if (c_diff >= 0) {
			const struct mb_published_column *pc = &sc->columns[in->diff_col];
			struct mb_norm_cmp cmp;
			mb_norm_compare_run((enum mb_counter_id)id, nm, mine_v, mine_has, ue, sc,
					    pc, &cmp);
			mb_norm_cell(&cmp, buf, sizeof(buf));
			mb_table_set_cell(t, r, c_diff, buf);
		}
		mb_threshold_text(&in->th->counter[id], (enum mb_counter_id)id, buf, sizeof(buf));
		mb_table_set_cell(t, r, c_thr, buf);
		/* live when measured; else (e.g. the run has stopped) the average */
		enum mb_verdict v;
		if (lh)
			v = mb_threshold_eval(&in->th->counter[id], lh, in->live[id]);
		else
			v = mb_threshold_eval(&in->th->counter[id], ah, ah ? in->avg[id] : 0);
		mb_table_set_verdict(t, r, v);
	}
	*out = t;
	return 0;
fail:
	mb_table_destroy(t);
	return rc;
}

const char *mb_compare_label(enum mb_counter_id id, bool protocol)
{
	if (protocol && id == MB_C_RPC_OPS)
		return "protocol commands/s";
	return mb_counters[id].label;
}

bool mb_compare_protocol_target(const char *target)
{
	return target && (!strncmp(target, "imap", 4) || !strncmp(target, "lab:", 4));
}

bool mb_compare_target_compresses(const char *target)
{
	return !mb_compare_protocol_target(target) && !(target && !strcmp(target, "null"));
}
