/* files.c: test-file housekeeping and worker-thread state shared by the
 * storage test's I/O and transactions modes (see files.h).
 * Invariant: ready.json only ever appears whole (written to a temporary
 * file, renamed, directory synced). */
#include "stress/files.h"
#include "core/content.h"
#include "core/error.h"
#include "db/io.h"
#include "stress/runner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int mb_stress_mkdirs(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return mb_from_errno(errno);
		*s = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return mb_from_errno(errno);
	return 0;
}

void mb_stress_progress(bool on, uint64_t done, uint64_t total)
{
	if (!on || !total)
		return;
	int width = 40, fill = (int)((double)done / (double)total * width);
	char bar[64];
	for (int i = 0; i < width; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[width] = '\0';
	fprintf(stderr, "\rcreating test databases [%s] %5.1f%% (%llu/%llu MiB)", bar,
		100.0 * (double)done / (double)total, (unsigned long long)(done >> 20),
		(unsigned long long)(total >> 20));
	if (done >= total)
		fputc('\n', stderr);
	fflush(stderr);
}

json_t *mb_stress_marker_load(const char *dir)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/ready.json", dir);
	json_error_t jerr;
	return json_load_file(path, 0, &jerr);
}

int mb_stress_marker_write(struct mb_io *io, const char *dir, json_t *j)
{
	if (!j)
		return MB_ENOMEM;
	char path[4200], tmp[4300];
	snprintf(path, sizeof(path), "%s/ready.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int rc = json_dump_file(j, tmp, JSON_INDENT(2)) ? MB_ESYS : 0;
	json_decref(j);
	if (!rc && rename(tmp, path))
		rc = mb_from_errno(errno);
	if (!rc)
		rc = mb_io_sync_dir(io, dir);
	return rc;
}

int mb_stress_thread_init(struct mb_stress_thread *t, int idx, struct mb_stress_slot *slot,
			  const struct mb_stress_mix *mix, bool io_mode, unsigned dbs,
			  uint64_t count, size_t pool_bytes)
{
	memset(t, 0, sizeof(*t));
	t->slot = slot;
	/* a different stream per thread and per run */
	uint64_t seed = mb_stress_now_ns() ^ ((uint64_t)(idx + 2) * 0x9e3779b97f4a7c15ULL);
	mb_rng_seed(&t->rng, seed);
	if (!(t->pool = malloc(pool_bytes)))
		return MB_ENOMEM;
	int rc = mix ? mb_stress_gen_create(mix, io_mode, dbs, 0, count, seed, &t->gen) : 0;
	if (rc) {
		free(t->pool);
		t->pool = NULL;
		return rc;
	}
	mb_content_fill(seed, t->pool, pool_bytes);
	return 0;
}

void mb_stress_thread_fini(struct mb_stress_thread *t)
{
	mb_stress_gen_destroy(t->gen);
	free(t->pool);
	t->gen = NULL;
	t->pool = NULL;
}
