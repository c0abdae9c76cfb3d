/* reserve.c: the store's free-space reserve (--min-free-mb).
 *
 * A logged-on client can add content until the disk is full: saves of new
 * messages, submissions (a copy in every recipient database), copies,
 * contacts, ICS imports.  Once the data directory's file system (or the log
 * directory's, when init put the logs elsewhere) has less than the reserve
 * free, such operations fail with MB_ELOWDISK and change nothing; the rest
 * still runs: reads, flag changes of stored messages, moves into Deleted
 * Items and deletes, and the log and checkpoints of the engine, for which
 * the reserve keeps the room.  An operation that would add more than the
 * room left above the reserve is refused too: a draft's save counts what
 * the draft holds; a submission that once for its Sent Items copy, its
 * body and attachments once per recipient database (stored once there for
 * all its recipients, single-instance) and the rest of a row once per
 * recipient it resolves to; a copy the sizes of the messages it copies.  So one client that
 * fills the disk costs the others their new mail, not their storage group
 * (a write that finds the disk full puts the whole group in the ERROR
 * state, groups.c).
 *
 * The free space is looked up through the engine's I/O layer (the
 * fault-injecting vfs answers it under a "low-disk" fault), less the
 * database cache's dirty pages (bytes on their way to the disk), at most
 * every RESERVE_LOOK_NS by whichever worker asks first, by the stats thread every
 * second when there is a stats stream, and by the control thread after a
 * fault changes it; one look at a time (look_mu), so the last stored is
 * the latest.  At a look that crosses the reserve the store says so on
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

#define RESERVE_LOOK_NS (100ll * 1000 * 1000)

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
	/* one look at a time, so the last to run is the last to store */
	pthread_mutex_lock(&r->look_mu);
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
		pthread_mutex_unlock(&r->look_mu);
		return;
	}
	/* the database cache's dirty pages are bytes on their way to the disk
	 * (some of them overwrite pages already there: counted all the same) */
	struct mb_cache_stats cs;
	mb_cache_stats_get(st->cache, &cs);
	uint64_t pending = cs.frames ? cs.dirty_pages * (cs.bytes_in_use / cs.frames) : 0;
	atomic_store(&r->free, least);
	atomic_store(&r->pending, pending);
	atomic_store(&r->known, true);
	least = least > pending ? least - pending : 0;
	bool low = r->min_free && least < r->min_free;
	if (atomic_exchange(&r->low, low) != low) {
		if (low)
			fprintf(stderr,
				"mailbench store: %s: %llu MiB free, below the reserve of %llu "
				"MiB (--min-free-mb): new content is refused (MB_ELOWDISK); "
				"reads, flags, moves to Deleted Items and deletes go on\n",
				r->paths[at], (unsigned long long)(least >> 20),
				(unsigned long long)(r->min_free >> 20));
		else
			fprintf(stderr,
				"mailbench store: %llu MiB free again, above the reserve of %llu "
				"MiB: new content is accepted\n",
				(unsigned long long)(least >> 20),
				(unsigned long long)(r->min_free >> 20));
	}
	pthread_mutex_unlock(&r->look_mu);
}

int mb__reserve_check(struct mb_store *st, uint64_t bytes)
{
	struct disk_reserve *r = &st->reserve;
	if (!r->min_free || !bytes)
		return 0;
	uint64_t now = mb_now_ns(), last = atomic_load(&r->checked_ns);
	if ((int64_t)(now - last) >= RESERVE_LOOK_NS &&
	    atomic_compare_exchange_strong(&r->checked_ns, &last, now))
		mb__reserve_look(st);
	/* below the reserve already, or the bytes would take it there */
	if (atomic_load(&r->known) &&
	    atomic_load(&r->free) < atomic_load(&r->pending) + r->min_free + bytes) {
		atomic_fetch_add(&r->refused, 1);
		return MB_ELOWDISK;
	}
	return 0;
}

/* Whether a value's size is fixed (a flag, a number, a time): an edit of
 * those cannot make a message grow by more than its entries. */
static bool fixed_size(uint32_t tag)
{
	switch (MB_PTAG_TYPE(tag)) {
	case MB_PT_I32:
	case MB_PT_ERROR:
	case MB_PT_BOOL:
	case MB_PT_I64:
	case MB_PT_TIME:
		return true;
	default:
		return false;
	}
}

uint64_t mb__op_adds_content(struct session *s, const struct mb_op *op)
{
	switch (op->code) {
	case MB_OP_SAVE_CHANGES: {
		const struct handle *h = mb__handle_find(s, op->u.save.handle);
		if (!h || (h->kind != H_MESSAGE && h->kind != H_DRAFT))
			return 0; /* fails anyway */
		if (h->kind == H_DRAFT)
			return mb__handle_bytes(h);
		for (uint16_t i = 0; i < h->nprops; i++)
			if (!fixed_size(h->props[i].p.tag))
				return mb__handle_bytes(h);
		return 0; /* flags and numbers of a stored message */
	}
	case MB_OP_SUBMIT:
		/* a copy for each recipient, once they are resolved
		 * (mb__submit_begin checks them) */
		return 0;
	case MB_OP_CREATE_CONTACT:
		return 1 + mb__props_bytes(op->u.create_contact.props, op->u.create_contact.n);
	case MB_OP_MOVE_COPY:
		/* a copy's size is checked as it is made (op_move_copy); a move
		 * leaves a tombstone, so below the reserve only moves into the
		 * user's Deleted Items (what deleting in Outlook is) go on: each
		 * message once, as moving out of it is refused */
		if (op->u.move_copy.flags & MB_MC_F_COPY)
			return 1;
		return MB_FID_MAILBOX(op->u.move_copy.dst_fid) == s->mailbox &&
			       MB_FID_LOCAL(op->u.move_copy.dst_fid) == MB_FID_DELETED
			   ? 0
			   : 1;
	case MB_OP_SYNC_UPLOAD: {
		uint64_t b = 0;
		for (uint32_t i = 0; i < op->u.sync_up.n; i++) {
			const struct mb_sync_change *c = &op->u.sync_up.changes[i];
			if (c->kind == MB_SYNC_CREATE)
				b += 1 + mb__props_bytes(c->props, c->nprops);
		}
		return b;
	}
	default:
		return 0;
	}
}
