/* test_counters.c: unit tests of the counters table (core/counters.h):
 * keys unique and snake_case, the published rows are the 13 JSON keys of
 * the published tables in the published order, mb_counter_find. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <ctype.h>
#include <string.h>

#include "core/counters.h"
#include "core/error.h"

static void test_keys_unique(void **state)
{
	(void)state;
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		const struct mb_counter_def *d = &mb_counters[i];
		assert_int_equal(d->id, i);
		assert_non_null(d->key);
		assert_non_null(d->label);
		assert_non_null(d->unit);
		assert_non_null(d->definition);
		assert_true(strlen(d->definition) > 0);
		assert_true(d->kind == MB_RATE || d->kind == MB_GAUGE);
		assert_true(d->decimals >= 0 && d->decimals <= 6);
		for (const char *p = d->key; *p; p++)
			assert_true(islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
				    *p == '_');
		for (int j = 0; j < i; j++) {
			assert_true(strcmp(d->key, mb_counters[j].key) != 0);
			assert_true(strcmp(d->label, mb_counters[j].label) != 0);
		}
	}
}

static void test_published_order(void **state)
{
	(void)state;
	static const char *const keys[] = {
	    "users",
	    "processor_pct",
	    "context_switches_per_s",
	    "local_delivery_rate",
	    "network_kbit_per_s",
	    "db_transfers_per_s",
	    "log_writes_per_s",
	    "disk_mb_per_s",
	    "db_cache_mb",
	    "rpc_ops_per_s",
	    "rpc_requests",
	    "client_latency_ms",
	    "store_virtual_mb",
	};
	assert_int_equal(MB_PUBLISHED_COUNT, 13);
	for (int i = 0; i < 13; i++) {
		assert_string_equal(mb_counters[i].key, keys[i]);
		assert_true(mb_counter_published((enum mb_counter_id)i));
	}
	assert_true(MB_COUNTER_COUNT > MB_PUBLISHED_COUNT);
	assert_false(mb_counter_published((enum mb_counter_id)MB_PUBLISHED_COUNT));
	/* the published row labels */
	assert_string_equal(mb_counters[MB_C_PROCESSOR_PCT].label, "% processor time");
	assert_string_equal(mb_counters[MB_C_STORE_VIRTUAL_MB].label, "store virtual bytes (MB)");
	assert_int_equal(mb_counters[MB_C_CONTEXT_SWITCHES].kind, MB_RATE);
	assert_int_equal(mb_counters[MB_C_DB_CACHE_MB].kind, MB_GAUGE);
}

static void test_find(void **state)
{
	(void)state;
	enum mb_counter_id id;
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		assert_int_equal(mb_counter_find(mb_counters[i].key, &id), 0);
		assert_int_equal(id, i);
	}
	assert_int_equal(mb_counter_find("rpc_ops_per_s", &id), 0);
	assert_int_equal(id, MB_C_RPC_OPS);
	id = MB_C_USERS;
	assert_int_equal(mb_counter_find("no_such_counter", &id), MB_ENOTFOUND);
	assert_int_equal(mb_counter_find("", &id), MB_ENOTFOUND);
	assert_int_equal(mb_counter_find("USERS", &id), MB_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys_unique),
	    cmocka_unit_test(test_published_order),
	    cmocka_unit_test(test_find),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
