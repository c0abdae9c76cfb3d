/* probe.c: a read-only view of a stopped store's data directory for tests
 * and checks (mb_store_probe_*, store.h): opens every group (recovery runs)
 * and database, and answers whether a message exists.
 */
#include "config.h"

#include "store/store.h"
#include "store/schema.h"
#include "core/error.h"
#include "core/topology.h"
#include "db/db.h"

#include <stdio.h>
#include <stdlib.h>

struct mb_store_probe {
	struct mb_topology *topo;
	struct mb_cache *cache;
	int nsg, ndb;
	struct mb_sg **sgs;
	struct mb_db **dbs;
	struct mb_schema **schemas;
};

void mb_store_probe_close(struct mb_store_probe *p)
{
	if (!p)
		return;
	for (int d = 0; d < p->ndb; d++) {
		if (p->schemas && p->schemas[d])
			mb_schema_close(p->schemas[d]);
		if (p->dbs && p->dbs[d])
			mb_db_close(p->dbs[d]);
	}
	for (int g = 0; g < p->nsg; g++)
		if (p->sgs && p->sgs[g])
			mb_sg_close(p->sgs[g]);
	if (p->cache)
		mb_cache_destroy(p->cache);
	mb_topology_destroy(p->topo);
	free(p->sgs);
	free(p->dbs);
	free(p->schemas);
	free(p);
}

int mb_store_probe_open(const char *data, struct mb_store_probe **out, char *err, size_t errlen)
{
	struct mb_store_probe *p = calloc(1, sizeof(*p));
	char path[4200];
	int rc;
	if (!p)
		return MB_ENOMEM;
	snprintf(path, sizeof(path), "%s/topology.json", data);
	rc = mb_topology_read(path, &p->topo, err, errlen);
	if (rc)
		goto fail;
	const struct mb_topo_info *ti = mb_topology_info(p->topo);
	p->nsg = ti->storage_groups;
	p->ndb = ti->databases;
	p->sgs = calloc((size_t)p->nsg, sizeof(*p->sgs));
	p->dbs = calloc((size_t)p->ndb, sizeof(*p->dbs));
	p->schemas = calloc((size_t)p->ndb, sizeof(*p->schemas));
	rc = !p->sgs || !p->dbs || !p->schemas ? MB_ENOMEM : mb_cache_create(64u << 20, &p->cache);
	for (int g = 1; g <= p->nsg && !rc; g++) {
		char dir[4200], logdir[4200];
		struct mb_sg_options so;
		snprintf(dir, sizeof(dir), "%s/sg%d", data, g);
		mb_topology_log_dir(data, ti->log_dir, g, logdir, sizeof(logdir));
		mb_sg_options_init(&so);
		so.dir = dir;
		so.log_dir = logdir;
		so.cache = p->cache;
		rc = mb_sg_open(&so, &p->sgs[g - 1]);
		if (rc)
			snprintf(err, errlen, "%s: %s", dir, mb_strerror(rc));
	}
	for (int d = 1; d <= p->ndb && !rc; d++) {
		char name[32];
		snprintf(name, sizeof(name), "db%02d.mdb", d);
		struct mb_sg *sg = p->sgs[mb_topology_db_sg(p->topo, d) - 1];
		rc = mb_db_open(sg, name, 0, 0, &p->dbs[d - 1]);
		if (rc) {
			char why[512];
			mb_db_open_errmsg(rc, why, sizeof(why));
			snprintf(err, errlen, "%s: %s: %s", data, name, why);
			break;
		}
		rc = mb_schema_open(p->dbs[d - 1], false, &p->schemas[d - 1]);
		if (rc)
			snprintf(err, errlen, "%s: %s: %s", data, name, mb_strerror(rc));
	}
	if (rc)
		goto fail;
	*out = p;
	return 0;
fail:
	mb_store_probe_close(p);
	return rc;
}

int mb_store_probe_exists(struct mb_store_probe *p, uint32_t mailbox, uint64_t mid, bool *exists)
{
	const struct mb_topo_user *u = mb_topology_user(p->topo, (int)mailbox - 1);
	if (!u)
		return MB_ENOTFOUND;
	return mb_schema_msg_exists(p->schemas[u->db - 1], mailbox, mid, exists);
}
