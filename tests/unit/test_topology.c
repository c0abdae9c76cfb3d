/* test_topology.c: the topology/accounts file's names (src/core/topology.h):
 * every user and list is found by name among thousands (and nothing else
 * is), a name taken by a user or a list cannot be added again, and a file
 * with a duplicate name is refused with the field that is wrong; lists
 * survive a write and a read of both file kinds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/error.h"
#include "core/topology.h"

#define N 5000

static struct mb_topology *mk(void)
{
	struct mb_topo_info in;
	memset(&in, 0, sizeof(in));
	in.databases = in.storage_groups = 1;
	in.scale = 1;
	in.page_kb = 32;
	in.db_cache_mb = 1;
	struct mb_topology *t = NULL;
	assert_int_equal(mb_topology_create(&in, &t), 0);
	return t;
}

static void user(struct mb_topo_user *u, const char *name)
{
	memset(u, 0, sizeof(*u));
	snprintf(u->name, sizeof(u->name), "%s", name);
	u->sg = u->db = 1;
	u->iterations = 1;
}

static void test_find_many(void **state)
{
	(void)state;
	struct mb_topology *t = mk();
	struct mb_topo_user u;
	char nm[32];
	for (int i = 0; i < N; i++) {
		snprintf(nm, sizeof(nm), "user%04d", i + 1);
		user(&u, nm);
		assert_int_equal(mb_topology_add_user(t, &u), 0);
	}
	uint32_t members[3] = {0, 1, N - 1};
	assert_int_equal(mb_topology_add_list(t, "list001", members, 3), 0);
	int idx = -1;
	for (int i = 0; i < N; i++) {
		snprintf(nm, sizeof(nm), "user%04d", i + 1);
		assert_int_equal(mb_topology_find_user(t, nm, strlen(nm), &idx), 0);
		assert_int_equal(idx, i);
		assert_int_equal(mb_topology_user(t, idx)->mailbox, (uint32_t)i + 1);
	}
	assert_int_equal(mb_topology_find_list(t, "list001", 7, &idx), 0);
	assert_int_equal(idx, 0);
	/* a prefix, a longer name, another table's name, an over-long length */
	assert_int_equal(mb_topology_find_user(t, "user000", 7, &idx), MB_ENOTFOUND);
	assert_int_equal(mb_topology_find_user(t, "user00011", 9, &idx), MB_ENOTFOUND);
	assert_int_equal(mb_topology_find_user(t, "list001", 7, &idx), MB_ENOTFOUND);
	assert_int_equal(mb_topology_find_list(t, "user0001", 8, &idx), MB_ENOTFOUND);
	char longname[MB_TOPO_NAME_MAX + 8];
	memset(longname, 'u', sizeof(longname));
	assert_int_equal(mb_topology_find_user(t, longname, sizeof(longname), &idx), MB_ENOTFOUND);
	/* the length is what counts, not a NUL */
	assert_int_equal(mb_topology_find_user(t, "user0002xyz", 8, &idx), 0);
	assert_int_equal(idx, 1);
	mb_topology_destroy(t);
}

static void test_add_duplicate(void **state)
{
	(void)state;
	struct mb_topology *t = mk();
	struct mb_topo_user u;
	user(&u, "alice");
	assert_int_equal(mb_topology_add_user(t, &u), 0);
	assert_int_equal(mb_topology_add_user(t, &u), MB_EEXIST);
	uint32_t m = 0;
	assert_int_equal(mb_topology_add_list(t, "alice", &m, 1), MB_EEXIST);
	assert_int_equal(mb_topology_add_list(t, "team", &m, 1), 0);
	assert_int_equal(mb_topology_add_list(t, "team", &m, 1), MB_EEXIST);
	user(&u, "team");
	assert_int_equal(mb_topology_add_user(t, &u), MB_EEXIST);
	assert_int_equal(mb_topology_user_count(t), 1);
	assert_int_equal(mb_topology_list_count(t), 1);
	mb_topology_destroy(t);
}

/* Read an accounts file of these users and lists; returns the result. */
static int read_accounts(const char *users, const char *lists, char *err, size_t errlen)
{
	char path[] = "/tmp/mb-test-topology-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "{\"version\": 1, \"kind\": \"accounts\", \"users\": [%s], \"lists\": [%s]}\n",
		users, lists);
	fclose(f);
	struct mb_topology *t = NULL;
	int rc = mb_topology_read(path, &t, err, errlen);
	unlink(path);
	mb_topology_destroy(t);
	if (rc == MB_ECONFIG) {
		/* the message names the file first */
		assert_memory_equal(err, path, strlen(path));
		memmove(err, err + strlen(path), strlen(err + strlen(path)) + 1);
	}
	return rc;
}

static void test_read_duplicate(void **state)
{
	(void)state;
	char err[512];
	assert_int_equal(read_accounts("{\"name\": \"a\"}, {\"name\": \"b\"}",
				       "{\"name\": \"l\", \"members\": [\"b\", \"a\"]}", err,
				       sizeof(err)),
			 0);
	assert_int_equal(read_accounts("{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"a\"}",
				       "", err, sizeof(err)),
			 MB_ECONFIG);
	assert_string_equal(err, ": users[2].name: duplicate");
	assert_int_equal(read_accounts("{\"name\": \"a\"}",
				       "{\"name\": \"a\", \"members\": [\"a\"]}", err, sizeof(err)),
			 MB_ECONFIG);
	assert_string_equal(err, ": lists[0].name: bad or duplicate");
	assert_int_equal(read_accounts("{\"name\": \"a\"}",
				       "{\"name\": \"l\", \"members\": []}, "
				       "{\"name\": \"l\", \"members\": []}",
				       err, sizeof(err)),
			 MB_ECONFIG);
	assert_string_equal(err, ": lists[1].name: bad or duplicate");
	assert_int_equal(read_accounts("{\"name\": \"a\"}",
				       "{\"name\": \"l\", \"members\": [\"a\", \"b\"]}", err,
				       sizeof(err)),
			 MB_ECONFIG);
	assert_string_equal(err, ": lists[0].members[1]: not a user");
}

/* Both files keep the lists (members by name) through a write and a read. */
static void test_write_read_lists(void **state)
{
	(void)state;
	struct mb_topology *t = mk();
	struct mb_topo_user u;
	user(&u, "a");
	assert_int_equal(mb_topology_add_user(t, &u), 0);
	user(&u, "b");
	assert_int_equal(mb_topology_add_user(t, &u), 0);
	uint32_t m[2] = {1, 0};
	assert_int_equal(mb_topology_add_list(t, "l", m, 2), 0);
	char path[] = "/tmp/mb-test-topology-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	for (int kind = 0; kind < 2; kind++) {
		assert_int_equal(
		    kind ? mb_topology_write_accounts(t, path) : mb_topology_write(t, path), 0);
		struct mb_topology *r = NULL;
		char err[512];
		assert_int_equal(mb_topology_read(path, &r, err, sizeof(err)), 0);
		assert_int_equal(mb_topology_list_count(r), 1);
		const struct mb_topo_list *l = mb_topology_list(r, 0);
		assert_string_equal(l->name, "l");
		assert_int_equal(l->nmembers, 2);
		assert_int_equal(l->members[0], 1);
		assert_int_equal(l->members[1], 0);
		mb_topology_destroy(r);
	}
	unlink(path);
	mb_topology_destroy(t);
}

/* The largest database write goes through the file; a file from before
 * the field reads as the old coalescing store; a bad value is refused. */
static void test_write_max(void **state)
{
	(void)state;
	struct mb_topology *t = mk();
	struct mb_topo_info in = *mb_topology_info(t);
	mb_topology_destroy(t);
	in.write_max_kb = 4;
	assert_int_equal(mb_topology_create(&in, &t), 0);
	char path[] = "/tmp/mb-test-topology-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mb_topology_write(t, path), 0);
	mb_topology_destroy(t);
	char err[512];
	assert_int_equal(mb_topology_read(path, &t, err, sizeof(err)), 0);
	assert_int_equal(mb_topology_info(t)->write_max_kb, 4);
	mb_topology_destroy(t);
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	assert_non_null(j);
	assert_int_equal(json_object_del(j, "write_max_kb"), 0);
	assert_int_equal(json_dump_file(j, path, 0), 0);
	assert_int_equal(mb_topology_read(path, &t, err, sizeof(err)), 0);
	assert_int_equal(mb_topology_info(t)->write_max_kb, MB_TOPO_WRITE_MAX_KB_OLD);
	mb_topology_destroy(t);
	json_object_set_new(j, "write_max_kb", json_integer(2048));
	assert_int_equal(json_dump_file(j, path, 0), 0);
	t = NULL;
	assert_int_equal(mb_topology_read(path, &t, err, sizeof(err)), MB_ECONFIG);
	assert_null(t);
	assert_non_null(strstr(err, "write_max_kb: not an integer in 0..1024"));
	json_decref(j);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find_many),	   cmocka_unit_test(test_add_duplicate),
	    cmocka_unit_test(test_read_duplicate), cmocka_unit_test(test_write_read_lists),
	    cmocka_unit_test(test_write_max),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
