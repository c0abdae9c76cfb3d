/* test_reqbuild.c: the mbstore driver's request builder fails loudly when
 * full: every kind of entry (ops, properties, tags, message ids, names,
 * sync changes, strings) past its capacity sets MB_ETOOBIG, never hands
 * out an entry already in use (the old builder reused slot 0 or the last
 * op), and a reset clears the error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "load/drivers/reqbuild.h"

static int setup(void **state)
{
	struct mb__rb *rb = malloc(sizeof(*rb));
	if (!rb)
		return -1;
	mb__rb_reset(rb);
	*state = rb;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static void test_ops_overflow(void **state)
{
	struct mb__rb *rb = *state;
	struct mb_op *first = NULL, *last = NULL;
	for (int i = 0; i < MB_RB_OPS; i++) {
		struct mb_op *op = mb__rb_op(rb, MB_OP_OPEN_FOLDER);
		op->u.open_folder.fid = (uint64_t)i + 1;
		if (i == 0)
			first = op;
		last = op;
	}
	assert_int_equal(mb__rb_error(rb), 0);
	assert_int_equal(rb->nops, MB_RB_OPS);
	struct mb_op *extra = mb__rb_op(rb, MB_OP_RELEASE);
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);
	assert_ptr_not_equal(extra, first);
	assert_ptr_not_equal(extra, last);
	extra->u.release.handle = 7;
	/* the batch's ops are untouched */
	assert_int_equal(rb->nops, MB_RB_OPS);
	assert_int_equal(first->code, MB_OP_OPEN_FOLDER);
	assert_int_equal(first->u.open_folder.fid, 1);
	assert_int_equal(last->code, MB_OP_OPEN_FOLDER);
	assert_int_equal(last->u.open_folder.fid, MB_RB_OPS);
	mb__rb_reset(rb);
	assert_int_equal(mb__rb_error(rb), 0);
	assert_int_equal(rb->nops, 0);
}

static void test_props_overflow(void **state)
{
	struct mb__rb *rb = *state;
	struct mb_prop *a = mb__rb_props(rb, MB_RB_PROPS - 2);
	assert_non_null(a);
	for (int i = 0; i < MB_RB_PROPS - 2; i++)
		a[i] = mb_prop_i64(MB_PR_DELIVERY_TIME, i);
	assert_int_equal(mb__rb_error(rb), 0);
	struct mb_prop *b = mb__rb_props(rb, 3); /* one too many */
	assert_non_null(b);
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);
	/* not slot 0, nor anywhere in the batch */
	assert_true(b < rb->props || b >= rb->props + MB_RB_PROPS);
	for (int i = 0; i < 3; i++)
		b[i] = mb_prop_i64(MB_PR_DELIVERY_TIME, -1);
	for (int i = 0; i < MB_RB_PROPS - 2; i++)
		assert_int_equal(a[i].v.i, i);
	/* the error stays until the reset, even if later requests fit */
	assert_non_null(mb__rb_props(rb, 1));
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);
}

static void test_tags_mids_strs_changes(void **state)
{
	struct mb__rb *rb = *state;
	uint32_t *t = mb__rb_tags(rb, MB_RB_PROPS);
	assert_ptr_equal(t, rb->tags);
	assert_int_equal(mb__rb_error(rb), 0);
	uint32_t *t2 = mb__rb_tags(rb, 1);
	assert_true(t2 < rb->tags || t2 >= rb->tags + MB_RB_PROPS);
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);

	mb__rb_reset(rb);
	uint64_t *m = mb__rb_mids(rb, MB_PROTO_MAX_IDS - 1);
	assert_ptr_equal(m, rb->mids);
	uint64_t *m2 = mb__rb_mids(rb, 2);
	assert_true(m2 < rb->mids || m2 >= rb->mids + MB_PROTO_MAX_IDS);
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);

	mb__rb_reset(rb);
	assert_non_null(mb__rb_strs(rb, MB_RB_STRS));
	struct mb_bytes *s2 = mb__rb_strs(rb, 1);
	assert_true(s2 < rb->strs || s2 >= rb->strs + MB_RB_STRS);
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);

	mb__rb_reset(rb);
	assert_non_null(mb__rb_changes(rb, MB_RB_CHANGES - 1));
	struct mb_sync_change *c2 = mb__rb_changes(rb, 2);
	assert_true(c2 < rb->changes || c2 >= rb->changes + MB_RB_CHANGES);
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);
}

/* A count that can never fit (from data) is refused outright. */
static void test_too_many_for_any_batch(void **state)
{
	struct mb__rb *rb = *state;
	assert_null(mb__rb_mids(rb, MB_PROTO_MAX_IDS + 1));
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);
	mb__rb_reset(rb);
	assert_null(mb__rb_props(rb, -1));
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);
	mb__rb_reset(rb);
	assert_null(mb__rb_strs(rb, MB_RB_STRS + 1));
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);
	mb__rb_reset(rb);
	assert_non_null(mb__rb_mids(rb, 0));
	assert_int_equal(mb__rb_error(rb), 0);
}

/* Strings are never cut short and never overwrite earlier ones. */
static void test_printf_overflow(void **state)
{
	struct mb__rb *rb = *state;
	struct mb_bytes first = mb__rb_printf(rb, "subject %d", 42);
	assert_int_equal(first.len, 10);
	assert_memory_equal(first.p, "subject 42", 10);
	char big[1024];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	int fitted = 0;
	struct mb_bytes b;
	for (;;) {
		b = mb__rb_printf(rb, "%s", big);
		if (mb__rb_error(rb))
			break;
		assert_int_equal(b.len, sizeof(big) - 1);
		fitted++;
	}
	assert_int_equal(fitted, (MB_RB_POOL - 11) / sizeof(big));
	assert_int_equal(b.len, 0);
	assert_int_equal(mb__rb_error(rb), MB_ETOOBIG);
	assert_memory_equal(first.p, "subject 42", 10);
	mb__rb_reset(rb);
	b = mb__rb_printf(rb, "%s", "again");
	assert_int_equal(mb__rb_error(rb), 0);
	assert_int_equal(b.len, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_ops_overflow, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_props_overflow, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tags_mids_strs_changes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_too_many_for_any_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_printf_overflow, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
