/* files.h: what the storage test's two modes share besides the runner:
 * their test-file housekeeping (directories, the creation progress bar,
 * the ready.json marker) and the per-thread state every worker starts
 * from (accounting slot, random numbers, workload generator, text pool).
 *
 * Invariants: the marker is written atomically (temporary file, rename,
 * directory fsync), so it exists only once everything it vouches for is on
 * disk; a worker thread's state is private to that thread.
 */
#ifndef MB_STRESS_FILES_H
#define MB_STRESS_FILES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stress/acct.h"
#include "stress/workload.h"

struct mb_io;

/* mkdir -p. */
int mb_stress_mkdirs(const char *path);

/* The "creating test databases" bar on stderr (nothing when !on). */
void mb_stress_progress(bool on, uint64_t done, uint64_t total);

/* DIR/ready.json: load it (NULL when absent or unreadable), or write j to
 * it atomically and sync DIR through io (takes j in both cases). */
json_t *mb_stress_marker_load(const char *dir);
int mb_stress_marker_write(struct mb_io *io, const char *dir, json_t *j);

/* The state every worker thread starts from. */
struct mb_stress_thread {
	struct mb_stress_slot *slot;
	uint64_t rng;		   /* core/rng.h state */
	struct mb_stress_gen *gen; /* NULL without a mix (an auxiliary thread) */
	char *pool;		   /* pool_bytes of generated text, writes copy from it */
};
/* idx: the runner's thread index (-1: auxiliary); mix NULL: no generator,
 * else one over dbs databases of `count` keys or pages from 0. */
int mb_stress_thread_init(struct mb_stress_thread *t, int idx, struct mb_stress_slot *slot,
			  const struct mb_stress_mix *mix, bool io_mode, unsigned dbs,
			  uint64_t count, size_t pool_bytes);
void mb_stress_thread_fini(struct mb_stress_thread *t);

#endif
