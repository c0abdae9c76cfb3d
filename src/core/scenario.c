/* scenario.c: the scenario and storage-test files (see scenario.h): their
 * option tables, cross-field checks, thresholds and where the files live.
 *
 * One declarative option table per struct (struct mb_scenario, struct
 * mb_storage_cfg, and the element structs of their lists) says for every
 * field its dotted key in the file, type, offset, default, range, whether it
 * is required, and its help text.  The engine (core/opt.c) does the rest:
 * parsing, validation, defaults, the help text (mb_cfg_fields_print), the
 * JSON (mb_*_json) and the text dump (mb_*_print); no field is parsed by
 * hand.  Families of keys (the actions of the day, the published counters,
 * thresholds) are ONE table entry expanded over MB_ACTION_TABLE /
 * MB_COUNTER_TABLE.  Ranges that the command line shares (users, scale,
 * accel, ...) come from core/options.h, so a file and a flag accept the
 * same values.
 */
#include "core/scenario.h"
#include "core/error.h"
#include "core/mix.h"
#include "core/opt.h"
#include "core/options.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct mb_action_def mb_actions[MB_ACTION_COUNT] = {
#define MB_X_ADEF(id, key, label) [MB_A_##id] = {key, label},
    MB_ACTION_TABLE(MB_X_ADEF)
#undef MB_X_ADEF
};

static const char *action_key(int i) { return mb_actions[i].key; }
static const char *action_label(int i) { return mb_actions[i].label; }
static const char *counter_key(int i) { return mb_counters[i].key; }
static const char *counter_label(int i) { return mb_counters[i].label; }

static const struct mb_opt_family fam_actions = {MB_ACTION_COUNT, action_key, action_label};
static const struct mb_opt_family fam_published = {MB_PUBLISHED_COUNT, counter_key, counter_label};
static const struct mb_opt_family fam_counters = {MB_COUNTER_COUNT, counter_key, counter_label};

static const char *const mode_names[] = {"online", "cached", NULL};
static const char *const kind_mailbox[] = {"mailbox", NULL};
static const char *const kind_storage[] = {"storage", NULL};
static const char *const storage_modes[] = {"transactions", "io", NULL};
static const char *const storage_types[] = {"performance", "soft-recovery", "checksum", NULL};

#define BIG 1e12
#define O_INT(T, p, f, d, lo, hi, fl, h)                                                           \
	{                                                                                          \
		.path = p, .type = MB_OT_INT, .off = offsetof(T, f), .def = d, .min = lo,          \
		.max = hi, .flags = fl, .help = h                                                  \
	}
#define O_DBL(T, p, f, d, lo, hi, fl, h)                                                           \
	{                                                                                          \
		.path = p, .type = MB_OT_DOUBLE, .off = offsetof(T, f), .def = d, .min = lo,       \
		.max = hi, .flags = fl, .help = h                                                  \
	}
#define O_BOOL(T, p, f, d, fl, h)                                                                  \
	{                                                                                          \
		.path = p, .type = MB_OT_BOOL, .off = offsetof(T, f), .def = d, .flags = fl,       \
		.help = h                                                                          \
	}
#define O_STR(T, p, f, d, fl, h)                                                                   \
	{                                                                                          \
		.path = p, .type = MB_OT_STRING, .off = offsetof(T, f),                            \
		.size = sizeof(((T *)0)->f), .sdef = d, .flags = fl, .help = h                     \
	}
#define O_ENUM(T, p, f, ch, d, fl, h)                                                              \
	{                                                                                          \
		.path = p, .type = MB_OT_ENUM, .off = offsetof(T, f), .choices = ch, .sdef = d,    \
		.flags = fl, .help = h                                                             \
	}
#define O_SCHOICE(T, p, f, ch, d, fl, h)                                                           \
	{                                                                                          \
		.path = p, .type = MB_OT_SCHOICE, .off = offsetof(T, f),                           \
		.size = sizeof(((T *)0)->f), .choices = ch, .sdef = d, .flags = fl, .help = h      \
	}

/* ---- struct mb_published_column: one element of published.columns ---- */
#define PC struct mb_published_column
static const struct mb_opt column_opts[] = {
    O_STR(PC, "id", id, "", MB_OPT_REQ | MB_OPT_PUB, "column letter as published: a, b, ..."),
    O_STR(PC, "heading", heading, "", MB_OPT_REQ | MB_OPT_PUB, "the published column heading"),
    O_STR(PC, "platform", platform, "", MB_OPT_REQ | MB_OPT_PUB, "header row: server platform"),
    O_STR(PC, "engine", engine, "", MB_OPT_REQ | MB_OPT_PUB, "header row: server software"),
    O_STR(PC, "client", client, "", MB_OPT_REQ | MB_OPT_PUB,
	  "header row: client software and mode"),
    O_STR(PC, "client_os", client_os, "", MB_OPT_PUB, "header row: client operating system"),
    O_BOOL(PC, "smt", smt, false, MB_OPT_REQ | MB_OPT_PUB, "header row: Hyper-Threading on"),
    {.path = "values",
     .type = MB_OT_DOUBLE,
     .off = offsetof(PC, value),
     .stride = sizeof(double),
     .aux = offsetof(PC, has),
     .aux_stride = sizeof(bool),
     .fam = &fam_published,
     .min = 0,
     .max = BIG,
     .flags = MB_OPT_HAS | MB_OPT_PUB,
     .help = "the published value of this counter row (absent: not published)"},
};
static const struct mb_opt_table column_table = {
    "published column", column_opts, (int)(sizeof(column_opts) / sizeof(column_opts[0])), NULL};

/* ---- struct mb_mix_kind: one element of message_mix.init / .send ---- */
static const char *const body_kinds[] = {"text", "rtf", "html", NULL};
#define MK struct mb_mix_kind
static const struct mb_opt mix_opts[] = {
    O_STR(MK, "name", name, "", MB_OPT_REQ, "the kind's name (LoadSim's message file, if any)"),
    O_SCHOICE(MK, "body", body, body_kinds, "text", 0, "body format: text, rtf or html"),
    O_DBL(MK, "body_kb", body_kb, 0, 0.1, 65536, MB_OPT_REQ, "mean body size, KB"),
    O_INT(MK, "attachments", attachments, 0, 0, MB_MIX_MAX_ATTACH, 0, "attachments"),
    O_SCHOICE(MK, "attachment", attachment, mb_content_kind_names, "office", 0,
	      "attachment kind: text, rtf, html, office, image, bitmap or photo"),
    O_DBL(MK, "attachment_kb", attachment_kb, 0, 0, 65536, 0, "mean size of each attachment, KB"),
    O_DBL(MK, "weight", weight, 0, 0, 1e9, MB_OPT_REQ, "relative frequency in the mix"),
    O_STR(MK, "source", source, "", MB_OPT_REQ,
	  "where the figures come from; \"calibrated ...\" when chosen to match a figure"),
};
static const struct mb_opt_table mix_table = {"message kind", mix_opts,
					      (int)(sizeof(mix_opts) / sizeof(mix_opts[0])), NULL};

/* ---- struct mb_scenario ---- */
#define SC struct mb_scenario
static int check_scenario(struct mb_opt_ld *ld, const struct mb_opt_table *t, void *obj);
static const struct mb_opt scenario_opts[] = {
    {.path = "base",
     .type = MB_OT_BASE,
     .help = "start from this scenario (name or path) and override what follows"},
    {.path = "kind",
     .type = MB_OT_KIND,
     .choices = kind_mailbox,
     .sdef = "mailbox",
     .flags = MB_OPT_REQ,
     .help = "file kind: \"mailbox\" here, a scenario of run, load, init, capacity, lab and "
	     "the console; a \"storage\" file is run by mailbench storage-test"},
    O_STR(SC, "title", title, "", MB_OPT_REQ, "one-line title shown in lists and headers"),
    O_INT(SC, "number", number, 0, 0, 99, MB_OPT_REQ, "published scenario number (1, 2; 0 = own)"),
    O_ENUM(SC, "mode", mode, mode_names, "online", MB_OPT_REQ,
	   "client mode: online (every view is an RPC) or cached (local replica, sync)"),

    O_INT(SC, "topology.users", users, 0, MB_USERS_MIN, MB_USERS_MAX, MB_OPT_REQ | MB_OPT_PUB,
	  "users of the published topology"),
    O_INT(SC, "topology.databases", databases, 0, 1, 1000, MB_OPT_REQ | MB_OPT_PUB,
	  "databases (spread evenly over the storage groups)"),
    O_INT(SC, "topology.storage_groups", storage_groups, 0, 1, 100, MB_OPT_REQ | MB_OPT_PUB,
	  "storage groups (each shares one transaction log stream)"),
    O_INT(SC, "topology.db_cache_mb", db_cache_mb, 0, 1, 1048576, MB_OPT_REQ | MB_OPT_PUB,
	  "database cache, MiB, at scale 1"),
    O_DBL(SC, "topology.mailbox_mb", mailbox_mb, 0, 0.001, 1048576, MB_OPT_REQ | MB_OPT_PUB,
	  "average mailbox size, MB, at scale 1"),
    O_INT(SC, "topology.page_kb", page_kb, 4, 4, 32, 0,
	  "database page size, KB: 4 (ESE in Exchange 2003), 8 or 32"),
    O_INT(SC, "topology.write_max_kb", write_max_kb, 4, 4, 1024, 0,
	  "largest database write, KB: runs of consecutive pages up to this; at most "
	  "a page: each page by itself (ESE before Exchange 2007 had no I/O coalescing)"),
    O_INT(SC, "topology.users_per_client", users_per_client, 0, 1, 1000000, MB_OPT_REQ | MB_OPT_PUB,
	  "simulated clients per load-client machine"),

    O_STR(SC, "testbed.server", testbed_server, "", MB_OPT_PUB, "published server hardware"),
    O_STR(SC, "testbed.db_storage", testbed_db_storage, "", MB_OPT_PUB,
	  "published database storage"),
    O_STR(SC, "testbed.log_storage", testbed_log_storage, "", MB_OPT_PUB, "published log storage"),
    O_STR(SC, "testbed.clients", testbed_clients, "", MB_OPT_PUB, "published load clients"),

    O_INT(SC, "run.users", run_users, 1000, MB_USERS_MIN, MB_USERS_MAX, 0,
	  "users simulated by default on this machine (--users overrides)"),
    O_DBL(SC, "run.scale", scale, 0.05, MB_SCALE_MIN, MB_SCALE_MAX, 0,
	  "multiplies the mailbox contents and the database cache (1 = published size)"),
    O_DBL(SC, "run.accel", accel, 8.0, MB_ACCEL_MIN, MB_ACCEL_MAX, 0,
	  "action rate multiplier of the 8-hour day (--accel overrides)"),
    O_BOOL(SC, "run.compression", compression, true, 0, "LZ77+DIRECT2 compression of RPC payloads"),
    O_INT(SC, "run.compression_min_bytes", compression_min_bytes, 256, 0, MB_COMPRESS_MIN_MAX, 0,
	  "payloads smaller than this are sent uncompressed"),
    O_DBL(SC, "run.cache_mb", run_cache_mb, 0, 0, MB_CACHE_MB_MAX, 0,
	  "database cache, MiB (--cache-mb overrides); 0: the published cache-to-data ratio"),
    O_INT(SC, "run.seed", run_seed, 1, 0, MB_SEED_MAX, 0,
	  "random seed of the load engine (--seed overrides)"),
    O_DBL(SC, "run.ramp_s", ramp_s, 30, 0, MB_RAMP_MAX, 0, "logon ramp-up, seconds"),
    O_DBL(SC, "run.duration_s", duration_s, 300, 1, MB_DURATION_MAX, 0,
	  "measured run length, seconds (--duration overrides)"),
    O_DBL(SC, "run.warmup_s", warmup_s, 30, 0, MB_WARMUP_MAX, 0,
	  "seconds after the ramp-up that are not measured"),

    O_STR(SC, "target.driver", target_driver, "mbstore", 0,
	  "load-engine driver: mbstore (the embedded store), null (no I/O), or an external one"),
    O_STR(SC, "target.address", target_address, "", 0,
	  "ADDR:PORT of an external target (\"\": the store the session starts)"),
    O_STR(SC, "target.submission", target_submission, "", 0,
	  "ADDR:PORT of the target's second connection (mail submission), if its driver uses one"),
    O_STR(SC, "target.accounts", target_accounts, "", 0,
	  "accounts file (users, passwords, lists) of an external target"),
    O_STR(SC, "target.user", target_user, "", 0, "an account of an external target, for checks"),
    O_STR(SC, "target.password", target_password, "", 0, "its password"),

    O_INT(SC, "mailbox.inbox_messages", mailbox.inbox_messages, 0, 0, 1000000,
	  MB_OPT_REQ | MB_OPT_PUB, "messages in Inbox"),
    O_INT(SC, "mailbox.deleted_items_messages", mailbox.deleted_items_messages, 0, 0, 1000000,
	  MB_OPT_REQ | MB_OPT_PUB, "messages in Deleted Items"),
    O_INT(SC, "mailbox.new_folders", mailbox.new_folders, 0, 0, 10000, MB_OPT_REQ | MB_OPT_PUB,
	  "new folders"),
    O_INT(SC, "mailbox.messages_per_folder", mailbox.messages_per_folder, 0, 0, 1000000,
	  MB_OPT_REQ | MB_OPT_PUB, "messages per new folder"),
    O_INT(SC, "mailbox.calendar_appointments", mailbox.calendar_appointments, 0, 0, 1000000,
	  MB_OPT_REQ | MB_OPT_PUB, "appointments in Calendar"),
    O_INT(SC, "mailbox.contacts", mailbox.contacts, 0, 0, 1000000, MB_OPT_REQ | MB_OPT_PUB,
	  "contacts"),
    O_INT(SC, "mailbox.avg_message_kb", mailbox.avg_message_kb, 0, 1, 1048576,
	  MB_OPT_REQ | MB_OPT_PUB, "average message size, KB"),

    {.path = "message_mix.init",
     .type = MB_OT_LIST,
     .off = offsetof(SC, mix_init),
     .size = MB_MIX_MAX,
     .aux = offsetof(SC, mix_init_count),
     .sub = &mix_table,
     .elem_size = sizeof(struct mb_mix_kind),
     .help = "kinds of the initialised mailboxes' messages (their mean: avg_message_kb)"},
    {.path = "message_mix.send",
     .type = MB_OT_LIST,
     .off = offsetof(SC, mix_send),
     .size = MB_MIX_MAX,
     .aux = offsetof(SC, mix_send_count),
     .sub = &mix_table,
     .elem_size = sizeof(struct mb_mix_kind),
     .help = "kinds of the messages users send (LoadSim's send mix)"},
    O_DBL(SC, "message_mix.open_attachment_pct", open_attachment_pct, 0, 0, 100, 0,
	  "share of read messages with attachments whose attachments the user opens, %"),

    O_INT(SC, "distribution_lists.per_site", dl_per_site, 0, 0, 1000000, MB_OPT_REQ | MB_OPT_PUB,
	  "distribution lists per site"),
    O_INT(SC, "distribution_lists.min_members", dl_min_members, 0, 0, 1000000,
	  MB_OPT_REQ | MB_OPT_PUB, "minimum members of a distribution list"),
    O_INT(SC, "distribution_lists.avg_members", dl_avg_members, 0, 0, 1000000,
	  MB_OPT_REQ | MB_OPT_PUB, "average members"),
    O_INT(SC, "distribution_lists.max_members", dl_max_members, 0, 0, 1000000,
	  MB_OPT_REQ | MB_OPT_PUB, "maximum members"),
    O_DBL(SC, "distribution_lists.home_db_pct", dl_home_db_pct, 0, 0, 100, 0,
	  "share of a list's members drawn from the list's home database (the rest from all "
	  "users), %"),

    {.path = "actions_per_day",
     .type = MB_OT_DOUBLE,
     .off = offsetof(SC, actions_per_day),
     .stride = sizeof(double),
     .fam = &fam_actions,
     .min = 0,
     .max = 100000,
     .flags = MB_OPT_REQ | MB_OPT_PUB,
     .help = "times each user does this action in an 8-hour day"},
    O_DBL(SC, "messages_received_per_day", messages_received_per_day, 0, 0, 1e6,
	  MB_OPT_REQ | MB_OPT_PUB, "published outcome: messages each user receives per day"),
    O_DBL(SC, "messages_sent_per_day", messages_sent_per_day, 0, 0, 1e6, MB_OPT_REQ | MB_OPT_PUB,
	  "published outcome: messages each user sends per day (recipients counted)"),

    O_STR(SC, "published.title", results_title, "", MB_OPT_PUB, "the published results table"),
    O_STR(SC, "published.note", results_note, "", MB_OPT_PUB, "notes published with the results"),
    {.path = "published.columns",
     .type = MB_OT_LIST,
     .off = offsetof(SC, columns),
     .size = MB_MAX_COLUMNS,
     .aux = offsetof(SC, column_count),
     .sub = &column_table,
     .elem_size = sizeof(struct mb_published_column),
     .flags = MB_OPT_PUB,
     .help = "the published result columns, left to right"},

    {.path = "thresholds",
     .type = MB_OT_THRESHOLD,
     .off = offsetof(SC, thresholds),
     .stride = sizeof(struct mb_threshold),
     .fam = &fam_counters,
     .help = "pass/fail condition on the counter over the run, e.g. \"< 1000\""},
};
static const struct mb_opt_table scenario_table = {
    "scenario file (scenarios 1 and 2)", scenario_opts,
    (int)(sizeof(scenario_opts) / sizeof(scenario_opts[0])), check_scenario};

/* ---- struct mb_storage_ref: one element of published.rows ---- */
#define SR struct mb_storage_ref
static const struct mb_opt ref_opts[] = {
    O_INT(SR, "threads", threads, 0, 1, 1024, MB_OPT_REQ | MB_OPT_PUB, "thread count"),
    O_DBL(SR, "iops", iops, 0, 0, BIG, MB_OPT_REQ | MB_OPT_PUB, "total IOPS"),
    O_DBL(SR, "db_read_ms", db_read_ms, 0, 0, BIG, MB_OPT_REQ | MB_OPT_PUB,
	  "database read average latency, ms"),
    O_DBL(SR, "log_write_ms", log_write_ms, 0, 0, BIG, MB_OPT_REQ | MB_OPT_PUB,
	  "log write average latency, ms"),
};
static const struct mb_opt_table ref_table = {"published row", ref_opts,
					      (int)(sizeof(ref_opts) / sizeof(ref_opts[0])), NULL};

/* ---- struct mb_storage_cfg ---- */
#define ST struct mb_storage_cfg
static int check_storage(struct mb_opt_ld *ld, const struct mb_opt_table *t, void *obj);
static const struct mb_opt storage_opts[] = {
    {.path = "base",
     .type = MB_OT_BASE,
     .help = "start from this storage file (name or path) and override what follows"},
    {.path = "kind",
     .type = MB_OT_KIND,
     .choices = kind_storage,
     .sdef = "storage",
     .flags = MB_OPT_REQ,
     .help = "file kind: \"storage\" here, the storage test's file; a \"mailbox\" file "
	     "is a scenario (1 online, 2 cached) of run, load, init, capacity, lab and the "
	     "console"},
    O_STR(ST, "title", title, "", MB_OPT_REQ, "one-line title"),
    O_INT(ST, "database.page_kb", page_kb, 32, 4, 32, 0, "page size, KB: 4, 8 or 32"),
    O_DBL(ST, "database.size_gb", db_size_gb, 2.0, MB_STRESS_SIZE_MIN, MB_STRESS_SIZE_MAX, 0,
	  "size of the test databases together, GB"),
    O_INT(ST, "database.count", databases, 1, 1, 1000, 0, "test databases"),
    O_INT(ST, "database.cache_mb", db_cache_mb, 64, 1, 1048576, 0,
	  "database cache, MiB (small, so that reads reach the disk)"),
    O_INT(ST, "log.segment_kb", log_segment_kb, MB_SC_LOG_SEGMENT_KB, MB_SC_LOG_SEGMENT_KB,
	  MB_SC_LOG_SEGMENT_KB, 0, "transaction log segment size, KB: the engine's, 1024 (fixed)"),
    {.path = "run.threads",
     .type = MB_OT_INT_LIST,
     .off = offsetof(ST, threads),
     .size = MB_STORAGE_MAX_THREADS,
     .aux = offsetof(ST, thread_count),
     .min = 1,
     .max = MB_STRESS_THREADS_MAX,
     .sdef = "[4, 8, 12]",
     .help = "the thread counts of the sweep, one run each (--threads overrides)"},
    O_DBL(ST, "run.duration_s", duration_s, 60, 1, MB_DURATION_MAX, 0,
	  "measured seconds per thread count (--duration overrides)"),
    O_DBL(ST, "run.warmup_s", warmup_s, 10, 0, MB_WARMUP_MAX, 0,
	  "seconds per thread count that are not measured"),
    O_SCHOICE(ST, "run.mode", mode, storage_modes, "transactions", 0,
	      "transactions: the engine's own B+tree operations; io: raw page I/O"),
    O_SCHOICE(ST, "run.type", type, storage_types, "performance", 0,
	      "performance, soft-recovery (replay the log) or checksum (verify pages)"),
    O_DBL(ST, "mix.insert_pct", insert_pct, 17, 0, 100, 0, "inserts, % of transactions"),
    O_DBL(ST, "mix.replace_pct", replace_pct, 68, 0, 100, 0, "replaces, % of transactions"),
    O_DBL(ST, "mix.delete_pct", delete_pct, 5, 0, 100, 0, "deletes, % of transactions"),
    O_DBL(ST, "mix.seek_pct", seek_pct, 10, 0, 100, 0, "seeks (reads), % of transactions"),
    O_DBL(ST, "mix.lazy_commit_pct", lazy_commit_pct, 70, 0, 100, 0,
	  "transactions committed without waiting for the log flush, %"),
    O_DBL(ST, "mix.read_pct", read_pct, 60, 0, 100, 0,
	  "io mode: reads, % of database I/Os (the rest are writes)"),
    O_DBL(ST, "thresholds.db_read_avg_ms_max", db_read_avg_ms_max, 20, MB_LATENCY_LIMIT_MIN,
	  MB_LATENCY_LIMIT_MAX, MB_OPT_LO_OPEN,
	  "pass: database read average latency below this, ms"),
    O_DBL(ST, "thresholds.log_write_avg_ms_max", log_write_avg_ms_max, 10, MB_LATENCY_LIMIT_MIN,
	  MB_LATENCY_LIMIT_MAX, MB_OPT_LO_OPEN, "pass: log write average latency below this, ms"),
    O_STR(ST, "published.heading", ref_heading, "", MB_OPT_PUB, "the published reference"),
    O_STR(ST, "published.notes", ref_notes, "", MB_OPT_PUB, "how the reference was measured"),
    {.path = "published.rows",
     .type = MB_OT_LIST,
     .off = offsetof(ST, ref),
     .size = MB_STORAGE_MAX_REF,
     .aux = offsetof(ST, ref_count),
     .sub = &ref_table,
     .elem_size = sizeof(struct mb_storage_ref),
     .flags = MB_OPT_PUB,
     .help = "the published reference rows"},
};
static const struct mb_opt_table storage_table = {
    "storage-test file", storage_opts, (int)(sizeof(storage_opts) / sizeof(storage_opts[0])),
    check_storage};

static int check_scenario(struct mb_opt_ld *ld, const struct mb_opt_table *t, void *obj)
{
	struct mb_scenario *s = obj;
	(void)t;
	if (s->page_kb != 4 && s->page_kb != 8 && s->page_kb != 32)
		return mb_opt_fail_field(ld, "topology.page_kb", "must be 4, 8 or 32");
	if (s->dl_min_members > s->dl_avg_members)
		return mb_opt_fail_field(ld, "distribution_lists.min_members",
					 "must not exceed avg_members (%d)", s->dl_avg_members);
	if (s->dl_avg_members > s->dl_max_members)
		return mb_opt_fail_field(ld, "distribution_lists.max_members",
					 "must be at least avg_members (%d)", s->dl_avg_members);
	if (s->storage_groups > s->databases)
		return mb_opt_fail_field(ld, "topology.storage_groups",
					 "must not exceed databases (%d)", s->databases);
	for (int m = 0; m < 2; m++) {
		const struct mb_mix_kind *k = m ? s->mix_send : s->mix_init;
		int n = m ? s->mix_send_count : s->mix_init_count;
		const char *key = m ? "message_mix.send" : "message_mix.init";
		double w = 0;
		for (int i = 0; i < n; i++) {
			w += k[i].weight;
			if (k[i].attachments > 0 && !(k[i].attachment_kb > 0))
				return mb_opt_fail_field(
				    ld, key, "kind \"%s\": attachments need attachment_kb",
				    k[i].name);
		}
		if (n > 0 && !(w > 0))
			return mb_opt_fail_field(ld, key, "the weights add up to 0");
	}
	if (s->mix_init_count > 0) {
		/* the initialised mailbox averages the published message size */
		double kb = mb_mix_mean_kb(s->mix_init, s->mix_init_count);
		if (fabs(kb - s->mailbox.avg_message_kb) > 0.02 * s->mailbox.avg_message_kb)
			return mb_opt_fail_field(ld, "message_mix.init",
						 "averages %.1f KB; mailbox.avg_message_kb is %d "
						 "(within 2%%)",
						 kb, s->mailbox.avg_message_kb);
	}
	for (int i = 0; i < s->column_count; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(s->columns[i].id, s->columns[j].id) == 0)
				return mb_opt_fail_field(ld, "published.columns",
							 "column id \"%s\" appears twice",
							 s->columns[i].id);
	return 0;
}

static int check_storage(struct mb_opt_ld *ld, const struct mb_opt_table *t, void *obj)
{
	struct mb_storage_cfg *c = obj;
	(void)t;
	if (c->page_kb != 4 && c->page_kb != 8 && c->page_kb != 32)
		return mb_opt_fail_field(ld, "database.page_kb", "must be 4, 8 or 32");
	double sum = c->insert_pct + c->replace_pct + c->delete_pct + c->seek_pct;
	if (fabs(sum - 100.0) > 1e-6)
		return mb_opt_fail_field(
		    ld, "mix.seek_pct",
		    "insert + replace + delete + seek must add up to 100, not %.15g", sum);
	for (int i = 0; i < c->ref_count; i++)
		for (int j = 0; j < i; j++)
			if (c->ref[i].threads == c->ref[j].threads)
				return mb_opt_fail_field(ld, "published.rows",
							 "thread count %d appears twice",
							 c->ref[i].threads);
	return 0;
}

/* Load NAME with table T into obj (objsize bytes); the file stem and the
 * path go to the char[MB_NAME_MAX] / char[MB_PATH_MAX] at name_off /
 * path_off.  obj is written only on success. */

int mb_scenario_load(const char *name, struct mb_scenario *out, struct mb_cfg_error *err)
{
	return mb_opt_load(&scenario_table, name, out, sizeof(*out),
			   offsetof(struct mb_scenario, name), offsetof(struct mb_scenario, path),
			   err);
}

int mb_storage_cfg_load(const char *name, struct mb_storage_cfg *out, struct mb_cfg_error *err)
{
	return mb_opt_load(&storage_table, name, out, sizeof(*out),
			   offsetof(struct mb_storage_cfg, name),
			   offsetof(struct mb_storage_cfg, path), err);
}

/* ------------------------------------------------------------------ */
/* Where scenarios live                                                 */

/* snprintf that reports truncation (paths are checked, never cut short). */
static int pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? MB_ETOOBIG : 0;
}

int mb_share_dir(const char *env_name, const char *sub, char *buf, size_t len)
{
	const char *env = env_name ? getenv(env_name) : NULL;

	if (env && *env)
		return pathf(buf, len, "%s", env);
	/* run from the build tree (the program or a test under it): the
	 * source tree's copy */
	char exe[PATH_MAX], build[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && realpath(MB_BUILDDIR, build)) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		size_t bl = strlen(build);
		if (strncmp(exe, build, bl) == 0 && (exe[bl] == '\0' || exe[bl] == '/'))
			return pathf(buf, len, "%s/%s", MB_SRCDIR, sub);
	}
	return pathf(buf, len, "%s/%s", MB_PKGDATADIR, sub);
}

const char *mb_scenario_dir(void)
{
	static char dir[MB_PATH_MAX];
	mb_share_dir("MAILBENCH_SCENARIOS", "scenarios", dir, sizeof(dir));
	return dir;
}

int mb_scenario_resolve(const char *name, char *path, size_t len)
{
	int n;

	if (!name || !*name)
		return MB_EINVAL;
	size_t nl = strlen(name);
	if (strchr(name, '/') || (nl >= 4 && strcmp(name + nl - 4, ".cfg") == 0))
		n = snprintf(path, len, "%s", name);
	else
		n = snprintf(path, len, "%s/%s.cfg", mb_scenario_dir(), name);
	if (n < 0 || (size_t)n >= len)
		return MB_ETOOBIG;
	return 0;
}

json_t *mb_scenario_json(const struct mb_scenario *s)
{
	json_t *o = mb_opt_json(&scenario_table, s);
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "path", json_string(s->path));
	return o;
}

json_t *mb_storage_cfg_json(const struct mb_storage_cfg *c)
{
	json_t *o = mb_opt_json(&storage_table, c);
	json_object_set_new(o, "name", json_string(c->name));
	json_object_set_new(o, "path", json_string(c->path));
	return o;
}

void mb_scenario_print(FILE *f, const struct mb_scenario *s)
{
	fprintf(f, "name = \"%s\"\npath = \"%s\"\n", s->name, s->path);
	mb_opt_print(f, &scenario_table, s, NULL);
}

void mb_storage_cfg_print(FILE *f, const struct mb_storage_cfg *c)
{
	fprintf(f, "name = \"%s\"\npath = \"%s\"\n", c->name, c->path);
	mb_opt_print(f, &storage_table, c, NULL);
}

void mb_cfg_fields_print(FILE *f, bool storage)
{
	const struct mb_opt_table *t = storage ? &storage_table : &scenario_table;

	fprintf(f, "Keys of a %s (libconfig syntax; dotted keys are nested groups):\n\n", t->what);
	mb_opt_fields_print(f, t, NULL);
}
