/* topology.h: the topology file DATA/topology.json (users, passwords,
 * distribution lists, which database holds which mailbox, scale), and the
 * accounts file DATA/accounts.json (users, passwords, lists only: what a
 * target other than the embedded store is given).
 *
 * Written by `mailbench init`, read by the store (credentials, placement,
 * lists), the load engine (who logs on with what, whom to send to) and the
 * console (scale and scenario shown beside results).  JSON via jansson;
 * layout documented in docs/PROTOCOL.md ("Topology file").
 *
 * Invariants after a successful read: user i has mailbox id i + 1 and a
 * unique name; storage groups are 1..storage_groups, databases are
 * 1..databases (global numbering; database d lives in storage group
 * mb_topology_db_sg(t, d)); every list member is a valid user index.
 * Writing is atomic (temporary file, fsync, rename); the file is mode 0600
 * because it holds passwords.
 */
#ifndef MB_CORE_TOPOLOGY_H
#define MB_CORE_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mailbox.h"

#define MB_TOPO_NAME_MAX 64
#define MB_TOPO_PASSWORD_MAX 64
#define MB_TOPO_SALT_LEN 16
#define MB_TOPO_KEY_LEN 32

struct mb_topo_user {
	char name[MB_TOPO_NAME_MAX];	     /* logon name, e.g. "user0001" */
	char password[MB_TOPO_PASSWORD_MAX]; /* generated; for the load engine */
	uint8_t salt[MB_TOPO_SALT_LEN];	     /* PBKDF2 salt */
	uint8_t key[MB_TOPO_KEY_LEN];	     /* PBKDF2-HMAC-SHA-256(password, salt) */
	uint32_t iterations;		     /* PBKDF2 iterations */
	uint32_t mailbox;		     /* mailbox id = index + 1 */
	int sg;				     /* storage group, 1.. */
	int db;				     /* database, 1.. (global) */
};

struct mb_topo_list {
	char name[MB_TOPO_NAME_MAX]; /* e.g. "list001" */
	int nmembers;
	uint32_t *members; /* user indices (0-based) */
};

/* Everything about the data set besides users and lists. */
struct mb_topo_info {
	char scenario[MB_TOPO_NAME_MAX]; /* scenario name at init */
	double scale;			 /* mailbox contents and cache scale */
	int page_kb;
	/* the largest database write, KB; below page_kb: each page written by
	 * itself (ESE in Exchange 2003, no I/O coalescing); a topology file
	 * from before the field: MB_TOPO_WRITE_MAX_KB_OLD, as the store wrote */
	int write_max_kb;
	int storage_groups;
	int databases;
	int db_cache_mb;		   /* scaled database cache for the store */
	struct mb_mailbox_profile mailbox; /* after scaling */
	double created;			   /* Unix time of init */
	char log_dir[4096];		   /* --log-dir of init; "" = DATA/sgN/log */
	/* per-data-directory secret made at init (random): the store derives
	 * the salts it answers for unknown user names from it, so names cannot
	 * be told from non-names by anyone without the file */
	bool has_secret;
	uint8_t secret[32];
};

#define MB_TOPO_WRITE_MAX_KB_OLD 1024

struct mb_topology;

int mb_topology_create(const struct mb_topo_info *info, struct mb_topology **out);
void mb_topology_destroy(struct mb_topology *t);

/* Add a user; u->mailbox is assigned (index + 1).  MB_EEXIST on a duplicate
 * name, MB_ERANGE when sg/db are outside the info's ranges. */
int mb_topology_add_user(struct mb_topology *t, const struct mb_topo_user *u);
/* Add a list (members copied).  MB_EINVAL on a bad member index. */
int mb_topology_add_list(struct mb_topology *t, const char *name, const uint32_t *members, int n);

const struct mb_topo_info *mb_topology_info(const struct mb_topology *t);
int mb_topology_user_count(const struct mb_topology *t);
const struct mb_topo_user *mb_topology_user(const struct mb_topology *t, int index);
int mb_topology_list_count(const struct mb_topology *t);
const struct mb_topo_list *mb_topology_list(const struct mb_topology *t, int index);
/* Storage group of a database (1-based both). */
int mb_topology_db_sg(const struct mb_topology *t, int db);

/* Lookups by name: 0 and *index, or MB_ENOTFOUND. */
int mb_topology_find_user(const struct mb_topology *t, const char *name, size_t len, int *index);
int mb_topology_find_list(const struct mb_topology *t, const char *name, size_t len, int *index);

/* Write atomically to path (mode 0600). */
int mb_topology_write(const struct mb_topology *t, const char *path);
/* Write the accounts file (DATA/accounts.json): "kind": "accounts", the
 * users (name, password), the lists and the mailbox shape, without the
 * store's placement and verifiers: what an external target is given. */
int mb_topology_write_accounts(const struct mb_topology *t, const char *path);
/* Read and validate a topology or an accounts file (an accounts file has
 * one database, scale 1, no verifiers); on MB_ECONFIG/MB_EIO err gets
 * "path: field: message". */
int mb_topology_read(const char *path, struct mb_topology **out, char *err, size_t errlen);

/* Database file path: DATA/sgN/dbMM.mdb. */
int mb_topology_db_path(const char *data_dir, int sg, int db, char *buf, size_t len);
/* Storage group log directory: LOGDIR/sgN or DATA/sgN/log when log_dir is NULL. */
int mb_topology_log_dir(const char *data_dir, const char *log_dir, int sg, char *buf, size_t len);

#endif
