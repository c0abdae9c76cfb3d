/* scenario.c: the scenario loader (see scenario.h), driven by tables.
 *
 * One declarative option table per struct (struct mb_scenario, struct
 * mb_storage_cfg, and the element structs of their lists) says for every
 * field its dotted key in the file, type, offset, default, range, whether it
 * is required, and its help text.  Parsing, validation, defaults, the help
 * text (mb_cfg_fields_print), the JSON (mb_*_json) and the text dump
 * (mb_*_print) all walk these tables; no field is parsed by hand.  Families
 * of keys (the actions of the day, the published counters, thresholds) are
 * ONE table entry expanded over MB_ACTION_TABLE / MB_COUNTER_TABLE.
 *
 * Loading walks the FILE, not the table: every setting must match a table
 * entry (else "unknown key"), so typos never pass silently.  A file may
 * name a base file (`base = "online";`): the base is loaded first, then the
 * file's settings are applied on top; a list (published columns) replaces
 * the base's list whole.  Required entries are checked after the chain.
 * Invariant: a successful load leaves every field either from a file or
 * from its default, in range; a failed load returns MB_ECONFIG and fills
 * struct mb_cfg_error with the file and line of the offending setting.
 */
#include "core/scenario.h"
#include "core/error.h"

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

/* ------------------------------------------------------------------ */
/* The option tables                                                    */

enum opt_type {
	OT_INT,	      /* int */
	OT_DOUBLE,    /* double */
	OT_BOOL,      /* bool */
	OT_STRING,    /* char[size] */
	OT_ENUM,      /* int-sized enum: index into choices */
	OT_SCHOICE,   /* char[size] restricted to choices */
	OT_INT_LIST,  /* int[size], count at aux */
	OT_THRESHOLD, /* struct mb_threshold, written as "< 80" */
	OT_LIST,      /* list of groups: elements of sub at off, count at aux */
	OT_BASE,      /* the base file of this one (not stored) */
	OT_KIND,      /* the file's kind: must be one of choices (not stored) */
};

#define F_REQ 1u /* required (after the base chain) */
#define F_HAS 2u /* optional: bool at aux says whether it was given */
#define F_PUB 4u /* a published figure */

/* A family expands one entry into one key per member. */
struct opt_family {
	int count;
	const char *(*key)(int i);
	const char *(*label)(int i);
};

struct opt_table;
struct opt {
	const char *path; /* dotted key; a family's group */
	enum opt_type type;
	size_t off;
	size_t size; /* STRING: buffer size; lists: max entries */
	double def;
	const char *sdef; /* STRING/ENUM/THRESHOLD default */
	double min, max;
	unsigned flags;
	const char *help;
	const char *const *choices; /* ENUM / SCHOICE, NULL-terminated */
	size_t aux;		    /* count (lists) or has-flag (F_HAS) */
	const struct opt_family *fam;
	size_t stride, aux_stride; /* family: distance between members */
	const struct opt_table *sub;
	size_t elem_size;
};

struct ld;
struct opt_table {
	const char *what; /* for the help text */
	const struct opt *opts;
	int n;
	/* cross-field checks after a complete load (may be NULL) */
	int (*check)(struct ld *ld, const struct opt_table *t, void *obj);
};

static const char *action_key(int i) { return mb_actions[i].key; }
static const char *action_label(int i) { return mb_actions[i].label; }
static const char *counter_key(int i) { return mb_counters[i].key; }
static const char *counter_label(int i) { return mb_counters[i].label; }

static const struct opt_family fam_actions = {MB_ACTION_COUNT, action_key, action_label};
static const struct opt_family fam_published = {MB_PUBLISHED_COUNT, counter_key, counter_label};
static const struct opt_family fam_counters = {MB_COUNTER_COUNT, counter_key, counter_label};

static const char *const mode_names[] = {"online", "cached", NULL};
static const char *const kind_mailbox[] = {"mailbox", NULL};
static const char *const kind_storage[] = {"storage", NULL};
static const char *const storage_modes[] = {"transactions", "io", NULL};
static const char *const storage_types[] = {"performance", "soft-recovery", "checksum", NULL};

#define BIG 1e12
#define O_INT(T, p, f, d, lo, hi, fl, h)                                                           \
	{                                                                                          \
		.path = p, .type = OT_INT, .off = offsetof(T, f), .def = d, .min = lo, .max = hi,  \
		.flags = fl, .help = h                                                             \
	}
#define O_DBL(T, p, f, d, lo, hi, fl, h)                                                           \
	{                                                                                          \
		.path = p, .type = OT_DOUBLE, .off = offsetof(T, f), .def = d, .min = lo,          \
		.max = hi, .flags = fl, .help = h                                                  \
	}
#define O_BOOL(T, p, f, d, fl, h)                                                                  \
	{                                                                                          \
		.path = p, .type = OT_BOOL, .off = offsetof(T, f), .def = d, .flags = fl,          \
		.help = h                                                                          \
	}
#define O_STR(T, p, f, d, fl, h)                                                                   \
	{                                                                                          \
		.path = p, .type = OT_STRING, .off = offsetof(T, f), .size = sizeof(((T *)0)->f),  \
		.sdef = d, .flags = fl, .help = h                                                  \
	}
#define O_ENUM(T, p, f, ch, d, fl, h)                                                              \
	{                                                                                          \
		.path = p, .type = OT_ENUM, .off = offsetof(T, f), .choices = ch, .sdef = d,       \
		.flags = fl, .help = h                                                             \
	}
#define O_SCHOICE(T, p, f, ch, d, fl, h)                                                           \
	{                                                                                          \
		.path = p, .type = OT_SCHOICE, .off = offsetof(T, f), .size = sizeof(((T *)0)->f), \
		.choices = ch, .sdef = d, .flags = fl, .help = h                                   \
	}

/* ---- struct mb_published_column: one element of published.columns ---- */
#define PC struct mb_published_column
static const struct opt column_opts[] = {
    O_STR(PC, "id", id, "", F_REQ | F_PUB, "column letter as published: a, b, ..."),
    O_STR(PC, "heading", heading, "", F_REQ | F_PUB, "the published column heading"),
    O_STR(PC, "platform", platform, "", F_REQ | F_PUB, "header row: server platform"),
    O_STR(PC, "engine", engine, "", F_REQ | F_PUB, "header row: server software"),
    O_STR(PC, "client", client, "", F_REQ | F_PUB, "header row: client software and mode"),
    O_STR(PC, "client_os", client_os, "", F_PUB, "header row: client operating system"),
    O_BOOL(PC, "smt", smt, false, F_REQ | F_PUB, "header row: Hyper-Threading on"),
    {.path = "values",
     .type = OT_DOUBLE,
     .off = offsetof(PC, value),
     .stride = sizeof(double),
     .aux = offsetof(PC, has),
     .aux_stride = sizeof(bool),
     .fam = &fam_published,
     .min = 0,
     .max = BIG,
     .flags = F_HAS | F_PUB,
     .help = "the published value of this counter row (absent: not published)"},
};
static const struct opt_table column_table = {
    "published column", column_opts, (int)(sizeof(column_opts) / sizeof(column_opts[0])), NULL};

/* ---- struct mb_scenario ---- */
#define SC struct mb_scenario
static int check_scenario(struct ld *ld, const struct opt_table *t, void *obj);
static const struct opt scenario_opts[] = {
    {.path = "base",
     .type = OT_BASE,
     .help = "start from this scenario (name or path) and override what follows"},
    {.path = "kind",
     .type = OT_KIND,
     .choices = kind_mailbox,
     .sdef = "mailbox",
     .flags = F_REQ,
     .help = "file kind: \"mailbox\" here (\"storage\" files are for storage-test)"},
    O_STR(SC, "title", title, "", F_REQ, "one-line title shown in lists and headers"),
    O_INT(SC, "number", number, 0, 0, 99, F_REQ, "published scenario number (1, 2; 0 = own)"),
    O_ENUM(SC, "mode", mode, mode_names, "online", F_REQ,
	   "client mode: online (every view is an RPC) or cached (local replica, sync)"),

    O_INT(SC, "topology.users", users, 0, 1, 1000000, F_REQ | F_PUB,
	  "users of the published topology"),
    O_INT(SC, "topology.databases", databases, 0, 1, 1000, F_REQ | F_PUB,
	  "databases (spread evenly over the storage groups)"),
    O_INT(SC, "topology.storage_groups", storage_groups, 0, 1, 100, F_REQ | F_PUB,
	  "storage groups (each shares one transaction log stream)"),
    O_INT(SC, "topology.db_cache_mb", db_cache_mb, 0, 1, 1048576, F_REQ | F_PUB,
	  "database cache, MiB, at scale 1"),
    O_DBL(SC, "topology.mailbox_mb", mailbox_mb, 0, 0.001, 1048576, F_REQ | F_PUB,
	  "average mailbox size, MB, at scale 1"),
    O_INT(SC, "topology.page_kb", page_kb, 32, 4, 32, 0, "database page size, KB: 4, 8 or 32"),
    O_INT(SC, "topology.users_per_client", users_per_client, 0, 1, 1000000, F_REQ | F_PUB,
	  "simulated clients per load-client machine"),

    O_STR(SC, "testbed.server", testbed_server, "", F_PUB, "published server hardware"),
    O_STR(SC, "testbed.db_storage", testbed_db_storage, "", F_PUB, "published database storage"),
    O_STR(SC, "testbed.log_storage", testbed_log_storage, "", F_PUB, "published log storage"),
    O_STR(SC, "testbed.clients", testbed_clients, "", F_PUB, "published load clients"),

    O_INT(SC, "run.users", run_users, 1000, 1, 1000000, 0,
	  "users simulated by default on this machine (--users overrides)"),
    O_DBL(SC, "run.scale", scale, 0.05, 0.0001, 1.0, 0,
	  "multiplies the mailbox contents and the database cache (1 = published size)"),
    O_DBL(SC, "run.accel", accel, 8.0, 0.01, 10000, 0,
	  "action rate multiplier of the 8-hour day (--accel overrides)"),
    O_BOOL(SC, "run.compression", compression, true, 0, "LZ4 compression of RPC payloads"),
    O_INT(SC, "run.compression_min_bytes", compression_min_bytes, 256, 0, 1 << 24, 0,
	  "payloads smaller than this are sent uncompressed"),
    O_DBL(SC, "run.ramp_s", ramp_s, 30, 0, 86400, 0, "logon ramp-up, seconds"),
    O_DBL(SC, "run.duration_s", duration_s, 300, 1, 30 * 86400, 0,
	  "measured run length, seconds (--duration overrides)"),
    O_DBL(SC, "run.warmup_s", warmup_s, 30, 0, 86400, 0,
	  "seconds after the ramp-up that are not measured"),

    O_INT(SC, "mailbox.inbox_messages", inbox_messages, 0, 0, 1000000, F_REQ | F_PUB,
	  "messages in Inbox"),
    O_INT(SC, "mailbox.deleted_items_messages", deleted_items_messages, 0, 0, 1000000,
	  F_REQ | F_PUB, "messages in Deleted Items"),
    O_INT(SC, "mailbox.new_folders", new_folders, 0, 0, 10000, F_REQ | F_PUB, "new folders"),
    O_INT(SC, "mailbox.messages_per_folder", messages_per_folder, 0, 0, 1000000, F_REQ | F_PUB,
	  "messages per new folder"),
    O_INT(SC, "mailbox.calendar_appointments", calendar_appointments, 0, 0, 1000000, F_REQ | F_PUB,
	  "appointments in Calendar"),
    O_INT(SC, "mailbox.contacts", contacts, 0, 0, 1000000, F_REQ | F_PUB, "contacts"),
    O_INT(SC, "mailbox.avg_message_kb", avg_message_kb, 0, 1, 1048576, F_REQ | F_PUB,
	  "average message size, KB"),

    O_INT(SC, "distribution_lists.per_site", dl_per_site, 0, 0, 1000000, F_REQ | F_PUB,
	  "distribution lists per site"),
    O_INT(SC, "distribution_lists.min_members", dl_min_members, 0, 0, 1000000, F_REQ | F_PUB,
	  "minimum members of a distribution list"),
    O_INT(SC, "distribution_lists.avg_members", dl_avg_members, 0, 0, 1000000, F_REQ | F_PUB,
	  "average members"),
    O_INT(SC, "distribution_lists.max_members", dl_max_members, 0, 0, 1000000, F_REQ | F_PUB,
	  "maximum members"),

    {.path = "actions_per_day",
     .type = OT_DOUBLE,
     .off = offsetof(SC, actions_per_day),
     .stride = sizeof(double),
     .fam = &fam_actions,
     .min = 0,
     .max = 100000,
     .flags = F_REQ | F_PUB,
     .help = "times each user does this action in an 8-hour day"},
    O_DBL(SC, "messages_received_per_day", messages_received_per_day, 0, 0, 1e6, F_REQ | F_PUB,
	  "published outcome: messages each user receives per day"),
    O_DBL(SC, "messages_sent_per_day", messages_sent_per_day, 0, 0, 1e6, F_REQ | F_PUB,
	  "published outcome: messages each user sends per day (recipients counted)"),

    O_STR(SC, "published.title", results_title, "", F_PUB, "the published results table"),
    O_STR(SC, "published.note", results_note, "", F_PUB, "notes published with the results"),
    {.path = "published.columns",
     .type = OT_LIST,
     .off = offsetof(SC, columns),
     .size = MB_MAX_COLUMNS,
     .aux = offsetof(SC, column_count),
     .sub = &column_table,
     .elem_size = sizeof(struct mb_published_column),
     .flags = F_PUB,
     .help = "the published result columns, left to right"},

    {.path = "thresholds",
     .type = OT_THRESHOLD,
     .off = offsetof(SC, thresholds),
     .stride = sizeof(struct mb_threshold),
     .fam = &fam_counters,
     .help = "pass/fail condition on the counter over the run, e.g. \"< 1000\""},
};
static const struct opt_table scenario_table = {
    "scenario file (scenarios 1 and 2)", scenario_opts,
    (int)(sizeof(scenario_opts) / sizeof(scenario_opts[0])), check_scenario};

/* ---- struct mb_storage_ref: one element of published.rows ---- */
#define SR struct mb_storage_ref
static const struct opt ref_opts[] = {
    O_INT(SR, "threads", threads, 0, 1, 1024, F_REQ | F_PUB, "thread count"),
    O_DBL(SR, "iops", iops, 0, 0, BIG, F_REQ | F_PUB, "total IOPS"),
    O_DBL(SR, "db_read_ms", db_read_ms, 0, 0, BIG, F_REQ | F_PUB,
	  "database read average latency, ms"),
    O_DBL(SR, "log_write_ms", log_write_ms, 0, 0, BIG, F_REQ | F_PUB,
	  "log write average latency, ms"),
};
static const struct opt_table ref_table = {"published row", ref_opts,
					   (int)(sizeof(ref_opts) / sizeof(ref_opts[0])), NULL};

/* ---- struct mb_storage_cfg ---- */
#define ST struct mb_storage_cfg
static int check_storage(struct ld *ld, const struct opt_table *t, void *obj);
static const struct opt storage_opts[] = {
    {.path = "base",
     .type = OT_BASE,
     .help = "start from this storage file (name or path) and override what follows"},
    {.path = "kind",
     .type = OT_KIND,
     .choices = kind_storage,
     .sdef = "storage",
     .flags = F_REQ,
     .help = "file kind: \"storage\" here (\"mailbox\" files are scenarios 1 and 2)"},
    O_STR(ST, "title", title, "", F_REQ, "one-line title"),
    O_INT(ST, "database.page_kb", page_kb, 32, 4, 32, 0, "page size, KB: 4, 8 or 32"),
    O_DBL(ST, "database.size_gb", db_size_gb, 2.0, 0.001, 100000, 0,
	  "size of the test databases together, GB"),
    O_INT(ST, "database.count", databases, 1, 1, 1000, 0, "test databases"),
    O_INT(ST, "database.cache_mb", db_cache_mb, 64, 1, 1048576, 0,
	  "database cache, MiB (small, so that reads reach the disk)"),
    O_INT(ST, "log.segment_kb", log_segment_kb, 1024, 64, 1048576, 0,
	  "transaction log segment size, KB"),
    {.path = "run.threads",
     .type = OT_INT_LIST,
     .off = offsetof(ST, threads),
     .size = MB_STORAGE_MAX_THREADS,
     .aux = offsetof(ST, thread_count),
     .min = 1,
     .max = 1024,
     .sdef = "[4, 8, 12]",
     .help = "the thread counts of the sweep, one run each (--threads overrides)"},
    O_DBL(ST, "run.duration_s", duration_s, 60, 1, 30 * 86400, 0,
	  "measured seconds per thread count (--duration overrides)"),
    O_DBL(ST, "run.warmup_s", warmup_s, 10, 0, 86400, 0,
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
    O_DBL(ST, "thresholds.db_read_avg_ms_max", db_read_avg_ms_max, 20, 0.001, 1e6, 0,
	  "pass: database read average latency below this, ms"),
    O_DBL(ST, "thresholds.log_write_avg_ms_max", log_write_avg_ms_max, 10, 0.001, 1e6, 0,
	  "pass: log write average latency below this, ms"),
    O_STR(ST, "published.heading", ref_heading, "", F_PUB, "the published reference"),
    O_STR(ST, "published.notes", ref_notes, "", F_PUB, "how the reference was measured"),
    {.path = "published.rows",
     .type = OT_LIST,
     .off = offsetof(ST, ref),
     .size = MB_STORAGE_MAX_REF,
     .aux = offsetof(ST, ref_count),
     .sub = &ref_table,
     .elem_size = sizeof(struct mb_storage_ref),
     .flags = F_PUB,
     .help = "the published reference rows"},
};
static const struct opt_table storage_table = {
    "storage-test file", storage_opts, (int)(sizeof(storage_opts) / sizeof(storage_opts[0])),
    check_storage};

/* ------------------------------------------------------------------ */
/* Instances: the table with families expanded                          */

struct inst {
	char path[128];
	const struct opt *o;
	size_t off, aux;
	const char *label;
	bool set;
	int file, line;	  /* where it was set (file: index in ld->files) */
	int gfile, gline; /* where its group was last seen */
};

struct insts {
	int n;
	struct inst *v;
};

static int insts_build(const struct opt_table *t, struct insts *out)
{
	int n = 0;
	for (int i = 0; i < t->n; i++)
		n += t->opts[i].fam ? t->opts[i].fam->count : 1;
	out->v = calloc((size_t)n, sizeof(*out->v));
	if (!out->v)
		return MB_ENOMEM;
	out->n = 0;
	for (int i = 0; i < t->n; i++) {
		const struct opt *o = &t->opts[i];
		int m = o->fam ? o->fam->count : 1;
		for (int k = 0; k < m; k++) {
			struct inst *in = &out->v[out->n++];
			in->o = o;
			in->gfile = -1;
			in->file = -1;
			if (o->fam) {
				snprintf(in->path, sizeof(in->path), "%s.%s", o->path,
					 o->fam->key(k));
				in->off = o->off + (size_t)k * o->stride;
				in->aux = o->aux + (size_t)k * o->aux_stride;
				in->label = o->fam->label(k);
			} else {
				snprintf(in->path, sizeof(in->path), "%s", o->path);
				in->off = o->off;
				in->aux = o->aux;
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Load context and errors                                              */

#define MB_MAX_FILES 32
#define MB_MAX_DEPTH 8

struct ld {
	struct mb_cfg_error *err;
	struct insts *is;	   /* the top-level instances (for checks) */
	const char *topfile;	   /* the file as given */
	char *files[MB_MAX_FILES]; /* names of the files seen, for locations */
	int nfiles;
	char chain[MB_MAX_DEPTH][PATH_MAX]; /* real paths of the base chain */
	int depth;
	char curfile[MB_PATH_MAX]; /* the file being applied, as named */
	char curdir[MB_PATH_MAX];  /* its directory: where @include looks */
	char fixed[MB_PATH_MAX];   /* scratch for fix_name */
};

/* libconfig names a setting from an @include by the name written in the
 * file; name it by the path it was read from (the including file's
 * directory joined with it) so that messages point at the right file. */
static const char *fix_name(struct ld *ld, const char *name)
{
	if (!name || name == ld->fixed || !*name || name[0] == '/' ||
	    strcmp(name, ld->curfile) == 0 || strcmp(ld->curdir, ".") == 0 || !ld->curdir[0])
		return name;
	int n = snprintf(ld->fixed, sizeof(ld->fixed), "%s/%s", ld->curdir, name);
	return n > 0 && (size_t)n < sizeof(ld->fixed) ? ld->fixed : name;
}

static int file_index(struct ld *ld, const char *name)
{
	if (!name)
		name = "";
	for (int i = 0; i < ld->nfiles; i++)
		if (strcmp(ld->files[i], name) == 0)
			return i;
	if (ld->nfiles == MB_MAX_FILES)
		return ld->nfiles - 1;
	ld->files[ld->nfiles] = strdup(name);
	if (!ld->files[ld->nfiles])
		return -1;
	return ld->nfiles++;
}

static void ld_free(struct ld *ld)
{
	for (int i = 0; i < ld->nfiles; i++)
		free(ld->files[i]);
	ld->nfiles = 0;
}

static int fail_at(struct ld *ld, const char *file, int line, const char *field, const char *fmt,
		   ...) __attribute__((format(printf, 5, 6)));
static int fail_at(struct ld *ld, const char *file, int line, const char *field, const char *fmt,
		   ...)
{
	struct mb_cfg_error *e = ld->err;
	va_list ap;

	snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
	e->line = line;
	snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return MB_ECONFIG;
}

static const char *fix_name(struct ld *ld, const char *name);
static const char *setting_file(struct ld *ld, const config_setting_t *s)
{
	const char *f = config_setting_source_file(s);
	return f ? fix_name(ld, f) : "";
}

void mb_cfg_error_format(const struct mb_cfg_error *e, char *buf, size_t len)
{
	char where[MB_PATH_MAX + 32];

	if (e->line > 0)
		snprintf(where, sizeof(where), "%s:%d", e->file, e->line);
	else
		snprintf(where, sizeof(where), "%s", e->file);
	if (e->field[0])
		snprintf(buf, len, "%s: %s: %s", where, e->field, e->message);
	else
		snprintf(buf, len, "%s: %s", where, e->message);
}

/* ------------------------------------------------------------------ */
/* Thresholds                                                           */

int mb_threshold_parse(const char *text, struct mb_threshold *out)
{
	const char *p = text;
	enum mb_cmp cmp;

	while (isspace((unsigned char)*p))
		p++;
	if (p[0] == '<' && p[1] == '=')
		cmp = MB_CMP_LE, p += 2;
	else if (p[0] == '>' && p[1] == '=')
		cmp = MB_CMP_GE, p += 2;
	else if (p[0] == '<')
		cmp = MB_CMP_LT, p += 1;
	else if (p[0] == '>')
		cmp = MB_CMP_GT, p += 1;
	else
		return MB_EINVAL;
	while (isspace((unsigned char)*p))
		p++;
	char *end;
	errno = 0;
	double v = strtod(p, &end);
	if (end == p || errno == ERANGE || !isfinite(v))
		return MB_EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return MB_EINVAL;
	out->cmp = cmp;
	out->value = v;
	return 0;
}

void mb_threshold_format(const struct mb_threshold *t, char *buf, size_t len)
{
	static const char *const ops[] = {"", "<", "<=", ">", ">="};

	if (t->cmp == MB_CMP_NONE || (unsigned)t->cmp > MB_CMP_GE)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%s %.15g", ops[t->cmp], t->value);
}

bool mb_threshold_ok(const struct mb_threshold *t, double v)
{
	switch (t->cmp) {
	case MB_CMP_LT:
		return v < t->value;
	case MB_CMP_LE:
		return v <= t->value;
	case MB_CMP_GT:
		return v > t->value;
	case MB_CMP_GE:
		return v >= t->value;
	default:
		return true;
	}
}

/* ------------------------------------------------------------------ */
/* Defaults                                                             */

static void apply_defaults(const struct opt_table *t, void *obj);

static void inst_default(const struct inst *in, void *obj)
{
	char *base = obj;
	const struct opt *o = in->o;

	switch (o->type) {
	case OT_INT:
		*(int *)(base + in->off) = (int)o->def;
		break;
	case OT_DOUBLE:
		*(double *)(base + in->off) = o->def;
		break;
	case OT_BOOL:
		*(bool *)(base + in->off) = o->def != 0;
		break;
	case OT_STRING:
	case OT_SCHOICE:
		snprintf(base + in->off, o->size, "%s", o->sdef ? o->sdef : "");
		break;
	case OT_ENUM:
		*(int *)(base + in->off) = 0;
		for (int k = 0; o->choices[k]; k++)
			if (o->sdef && strcmp(o->sdef, o->choices[k]) == 0)
				*(int *)(base + in->off) = k;
		break;
	case OT_INT_LIST: {
		/* "[4, 8, 12]" */
		int *v = (int *)(base + in->off), n = 0;
		const char *p = o->sdef ? o->sdef : "";
		while (*p && n < (int)o->size) {
			if (isdigit((unsigned char)*p)) {
				v[n++] = (int)strtol(p, (char **)&p, 10);
				continue;
			}
			p++;
		}
		*(int *)(base + in->aux) = n;
		break;
	}
	case OT_THRESHOLD: {
		struct mb_threshold *th = (struct mb_threshold *)(base + in->off);
		th->cmp = MB_CMP_NONE;
		th->value = 0;
		if (o->sdef)
			mb_threshold_parse(o->sdef, th);
		break;
	}
	case OT_LIST:
		for (size_t k = 0; k < o->size; k++)
			apply_defaults(o->sub, base + in->off + k * o->elem_size);
		*(int *)(base + in->aux) = 0;
		break;
	case OT_BASE:
	case OT_KIND:
		break;
	}
	if (o->flags & F_HAS)
		*(bool *)(base + in->aux) = false;
}

static void apply_defaults(const struct opt_table *t, void *obj)
{
	struct insts is;

	if (insts_build(t, &is) != 0)
		return;
	for (int i = 0; i < is.n; i++)
		inst_default(&is.v[i], obj);
	free(is.v);
}

/* ------------------------------------------------------------------ */
/* Applying a file's settings                                           */

static const char *type_name(int type)
{
	switch (type) {
	case CONFIG_TYPE_GROUP:
		return "a group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "an integer";
	case CONFIG_TYPE_FLOAT:
		return "a number";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_ARRAY:
		return "an array";
	case CONFIG_TYPE_LIST:
		return "a list";
	default:
		return "something else";
	}
}

static int wrong_type(struct ld *ld, const config_setting_t *s, const char *field, const char *want)
{
	return fail_at(ld, setting_file(ld, s), config_setting_source_line(s), field,
		       "must be %s, not %s", want, type_name(config_setting_type(s)));
}

static int check_range(struct ld *ld, const config_setting_t *s, const char *field,
		       const struct opt *o, double v)
{
	if (!isfinite(v) || v < o->min || v > o->max)
		return fail_at(ld, setting_file(ld, s), config_setting_source_line(s), field,
			       "must be between %.15g and %.15g", o->min, o->max);
	return 0;
}

static int choice_index(const char *const *choices, const char *v)
{
	for (int k = 0; choices[k]; k++)
		if (strcmp(choices[k], v) == 0)
			return k;
	return -1;
}

static void choices_text(const char *const *choices, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int k = 0; choices[k] && used < len; k++)
		used +=
		    (size_t)snprintf(buf + used, len - used, "%s\"%s\"", k ? ", " : "", choices[k]);
}

static int apply_group(struct ld *ld, struct insts *is, const config_setting_t *grp,
		       const char *rel, const char *errprefix, void *obj, bool top);
static int check_required(struct ld *ld, struct insts *is, const char *errprefix,
			  const char *topfile);

static int apply_value(struct ld *ld, struct inst *in, const config_setting_t *s, const char *field,
		       void *obj)
{
	char *base = obj;
	const struct opt *o = in->o;
	int type = config_setting_type(s);
	int rc;

	switch (o->type) {
	case OT_INT: {
		if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
			return wrong_type(ld, s, field, "an integer");
		long long v = config_setting_get_int64(s);
		if ((rc = check_range(ld, s, field, o, (double)v)) != 0)
			return rc;
		*(int *)(base + in->off) = (int)v;
		break;
	}
	case OT_DOUBLE: {
		if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64 &&
		    type != CONFIG_TYPE_FLOAT)
			return wrong_type(ld, s, field, "a number");
		double v = type == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
						     : (double)config_setting_get_int64(s);
		if ((rc = check_range(ld, s, field, o, v)) != 0)
			return rc;
		*(double *)(base + in->off) = v;
		break;
	}
	case OT_BOOL:
		if (type != CONFIG_TYPE_BOOL)
			return wrong_type(ld, s, field, "true or false");
		*(bool *)(base + in->off) = config_setting_get_bool(s) != 0;
		break;
	case OT_STRING:
	case OT_SCHOICE:
	case OT_KIND:
	case OT_ENUM: {
		if (type != CONFIG_TYPE_STRING)
			return wrong_type(ld, s, field, "a string");
		const char *v = config_setting_get_string(s);
		if (o->choices) {
			int k = choice_index(o->choices, v);
			if (k < 0) {
				char ch[256];
				choices_text(o->choices, ch, sizeof(ch));
				return fail_at(ld, setting_file(ld, s),
					       config_setting_source_line(s), field,
					       "must be one of %s, not \"%s\"", ch, v);
			}
			if (o->type == OT_ENUM)
				*(int *)(base + in->off) = k;
			if (o->type == OT_ENUM || o->type == OT_KIND)
				break;
		}
		if (strlen(v) >= o->size)
			return fail_at(ld, setting_file(ld, s), config_setting_source_line(s),
				       field, "is too long (at most %zu characters)", o->size - 1);
		memcpy(base + in->off, v, strlen(v) + 1);
		break;
	}
	case OT_INT_LIST: {
		if (type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST)
			return wrong_type(ld, s, field, "an array of integers");
		int n = config_setting_length(s);
		if (n < 1 || n > (int)o->size)
			return fail_at(ld, setting_file(ld, s), config_setting_source_line(s),
				       field, "must have between 1 and %zu entries", o->size);
		int *v = (int *)(base + in->off);
		for (int k = 0; k < n; k++) {
			const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
			char ef[512];
			snprintf(ef, sizeof(ef), "%s[%d]", field, k);
			if (config_setting_type(e) != CONFIG_TYPE_INT &&
			    config_setting_type(e) != CONFIG_TYPE_INT64)
				return wrong_type(ld, e, ef, "an integer");
			long long x = config_setting_get_int64(e);
			if ((rc = check_range(ld, e, ef, o, (double)x)) != 0)
				return rc;
			v[k] = (int)x;
		}
		*(int *)(base + in->aux) = n;
		break;
	}
	case OT_THRESHOLD: {
		if (type != CONFIG_TYPE_STRING)
			return wrong_type(ld, s, field, "a string such as \"< 80\"");
		struct mb_threshold th;
		memset(&th, 0, sizeof(th)); /* padding too: loads compare equal */
		const char *v = config_setting_get_string(s);
		if (v[0] == '\0') {
			th.cmp = MB_CMP_NONE;
			th.value = 0;
		} else if (mb_threshold_parse(v, &th) != 0) {
			return fail_at(
			    ld, setting_file(ld, s), config_setting_source_line(s), field,
			    "must be a comparison such as \"< 80\" or \">= 5\", not \"%s\"", v);
		}
		*(struct mb_threshold *)(base + in->off) = th;
		break;
	}
	case OT_LIST: {
		if (type != CONFIG_TYPE_LIST)
			return wrong_type(ld, s, field, "a list of groups ( {...}, {...} )");
		int n = config_setting_length(s);
		if (n > (int)o->size)
			return fail_at(ld, setting_file(ld, s), config_setting_source_line(s),
				       field, "must have at most %zu entries", o->size);
		struct insts sub;
		if ((rc = insts_build(o->sub, &sub)) != 0)
			return rc;
		/* a list replaces the base's list whole */
		for (size_t k = 0; k < o->size; k++)
			apply_defaults(o->sub, base + in->off + k * o->elem_size);
		for (int k = 0; k < n && rc == 0; k++) {
			const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
			char ef[512];
			snprintf(ef, sizeof(ef), "%s[%d]", field, k);
			if (config_setting_type(e) != CONFIG_TYPE_GROUP) {
				rc = wrong_type(ld, e, ef, "a group { ... }");
				break;
			}
			for (int j = 0; j < sub.n; j++) {
				sub.v[j].set = false;
				sub.v[j].gfile = -1;
				sub.v[j].file = -1;
			}
			void *elem = base + in->off + (size_t)k * o->elem_size;
			rc = apply_group(ld, &sub, e, NULL, ef, elem, false);
			if (rc == 0)
				rc = check_required(ld, &sub, ef, setting_file(ld, e));
		}
		free(sub.v);
		if (rc != 0)
			return rc;
		*(int *)(base + in->aux) = n;
		break;
	}
	case OT_BASE:
		break;
	}
	if (o->flags & F_HAS)
		*(bool *)(base + in->aux) = true;
	in->set = true;
	in->file = file_index(ld, setting_file(ld, s));
	in->line = config_setting_source_line(s);
	return 0;
}

/* Edit distance, for "did you mean". */
static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	int d[64][64];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			d[i][j] = c;
		}
	return d[la][lb];
}

/* The key names valid directly inside group REL (NULL = root). */
static int unknown_key(struct ld *ld, struct insts *is, const config_setting_t *s, const char *rel,
		       const char *field)
{
	const char *name = config_setting_name(s);
	size_t rl = rel ? strlen(rel) : 0;
	const char *best = NULL;
	size_t bestlen = 0;
	int bestd = 3;

	for (int i = 0; i < is->n; i++) {
		const char *p = is->v[i].path;
		if (rel) {
			if (strncmp(p, rel, rl) != 0 || p[rl] != '.')
				continue;
			p += rl + 1;
		}
		size_t len = strcspn(p, ".");
		char cand[128];
		snprintf(cand, sizeof(cand), "%.*s", (int)len, p);
		int d = distance(name, cand);
		if (d < bestd) {
			bestd = d;
			best = p;
			bestlen = len;
		}
	}
	if (best)
		return fail_at(ld, setting_file(ld, s), config_setting_source_line(s), field,
			       "unknown key (did you mean \"%.*s\"?)", (int)bestlen, best);
	return fail_at(ld, setting_file(ld, s), config_setting_source_line(s), field,
		       "unknown key");
}

static int apply_group(struct ld *ld, struct insts *is, const config_setting_t *grp,
		       const char *rel, const char *errprefix, void *obj, bool top)
{
	size_t rl = rel ? strlen(rel) : 0;
	int gfile = file_index(ld, setting_file(ld, grp));
	int gline = config_setting_source_line(grp);

	/* remember where each member's group is, for "missing" errors */
	for (int i = 0; i < is->n; i++) {
		const char *p = is->v[i].path;
		if (rel && (strncmp(p, rel, rl) != 0 || p[rl] != '.'))
			continue;
		if (strchr(rel ? p + rl + 1 : p, '.') == NULL) {
			is->v[i].gfile = gfile;
			is->v[i].gline = gline;
		}
	}
	int n = config_setting_length(grp);
	for (int k = 0; k < n; k++) {
		const config_setting_t *s = config_setting_get_elem(grp, (unsigned)k);
		const char *name = config_setting_name(s);
		char path[256], field[384];
		int rc;

		if (rel)
			snprintf(path, sizeof(path), "%s.%s", rel, name);
		else
			snprintf(path, sizeof(path), "%s", name);
		if (errprefix)
			snprintf(field, sizeof(field), "%s.%s", errprefix, path);
		else
			snprintf(field, sizeof(field), "%s", path);

		struct inst *in = NULL;
		bool is_group_prefix = false;
		size_t pl = strlen(path);
		for (int i = 0; i < is->n; i++) {
			if (strcmp(is->v[i].path, path) == 0) {
				in = &is->v[i];
				break;
			}
			if (strncmp(is->v[i].path, path, pl) == 0 && is->v[i].path[pl] == '.')
				is_group_prefix = true;
		}
		if (in && (in->o->type == OT_BASE || in->o->type == OT_KIND)) {
			if (!top)
				return unknown_key(ld, is, s, rel, field);
			continue; /* handled by load_file */
		}
		if (in) {
			if ((rc = apply_value(ld, in, s, field, obj)) != 0)
				return rc;
			continue;
		}
		if (is_group_prefix) {
			if (config_setting_type(s) != CONFIG_TYPE_GROUP)
				return wrong_type(ld, s, field, "a group { ... }");
			if ((rc = apply_group(ld, is, s, path, errprefix, obj, false)) != 0)
				return rc;
			continue;
		}
		return unknown_key(ld, is, s, rel, field);
	}
	return 0;
}

static int check_required(struct ld *ld, struct insts *is, const char *errprefix,
			  const char *topfile)
{
	for (int i = 0; i < is->n; i++) {
		struct inst *in = &is->v[i];
		if (!(in->o->flags & F_REQ) || in->set)
			continue;
		char field[384];
		if (errprefix)
			snprintf(field, sizeof(field), "%s.%s", errprefix, in->path);
		else
			snprintf(field, sizeof(field), "%s", in->path);
		if (in->gfile >= 0 && in->gline > 0)
			return fail_at(ld, ld->files[in->gfile], in->gline, field,
				       "required but missing");
		return fail_at(ld, topfile, 0, field, "required but missing");
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Files and the base chain                                             */

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

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

/* Resolve a base name seen in FROM (a file path): next to FROM first, then
 * in the scenario directory.  A name is NAME.cfg; a path stays a path. */
static int resolve_base(const char *from, const char *name, char *out, size_t len)
{
	bool is_path = strchr(name, '/') != NULL;
	size_t nl = strlen(name);
	bool has_ext = nl > 4 && strcmp(name + nl - 4, ".cfg") == 0;
	char file[MB_PATH_MAX], alt[MB_PATH_MAX];

	if (pathf(file, sizeof(file), "%s%s", name, has_ext || is_path ? "" : ".cfg"))
		return MB_ETOOBIG;
	if (name[0] == '/')
		return pathf(out, len, "%s", file);
	const char *slash = strrchr(from, '/');
	int rc = slash ? pathf(out, len, "%.*s/%s", (int)(slash - from), from, file)
		       : pathf(out, len, "%s", file);
	if (rc || file_exists(out) || is_path)
		return rc;
	if (pathf(alt, sizeof(alt), "%s/%s", mb_scenario_dir(), file) == 0 && file_exists(alt))
		return pathf(out, len, "%s", alt);
	return 0;
}

/* For a failed @include: the quoted file name on LINE of FILE, and where
 * libconfig looked for it, as ": \"x.cfg\" (in DIR)". */
static void include_name(const char *file, int line, const char *dir, char *out, size_t len)
{
	FILE *f = fopen(file, "r");
	char buf[1024];

	if (!f)
		return;
	for (int n = 1; fgets(buf, sizeof(buf), f); n++) {
		if (n < line)
			continue;
		char *a = strchr(buf, '"'), *b = a ? strchr(a + 1, '"') : NULL;
		if (b)
			pathf(out, len, ": %.*s (looked in %s)", (int)(b - a + 1), a, dir);
		break;
	}
	fclose(f);
}

static int load_file(struct ld *ld, const struct opt_table *t, struct insts *is, const char *path,
		     void *obj)
{
	config_t cfg;
	char dir[MB_PATH_MAX];
	int rc = 0;

	FILE *f = fopen(path, "r");
	if (!f)
		return fail_at(ld, path, 0, NULL, "cannot open: %s", strerror(errno));
	fclose(f);
	char real[PATH_MAX];
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (int i = 0; i < ld->depth; i++)
		if (strcmp(ld->chain[i], real) == 0)
			return fail_at(ld, path, 0, "base", "base files form a loop");
	if (ld->depth == MB_MAX_DEPTH)
		return fail_at(ld, path, 0, "base", "more than %d base files", MB_MAX_DEPTH);
	snprintf(ld->chain[ld->depth++], PATH_MAX, "%s", real);

	config_init(&cfg);
	const char *slash = strrchr(path, '/');
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	config_set_include_dir(&cfg, dir);
	char savefile[MB_PATH_MAX], savedir[MB_PATH_MAX];
	memcpy(savefile, ld->curfile, sizeof(savefile));
	memcpy(savedir, ld->curdir, sizeof(savedir));
	pathf(ld->curfile, sizeof(ld->curfile), "%s", path);
	pathf(ld->curdir, sizeof(ld->curdir), "%s", dir);
	if (config_read_file(&cfg, path) != CONFIG_TRUE) {
		const char *ef = config_error_file(&cfg);
		char quoted[512] = "";
		ef = fix_name(ld, ef ? ef : path);
		if (strstr(config_error_text(&cfg), "include"))
			include_name(ef, config_error_line(&cfg), dir, quoted, sizeof(quoted));
		rc = fail_at(ld, ef, config_error_line(&cfg), NULL, "%s%s", config_error_text(&cfg),
			     quoted);
		goto out;
	}
	const config_setting_t *root = config_root_setting(&cfg);
	/* the kind first: a file of the other kind fails on "kind", not on
	 * the first key this table does not know */
	const config_setting_t *k = config_setting_get_member(root, "kind");
	for (int i = 0; k && i < is->n; i++)
		if (is->v[i].o->type == OT_KIND &&
		    (rc = apply_value(ld, &is->v[i], k, "kind", obj)) != 0)
			goto out;
	const config_setting_t *b = config_setting_get_member(root, "base");
	if (b) {
		if (config_setting_type(b) != CONFIG_TYPE_STRING) {
			rc = wrong_type(ld, b, "base", "a string (scenario name or path)");
			goto out;
		}
		char bpath[MB_PATH_MAX];
		if (resolve_base(path, config_setting_get_string(b), bpath, sizeof(bpath)) != 0 ||
		    !file_exists(bpath)) {
			rc = fail_at(ld, setting_file(ld, b), config_setting_source_line(b), "base",
				     "cannot find \"%s\" (looked for %s and in %s)",
				     config_setting_get_string(b), bpath, mb_scenario_dir());
			goto out;
		}
		if ((rc = load_file(ld, t, is, bpath, obj)) != 0)
			goto out;
	}
	rc = apply_group(ld, is, root, NULL, NULL, obj, true);
out:
	memcpy(ld->curfile, savefile, sizeof(savefile));
	memcpy(ld->curdir, savedir, sizeof(savedir));
	config_destroy(&cfg);
	ld->depth--;
	return rc;
}

/* Cross-field checks report at the field's recorded location. */
static int loc_fail(struct ld *ld, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int loc_fail(struct ld *ld, const char *field, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	const char *file = ld->topfile;
	int line = 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (int i = 0; ld->is && i < ld->is->n; i++) {
		struct inst *in = &ld->is->v[i];
		if (strcmp(in->path, field) == 0 && in->set && in->file >= 0) {
			file = ld->files[in->file];
			line = in->line;
		}
	}
	return fail_at(ld, file, line, field, "%s", msg);
}

static int check_scenario(struct ld *ld, const struct opt_table *t, void *obj)
{
	struct mb_scenario *s = obj;
	(void)t;
	if (s->page_kb != 4 && s->page_kb != 8 && s->page_kb != 32)
		return loc_fail(ld, "topology.page_kb", "must be 4, 8 or 32");
	if (s->dl_min_members > s->dl_avg_members)
		return loc_fail(ld, "distribution_lists.min_members",
				"must not exceed avg_members (%d)", s->dl_avg_members);
	if (s->dl_avg_members > s->dl_max_members)
		return loc_fail(ld, "distribution_lists.max_members",
				"must be at least avg_members (%d)", s->dl_avg_members);
	if (s->storage_groups > s->databases)
		return loc_fail(ld, "topology.storage_groups", "must not exceed databases (%d)",
				s->databases);
	for (int i = 0; i < s->column_count; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(s->columns[i].id, s->columns[j].id) == 0)
				return loc_fail(ld, "published.columns",
						"column id \"%s\" appears twice", s->columns[i].id);
	return 0;
}

static int check_storage(struct ld *ld, const struct opt_table *t, void *obj)
{
	struct mb_storage_cfg *c = obj;
	(void)t;
	if (c->page_kb != 4 && c->page_kb != 8 && c->page_kb != 32)
		return loc_fail(ld, "database.page_kb", "must be 4, 8 or 32");
	double sum = c->insert_pct + c->replace_pct + c->delete_pct + c->seek_pct;
	if (fabs(sum - 100.0) > 1e-6)
		return loc_fail(ld, "mix.seek_pct",
				"insert + replace + delete + seek must add up to 100, not %.15g",
				sum);
	for (int i = 0; i < c->ref_count; i++)
		for (int j = 0; j < i; j++)
			if (c->ref[i].threads == c->ref[j].threads)
				return loc_fail(ld, "published.rows",
						"thread count %d appears twice", c->ref[i].threads);
	return 0;
}

/* Load NAME with table T into obj (objsize bytes); the file stem and the
 * path go to the char[MB_NAME_MAX] / char[MB_PATH_MAX] at name_off /
 * path_off.  obj is written only on success. */
static int load_any(const struct opt_table *t, const char *name, void *obj, size_t objsize,
		    size_t name_off, size_t path_off, struct mb_cfg_error *err)
{
	struct mb_cfg_error dummy;
	struct ld ld;
	struct insts is;
	char path[MB_PATH_MAX];
	int rc;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	memset(&ld, 0, sizeof(ld));
	ld.err = err;
	if (!name || !*name)
		return fail_at(&ld, "", 0, NULL, "no scenario given");
	if (mb_scenario_resolve(name, path, sizeof(path)) != 0)
		return fail_at(&ld, name, 0, NULL, "name too long");
	if ((rc = insts_build(t, &is)) != 0)
		return rc;
	char *tmp = calloc(1, objsize);
	if (!tmp) {
		free(is.v);
		return MB_ENOMEM;
	}
	ld.is = &is;
	ld.topfile = path;
	apply_defaults(t, tmp);
	rc = load_file(&ld, t, &is, path, tmp);
	if (rc == 0)
		rc = check_required(&ld, &is, NULL, path);
	if (rc == 0 && t->check)
		rc = t->check(&ld, t, tmp);
	if (rc == 0) {
		const char *slash = strrchr(path, '/');
		const char *stem = slash ? slash + 1 : path;
		size_t sl = strlen(stem);
		if (sl > 4 && strcmp(stem + sl - 4, ".cfg") == 0)
			sl -= 4;
		snprintf(tmp + name_off, MB_NAME_MAX, "%.*s", (int)sl, stem);
		snprintf(tmp + path_off, MB_PATH_MAX, "%s", path);
		memcpy(obj, tmp, objsize);
	}
	free(tmp);
	free(is.v);
	ld_free(&ld);
	return rc;
}

int mb_scenario_load(const char *name, struct mb_scenario *out, struct mb_cfg_error *err)
{
	return load_any(&scenario_table, name, out, sizeof(*out),
			offsetof(struct mb_scenario, name), offsetof(struct mb_scenario, path),
			err);
}

int mb_storage_cfg_load(const char *name, struct mb_storage_cfg *out, struct mb_cfg_error *err)
{
	return load_any(&storage_table, name, out, sizeof(*out),
			offsetof(struct mb_storage_cfg, name),
			offsetof(struct mb_storage_cfg, path), err);
}

/* ------------------------------------------------------------------ */
/* Where scenarios live                                                 */

const char *mb_scenario_dir(void)
{
	static char dir[MB_PATH_MAX];
	const char *env = getenv("MAILBENCH_SCENARIOS");

	if (env && *env) {
		pathf(dir, sizeof(dir), "%s", env);
		return dir;
	}
	/* run from the build tree (the program or a test under it): the
	 * scenarios of the source tree */
	char exe[PATH_MAX], build[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && realpath(MB_BUILDDIR, build)) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		size_t bl = strlen(build);
		if (strncmp(exe, build, bl) == 0 && (exe[bl] == '\0' || exe[bl] == '/')) {
			pathf(dir, sizeof(dir), "%s/scenarios", MB_SRCDIR);
			return dir;
		}
	}
	pathf(dir, sizeof(dir), "%s/scenarios", MB_PKGDATADIR);
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

/* ------------------------------------------------------------------ */
/* JSON, text dump and help, all from the tables                        */

static json_t *table_json(const struct opt_table *t, const void *obj);

static json_t *inst_json(const struct inst *in, const void *obj)
{
	const char *base = obj;
	const struct opt *o = in->o;

	if ((o->flags & F_HAS) && !*(const bool *)(base + in->aux))
		return json_null();
	switch (o->type) {
	case OT_INT:
		return json_integer(*(const int *)(base + in->off));
	case OT_DOUBLE:
		return json_real(*(const double *)(base + in->off));
	case OT_BOOL:
		return json_boolean(*(const bool *)(base + in->off));
	case OT_STRING:
	case OT_SCHOICE:
		return json_string(base + in->off);
	case OT_ENUM:
		return json_string(o->choices[*(const int *)(base + in->off)]);
	case OT_KIND:
		return json_string(o->choices[0]);
	case OT_INT_LIST: {
		json_t *a = json_array();
		int n = *(const int *)(base + in->aux);
		for (int k = 0; k < n; k++)
			json_array_append_new(a, json_integer(((const int *)(base + in->off))[k]));
		return a;
	}
	case OT_THRESHOLD: {
		const struct mb_threshold *th = (const void *)(base + in->off);
		char buf[64];
		if (th->cmp == MB_CMP_NONE)
			return NULL;
		mb_threshold_format(th, buf, sizeof(buf));
		return json_string(buf);
	}
	case OT_LIST: {
		json_t *a = json_array();
		int n = *(const int *)(base + in->aux);
		for (int k = 0; k < n; k++)
			json_array_append_new(
			    a, table_json(o->sub, base + in->off + (size_t)k * o->elem_size));
		return a;
	}
	case OT_BASE:
		break;
	}
	return NULL;
}

static json_t *table_json(const struct opt_table *t, const void *obj)
{
	struct insts is;
	json_t *root = json_object();

	if (!root || insts_build(t, &is) != 0)
		return root;
	for (int i = 0; i < is.n; i++) {
		json_t *v = inst_json(&is.v[i], obj);
		if (!v)
			continue;
		/* walk/create the groups of the dotted path */
		json_t *g = root;
		char path[128];
		snprintf(path, sizeof(path), "%s", is.v[i].path);
		char *p = path, *dot;
		while ((dot = strchr(p, '.')) != NULL) {
			*dot = '\0';
			json_t *next = json_object_get(g, p);
			if (!next) {
				next = json_object();
				json_object_set_new(g, p, next);
			}
			g = next;
			p = dot + 1;
		}
		json_object_set_new(g, p, v);
	}
	free(is.v);
	return root;
}

json_t *mb_scenario_json(const struct mb_scenario *s)
{
	json_t *o = table_json(&scenario_table, s);
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "path", json_string(s->path));
	return o;
}

json_t *mb_storage_cfg_json(const struct mb_storage_cfg *c)
{
	json_t *o = table_json(&storage_table, c);
	json_object_set_new(o, "name", json_string(c->name));
	json_object_set_new(o, "path", json_string(c->path));
	return o;
}

static void table_print(FILE *f, const struct opt_table *t, const void *obj, const char *prefix)
{
	struct insts is;
	const char *base = obj;

	if (insts_build(t, &is) != 0)
		return;
	for (int i = 0; i < is.n; i++) {
		const struct inst *in = &is.v[i];
		const struct opt *o = in->o;
		char key[256];
		snprintf(key, sizeof(key), "%s%s%s", prefix ? prefix : "", prefix ? "." : "",
			 in->path);
		if (o->type == OT_BASE)
			continue;
		if (o->type == OT_LIST) {
			int n = *(const int *)(base + in->aux);
			for (int k = 0; k < n; k++) {
				char sub[300];
				snprintf(sub, sizeof(sub), "%s[%d]", key, k);
				table_print(f, o->sub, base + in->off + (size_t)k * o->elem_size,
					    sub);
			}
			continue;
		}
		if (o->type == OT_THRESHOLD &&
		    ((const struct mb_threshold *)(base + in->off))->cmp == MB_CMP_NONE)
			continue;
		json_t *v = inst_json(in, obj);
		char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
		fprintf(f, "%s = %s%s\n", key, json_is_null(v) ? "" : (text ? text : ""),
			json_is_null(v) ? "(not published)" : "");
		free(text);
		json_decref(v);
	}
	free(is.v);
}

void mb_scenario_print(FILE *f, const struct mb_scenario *s)
{
	fprintf(f, "name = \"%s\"\npath = \"%s\"\n", s->name, s->path);
	table_print(f, &scenario_table, s, NULL);
}

void mb_storage_cfg_print(FILE *f, const struct mb_storage_cfg *c)
{
	fprintf(f, "name = \"%s\"\npath = \"%s\"\n", c->name, c->path);
	table_print(f, &storage_table, c, NULL);
}

static const char *opt_type_name(const struct opt *o)
{
	switch (o->type) {
	case OT_INT:
		return "integer";
	case OT_DOUBLE:
		return "number";
	case OT_BOOL:
		return "boolean";
	case OT_STRING:
		return "string";
	case OT_ENUM:
	case OT_SCHOICE:
	case OT_KIND:
		return "choice";
	case OT_INT_LIST:
		return "integer array";
	case OT_THRESHOLD:
		return "comparison";
	case OT_LIST:
		return "list of groups";
	case OT_BASE:
		return "string";
	}
	return "?";
}

static void fields_print(FILE *f, const struct opt_table *t, const char *prefix)
{
	struct insts is;

	if (insts_build(t, &is) != 0)
		return;
	for (int i = 0; i < is.n; i++) {
		const struct inst *in = &is.v[i];
		const struct opt *o = in->o;
		char key[256], dflt[128] = "", range[128] = "";
		snprintf(key, sizeof(key), "%s%s", prefix ? prefix : "", in->path);
		switch (o->type) {
		case OT_INT:
		case OT_DOUBLE:
			snprintf(range, sizeof(range), "%.15g..%.15g", o->min, o->max);
			if (!(o->flags & (F_REQ | F_HAS)))
				snprintf(dflt, sizeof(dflt), "%.15g", o->def);
			break;
		case OT_BOOL:
			if (!(o->flags & F_REQ))
				snprintf(dflt, sizeof(dflt), "%s", o->def ? "true" : "false");
			break;
		case OT_INT_LIST:
			snprintf(range, sizeof(range), "1..%zu entries of %.15g..%.15g", o->size,
				 o->min, o->max);
			snprintf(dflt, sizeof(dflt), "%s", o->sdef ? o->sdef : "");
			break;
		case OT_ENUM:
		case OT_SCHOICE:
		case OT_KIND:
			choices_text(o->choices, range, sizeof(range));
			if (!(o->flags & F_REQ))
				snprintf(dflt, sizeof(dflt), "\"%s\"", o->sdef ? o->sdef : "");
			break;
		case OT_STRING:
			snprintf(range, sizeof(range), "at most %zu characters", o->size - 1);
			break;
		case OT_THRESHOLD:
			snprintf(range, sizeof(range), "\"< X\", \"<= X\", \"> X\", \">= X\"");
			break;
		case OT_LIST:
			snprintf(range, sizeof(range), "at most %zu entries", o->size);
			break;
		case OT_BASE:
			break;
		}
		char line[1024];
		snprintf(line, sizeof(line), "%-44s %-14s %s%s%s%s%s%s", key, opt_type_name(o),
			 (o->flags & F_REQ) ? "required; " : "",
			 (o->flags & F_PUB) ? "published; " : "", dflt[0] ? "default " : "", dflt,
			 dflt[0] ? "; " : "", range);
		size_t ll = strlen(line);
		while (ll > 0 && (line[ll - 1] == ' ' || line[ll - 1] == ';'))
			line[--ll] = '\0';
		fprintf(f, "%s\n", line);
		fprintf(f, "%-44s   %s%s%s%s\n", "", o->help, in->label ? " (" : "",
			in->label ? in->label : "", in->label ? ")" : "");
		if (o->type == OT_LIST) {
			char sub[300];
			snprintf(sub, sizeof(sub), "%s[N].", key);
			fields_print(f, o->sub, sub);
		}
	}
	free(is.v);
}

void mb_cfg_fields_print(FILE *f, bool storage)
{
	const struct opt_table *t = storage ? &storage_table : &scenario_table;

	fprintf(f, "Keys of a %s (libconfig syntax; dotted keys are nested groups):\n\n", t->what);
	fields_print(f, t, NULL);
}
