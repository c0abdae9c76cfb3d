/* test_watchvfs.c: the storage test's watching vfs (src/stress/watchvfs.c)
 * over the engine's fault wrapper (src/db/io.c): transfers go through
 * unchanged; the first failed transfer is kept with its file, offset,
 * error and operation, and a later failure does not replace it; a closed
 * descriptor forgets its path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "db/io.h"
#include "stress/watchvfs.h"

static void test_first_failure_kept(void **state)
{
	(void)state;
	char dir[] = "/tmp/mb-watchvfs.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char a[64], b[64];
	snprintf(a, sizeof(a), "%s/a.edb", dir);
	snprintf(b, sizeof(b), "%s/b.edb", dir);

	struct mb_fault *f;
	assert_int_equal(mb_fault_create(NULL, &f), 0);
	struct mb_watchvfs *w = mb_watchvfs_create(mb_fault_vfs(f));
	assert_non_null(w);
	const struct mb_vfs *v = mb_watchvfs_vfs(w);
	char file[256], what[64];
	uint64_t off = 0;
	int code = 0;

	/* no failure yet: transfers go through */
	int fa = v->open(v->ctx, a, O_RDWR | O_CREAT, 0600, MB_FILE_DB);
	int fb = v->open(v->ctx, b, O_RDWR | O_CREAT, 0600, MB_FILE_DB);
	assert_true(fa >= 0 && fb >= 0);
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(v->pwrite(v->ctx, fa, MB_FILE_DB, buf, sizeof(buf), 0), sizeof(buf));
	assert_int_equal(v->pread(v->ctx, fa, MB_FILE_DB, buf, sizeof(buf), 0), sizeof(buf));
	assert_false(
	    mb_watchvfs_first_error(w, file, sizeof(file), &off, &code, what, sizeof(what)));

	/* every write fails from now: the first one (b at 8192) is kept */
	struct mb_fault_rule r = {
	    .type = MB_FAULT_EIO, .op = MB_FAULT_ON_WRITE, .kind = -1, .nth = 1, .sticky = true};
	mb_fault_arm(f, &r);
	assert_true(v->pwrite(v->ctx, fb, MB_FILE_DB, buf, sizeof(buf), 8192) < 0);
	assert_true(v->pwrite(v->ctx, fa, MB_FILE_DB, buf, sizeof(buf), 4096) < 0);
	assert_true(
	    mb_watchvfs_first_error(w, file, sizeof(file), &off, &code, what, sizeof(what)));
	assert_string_equal(file, b);
	assert_int_equal(off, 8192);
	assert_int_equal(code, MB_EIO);
	assert_true(strlen(what) > 0);
	mb_fault_disarm(f);

	/* a closed descriptor forgets its path: a failure on a later file
	 * with the same number names that file (checked in a new watcher) */
	assert_int_equal(v->close(v->ctx, fa), 0);
	assert_int_equal(v->close(v->ctx, fb), 0);
	mb_watchvfs_destroy(w);
	w = mb_watchvfs_create(mb_fault_vfs(f));
	assert_non_null(w);
	v = mb_watchvfs_vfs(w);
	fa = v->open(v->ctx, a, O_RDWR, 0600, MB_FILE_DB);
	assert_true(fa >= 0);
	assert_int_equal(v->close(v->ctx, fa), 0);
	fb = v->open(v->ctx, b, O_RDWR, 0600, MB_FILE_DB);
	assert_true(fb >= 0);
	struct mb_fault_rule rr = {
	    .type = MB_FAULT_EIO, .op = MB_FAULT_ON_READ, .kind = -1, .nth = 1, .sticky = false};
	mb_fault_arm(f, &rr);
	assert_true(v->pread(v->ctx, fb, MB_FILE_DB, buf, sizeof(buf), 0) < 0);
	assert_true(mb_watchvfs_first_error(w, file, sizeof(file), &off, &code, NULL, 0));
	assert_string_equal(file, b);
	assert_int_equal(off, 0);
	assert_int_equal(v->close(v->ctx, fb), 0);

	mb_watchvfs_destroy(w);
	mb_fault_destroy(f);
	assert_int_equal(unlink(a), 0);
	assert_int_equal(unlink(b), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_failure_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
