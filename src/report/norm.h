/* norm.h: how a run's figure is set against a published figure.
 *
 * The published tables are 8,000 users on a 2003 server; a run here is N
 * simulated users at acceleration A, which issue the actions of N x A
 * users: N x A user-equivalents (UE).  Rows that grow with the number of
 * users (rates: network, RPC operations, local delivery, disk transfers,
 * log writes, disk bytes, context switches) are compared per 1,000 UE
 * against the published figure per 1,000 users.  Latency does not scale
 * and is compared as it is.  The other gauges (processor time, cache size,
 * RPC requests, virtual bytes) cannot be set against the published server
 * and are marked not comparable, each with its reason; the cache row is
 * compared by its cache-to-data ratio (the configured cache over the
 * database files, against 896 MB over 8,000 x 25 MB); the users row is
 * the base of the normalisation.  Without a UE figure (users or accel
 * unknown) everything is compared raw and the table says so.
 *
 * One rule per published row (MB_PUBLISHED_COUNT), in norm.c.
 */
#ifndef MB_REPORT_NORM_H
#define MB_REPORT_NORM_H

#include <stdbool.h>
#include <stddef.h>

#include "core/counters.h"
#include "core/scenario.h"

enum mb_norm_kind {
	MB_NORM_BASE,		/* the users row: the normalisation's base */
	MB_NORM_PER_UE,		/* per 1,000 UE vs published per 1,000 users */
	MB_NORM_AS_IS,		/* compared as measured */
	MB_NORM_NOT_COMPARABLE, /* with a reason */
	MB_NORM_CACHE_RATIO,	/* the cache row: cache-to-data ratio vs published */
};

enum mb_norm_mode {
	MB_NORM_MODE_PER_UE, /* rates per 1,000 user-equivalents */
	MB_NORM_MODE_RAW,    /* UE unknown: every row as measured */
};

struct mb_norm_rule {
	enum mb_norm_kind kind;
	const char *reason; /* why not comparable (or what the base is) */
};

/* The rule of a published row (id < MB_PUBLISHED_COUNT); NULL otherwise. */
const struct mb_norm_rule *mb_norm_rule(enum mb_counter_id id);

/* The mode a run gets: per UE when users > 0 and accel > 0. */
enum mb_norm_mode mb_norm_mode_of(int users, double accel);
/* "per 1,000 user-equivalents" / "raw (as measured)". */
const char *mb_norm_mode_str(enum mb_norm_mode m);

/* One row's comparison. */
struct mb_norm_cmp {
	enum mb_norm_kind kind; /* in force (raw mode: AS_IS for every row) */
	bool has_ratio;		/* ratio computed (both sides measured, comparable) */
	double run, published;	/* the two figures compared (per 1,000 for PER_UE) */
	double ratio;		/* run / published */
	const char *reason;	/* not comparable: why */
};

/* Compare run figure mine (has_mine) with published value pub (has_pub)
 * of row id; ue = users x accel, pub_users the published users (8,000). */
void mb_norm_compare(enum mb_counter_id id, enum mb_norm_mode m, bool has_mine, double mine,
		     double ue, bool has_pub, double pub, double pub_users,
		     struct mb_norm_cmp *out);

/* The same for a whole run: v/has the run's figures (counters table),
 * pc the published column, sc its scenario (published users, mailbox
 * size); ue = users x accel. */
void mb_norm_compare_run(enum mb_counter_id id, enum mb_norm_mode m, const double *v,
			 const bool *has, double ue, const struct mb_scenario *sc,
			 const struct mb_published_column *pc, struct mb_norm_cmp *out);
/* The published column's users (its users row, else the topology's). */
double mb_norm_published_users(const struct mb_scenario *sc, const struct mb_published_column *pc);

/* The vs cell: "0.92x", "n/c" (not comparable), "base", "n/a". */
void mb_norm_cell(const struct mb_norm_cmp *c, char *buf, size_t len);

#endif
