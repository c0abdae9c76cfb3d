/* norm.c: the normalisation rules of the published rows (see norm.h). */
#include "report/norm.h"

#include <math.h>
#include <stdio.h>

static const struct mb_norm_rule rules[MB_PUBLISHED_COUNT] = {
    [MB_C_USERS] = {MB_NORM_BASE, "the base: user-equivalents = users x accel"},
    [MB_C_PROCESSOR_PCT] = {MB_NORM_NOT_COMPARABLE,
			    "a share of other processors (4 x P4 Xeon 1.4 GHz)"},
    [MB_C_CONTEXT_SWITCHES] = {MB_NORM_PER_UE, NULL},
    [MB_C_LOCAL_DELIVERY] = {MB_NORM_PER_UE, NULL},
    [MB_C_NETWORK] = {MB_NORM_PER_UE, NULL},
    [MB_C_DB_TRANSFERS] = {MB_NORM_PER_UE, NULL},
    [MB_C_LOG_WRITES] = {MB_NORM_PER_UE, NULL},
    [MB_C_DISK_MB] = {MB_NORM_PER_UE, NULL},
    [MB_C_DB_CACHE_MB] = {MB_NORM_CACHE_RATIO,
			  "compared by its cache-to-data ratio (cache / database files)"},
    [MB_C_RPC_OPS] = {MB_NORM_PER_UE, NULL},
    [MB_C_RPC_REQUESTS] = {MB_NORM_NOT_COMPARABLE, "operations/s x service time"},
    [MB_C_CLIENT_LATENCY] = {MB_NORM_AS_IS, NULL},
    [MB_C_STORE_VIRTUAL_MB] = {MB_NORM_NOT_COMPARABLE,
			       "a 64-bit process (store.exe: 32-bit, 3 GB)"},
};

const struct mb_norm_rule *mb_norm_rule(enum mb_counter_id id)
{
	return (int)id >= 0 && (int)id < MB_PUBLISHED_COUNT ? &rules[id] : NULL;
}

enum mb_norm_mode mb_norm_mode_of(int users, double accel)
{
	return users > 0 && accel > 0 ? MB_NORM_MODE_PER_UE : MB_NORM_MODE_RAW;
}

const char *mb_norm_mode_str(enum mb_norm_mode m)
{
	return m == MB_NORM_MODE_PER_UE ? "per 1,000 user-equivalents" : "raw (as measured)";
}

void mb_norm_compare(enum mb_counter_id id, enum mb_norm_mode m, bool has_mine, double mine,
		     double ue, bool has_pub, double pub, double pub_users, struct mb_norm_cmp *out)
{
	const struct mb_norm_rule *r = mb_norm_rule(id);
	out->kind = r ? r->kind : MB_NORM_NOT_COMPARABLE;
	out->reason = r ? r->reason : "not a published row";
	out->has_ratio = false;
	out->run = mine;
	out->published = pub;
	out->ratio = 0;
	if (m == MB_NORM_MODE_RAW) {
		out->kind = MB_NORM_AS_IS;
		out->reason = NULL;
	}
	if (out->kind == MB_NORM_CACHE_RATIO) /* needs the run: mb_norm_compare_run */
		out->kind = MB_NORM_NOT_COMPARABLE;
	if (out->kind == MB_NORM_BASE || out->kind == MB_NORM_NOT_COMPARABLE)
		return;
	if (out->kind == MB_NORM_PER_UE) {
		if (!(ue > 0) || !(pub_users > 0))
			return;
		out->run = mine / ue * 1000.0;
		out->published = pub / pub_users * 1000.0;
	}
	if (!has_mine || !has_pub || !isfinite(out->run) || out->published == 0)
		return;
	out->ratio = out->run / out->published;
	out->has_ratio = true;
}

double mb_norm_published_users(const struct mb_scenario *sc, const struct mb_published_column *pc)
{
	return pc->has[MB_C_USERS] ? pc->value[MB_C_USERS] : sc->users;
}

void mb_norm_compare_run(enum mb_counter_id id, enum mb_norm_mode m, const double *v,
			 const bool *has, double ue, const struct mb_scenario *sc,
			 const struct mb_published_column *pc, struct mb_norm_cmp *out)
{
	double pu = mb_norm_published_users(sc, pc);
	const struct mb_norm_rule *r = mb_norm_rule(id);
	if (m == MB_NORM_MODE_PER_UE && r && r->kind == MB_NORM_CACHE_RATIO) {
		/* the configured cache over the database files, in %, against
		 * the published cache over users x average mailbox */
		double pub_data = pu * sc->mailbox_mb;
		bool hp = pc->has[id] && pub_data > 0;
		double pub = hp ? 100.0 * pc->value[id] / pub_data : 0;
		bool hm = has[MB_C_CACHE_DATA_PCT];
		double mine = hm ? v[MB_C_CACHE_DATA_PCT] : 0;
		out->kind = MB_NORM_CACHE_RATIO;
		out->reason = r->reason;
		out->run = mine;
		out->published = pub;
		out->has_ratio = hm && hp && pub > 0;
		out->ratio = out->has_ratio ? mine / pub : 0;
		return;
	}
	mb_norm_compare(id, m, has[id], v[id], ue, pc->has[id], pc->value[id], pu, out);
}

void mb_norm_cell(const struct mb_norm_cmp *c, char *buf, size_t len)
{
	if (c->kind == MB_NORM_BASE)
		snprintf(buf, len, "base");
	else if (c->kind == MB_NORM_NOT_COMPARABLE)
		snprintf(buf, len, "n/c");
	else if (!c->has_ratio)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.2fx", c->ratio);
}
