/* watchvfs.h: a watching vfs (see watchvfs.c): the engine's I/O goes
 * through it unchanged, and the first failed transfer is kept with its
 * file, offset, error and operation.
 */
#ifndef MB_STRESS_WATCHVFS_H
#define MB_STRESS_WATCHVFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/io.h"

struct mb_watchvfs;

/* A watcher around inner (NULL: the POSIX vfs); NULL when out of memory. */
struct mb_watchvfs *mb_watchvfs_create(const struct mb_vfs *inner);
void mb_watchvfs_destroy(struct mb_watchvfs *w);
/* The vfs to hand to mb_io_create. */
const struct mb_vfs *mb_watchvfs_vfs(const struct mb_watchvfs *w);
/* true with the first failure's file, offset, error (negative errno) and
 * operation (what may be NULL), false when none failed. */
bool mb_watchvfs_first_error(struct mb_watchvfs *w, char *file, size_t flen, uint64_t *off,
			     int *code, char *what, size_t wlen);

#endif
