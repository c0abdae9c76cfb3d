/* test_scenario.c: unit tests of the scenario loader (core/scenario.h):
 * the three shipped files load with the exact published figures; every
 * error class gives its exact "FILE:LINE: FIELD: message"; a file based on
 * another overrides only what it sets.  Test files live in a mktemp dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/scenario.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	/* the source tree's scenarios unless the harness says otherwise */
	setenv("MAILBENCH_SCENARIOS", MB_SRCDIR "/scenarios", 0);
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/mbscenXXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write tmpdir/NAME with TEXT; return its path (static buffer per call). */
static const char *put(const char *name, const char *text)
{
	static char paths[8][512];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, 512, "%s/%s", tmpdir, name);
	char *slash = strrchr(p, '/');
	*slash = '\0';
	mkdir(p, 0700);
	*slash = '/';
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static struct mb_scenario *sc_new(void)
{
	struct mb_scenario *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	return s;
}

static void test_online_published(void **state)
{
	(void)state;
	struct mb_scenario *s = sc_new();
	struct mb_cfg_error err;
	int rc = mb_scenario_load("online", s, &err);
	if (rc) {
		char b[5000];
		mb_cfg_error_format(&err, b, sizeof(b));
		fprintf(stderr, "%s\n", b);
	}
	assert_int_equal(rc, 0);
	assert_string_equal(s->name, "online");
	assert_string_equal(s->title, "Scenario 1: Outlook online");
	assert_int_equal(s->number, 1);
	assert_int_equal(s->mode, MB_MODE_ONLINE);
	/* topology */
	assert_int_equal(s->users, 8000);
	assert_int_equal(s->databases, 12);
	assert_int_equal(s->storage_groups, 3);
	assert_int_equal(s->db_cache_mb, 896);
	assert_true(s->mailbox_mb == 25.0);
	assert_int_equal(s->users_per_client, 1000);
	/* mailbox configuration, distribution lists */
	assert_int_equal(s->mailbox.inbox_messages, 100);
	assert_int_equal(s->mailbox.deleted_items_messages, 1);
	assert_int_equal(s->mailbox.new_folders, 10);
	assert_int_equal(s->mailbox.messages_per_folder, 10);
	assert_int_equal(s->mailbox.calendar_appointments, 25);
	assert_int_equal(s->mailbox.contacts, 128);
	assert_int_equal(s->mailbox.avg_message_kb, 75);
	assert_int_equal(s->dl_per_site, 100);
	assert_int_equal(s->dl_min_members, 2);
	assert_int_equal(s->dl_avg_members, 10);
	assert_int_equal(s->dl_max_members, 20);
	/* actions per 8-hour day */
	static const double want[MB_ACTION_COUNT] = {12, 12, 20, 1, 1.4, 2.8, 6, 0, 0, 0, 0};
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		assert_true(s->actions_per_day[i] == want[i]);
	assert_true(s->messages_received_per_day == 208);
	assert_true(s->messages_sent_per_day == 52);
	/* published columns */
	assert_int_equal(s->column_count, 4);
	assert_string_equal(s->columns[0].heading,
			    "(a) Windows 2000 SP3, Exchange 2000 SP3, Outlook 2000 online");
	assert_string_equal(s->columns[2].platform, "Windows Server 2003");
	assert_string_equal(s->columns[1].engine, "Exchange 2003");
	assert_string_equal(s->columns[0].client, "Outlook 2000 online");
	assert_string_equal(s->columns[3].client_os, "Windows XP");
	assert_false(s->columns[2].smt);
	assert_true(s->columns[3].smt);
	for (int c = 0; c < 4; c++)
		for (int i = 0; i < MB_PUBLISHED_COUNT; i++)
			assert_true(s->columns[c].has[i]);
	static const double b_col[MB_PUBLISHED_COUNT] = {8000, 76,  7833, 30, 1594, 1980, 314,
							 20.4, 896, 955,  8,  100,  2075};
	for (int i = 0; i < MB_PUBLISHED_COUNT; i++)
		assert_true(s->columns[1].value[i] == b_col[i]);
	assert_true(s->columns[0].value[MB_C_NETWORK] == 3154);
	assert_true(s->columns[0].value[MB_C_DB_CACHE_MB] == 864);
	assert_true(s->columns[0].value[MB_C_DISK_MB] == 19.9);
	assert_true(s->columns[2].value[MB_C_CONTEXT_SWITCHES] == 10183);
	assert_true(s->columns[3].value[MB_C_PROCESSOR_PCT] == 57);
	assert_true(s->columns[3].value[MB_C_CONTEXT_SWITCHES] == 13487);
	assert_true(s->columns[3].value[MB_C_CLIENT_LATENCY] == 105);
	assert_true(s->columns[3].value[MB_C_STORE_VIRTUAL_MB] == 2082);
	/* run defaults are in range and separate from the published figures */
	assert_true(s->run_users >= 1 && s->run_users <= s->users);
	assert_true(s->scale > 0 && s->scale <= 1);
	assert_int_equal(s->page_kb, 4);      /* ESE in Exchange 2003 */
	assert_int_equal(s->write_max_kb, 4); /* a page per write: no coalescing */
	assert_true(s->run_cache_mb == 0);    /* the published ratio */
	assert_int_equal(s->run_seed, 1);
	assert_int_equal(s->thresholds[MB_C_LOADSIM_SCORE_MS].cmp, MB_CMP_LT);
	assert_true(s->thresholds[MB_C_LOADSIM_SCORE_MS].value == 1000);
	assert_int_equal(s->thresholds[MB_C_USERS].cmp, MB_CMP_NONE);
	free(s);
}

static void test_cached_published(void **state)
{
	(void)state;
	struct mb_scenario *s = sc_new();
	struct mb_cfg_error err;
	assert_int_equal(mb_scenario_load("cached", s, &err), 0);
	assert_int_equal(s->number, 2);
	assert_int_equal(s->mode, MB_MODE_CACHED);
	assert_int_equal(s->users, 8000);
	assert_int_equal(s->db_cache_mb, 896);
	static const double want[MB_ACTION_COUNT] = {7, 20, 0, 4, 2, 4, 1, 0, 3, 0, 0};
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		assert_true(s->actions_per_day[i] == want[i]);
	assert_true(s->messages_received_per_day == 161.90);
	assert_true(s->messages_sent_per_day == 44.12);
	assert_int_equal(s->column_count, 2);
	assert_string_equal(s->columns[0].heading, "(a) Windows 2000 SP3, Exchange 2000 SP3");
	assert_string_equal(s->columns[1].heading, "(b) Windows 2000 SP3, Exchange 2003");
	assert_string_equal(s->columns[1].client, "Outlook 2003 cached mode");
	static const double a_col[MB_PUBLISHED_COUNT] = {8000, 64,  7981, 23, 3613, 1496, 304,
							 17.7, 896, 1205, 8,  0,    2016};
	static const double b_col[MB_PUBLISHED_COUNT] = {8000, 57,  6488, 23, 1765, 1355, 315,
							 16.2, 864, 1193, 7,  0,    2076};
	for (int i = 0; i < MB_PUBLISHED_COUNT; i++) {
		/* no client latency row was published for scenario 2 */
		bool published = i != MB_C_CLIENT_LATENCY;
		assert_int_equal(s->columns[0].has[i], published);
		assert_int_equal(s->columns[1].has[i], published);
		if (published) {
			assert_true(s->columns[0].value[i] == a_col[i]);
			assert_true(s->columns[1].value[i] == b_col[i]);
		}
	}
	free(s);
}

static void test_storage_published(void **state)
{
	(void)state;
	struct mb_storage_cfg c;
	struct mb_cfg_error err;
	assert_int_equal(mb_storage_cfg_load("storage", &c, &err), 0);
	assert_string_equal(c.name, "storage");
	assert_int_equal(c.page_kb, 32);
	assert_int_equal(c.thread_count, 3);
	assert_int_equal(c.threads[0], 4);
	assert_int_equal(c.threads[1], 8);
	assert_int_equal(c.threads[2], 12);
	assert_true(c.db_read_avg_ms_max == 20);
	assert_true(c.log_write_avg_ms_max == 10);
	assert_true(c.insert_pct == 17 && c.replace_pct == 68 && c.delete_pct == 5 &&
		    c.seek_pct == 10);
	assert_true(c.db_size_gb > 0);
	assert_string_equal(c.mode, "transactions");
	assert_string_equal(c.type, "performance");
	assert_int_equal(c.ref_count, 3);
	static const struct mb_storage_ref want[3] = {
	    {4, 5580, 1.16, 0.99}, {8, 10147, 1.29, 0.99}, {12, 14351, 1.42, 0.98}};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(c.ref[i].threads, want[i].threads);
		assert_true(c.ref[i].iops == want[i].iops);
		assert_true(c.ref[i].db_read_ms == want[i].db_read_ms);
		assert_true(c.ref[i].log_write_ms == want[i].log_write_ms);
	}
	assert_non_null(strstr(c.ref_heading, "6 SSDs, 1.7 TB usable"));
	/* the kinds do not mix */
	struct mb_scenario *s = sc_new();
	assert_int_equal(mb_scenario_load("storage", s, &err), MB_ECONFIG);
	assert_string_equal(err.field, "kind");
	/* and the error says which command runs the other kind */
	assert_non_null(strstr(err.message, "not \"storage\"; "));
	assert_non_null(strstr(err.message, "run by mailbench storage-test"));
	assert_int_equal(mb_storage_cfg_load("online", &c, &err), MB_ECONFIG);
	assert_string_equal(err.field, "kind");
	assert_non_null(strstr(err.message, "a \"mailbox\" file is a scenario (1 online"));
	free(s);
}

/* Load TEXT as tmpdir/NAME; expect MB_ECONFIG and exactly WANT, where
 * "%s" in WANT stands for tmpdir. */
static void expect_error(const char *name, const char *text, const char *want, bool storage)
{
	const char *path = put(name, text);
	struct mb_scenario *s = sc_new();
	struct mb_storage_cfg *c = calloc(1, sizeof(*c));
	struct mb_cfg_error err;
	char got[6000], exp[6000];
	int rc = storage ? mb_storage_cfg_load(path, c, &err) : mb_scenario_load(path, s, &err);
	assert_int_equal(rc, MB_ECONFIG);
	mb_cfg_error_format(&err, got, sizeof(got));
	snprintf(exp, sizeof(exp), want, tmpdir, tmpdir);
	if (strcmp(got, exp) != 0)
		fprintf(stderr, "got:  %s\nwant: %s\n", got, exp);
	assert_string_equal(got, exp);
	free(s);
	free(c);
}

static void test_errors(void **state)
{
	(void)state;
	/* libconfig syntax error */
	expect_error("syntax.cfg", "base = \"online\";\ntopology = { users = ; };\n",
		     "%s/syntax.cfg:2: syntax error", false);
	/* unknown key (a typo) */
	expect_error("typo.cfg", "base = \"online\";\nrun = {\n\tuserz = 500;\n};\n",
		     "%s/typo.cfg:3: run.userz: unknown key (did you mean \"users\"?)", false);
	expect_error("unknown.cfg", "base = \"online\";\ncolour = \"blue\";\n",
		     "%s/unknown.cfg:2: colour: unknown key", false);
	expect_error("unknown2.cfg", "base = \"online\";\nactions_per_day = { fly = 1; };\n",
		     "%s/unknown2.cfg:2: actions_per_day.fly: unknown key", false);
	/* wrong type: a string where a number belongs */
	expect_error("type.cfg", "base = \"online\";\ntopology = { users = \"many\"; };\n",
		     "%s/type.cfg:2: topology.users: must be an integer, not a string", false);
	expect_error("type2.cfg", "base = \"online\";\n\nactions_per_day = { logoff = \"3\"; };\n",
		     "%s/type2.cfg:3: actions_per_day.logoff: must be a number, not a string",
		     false);
	expect_error("type3.cfg", "base = \"online\";\ntopology = { users = 2.5; };\n",
		     "%s/type3.cfg:2: topology.users: must be an integer, not a number", false);
	expect_error("type4.cfg", "base = \"online\";\ntopology = 5;\n",
		     "%s/type4.cfg:2: topology: must be a group { ... }, not an integer", false);
	expect_error("type5.cfg", "base = \"online\";\nrun = { compression = 1; };\n",
		     "%s/type5.cfg:2: run.compression: must be true or false, not an integer",
		     false);
	/* out of range */
	expect_error("neg.cfg", "base = \"online\";\nactions_per_day = {\n\tsend_mail = -1;\n};\n",
		     "%s/neg.cfg:3: actions_per_day.send_mail: must be between 0 and 100000",
		     false);
	expect_error("users.cfg", "base = \"online\";\n\n\ntopology = { users = 0; };\n",
		     "%s/users.cfg:4: topology.users: must be between 1 and 1000000", false);
	expect_error("mode.cfg", "base = \"online\";\nmode = \"offline\";\n",
		     "%s/mode.cfg:2: mode: must be one of \"online\", \"cached\", not \"offline\"",
		     false);
	expect_error(
	    "pub.cfg",
	    "base = \"online\";\npublished = { columns = (\n { id = \"a\"; heading = \"h\"; "
	    "platform = \"p\"; engine = \"e\"; client = \"c\"; smt = false;\n"
	    "   values = { rpc_ops_per_s = -5; }; }\n); };\n",
	    "%s/pub.cfg:4: published.columns[0].values.rpc_ops_per_s: must be between 0 and "
	    "1000000000000",
	    false);
	expect_error("thr.cfg", "base = \"online\";\nthresholds = { users = \"about 5\"; };\n",
		     "%s/thr.cfg:2: thresholds.users: must be a comparison such as \"< 80\" or "
		     "\">= 5\", not \"about 5\"",
		     false);
	expect_error("threads.cfg", "base = \"storage\";\nrun = { threads = [4, 0]; };\n",
		     "%s/threads.cfg:2: run.threads[1]: must be between 1 and 64", true);
	/* a field the engine fixes: its one value, named as such */
	expect_error("seg.cfg", "base = \"storage\";\nlog = { segment_kb = 4096; };\n",
		     "%s/seg.cfg:2: log.segment_kb: must be 1024 (fixed)", true);
	/* missing required fields: at the line of their group when it exists */
	expect_error("missing.cfg", "kind = \"mailbox\";\ntitle = \"t\";\n",
		     "%s/missing.cfg: number: required but missing", false);
	expect_error("missing2.cfg",
		     "base = \"online\";\npublished = {\n columns = (\n  { id = \"a\";\n   "
		     "platform = \"p\"; engine = \"e\"; client = \"c\"; smt = false; }\n ); };\n",
		     "%s/missing2.cfg:4: published.columns[0].heading: required but missing",
		     false);
	/* cross-field checks, at the offending field's line */
	expect_error(
	    "dl.cfg", "base = \"online\";\ndistribution_lists = {\n min_members = 50;\n};\n",
	    "%s/dl.cfg:3: distribution_lists.min_members: must not exceed avg_members (10)", false);
	expect_error("mix.cfg", "base = \"storage\";\nmix = { seek_pct = 11; };\n",
		     "%s/mix.cfg:2: mix.seek_pct: insert + replace + delete + seek must add up to "
		     "100, not 101",
		     true);
	expect_error("page.cfg", "base = \"online\";\ntopology = { page_kb = 16; };\n",
		     "%s/page.cfg:2: topology.page_kb: must be 4, 8 or 32", false);
	expect_error("wmax.cfg", "base = \"online\";\ntopology = { write_max_kb = 2048; };\n",
		     "%s/wmax.cfg:2: topology.write_max_kb: must be between 4 and 1024", false);
	/* bad include and bad base */
	expect_error("inc.cfg", "base = \"online\";\n@include \"nothere.cfg\"\n",
		     "%s/inc.cfg:2: cannot open include file: \"nothere.cfg\" (looked in %s)",
		     false);
	char basewant[1200];
	snprintf(basewant, sizeof(basewant),
		 "%%s/base.cfg:2: base: cannot find \"nothere\" (looked for %%s/nothere.cfg and in "
		 "%s)",
		 mb_scenario_dir());
	expect_error("base.cfg", "\nbase = \"nothere\";\n", basewant, false);
	expect_error(
	    "base2.cfg", "base = 5;\n",
	    "%s/base2.cfg:1: base: must be a string (scenario name or path), not an integer",
	    false);
	put("loop2.cfg", "base = \"loop1\";\n");
	expect_error("loop1.cfg", "base = \"loop2\";\n",
		     "%s/loop1.cfg: base: base files form a loop", false);
	/* errors inside an included file name that file and its line */
	put("inc/part.cfg", "# part\ntopology = {\n\tusers = -2;\n};\n");
	expect_error("inc/lab.cfg", "base = \"online\";\n@include \"part.cfg\"\n",
		     "%s/inc/part.cfg:3: topology.users: must be between 1 and 1000000", false);
	/* a file that does not exist */
	char want[600];
	snprintf(want, sizeof(want), "%%s/none.cfg: cannot open: No such file or directory");
	struct mb_scenario *s = sc_new();
	struct mb_cfg_error err;
	char path[600], got[6000], exp[6000];
	snprintf(path, sizeof(path), "%s/none.cfg", tmpdir);
	assert_int_equal(mb_scenario_load(path, s, &err), MB_ECONFIG);
	mb_cfg_error_format(&err, got, sizeof(got));
	snprintf(exp, sizeof(exp), want, tmpdir);
	assert_string_equal(got, exp);
	free(s);
}

static void test_base_override(void **state)
{
	(void)state;
	struct mb_scenario *online = sc_new(), *lab = sc_new();
	struct mb_cfg_error err;
	assert_int_equal(mb_scenario_load("online", online, &err), 0);

	/* my-lab.cfg changes only the user count */
	const char *p = put("my-lab.cfg", "base = \"online\";\nrun = { users = 500; };\n");
	assert_int_equal(mb_scenario_load(p, lab, &err), 0);
	assert_string_equal(lab->name, "my-lab");
	assert_string_equal(lab->path, p);
	assert_int_equal(lab->run_users, 500);
	/* everything else is the base's */
	lab->run_users = online->run_users;
	memcpy(lab->name, online->name, sizeof(lab->name));
	memcpy(lab->path, online->path, sizeof(lab->path));
	assert_memory_equal(lab, online, sizeof(*lab));

	/* the topology user count, and a base next to the file first */
	put("sub/online.cfg",
	    "base = \"" MB_SRCDIR "/scenarios/online.cfg\";\ntitle = \"local\";\n");
	p = put("sub/lab.cfg", "base = \"online\";\ntopology = { users = 250; };\n");
	assert_int_equal(mb_scenario_load(p, lab, &err), 0);
	assert_string_equal(lab->title, "local");
	assert_int_equal(lab->users, 250);
	assert_int_equal(lab->databases, 12);

	/* a list replaces the base's list whole */
	p = put("cols.cfg", "base = \"online\";\npublished = { columns = (\n"
			    " { id = \"x\"; heading = \"h\"; platform = \"p\"; engine = \"e\";\n"
			    "   client = \"c\"; smt = true; values = { users = 10; }; }\n); };\n");
	assert_int_equal(mb_scenario_load(p, lab, &err), 0);
	assert_int_equal(lab->column_count, 1);
	assert_string_equal(lab->columns[0].id, "x");
	assert_true(lab->columns[0].has[MB_C_USERS]);
	assert_false(lab->columns[0].has[MB_C_PROCESSOR_PCT]);
	assert_string_equal(lab->results_title, "Scenario 1 results: Outlook online (8,000 users)");
	free(online);
	free(lab);
}

static void test_resolve(void **state)
{
	(void)state;
	char path[600];
	assert_string_equal(mb_scenario_dir(), getenv("MAILBENCH_SCENARIOS"));
	assert_int_equal(mb_scenario_resolve("online", path, sizeof(path)), 0);
	snprintf(path + 300, 300, "%s/online.cfg", getenv("MAILBENCH_SCENARIOS"));
	assert_string_equal(path, path + 300);
	assert_int_equal(mb_scenario_resolve("my-lab.cfg", path, sizeof(path)), 0);
	assert_string_equal(path, "my-lab.cfg");
	assert_int_equal(mb_scenario_resolve("./x", path, sizeof(path)), 0);
	assert_string_equal(path, "./x");
	assert_int_equal(mb_scenario_resolve("", path, sizeof(path)), MB_EINVAL);
	assert_int_equal(mb_scenario_resolve("online", path, 5), MB_ETOOBIG);
	/* an explicit directory */
	char *old = strdup(getenv("MAILBENCH_SCENARIOS"));
	char dir1[600], dir2[600];
	setenv("MAILBENCH_SCENARIOS", "/nowhere", 1);
	snprintf(dir1, sizeof(dir1), "%s", mb_scenario_dir());
	int rc = mb_scenario_resolve("cached", path, sizeof(path));
	/* unset: a test binary runs from the build tree -> the source tree */
	unsetenv("MAILBENCH_SCENARIOS");
	snprintf(dir2, sizeof(dir2), "%s", mb_scenario_dir());
	setenv("MAILBENCH_SCENARIOS", old, 1); /* restored before any assert */
	free(old);
	assert_string_equal(dir1, "/nowhere");
	assert_int_equal(rc, 0);
	assert_string_equal(path, "/nowhere/cached.cfg");
	assert_string_equal(dir2, MB_SRCDIR "/scenarios");
}

static void test_thresholds(void **state)
{
	(void)state;
	struct mb_threshold t;
	char buf[64];
	assert_int_equal(mb_threshold_parse("< 80", &t), 0);
	assert_int_equal(t.cmp, MB_CMP_LT);
	assert_true(t.value == 80);
	assert_int_equal(mb_threshold_parse(">=0.5", &t), 0);
	assert_int_equal(t.cmp, MB_CMP_GE);
	mb_threshold_format(&t, buf, sizeof(buf));
	assert_string_equal(buf, ">= 0.5");
	assert_true(mb_threshold_ok(&t, 0.5));
	assert_false(mb_threshold_ok(&t, 0.4));
	assert_int_equal(mb_threshold_parse(" <= 10 ", &t), 0);
	assert_true(mb_threshold_ok(&t, 10));
	assert_false(mb_threshold_ok(&t, 10.01));
	assert_int_equal(mb_threshold_parse("> 3", &t), 0);
	assert_false(mb_threshold_ok(&t, 3));
	assert_int_equal(mb_threshold_parse("80", &t), MB_EINVAL);
	assert_int_equal(mb_threshold_parse("< x", &t), MB_EINVAL);
	assert_int_equal(mb_threshold_parse("< 5 6", &t), MB_EINVAL);
	t.cmp = MB_CMP_NONE;
	assert_true(mb_threshold_ok(&t, 1e9));
	mb_threshold_format(&t, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

static void test_json_and_text(void **state)
{
	(void)state;
	struct mb_scenario *s = sc_new();
	struct mb_cfg_error err;
	assert_int_equal(mb_scenario_load("cached", s, &err), 0);
	json_t *o = mb_scenario_json(s);
	assert_non_null(o);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "topology"), "users")), 8000);
	assert_string_equal(json_string_value(json_object_get(o, "mode")), "cached");
	json_t *cols = json_object_get(json_object_get(o, "published"), "columns");
	assert_int_equal(json_array_size(cols), 2);
	json_t *vals = json_object_get(json_array_get(cols, 1), "values");
	assert_true(json_number_value(json_object_get(vals, "db_cache_mb")) == 864);
	assert_true(json_is_null(json_object_get(vals, "client_latency_ms")));
	assert_true(json_number_value(
			json_object_get(json_object_get(o, "actions_per_day"), "logoff")) == 3);
	json_decref(o);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	mb_scenario_print(f, s);
	mb_cfg_fields_print(f, false);
	mb_cfg_fields_print(f, true);
	fclose(f);
	assert_non_null(strstr(buf, "messages_sent_per_day = 44.12\n"));
	assert_non_null(
	    strstr(buf, "published.columns[1].values.client_latency_ms = (not published)"));
	assert_non_null(strstr(buf, "actions_per_day.check_free_busy"));
	assert_non_null(strstr(buf, "mix.lazy_commit_pct"));
	free(buf);

	struct mb_storage_cfg c;
	assert_int_equal(mb_storage_cfg_load("storage", &c, &err), 0);
	o = mb_storage_cfg_json(&c);
	json_t *rows = json_object_get(json_object_get(o, "published"), "rows");
	assert_int_equal(json_array_size(rows), 3);
	assert_true(json_number_value(json_object_get(json_array_get(rows, 2), "iops")) == 14351);
	assert_int_equal(json_array_size(json_object_get(json_object_get(o, "run"), "threads")), 3);
	json_decref(o);
	free(s);
}

static void test_actions_table(void **state)
{
	(void)state;
	assert_int_equal(MB_ACTION_COUNT, 11);
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		assert_non_null(mb_actions[i].key);
		assert_non_null(mb_actions[i].label);
		for (int j = 0; j < i; j++)
			assert_true(strcmp(mb_actions[i].key, mb_actions[j].key) != 0);
	}
	assert_string_equal(mb_actions[MB_A_SEND_MAIL].key, "send_mail");
	assert_string_equal(mb_actions[MB_A_CREATE_CONTACT].label, "create contact");

	struct mb_cfg_error e = {.file = "f.cfg", .line = 0, .field = "", .message = "m"};
	char buf[200];
	mb_cfg_error_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, "f.cfg: m");
	e.line = 7;
	strcpy(e.field, "x.y");
	mb_cfg_error_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, "f.cfg:7: x.y: m");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_online_published),  cmocka_unit_test(test_cached_published),
	    cmocka_unit_test(test_storage_published), cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_base_override),     cmocka_unit_test(test_resolve),
	    cmocka_unit_test(test_thresholds),	      cmocka_unit_test(test_json_and_text),
	    cmocka_unit_test(test_actions_table),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
