/* reserve.c: the store's free-space reserve (--min-free-mb).
 *
 * A logged-on client can add content until the disk is full: saves of new
 * messages, submissions (a copy in every recipient database), copies,
 * contacts, ICS imports.  Once the data directory's file system (or the log
 * directory's, when init put the logs elsewhere) has less than the reserve
 * free, such operations fail with MB_ELOWDISK and change nothing; the rest
 * still runs: reads, flag changes, small edits of stored messages, moves
 * and deletes, and the log and checkpoints of the engine, for which the
 * reserve keeps the room.  So one client that fills the disk costs the
 * others their new mail, not their storage group (a write that finds the
 * disk full puts the whole group in the ERROR state, groups.c).
 *
 * The free space is looked up through the engine's I/O layer (the
 * fault-injecting vfs answers it under a "low-disk" fault), at most every
 * RESERVE_LOOK_NS by whichever worker asks first, and by the stats thread
 * every second.  At a look that crosses the reserve the store says so on
 * stderr, once per crossing.  States:
 *     ok --look: free < reserve--> low --look: free >= reserve--> ok
 * (unknown free space, e.g. a vfs without statvfs, is ok).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "store/ops_int.h"

#define RESERVE_LOOK_NS (100ull * 1000 * 1000)
/* an edit of a stored message larger than this (its pending values) adds
 * content; a read flag, a category or a follow-up flag does not */
#define RESERVE_EDIT_BYTES 4096

void mb__reserve_init(struct mb_store *st)
{
	struct disk_reserve *r = &st->reserve;
	const struct mb_topo_info *ti = mb_topology_info(st->topo);
	r->min_free = (uint64_t)st->o.min_free_mb << 20;
	r->npaths = 0;
	snprintf(r->paths[r->npaths++], sizeof(r->paths[0]), "%s", st->o.data);
	if (ti->log_dir[0])
		snprintf(r->paths[r->npaths++], sizeof(r->paths[0]), "%s", ti->log_dir);
	atomic_store(&r->checked_ns, mb_now_ns());
	mb__reserve_look(st);
	if (r->min_free && !atomic_load(&r->known))
		fprintf(stderr,
			"mailbench store: the free space of %s is not known here: the reserve "
			"(--min-free-mb) is not applied\n",
			st->o.data);
}

void mb__reserve_look(struct mb_store *st)
{
	struct disk_reserve *r = &st->reserve;
	uint64_t least = UINT64_MAX;
	int at = -1;
	for (int i = 0; i < r->npaths; i++) {
		uint64_t f;
		if (!mb_io_free_space(st->io, r->paths[i], &f) && f < least) {
			least = f;
			at = i;
		}
	}
	if (at < 0) {
		atomic_store(&r->known, false);
		atomic_store(&r->low, false);
		return;
	}
	atomic_store(&r->free, least);
	atomic_store(&r->known, true);
	bool low = r->min_free && least < r->min_free;
	if (atomic_exchange(&r->low, low) != low) {
		if (low)
			fprintf(stderr,
				"mailbench store: %s: %llu MiB free, below the reserve of %llu "
				"MiB (--min-free-mb): new content is refused (MB_ELOWDISK); "
				"reads, flags, moves and deletes go on\n",
				r->paths[at], (unsigned long long)(least >> 20),
				(unsigned long long)(r->min_free >> 20));
		else
			fprintf(stderr,
				"mailbench store: %llu MiB free again, above the reserve of %llu "
				"MiB: new content is accepted\n",
				(unsigned long long)(least >> 20),
				(unsigned long long)(r->min_free >> 20));
	}
}

int mb__reserve_check(struct mb_store *st)
{
	struct disk_reserve *r = &st->reserve;
	if (!r->min_free)
		return 0;
	uint64_t now = mb_now_ns(), last = atomic_load(&r->checked_ns);
	if (now - last >= RESERVE_LOOK_NS &&
	    atomic_compare_exchange_strong(&r->checked_ns, &last, now))
		mb__reserve_look(st);
	if (!atomic_load(&r->low))
		return 0;
	atomic_fetch_add(&r->refused, 1);
	return MB_ELOWDISK;
}

bool mb__op_adds_content(struct session *s, const struct mb_op *op)
{
	switch (op->code) {
	case MB_OP_SAVE_CHANGES: {
		const struct handle *h = mb__handle_find(s, op->u.save.handle);
		if (!h)
			return false; /* fails anyway */
		if (h->kind != H_MESSAGE)
			return true; /* a new message */
		size_t b = 0;
		for (uint16_t i = 0; i < h->nprops; i++)
			b += mb__props_bytes(&h->props[i].p, 1);
		return b > RESERVE_EDIT_BYTES;
	}
	case MB_OP_SUBMIT:
	case MB_OP_CREATE_CONTACT:
		return true;
	case MB_OP_MOVE_COPY:
		return (op->u.move_copy.flags & MB_MC_F_COPY) != 0;
	case MB_OP_SYNC_UPLOAD:
		for (uint32_t i = 0; i < op->u.sync_up.n; i++)
			if (op->u.sync_up.changes[i].kind == MB_SYNC_CREATE)
				return true;
		return false;
	default:
		return false;
	}
}
