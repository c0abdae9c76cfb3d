/* replica.h: a cached-mode user's local replica of its mailbox.
 *
 * Per folder: the sync watermark (highest change number seen) and the
 * messages it holds (id, flags, size).  The replica stands for an OST that
 * was primed when the mailbox was initialised (as LoadSim's cached-mode
 * clients start from initialised OSTs): the first logon downloads the
 * folders' headers only (its IdsetGiven names every id); every later new
 * item comes whole, its property list, then its body and attachments
 * in the download context's stream.  They
 * are downloaded (the network cost is real) but not kept, so that a replica stays a few KiB per
 * user; local reads are counted, not served from disk.  Upserts and deletes are idempotent (by
 * message id), so applying a downloaded change that the user already applied locally is harmless;
 * such a change (an item the folder holds) brings its header only, as Outlook never downloads its
 * own uploaded changes again.
 * Slots 0..4 are Inbox, Deleted Items, Sent Items, Calendar and Contacts; user folders follow.
 */
#ifndef MB_LOAD_REPLICA_H
#define MB_LOAD_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MB_REPLICA_MAX_FOLDERS 16

enum {
	MB_RSLOT_INBOX = 0,
	MB_RSLOT_DELETED,
	MB_RSLOT_SENT,
	MB_RSLOT_CALENDAR,
	MB_RSLOT_CONTACTS,
	MB_RSLOT_FIRST_USER
};

struct mb_ritem {
	uint64_t mid;
	uint32_t flags;
	uint32_t size;
	int32_t who; /* sender's user index, -1 unknown */
};

struct mb_rfolder {
	uint32_t local; /* local folder number (low 32 bits of the fid) */
	uint32_t n, cap;
	uint64_t watermark;
	struct mb_ritem *items;
};

struct mb_replica {
	int nfolders;
	bool synced;		 /* the header download at first logon is done */
	uint32_t dirty;		 /* bit per slot: needs an incremental sync */
	uint64_t hier_watermark; /* the hierarchy download's mark (highest folder change) */
	struct mb_rfolder f[MB_REPLICA_MAX_FOLDERS];
};

int mb_replica_create(struct mb_replica **out);
void mb_replica_destroy(struct mb_replica *r);
/* Slot of a local folder number, adding it when absent: 0.., or MB_EFULL.
 * A folder added before the first download is done is part of it (dirty). */
int mb_replica_slot(struct mb_replica *r, uint32_t local);
/* Insert or update a message. */
int mb_replica_upsert(struct mb_replica *r, int slot, uint64_t mid, uint32_t flags, uint32_t size,
		      int32_t who);
/* Whether folder slot holds message mid. */
bool mb_replica_holds(const struct mb_replica *r, int slot, uint64_t mid);
/* Remove a message; true when it was there. */
bool mb_replica_remove(struct mb_replica *r, int slot, uint64_t mid);
/* Bytes held (for memory accounting). */
size_t mb_replica_bytes(const struct mb_replica *r);

#endif
