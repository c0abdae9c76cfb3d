/* drivers/null.c: the null target, like fio's null engine: every step
 * completes at once, without I/O and without a connection.  It measures
 * the engine's own overhead (users per core with nothing on the wire) and
 * gives the engine's unit tests a target.
 *
 * Listings return a fixed page of items (ids 1..rows, every other one
 * unread, senders drawn from the simulated users) so that the behaviour
 * model takes its full paths (reads, replies, moves, deletes).
 * Options (target.opts): fail_logons=N fails the first N logons of every
 * user (the engine's retry and backoff run); lose_every=N loses the
 * "connection" after every N-th step (reconnects); spin_us=N burns N
 * microseconds of CPU per step (to saturate a loop on purpose).
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sampler.h"
#include "load/target.h"

#define ROWS_MAX 64

struct null_shard {
	uint64_t ids[ROWS_MAX];
	uint32_t flags[ROWS_MAX];
	int32_t who[ROWS_MAX];
	long fail_logons, lose_every, spin_us;
};

struct null_user {
	uint32_t logons;
	uint32_t steps;
};

static const struct mb_target_opt null_opts[] = {
    {"fail_logons", "0", "fail the first N logons of every user"},
    {"lose_every", "0", "lose the connection after every N-th step (0: never)"},
    {"spin_us", "0", "CPU microseconds burnt per step"},
    {NULL, NULL, NULL},
};

extern const struct mb_target_ops mb_target_null;

static long opt_long(const struct mb_target_env *env, const char *name)
{
	const char *v = mb_target_opt(env, &mb_target_null, name);
	return v ? strtol(v, NULL, 10) : 0;
}

static int null_shard_init(const struct mb_target_env *env, void **out)
{
	struct null_shard *sh = calloc(1, sizeof(*sh));
	if (!sh)
		return MB_ENOMEM;
	sh->fail_logons = opt_long(env, "fail_logons");
	sh->lose_every = opt_long(env, "lose_every");
	sh->spin_us = opt_long(env, "spin_us");
	*out = sh;
	return 0;
}

static void null_shard_fini(void *sh) { free(sh); }

static int null_step(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	struct null_shard *sh = u->shard;
	struct null_user *nu = u->priv;
	if (sh->spin_us > 0) {
		double end = mb_now_s() + sh->spin_us / 1e6;
		while (mb_now_s() < end)
			;
	}
	mb_target_request(u, 0, s->kind, 1);
	mb_target_count_op(u, s->kind);
	mb_target_reply(u, 0);
	if (s->kind == MB_STEP_LOGON && nu->logons++ < (uint32_t)sh->fail_logons)
		return MB_EAUTH;
	if (sh->lose_every > 0 && ++nu->steps % (uint32_t)sh->lose_every == 0 &&
	    s->kind != MB_STEP_LOGON)
		return MB_ECLOSED;
	switch (s->kind) {
	case MB_STEP_LOGON:
		res->count = 4; /* user folders */
		break;
	case MB_STEP_LOGOFF:
		mb_target_logged_off(u);
		break;
	case MB_STEP_LIST_FOLDER:
	case MB_STEP_CALENDAR_RANGE:
	case MB_STEP_LIST_CONTACTS: {
		int n = s->max_rows < ROWS_MAX ? (int)s->max_rows : ROWS_MAX;
		if (n > 20)
			n = 20;
		for (int i = 0; i < n; i++) {
			sh->ids[i] = (uint64_t)i + 1;
			sh->flags[i] = (i & 1) ? MB_ITEM_READ : 0;
			sh->who[i] =
			    u->env->nusers > 0
				? (int32_t)(((uint32_t)i * 7u + u->idx) % (uint32_t)u->env->nusers)
				: -1;
		}
		res->n = n;
		res->ids = sh->ids;
		res->flags = sh->flags;
		res->who = sh->who;
		res->count = (uint32_t)n;
		res->count2 = 2;
		break;
	}
	case MB_STEP_SEND:
		u->st->n.msgs_sent++;
		u->st->n.deliveries += (uint64_t)s->nusers;
		break;
	case MB_STEP_DELETE:
		res->done = (uint32_t)s->nids;
		break;
	default:
		break;
	}
	return 0;
}

static const char *const null_op_names[MB_STEP_KIND_COUNT] = {[MB_STEP_NONE] = "none",
#define MB_X_NOP(id, name) [MB_STEP_##id] = "null." #id,
							      MB_STEP_TABLE(MB_X_NOP)
#undef MB_X_NOP
};

const struct mb_target_ops mb_target_null = {
    .name = "null",
    .help = "completes every step at once, without I/O (the engine's overhead)",
    .actions = (1u << MB_ACTION_COUNT) - 1,
    .flags = MB_TARGET_F_NO_IO | MB_TARGET_F_CACHED,
    .conns = 1,
    .user_size = sizeof(struct null_user),
    .op_names = null_op_names,
    .nops = MB_STEP_KIND_COUNT,
    .steps = MB_STEPS_OPTIONAL,
    .opts = null_opts,
    .shard_init = null_shard_init,
    .shard_fini = null_shard_fini,
    .step = null_step,
};
