/* replica.c: a cached-mode user's local replica (see replica.h).
 * Invariant: items[0..n) of a folder have distinct message ids. */
#include "load/replica.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int mb_replica_create(struct mb_replica **out)
{
	struct mb_replica *r = calloc(1, sizeof(*r));
	if (!r)
		return MB_ENOMEM;
	static const uint32_t fixed[] = {2, 3, 4, 5, 6}; /* Inbox .. Contacts */
	for (int i = 0; i < MB_RSLOT_FIRST_USER; i++)
		r->f[i].local = fixed[i];
	r->nfolders = MB_RSLOT_FIRST_USER;
	/* the first download: the headers of every folder the replica knows
	 * (mb_replica_slot adds the user folders the logon names) */
	r->dirty = (1u << MB_RSLOT_FIRST_USER) - 1;
	*out = r;
	return 0;
}

void mb_replica_destroy(struct mb_replica *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nfolders; i++)
		free(r->f[i].items);
	free(r);
}

int mb_replica_slot(struct mb_replica *r, uint32_t local)
{
	for (int i = 0; i < r->nfolders; i++)
		if (r->f[i].local == local)
			return i;
	if (r->nfolders >= MB_REPLICA_MAX_FOLDERS)
		return MB_EFULL;
	r->f[r->nfolders].local = local;
	if (!r->synced)
		r->dirty |= 1u << r->nfolders;
	return r->nfolders++;
}

static long find(const struct mb_rfolder *f, uint64_t mid)
{
	for (uint32_t i = 0; i < f->n; i++)
		if (f->items[i].mid == mid)
			return (long)i;
	return -1;
}

int mb_replica_upsert(struct mb_replica *r, int slot, uint64_t mid, uint32_t flags, uint32_t size,
		      int32_t who)
{
	if (slot < 0 || slot >= r->nfolders)
		return MB_EINVAL;
	struct mb_rfolder *f = &r->f[slot];
	long i = find(f, mid);
	if (i >= 0) {
		f->items[i].flags = flags;
		if (size)
			f->items[i].size = size;
		if (who >= 0)
			f->items[i].who = who;
		return 0;
	}
	if (f->n == f->cap) {
		uint32_t cap = f->cap ? f->cap * 2 : 16;
		struct mb_ritem *p = realloc(f->items, cap * sizeof(*p));
		if (!p)
			return MB_ENOMEM;
		f->items = p;
		f->cap = cap;
	}
	f->items[f->n++] = (struct mb_ritem){mid, flags, size, who};
	return 0;
}

bool mb_replica_holds(const struct mb_replica *r, int slot, uint64_t mid)
{
	return slot >= 0 && slot < r->nfolders && find(&r->f[slot], mid) >= 0;
}

bool mb_replica_remove(struct mb_replica *r, int slot, uint64_t mid)
{
	if (slot < 0 || slot >= r->nfolders)
		return false;
	struct mb_rfolder *f = &r->f[slot];
	long i = find(f, mid);
	if (i < 0)
		return false;
	f->items[i] = f->items[--f->n];
	return true;
}

size_t mb_replica_bytes(const struct mb_replica *r)
{
	size_t n = sizeof(*r);
	for (int i = 0; i < r->nfolders; i++)
		n += r->f[i].cap * sizeof(struct mb_ritem);
	return n;
}
