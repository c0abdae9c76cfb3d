/* test_loadhosts.c: the supervisor's side of the load engine on several
 * machines (src/report/loadhosts.h): hostfiles (slots, comments, errors
 * naming file and line, local-only detection), the ranks' slices taken
 * from the stats stream, saturated ranks named, mpirun's failure reports
 * parsed, and the summary's "load" object surviving a JSON round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "report/loadhosts.h"

static char path[64];

static void write_file(const char *text)
{
	snprintf(path, sizeof(path), "/tmp/mb-hostfile.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_hostfile(void **state)
{
	(void)state;
	struct mb_hostfile hf;
	char err[512];
	write_file("# load hosts\nlocalhost slots=3\n\n127.0.0.1   # same machine\n");
	assert_int_equal(mb_hostfile_read(path, &hf, err, sizeof(err)), 0);
	assert_int_equal(hf.count, 2);
	assert_string_equal(hf.host[0], "localhost");
	assert_int_equal(hf.slots[0], 3);
	assert_int_equal(hf.total_slots, 4);
	assert_true(hf.local_only);
	unlink(path);
	write_file("load1.example slots=4 max_slots=8\nlocalhost\n");
	assert_int_equal(mb_hostfile_read(path, &hf, err, sizeof(err)), 0);
	assert_false(hf.local_only);
	unlink(path);
	write_file("localhost\nload2 slots=zero\n");
	assert_int_equal(mb_hostfile_read(path, &hf, err, sizeof(err)), MB_ECONFIG);
	assert_non_null(strstr(err, ":2: slots"));
	unlink(path);
	write_file("load2 colour=blue\n");
	assert_int_equal(mb_hostfile_read(path, &hf, err, sizeof(err)), MB_ECONFIG);
	assert_non_null(strstr(err, ":1: unknown field 'colour=blue'"));
	unlink(path);
	write_file("# nothing\n");
	assert_int_equal(mb_hostfile_read(path, &hf, err, sizeof(err)), MB_ECONFIG);
	unlink(path);
	assert_int_equal(mb_hostfile_read("/nonexistent/hosts", &hf, err, sizeof(err)), MB_EIO);
}

static void test_ranks(void **state)
{
	(void)state;
	struct mb_load_ranks r;
	memset(&r, 0, sizeof(r));
	r.ranks = 2;
	snprintf(r.hosts, sizeof(r.hosts), "a, b");
	json_t *x = json_loads("[{\"rank\":0,\"host\":\"a\",\"pid\":11,\"first\":0,\"last\":4,"
			       "\"saturated\":false},{\"rank\":1,\"host\":\"b\",\"pid\":12,"
			       "\"first\":5,\"last\":9,\"saturated\":true}]",
			       0, NULL);
	assert_non_null(x);
	mb_load_ranks_update(&r, x, false); /* warm-up: not counted */
	mb_load_ranks_update(&r, x, true);
	mb_load_ranks_update(&r, x, true);
	json_decref(x);
	assert_int_equal(r.listed, 2);
	char buf[512];
	mb_load_ranks_desc(&r, buf, sizeof(buf));
	assert_string_equal(buf, "2 ranks on a, b");
	mb_load_ranks_name(&r, 1, buf, sizeof(buf));
	assert_string_equal(buf, "rank 1 (b, pid 12, users 5-9)");
	mb_load_ranks_name(&r, 7, buf, sizeof(buf));
	assert_string_equal(buf, "rank 7");
	mb_load_ranks_saturated(&r, buf, sizeof(buf));
	assert_string_equal(buf, "rank 1 (b, pid 12, users 5-9) saturated 2 s");
	json_t *j = mb_load_ranks_json(&r);
	assert_non_null(j);
	struct mb_load_ranks back;
	mb_load_ranks_from_json(j, &back);
	json_decref(j);
	assert_int_equal(back.ranks, 2);
	assert_int_equal(back.listed, 2);
	assert_string_equal(back.hosts, "a, b");
	assert_int_equal(back.rank[1].first, 5);
	assert_int_equal(back.rank[1].last, 9);
	assert_int_equal(back.rank[1].pid, 12);
	assert_int_equal(back.rank[1].saturated_s, 2);
	memset(&r, 0, sizeof(r));
	assert_null(mb_load_ranks_json(&r)); /* one process: no "load" */
}

static void test_mpirun_report(void **state)
{
	(void)state;
	int rank = -1;
	char how[128];
	assert_true(mb_mpirun_parse_failure(
	    "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).",
	    &rank, how, sizeof(how)));
	assert_int_equal(rank, 1);
	assert_string_equal(how, "exited on signal 9 (Killed)");
	assert_true(mb_mpirun_parse_failure("MPI_ABORT was invoked on rank 2 in communicator "
					    "MPI_COMM_WORLD",
					    &rank, how, sizeof(how)));
	assert_int_equal(rank, 2);
	assert_false(
	    mb_mpirun_parse_failure("mailbench load: rank 0 of 3 on vm", &rank, how, sizeof(how)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hostfile),
	    cmocka_unit_test(test_ranks),
	    cmocka_unit_test(test_mpirun_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
