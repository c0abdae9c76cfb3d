/* topology.c: reader and writer of DATA/topology.json (see topology.h).
 * Invariants: a topology in memory is always valid (add_* check what they
 * add; read validates every field and names the one that is wrong); the
 * file on disk is replaced atomically, so a reader sees the old or the new
 * file, never half of one.  Names are found through a hash index (users and
 * lists each: open addressing, linear probing, at most half full), so adding
 * n users and reading a file of n users is O(n), not O(n^2). */
#include "core/topology.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Names -> indices 0..n-1 of one array of structs whose first member is
 * the name (users or lists).  Nothing is ever removed, so the index holds
 * exactly the array's first n entries. */
struct name_index {
	int *slot;  /* index + 1; 0 = empty */
	size_t cap; /* a power of two (0 before the first add), > 2 * n */
	size_t n;
};

struct mb_topology {
	struct mb_topo_info info;
	struct mb_topo_user *users;
	int nusers, cap_users;
	struct mb_topo_list *lists;
	int nlists, cap_lists;
	struct name_index user_ix, list_ix;
};

static size_t name_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return (size_t)(h ^ (h >> 32));
}

_Static_assert(offsetof(struct mb_topo_user, name) == 0, "a user's name comes first");
_Static_assert(offsetof(struct mb_topo_list, name) == 0, "a list's name comes first");

/* The name of entry i of an array of stride-byte structs (name first). */
static const char *entry_name(const void *base, size_t stride, int i)
{
	return (const char *)base + (size_t)i * stride;
}

static int index_find(const struct name_index *x, const void *base, size_t stride, const char *name,
		      size_t len)
{
	if (!x->cap || len >= MB_TOPO_NAME_MAX)
		return -1;
	for (size_t h = name_hash(name, len) & (x->cap - 1);; h = (h + 1) & (x->cap - 1)) {
		int v = x->slot[h];
		if (!v)
			return -1;
		const char *e = entry_name(base, stride, v - 1);
		if (!memcmp(e, name, len) && e[len] == 0)
			return v - 1;
	}
}

static void index_put(struct name_index *x, const void *base, size_t stride, int i)
{
	const char *e = entry_name(base, stride, i);
	size_t h = name_hash(e, strlen(e)) & (x->cap - 1);
	while (x->slot[h])
		h = (h + 1) & (x->cap - 1);
	x->slot[h] = i + 1;
}

/* Add entry n (the array's next one, already in place) to the index. */
static int index_add(struct name_index *x, const void *base, size_t stride)
{
	if (2 * (x->n + 1) >= x->cap) {
		size_t nc = x->cap ? 2 * x->cap : 64;
		int *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return MB_ENOMEM;
		free(x->slot);
		x->slot = ns;
		x->cap = nc;
		for (size_t i = 0; i < x->n; i++)
			index_put(x, base, stride, (int)i);
	}
	index_put(x, base, stride, (int)x->n);
	x->n++;
	return 0;
}

int mb_topology_create(const struct mb_topo_info *info, struct mb_topology **out)
{
	if (!info || info->databases < 1 || info->storage_groups < 1 ||
	    info->storage_groups > info->databases)
		return MB_EINVAL;
	struct mb_topology *t = calloc(1, sizeof(*t));
	if (!t)
		return MB_ENOMEM;
	t->info = *info;
	*out = t;
	return 0;
}

void mb_topology_destroy(struct mb_topology *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nlists; i++)
		free(t->lists[i].members);
	free(t->lists);
	free(t->users);
	free(t->user_ix.slot);
	free(t->list_ix.slot);
	free(t);
}

int mb_topology_db_sg(const struct mb_topology *t, int db)
{
	int per = t->info.databases / t->info.storage_groups;
	int sg = (db - 1) / per + 1;
	return sg > t->info.storage_groups ? t->info.storage_groups : sg;
}

int mb_topology_find_user(const struct mb_topology *t, const char *name, size_t len, int *index)
{
	int i = index_find(&t->user_ix, t->users, sizeof(*t->users), name, len);
	if (i < 0)
		return MB_ENOTFOUND;
	*index = i;
	return 0;
}

int mb_topology_find_list(const struct mb_topology *t, const char *name, size_t len, int *index)
{
	int i = index_find(&t->list_ix, t->lists, sizeof(*t->lists), name, len);
	if (i < 0)
		return MB_ENOTFOUND;
	*index = i;
	return 0;
}

int mb_topology_add_user(struct mb_topology *t, const struct mb_topo_user *u)
{
	int dummy;
	size_t nl = strnlen(u->name, MB_TOPO_NAME_MAX);

	if (nl == 0 || nl >= MB_TOPO_NAME_MAX)
		return MB_EINVAL;
	if (u->db < 1 || u->db > t->info.databases || u->sg != mb_topology_db_sg(t, u->db))
		return MB_ERANGE;
	if (mb_topology_find_user(t, u->name, nl, &dummy) == 0 ||
	    mb_topology_find_list(t, u->name, nl, &dummy) == 0)
		return MB_EEXIST;
	if (t->nusers == t->cap_users) {
		int nc = t->cap_users ? t->cap_users * 2 : 64;
		void *n = realloc(t->users, (size_t)nc * sizeof(*t->users));
		if (!n)
			return MB_ENOMEM;
		t->users = n;
		t->cap_users = nc;
	}
	t->users[t->nusers] = *u;
	t->users[t->nusers].mailbox = (uint32_t)t->nusers + 1;
	if (index_add(&t->user_ix, t->users, sizeof(*t->users)))
		return MB_ENOMEM;
	t->nusers++;
	return 0;
}

int mb_topology_add_list(struct mb_topology *t, const char *name, const uint32_t *members, int n)
{
	int dummy;
	size_t nl = strlen(name);

	if (nl == 0 || nl >= MB_TOPO_NAME_MAX || n < 0)
		return MB_EINVAL;
	for (int i = 0; i < n; i++)
		if (members[i] >= (uint32_t)t->nusers)
			return MB_EINVAL;
	if (mb_topology_find_user(t, name, nl, &dummy) == 0 ||
	    mb_topology_find_list(t, name, nl, &dummy) == 0)
		return MB_EEXIST;
	if (t->nlists == t->cap_lists) {
		int nc = t->cap_lists ? t->cap_lists * 2 : 16;
		void *nw = realloc(t->lists, (size_t)nc * sizeof(*t->lists));
		if (!nw)
			return MB_ENOMEM;
		t->lists = nw;
		t->cap_lists = nc;
	}
	struct mb_topo_list *l = &t->lists[t->nlists];
	memset(l, 0, sizeof(*l));
	memcpy(l->name, name, nl + 1);
	if (n) {
		l->members = malloc((size_t)n * sizeof(uint32_t));
		if (!l->members)
			return MB_ENOMEM;
		memcpy(l->members, members, (size_t)n * sizeof(uint32_t));
	}
	l->nmembers = n;
	if (index_add(&t->list_ix, t->lists, sizeof(*t->lists))) {
		free(l->members);
		return MB_ENOMEM;
	}
	t->nlists++;
	return 0;
}

const struct mb_topo_info *mb_topology_info(const struct mb_topology *t) { return &t->info; }

int mb_topology_user_count(const struct mb_topology *t) { return t->nusers; }

const struct mb_topo_user *mb_topology_user(const struct mb_topology *t, int index)
{
	return index >= 0 && index < t->nusers ? &t->users[index] : NULL;
}

int mb_topology_list_count(const struct mb_topology *t) { return t->nlists; }

const struct mb_topo_list *mb_topology_list(const struct mb_topology *t, int index)
{
	return index >= 0 && index < t->nlists ? &t->lists[index] : NULL;
}

int mb_topology_db_path(const char *data_dir, int sg, int db, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/sg%d/db%02d.mdb", data_dir, sg, db);
	return n < 0 || (size_t)n >= len ? MB_ERANGE : 0;
}

int mb_topology_log_dir(const char *data_dir, const char *log_dir, int sg, char *buf, size_t len)
{
	int n;
	if (log_dir && log_dir[0])
		n = snprintf(buf, len, "%s/sg%d", log_dir, sg);
	else
		n = snprintf(buf, len, "%s/sg%d/log", data_dir, sg);
	return n < 0 || (size_t)n >= len ? MB_ERANGE : 0;
}

/* The "mailbox" object of both files (the names read back below). */
static json_t *mailbox_json(const struct mb_mailbox_profile *m)
{
	return json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "inbox", m->inbox_messages,
			 "deleted_items", m->deleted_items_messages, "new_folders", m->new_folders,
			 "messages_per_folder", m->messages_per_folder, "appointments",
			 m->calendar_appointments, "contacts", m->contacts, "avg_message_kb",
			 m->avg_message_kb);
}

/* ---- JSON ---- */

static void hex(const uint8_t *p, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[p[i] >> 4];
		out[2 * i + 1] = hx[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static int unhex(const char *s, uint8_t *out, size_t n)
{
	if (!s || strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < 2 * n; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (v < 0)
			return -1;
		if (i % 2 == 0)
			out[i / 2] = (uint8_t)(v << 4);
		else
			out[i / 2] |= (uint8_t)v;
	}
	return 0;
}

/* The lists (name, members by user name): the same in both files. */
static json_t *lists_json(const struct mb_topology *t)
{
	json_t *lists = json_array();
	for (int i = 0; i < t->nlists; i++) {
		json_t *m = json_array();
		for (int j = 0; j < t->lists[i].nmembers; j++)
			json_array_append_new(m,
					      json_string(t->users[t->lists[i].members[j]].name));
		json_array_append_new(
		    lists, json_pack("{s:s,s:o}", "name", t->lists[i].name, "members", m));
	}
	return lists;
}

static json_t *to_json(const struct mb_topology *t)
{
	const struct mb_topo_info *in = &t->info;
	json_t *root = json_object();
	json_t *users = json_array();

	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "scenario", json_string(in->scenario));
	json_object_set_new(root, "scale", json_real(in->scale));
	json_object_set_new(root, "page_kb", json_integer(in->page_kb));
	json_object_set_new(root, "write_max_kb", json_integer(in->write_max_kb));
	json_object_set_new(root, "storage_groups", json_integer(in->storage_groups));
	json_object_set_new(root, "databases", json_integer(in->databases));
	json_object_set_new(root, "db_cache_mb", json_integer(in->db_cache_mb));
	json_object_set_new(root, "mailbox", mailbox_json(&in->mailbox));
	json_object_set_new(root, "created", json_real(in->created));
	json_object_set_new(root, "log_dir", json_string(in->log_dir));
	if (in->has_secret) {
		char sec[2 * sizeof(in->secret) + 1];
		hex(in->secret, sizeof(in->secret), sec);
		json_object_set_new(root, "secret", json_string(sec));
	}
	for (int i = 0; i < t->nusers; i++) {
		const struct mb_topo_user *u = &t->users[i];
		char salt[2 * MB_TOPO_SALT_LEN + 1], key[2 * MB_TOPO_KEY_LEN + 1];
		hex(u->salt, MB_TOPO_SALT_LEN, salt);
		hex(u->key, MB_TOPO_KEY_LEN, key);
		json_array_append_new(users, json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:i}", "name",
						       u->name, "password", u->password, "salt",
						       salt, "key", key, "iterations",
						       (int)u->iterations, "mailbox",
						       (int)u->mailbox, "sg", u->sg, "db", u->db));
	}
	json_object_set_new(root, "users", users);
	json_object_set_new(root, "lists", lists_json(t));
	return root;
}

/* The accounts part: users (name, password), lists, the mailbox shape. */
static json_t *accounts_json(const struct mb_topology *t)
{
	const struct mb_topo_info *in = &t->info;
	json_t *root = json_object();
	json_t *users = json_array();
	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "kind", json_string("accounts"));
	json_object_set_new(root, "scenario", json_string(in->scenario));
	json_object_set_new(root, "mailbox", mailbox_json(&in->mailbox));
	for (int i = 0; i < t->nusers; i++)
		json_array_append_new(users, json_pack("{s:s,s:s}", "name", t->users[i].name,
						       "password", t->users[i].password));
	json_object_set_new(root, "users", users);
	json_object_set_new(root, "lists", lists_json(t));
	return root;
}

static int write_json(json_t *root, const char *path);

int mb_topology_write(const struct mb_topology *t, const char *path)
{
	json_t *root = to_json(t);
	if (!root)
		return MB_ENOMEM;
	return write_json(root, path);
}

int mb_topology_write_accounts(const struct mb_topology *t, const char *path)
{
	json_t *root = accounts_json(t);
	if (!root)
		return MB_ENOMEM;
	return write_json(root, path);
}

/* Write root (consumed) atomically to path, mode 0600. */
static int write_json(json_t *root, const char *path)
{
	char tmp[4200];
	int n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		json_decref(root);
		return MB_ERANGE;
	}
	char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return MB_ENOMEM;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		free(text);
		return mb_from_errno(e);
	}
	size_t len = strlen(text), off = 0;
	int rc = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = mb_from_errno(errno);
			break;
		}
		off += (size_t)w;
	}
	if (!rc && (write(fd, "\n", 1) != 1 || fsync(fd) != 0))
		rc = MB_EIO;
	close(fd);
	free(text);
	if (!rc && rename(tmp, path) != 0)
		rc = mb_from_errno(errno);
	if (rc)
		unlink(tmp);
	return rc;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		rc = MB_ECONFIG;                                                                   \
		goto out;                                                                          \
	} while (0)

static int get_int(json_t *o, const char *k, int min, int max, int *out)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_integer(v))
		return -1;
	json_int_t x = json_integer_value(v);
	if (x < min || x > max)
		return -1;
	*out = (int)x;
	return 0;
}

int mb_topology_read(const char *path, struct mb_topology **out, char *err, size_t errlen)
{
	json_error_t je;
	struct mb_topology *t = NULL;
	struct mb_topo_info in;
	int rc = 0;
	uint32_t *members = NULL;

	json_t *root = json_load_file(path, 0, &je);
	if (!root) {
		snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
		return errno == ENOENT ? MB_ENOTFOUND : MB_ECONFIG;
	}
	memset(&in, 0, sizeof(in));
	int version;
	if (get_int(root, "version", 1, 1, &version))
		FAIL("%s: version: missing or not 1", path);
	const char *kind = json_string_value(json_object_get(root, "kind"));
	bool accounts = kind && !strcmp(kind, "accounts");
	if (kind && !accounts)
		FAIL("%s: kind: '%s' is not \"accounts\" (a topology file has no kind)", path,
		     kind);
	if (accounts) {
		/* an accounts file: no placement; one database, scale 1 */
		in.scale = 1;
		in.page_kb = 32;
		in.write_max_kb = MB_TOPO_WRITE_MAX_KB_OLD;
		in.databases = in.storage_groups = 1;
		in.db_cache_mb = 1;
		const char *sn = json_string_value(json_object_get(root, "scenario"));
		snprintf(in.scenario, sizeof(in.scenario), "%s", sn ? sn : "");
		json_t *mbx = json_object_get(root, "mailbox");
		static const char *const mk[] = {
		    "inbox",	    "deleted_items", "new_folders",   "messages_per_folder",
		    "appointments", "contacts",	     "avg_message_kb"};
		int *mv[] = {&in.mailbox.inbox_messages,	&in.mailbox.deleted_items_messages,
			     &in.mailbox.new_folders,		&in.mailbox.messages_per_folder,
			     &in.mailbox.calendar_appointments, &in.mailbox.contacts,
			     &in.mailbox.avg_message_kb};
		for (size_t i = 0; json_is_object(mbx) && i < sizeof(mk) / sizeof(mk[0]); i++)
			if (json_object_get(mbx, mk[i]) && get_int(mbx, mk[i], 0, 1000000, mv[i]))
				FAIL("%s: mailbox.%s: out of range", path, mk[i]);
		rc = mb_topology_create(&in, &t);
		if (rc)
			goto out;
		goto users;
	}
	const char *s = json_string_value(json_object_get(root, "scenario"));
	if (!s || strlen(s) >= sizeof(in.scenario))
		FAIL("%s: scenario: missing or too long", path);
	strcpy(in.scenario, s);
	json_t *sc = json_object_get(root, "scale");
	if (!json_is_number(sc) || json_number_value(sc) <= 0 || json_number_value(sc) > 100)
		FAIL("%s: scale: missing or out of range (0, 100]", path);
	in.scale = json_number_value(sc);
	if (get_int(root, "page_kb", 4, 32, &in.page_kb))
		FAIL("%s: page_kb: missing or out of range", path);
	in.write_max_kb = MB_TOPO_WRITE_MAX_KB_OLD;
	if (json_object_get(root, "write_max_kb") &&
	    get_int(root, "write_max_kb", 0, 1024, &in.write_max_kb))
		FAIL("%s: write_max_kb: not an integer in 0..1024", path);
	if (get_int(root, "databases", 1, 99, &in.databases))
		FAIL("%s: databases: missing or out of range 1..99", path);
	if (get_int(root, "storage_groups", 1, in.databases, &in.storage_groups))
		FAIL("%s: storage_groups: missing or out of range 1..databases", path);
	if (get_int(root, "db_cache_mb", 1, 1 << 20, &in.db_cache_mb))
		FAIL("%s: db_cache_mb: missing or out of range", path);
	json_t *mb = json_object_get(root, "mailbox");
	if (!json_is_object(mb))
		FAIL("%s: mailbox: missing", path);
	struct {
		const char *k;
		int *v;
	} mf[] = {{"inbox", &in.mailbox.inbox_messages},
		  {"deleted_items", &in.mailbox.deleted_items_messages},
		  {"new_folders", &in.mailbox.new_folders},
		  {"messages_per_folder", &in.mailbox.messages_per_folder},
		  {"appointments", &in.mailbox.calendar_appointments},
		  {"contacts", &in.mailbox.contacts},
		  {"avg_message_kb", &in.mailbox.avg_message_kb}};
	for (size_t i = 0; i < sizeof(mf) / sizeof(mf[0]); i++)
		if (get_int(mb, mf[i].k, 0, 1000000, mf[i].v))
			FAIL("%s: mailbox.%s: missing or out of range", path, mf[i].k);
	json_t *cr = json_object_get(root, "created");
	in.created = json_is_number(cr) ? json_number_value(cr) : 0;
	s = json_string_value(json_object_get(root, "log_dir"));
	if (s) {
		if (strlen(s) >= sizeof(in.log_dir))
			FAIL("%s: log_dir: too long", path);
		strcpy(in.log_dir, s);
	}
	const char *sec = json_string_value(json_object_get(root, "secret"));
	if (sec) {
		if (unhex(sec, in.secret, sizeof(in.secret)))
			FAIL("%s: secret: not %zu hex digits", path, 2 * sizeof(in.secret));
		in.has_secret = true;
	}
	rc = mb_topology_create(&in, &t);
	if (rc)
		FAIL("%s: databases/storage_groups: inconsistent", path);

users:;
	json_t *users = json_object_get(root, "users");
	if (!json_is_array(users))
		FAIL("%s: users: missing", path);
	for (size_t i = 0; i < json_array_size(users); i++) {
		json_t *u = json_array_get(users, i);
		struct mb_topo_user tu;
		int it, mbx;
		memset(&tu, 0, sizeof(tu));
		const char *name = json_string_value(json_object_get(u, "name"));
		const char *pw = json_string_value(json_object_get(u, "password"));
		if (!name || strlen(name) == 0 || strlen(name) >= sizeof(tu.name))
			FAIL("%s: users[%zu].name: missing or too long", path, i);
		strcpy(tu.name, name);
		if (pw) {
			if (strlen(pw) >= sizeof(tu.password))
				FAIL("%s: users[%zu].password: too long", path, i);
			strcpy(tu.password, pw);
		}
		if (accounts) {
			/* no verifier, no placement: the target holds those */
			tu.iterations = 1;
			tu.sg = tu.db = 1;
			goto add;
		}
		if (unhex(json_string_value(json_object_get(u, "salt")), tu.salt, sizeof(tu.salt)))
			FAIL("%s: users[%zu].salt: missing or not %d hex digits", path, i,
			     2 * MB_TOPO_SALT_LEN);
		if (unhex(json_string_value(json_object_get(u, "key")), tu.key, sizeof(tu.key)))
			FAIL("%s: users[%zu].key: missing or not %d hex digits", path, i,
			     2 * MB_TOPO_KEY_LEN);
		if (get_int(u, "iterations", 1, 10000000, &it))
			FAIL("%s: users[%zu].iterations: missing or out of range", path, i);
		tu.iterations = (uint32_t)it;
		if (get_int(u, "mailbox", 1, INT32_MAX, &mbx) || (size_t)mbx != i + 1)
			FAIL("%s: users[%zu].mailbox: missing or not %zu", path, i, i + 1);
		if (get_int(u, "db", 1, in.databases, &tu.db))
			FAIL("%s: users[%zu].db: missing or out of range", path, i);
		if (get_int(u, "sg", 1, in.storage_groups, &tu.sg) ||
		    tu.sg != mb_topology_db_sg(t, tu.db))
			FAIL("%s: users[%zu].sg: missing or not the database's storage group", path,
			     i);
	add:
		rc = mb_topology_add_user(t, &tu);
		if (rc == MB_ENOMEM)
			goto out;
		if (rc)
			FAIL("%s: users[%zu].name: duplicate", path, i);
	}
	json_t *lists = json_object_get(root, "lists");
	if (!json_is_array(lists))
		FAIL("%s: lists: missing", path);
	for (size_t i = 0; i < json_array_size(lists); i++) {
		json_t *l = json_array_get(lists, i);
		const char *name = json_string_value(json_object_get(l, "name"));
		json_t *m = json_object_get(l, "members");
		if (!name || !json_is_array(m))
			FAIL("%s: lists[%zu]: name or members missing", path, i);
		size_t n = json_array_size(m);
		free(members);
		members = calloc(n ? n : 1, sizeof(uint32_t));
		if (!members) {
			rc = MB_ENOMEM;
			goto out;
		}
		for (size_t j = 0; j < n; j++) {
			const char *mn = json_string_value(json_array_get(m, j));
			int idx;
			if (!mn || mb_topology_find_user(t, mn, strlen(mn), &idx))
				FAIL("%s: lists[%zu].members[%zu]: not a user", path, i, j);
			members[j] = (uint32_t)idx;
		}
		rc = mb_topology_add_list(t, name, members, (int)n);
		if (rc == MB_ENOMEM)
			goto out;
		if (rc)
			FAIL("%s: lists[%zu].name: bad or duplicate", path, i);
	}
out:
	free(members);
	json_decref(root);
	if (rc) {
		mb_topology_destroy(t);
		return rc;
	}
	*out = t;
	return 0;
}
