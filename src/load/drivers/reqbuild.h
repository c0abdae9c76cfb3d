/* drivers/reqbuild.h: the request builder of the mbstore driver: the ops
 * of one request batch and the memory they point to (properties, tags,
 * message ids, names, sync changes, strings), in fixed arrays reused for
 * every batch of a load-engine shard.
 *
 * Overflow is loud: a builder that runs out of room records MB_ETOOBIG
 * (sticky: mb__rb_error) and hands out a scratch area, so a step can go on
 * writing without a check at every call; mb__rb_error() != 0 before the
 * batch is sent makes the step fail with that error (the action reports
 * it), and the batch is never sent.  A request for more than a whole array
 * (n above its capacity, or negative) returns NULL: counts that come from
 * data must be checked by the caller.
 *
 *   empty --op/props/...--> filling --all fitted--> send --> empty (reset)
 *                               \--overflow--> failed --reset--> empty
 *
 * Names: mb__rb_* are internals of the load engine (docs/ARCHITECTURE.md,
 * "Names"); only drivers/mbstore.c and its unit test use them.
 */
#ifndef MB_LOAD_DRIVERS_REQBUILD_H
#define MB_LOAD_DRIVERS_REQBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#define MB_RB_OPS 64
#define MB_RB_PROPS 256
#define MB_RB_STRS 256
#define MB_RB_CHANGES 512
#define MB_RB_POOL 65536 /* strings and byte values (ICS state) */

struct mb__rb {
	struct mb_op ops[MB_RB_OPS];
	int nops;
	struct mb_prop props[MB_RB_PROPS];
	int nprops;
	struct mb_bytes strs[MB_RB_STRS];
	int nstrs;
	uint32_t tags[MB_RB_PROPS];
	int ntags;
	uint64_t mids[MB_PROTO_MAX_IDS];
	int nmids;
	struct mb_sync_change changes[MB_RB_CHANGES];
	int nchanges;
	char pool[MB_RB_POOL];
	size_t npool;
	int err; /* 0, or MB_ETOOBIG since the last reset */
	/* where a full builder's writes go (never sent) */
	struct mb_op spare_op;
	union {
		struct mb_prop props[MB_RB_PROPS];
		struct mb_bytes strs[MB_RB_STRS];
		uint32_t tags[MB_RB_PROPS];
		uint64_t mids[MB_PROTO_MAX_IDS];
		struct mb_sync_change changes[MB_RB_CHANGES];
	} spare;
};

/* Empty the builder (and clear its error). */
void mb__rb_reset(struct mb__rb *rb);
/* 0, or MB_ETOOBIG when something did not fit since the last reset. */
int mb__rb_error(const struct mb__rb *rb);

/* A new op (zeroed, its code set). */
struct mb_op *mb__rb_op(struct mb__rb *rb, uint8_t code);
/* n consecutive entries (uninitialised). */
struct mb_prop *mb__rb_props(struct mb__rb *rb, int n);
uint32_t *mb__rb_tags(struct mb__rb *rb, int n);
uint64_t *mb__rb_mids(struct mb__rb *rb, int n);
struct mb_bytes *mb__rb_strs(struct mb__rb *rb, int n);
struct mb_sync_change *mb__rb_changes(struct mb__rb *rb, int n);
/* n bytes (uninitialised) in the builder's pool; NULL when n is above
 * the whole pool. */
uint8_t *mb__rb_bytes(struct mb__rb *rb, size_t n);
/* A formatted string in the builder's pool; when it does not fit whole,
 * an empty string and MB_ETOOBIG (never a cut or reused string). */
struct mb_bytes mb__rb_printf(struct mb__rb *rb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
