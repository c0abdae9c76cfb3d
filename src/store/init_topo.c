/* init_topo.c: the topology `mailbench init` generates for a scenario (and
 * `--accounts-only`): users, their databases and storage groups, mailbox
 * profile at the scale, distribution lists; deterministic for a scenario,
 * a user count and a scale.
 */
#include "config.h"

#include "cmd.h"
#include "core/options.h"
#include "core/content.h"
#include "core/error.h"
#include "core/sampler.h"
#include "core/scenario.h"
#include "core/topology.h"
#include "db/bulk.h"
#include "db/db.h"
#include "proto/proto.h"
#include "core/mix.h"
#include "core/progress.h"
#include "store/pristine.h"
#include "store/schema.h"
#include "store/store.h"
#include "store/init_int.h"

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

int mb_store_gen_topology(const struct mb_scenario *sc, int users, double scale,
			  const char *log_dir, int cache_mb, unsigned flags,
			  struct mb_topology **out)
{
	struct mb_topo_info info;
	struct mb_topology *t;
	int rc;

	memset(&info, 0, sizeof(info));
	snprintf(info.scenario, sizeof(info.scenario), "%s", sc->name);
	info.scale = scale;
	info.page_kb = sc->page_kb;
	info.write_max_kb = sc->write_max_kb;
	info.storage_groups = sc->storage_groups;
	info.databases = sc->databases;
	info.db_cache_mb = cache_mb;
	mb_mailbox_profile_scale(&sc->mailbox, scale, &info.mailbox);
	info.created = (double)time(NULL);
	if (mb_auth_random(info.secret, sizeof(info.secret)) == 0)
		info.has_secret = true;
	snprintf(info.log_dir, sizeof(info.log_dir), "%s", log_dir ? log_dir : "");
	rc = mb_topology_create(&info, &t);
	if (rc)
		return rc;
	static const char alnum[] = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
	for (int i = 0; i < users && !rc; i++) {
		struct mb_topo_user u;
		uint8_t r[16];
		memset(&u, 0, sizeof(u));
		snprintf(u.name, sizeof(u.name), "user%04d", i + 1);
		rc = mb_auth_random(r, sizeof(r));
		for (int k = 0; k < 16; k++)
			u.password[k] = alnum[r[k] % (sizeof(alnum) - 1)];
		if (!rc && (flags & MB_GEN_KEYS)) {
			rc = mb_auth_random(u.salt, sizeof(u.salt));
			u.iterations = MB_PBKDF2_ITERATIONS;
			if (!rc)
				rc = mb_auth_derive(u.password, u.salt, u.iterations, u.key);
		}
		u.db = i % info.databases + 1;
		u.sg = mb_topology_db_sg(t, u.db);
		if (!rc)
			rc = mb_topology_add_user(t, &u);
	}
	/* distribution lists: sizes in [min, max] with the published mean */
	int nl = sc->dl_per_site, mn = sc->dl_min_members, mx = sc->dl_max_members;
	int avg = sc->dl_avg_members;
	if (mx > users)
		mx = users;
	if (mn > mx)
		mn = mx;
	if (avg > mx)
		avg = mx;
	if (avg < mn)
		avg = mn;
	int *size = calloc((size_t)(nl ? nl : 1), sizeof(int));
	uint32_t *mem = calloc((size_t)(mx ? mx : 1), sizeof(uint32_t));
	if (!size || !mem)
		rc = rc ? rc : MB_ENOMEM;
	uint64_t st = 0x5eed;
	long sum = 0;
	for (int i = 0; i < nl && !rc; i++) {
		st = mb_rng_mix(st + (uint64_t)i);
		size[i] = mn + (int)(st % (uint64_t)(mx - mn + 1));
		sum += size[i];
	}
	/* nudge sizes until the mean is exact (within bounds) */
	long want = (long)avg * nl;
	for (int guard = 0; sum != want && guard < 1000000 && nl > 0 && !rc; guard++) {
		st = mb_rng_mix(st + 7);
		int i = (int)(st % (uint64_t)nl);
		if (sum > want && size[i] > mn) {
			size[i]--;
			sum--;
		} else if (sum < want && size[i] < mx) {
			size[i]++;
			sum++;
		}
	}
	/* members: each from the list's home database (lists take the
	 * databases in turn) with the scenario's share, else from all users;
	 * the home database's users are home, home + ndb, ... (u.db above) */
	int ndb = info.databases > 0 ? info.databases : 1;
	double home_share = sc->dl_home_db_pct / 100.0;
	for (int i = 0; i < nl && !rc; i++) {
		char name[32];
		int n = 0, home_n = 0;
		uint32_t home = (uint32_t)(i % ndb);
		uint32_t at_home =
		    users > (int)home ? (uint32_t)((users - (int)home + ndb - 1) / ndb) : 0;
		while (n < size[i]) {
			st = mb_rng_mix(st + 13);
			uint32_t m = (uint32_t)(st % (uint64_t)users);
			bool from_home = false;
			if (home_share > 0 && (uint32_t)home_n < at_home) {
				uint64_t h = mb_rng_mix(st ^ 0x9e3779b97f4a7c15ull);
				from_home = (double)(h >> 11) * 0x1.0p-53 < home_share;
				if (from_home)
					m = home + (uint32_t)((h >> 3) % at_home) * (uint32_t)ndb;
			}
			bool dup = false;
			for (int j = 0; j < n; j++)
				dup |= mem[j] == m;
			if (!dup) {
				mem[n++] = m;
				home_n += (int)m % ndb == (int)home;
			}
		}
		snprintf(name, sizeof(name), "list%03d", i + 1);
		rc = mb_topology_add_list(t, name, mem, n);
	}
	free(size);
	free(mem);
	if (rc) {
		mb_topology_destroy(t);
		return rc;
	}
	*out = t;
	return 0;
}
