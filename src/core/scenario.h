/* scenario.h: a loaded, validated scenario (libconfig file under scenarios/).
 *
 * The loader (scenario.c) is driven by one declarative option table (name,
 * type, offset into these structs, default, min, max, help); nothing parses
 * a field by hand.  A loaded scenario is complete: every field holds either
 * the file's value or the table's default, and every value is in range.
 * MB_ACTION_TABLE lists the user actions of the 8-hour day once, for the
 * loader, the load engine and the console.
 */
#ifndef MB_CORE_SCENARIO_H
#define MB_CORE_SCENARIO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/counters.h"
#include "core/mailbox.h"
#include "core/threshold.h"

/* X(ID, config key, label) -- in the published order. */
#define MB_ACTION_TABLE(X)                                                                         \
	X(SEND_MAIL, "send_mail", "send mail")                                                     \
	X(PROCESS_INBOX, "process_inbox", "process inbox")                                         \
	X(BROWSE_MAIL, "browse_mail", "browse mail")                                               \
	X(CHECK_FREEBUSY, "check_free_busy", "check free/busy")                                    \
	X(REQUEST_MEETING, "request_meeting", "request meeting")                                   \
	X(MAKE_APPOINTMENT, "make_appointment", "make appointment")                                \
	X(BROWSE_CALENDAR, "browse_calendar", "browse calendar")                                   \
	X(JOURNAL_APPS, "journal_applications", "journal applications")                            \
	X(LOGOFF, "logoff", "logoff")                                                              \
	X(BROWSE_CONTACTS, "browse_contacts", "browse contacts")                                   \
	X(CREATE_CONTACT, "create_contact", "create contact")

enum mb_action_id {
#define MB_X_AID(id, key, label) MB_A_##id,
	MB_ACTION_TABLE(MB_X_AID)
#undef MB_X_AID
	    MB_ACTION_COUNT
};

/* The storage engine's log segment size, KB (db.h MB_LOG_SEGMENT_SIZE, a
 * compile-time constant; cmd_storage_test.c asserts they agree).  A storage
 * scenario's log.segment_kb must say this value. */
#define MB_SC_LOG_SEGMENT_KB 1024

struct mb_action_def {
	const char *key;
	const char *label;
};
extern const struct mb_action_def mb_actions[MB_ACTION_COUNT];

enum mb_client_mode { MB_MODE_ONLINE = 0, MB_MODE_CACHED = 1 };

#define MB_MAX_COLUMNS 8
#define MB_NAME_MAX 64
#define MB_TEXT_MAX 256
#define MB_PATH_MAX 4096
/* The data directory every command uses unless --data says otherwise. */
#define MB_DEFAULT_DATA_DIR "mailbench-data"

/* One published result column (e.g. "(b) Windows 2000 SP3, Exchange 2003"). */
struct mb_published_column {
	char id[16];		     /* "a", "b", ... */
	char heading[MB_TEXT_MAX];   /* the published column heading */
	char platform[MB_TEXT_MAX];  /* header row: server platform */
	char engine[MB_TEXT_MAX];    /* header row: server software */
	char client[MB_TEXT_MAX];    /* header row: client software and mode */
	bool smt;		     /* header row: Hyper-Threading on */
	char client_os[MB_TEXT_MAX]; /* header row: client operating system */
	/* one value per published counter; has[] false where none was published */
	double value[MB_PUBLISHED_COUNT];
	bool has[MB_PUBLISHED_COUNT];
};

/* One kind of message of a message mix (scenario key message_mix.init or
 * message_mix.send): a body of a content kind (core/content.h) and size,
 * attachments of one kind and size, a weight among the mix's kinds, and
 * where the figures come from ("calibrated ..." when chosen to match a
 * published figure).  Sizes are means; core/mix.h draws them. */
#define MB_MIX_MAX 16
#define MB_MIX_MAX_ATTACH 8
struct mb_mix_kind {
	char name[MB_NAME_MAX];
	char body[16]; /* content kind of the body: text, rtf, html */
	double body_kb;
	int attachments;     /* 0 .. MB_MIX_MAX_ATTACH */
	char attachment[16]; /* content kind of each attachment */
	double attachment_kb;
	double weight;
	char source[MB_TEXT_MAX];
};

/* Scenarios 1 and 2 (and user files that include them). */
struct mb_scenario {
	char name[MB_NAME_MAX];	 /* "online", "cached", or the file stem */
	char title[MB_TEXT_MAX]; /* "Scenario 1: Outlook online" */
	char path[MB_PATH_MAX];	 /* the file it was loaded from */
	int number;		 /* 1 or 2 */
	enum mb_client_mode mode;

	/* topology */
	int users; /* published topology: 8,000 (see run_users) */
	int databases;
	int storage_groups;
	int db_cache_mb;      /* database cache at scale 1 */
	double mailbox_mb;    /* average mailbox size at scale 1 */
	int page_kb;	      /* 4, 8 or 32 */
	int write_max_kb;     /* largest database write; <= page_kb: one page */
	int users_per_client; /* published: 1,000 simulated clients per machine */

	/* published test bed (text, as published) */
	char testbed_server[MB_TEXT_MAX];
	char testbed_db_storage[MB_TEXT_MAX];
	char testbed_log_storage[MB_TEXT_MAX];
	char testbed_clients[MB_TEXT_MAX];

	/* run defaults (overridden by the command line) */
	int run_users;		   /* users a run simulates by default here (--users) */
	double scale;		   /* scales mailbox contents and cache together */
	double accel;		   /* 8-hour-day acceleration factor */
	bool compression;	   /* payload compression (LZ77+DIRECT2) */
	int compression_min_bytes; /* payloads below this are not compressed */
	double run_cache_mb;	   /* database cache, MiB; 0: the published ratio */
	int run_seed;		   /* load engine's random seed */
	double ramp_s;		   /* logon ramp-up */
	double duration_s;
	double warmup_s;

	/* the target: driver (src/load/target.h), and for an external one
	 * where it listens, an accounts file and credentials */
	char target_driver[MB_NAME_MAX];     /* "mbstore" (the embedded store), "null", ... */
	char target_address[MB_TEXT_MAX];    /* ADDR:PORT; "" = the store the session starts */
	char target_submission[MB_TEXT_MAX]; /* ADDR:PORT of a second connection (e.g. SMTP) */
	char target_accounts[MB_PATH_MAX];   /* accounts file of an external target */
	char target_user[MB_NAME_MAX];	     /* an account to check the target with */
	char target_password[MB_NAME_MAX];

	/* mailbox configuration (at scale 1) */
	struct mb_mailbox_profile mailbox;

	/* message mix: the initialised mailboxes' messages and the messages
	 * users send (empty: plain text of avg_message_kb), and the share of
	 * opened messages whose attachments the user opens */
	int mix_init_count;
	struct mb_mix_kind mix_init[MB_MIX_MAX];
	int mix_send_count;
	struct mb_mix_kind mix_send[MB_MIX_MAX];
	double open_attachment_pct;

	/* distribution lists */
	int dl_per_site;
	int dl_min_members;
	int dl_avg_members;
	int dl_max_members;
	double dl_home_db_pct; /* members drawn from the list's home database, % */

	/* user actions per 8-hour day, MB_ACTION_TABLE order */
	double actions_per_day[MB_ACTION_COUNT];
	double messages_received_per_day;
	double messages_sent_per_day;

	/* published results */
	char results_title[MB_TEXT_MAX]; /* "Scenario 1 results: Outlook online (8,000 users)" */
	char results_note[MB_TEXT_MAX];	 /* what the source said about the columns */
	int column_count;
	struct mb_published_column columns[MB_MAX_COLUMNS];

	/* pass/fail thresholds on counters (MB_CMP_NONE where unset) */
	struct mb_threshold thresholds[MB_COUNTER_COUNT];
};

#define MB_STORAGE_MAX_THREADS 16
#define MB_STORAGE_MAX_REF 8

/* One published Jetstress row. */
struct mb_storage_ref {
	int threads;
	double iops;
	double db_read_ms;
	double log_write_ms;
};

/* The storage test (scenarios/storage.cfg). */
struct mb_storage_cfg {
	char name[MB_NAME_MAX];
	char title[MB_TEXT_MAX];
	char path[MB_PATH_MAX];
	int page_kb;
	double db_size_gb;
	int databases;
	int thread_count;		     /* entries in threads[] */
	int threads[MB_STORAGE_MAX_THREADS]; /* the sweep, e.g. 4, 8, 12 */
	double duration_s;		     /* per thread count */
	double warmup_s;
	char mode[16]; /* "transactions" or "io" */
	char type[16]; /* "performance", "soft-recovery", "checksum" */
	int db_cache_mb;
	/* Jetstress mix, percent of transactions */
	double insert_pct, replace_pct, delete_pct, seek_pct;
	double lazy_commit_pct;
	/* I/O mode mix */
	double read_pct;    /* of database I/Os */
	int log_segment_kb; /* MB_SC_LOG_SEGMENT_KB: the engine's, fixed */
	/* pass/fail */
	double db_read_avg_ms_max;   /* default 20 */
	double log_write_avg_ms_max; /* default 10 */
	/* published reference rows */
	char ref_heading[MB_TEXT_MAX];
	char ref_notes[MB_TEXT_MAX]; /* how the reference was measured */
	int ref_count;
	struct mb_storage_ref ref[MB_STORAGE_MAX_REF];
};

/* Where a load failed: "FILE:LINE: FIELD: message". */
struct mb_cfg_error {
	char file[MB_PATH_MAX];
	int line; /* 0 when not known */
	char field[128];
	char message[256];
};
/* The target check of `mailbench scenario show` (the driver registry lives
 * in the load engine, above core; the program sets this): 0 when the
 * scenario's target.driver is known, and the actions it cannot run in
 * *unsupported (bit per action); MB_ENOTFOUND otherwise. */
typedef int (*mb_scenario_target_fn)(const struct mb_scenario *sc, uint32_t *unsupported);
extern mb_scenario_target_fn mb_scenario_target_check;

/* Format an error as "file:line: field: message" into buf. */
void mb_cfg_error_format(const struct mb_cfg_error *e, char *buf, size_t len);

/* Resolve SCENARIO ("online", "cached", "storage" or a path) to a file path. */
int mb_scenario_resolve(const char *name, char *path, size_t len);
/* The directory scenarios are read from (MAILBENCH_SCENARIOS, the source
 * tree when run from the build tree, or the installed data directory). */
const char *mb_scenario_dir(void);
/* Where the installed data SUB (scenarios, vendor) lives: $ENV_NAME when
 * set, the source tree's SUB when the program runs from the build tree,
 * else PKGDATADIR/SUB.  0 or MB_ETOOBIG. */
int mb_share_dir(const char *env_name, const char *sub, char *buf, size_t len);

/* Load and validate a scenario (1 or 2 style). MB_ECONFIG fills err.
 * NAME goes through mb_scenario_resolve.  A file may start from another
 * with `base = "online";` (resolved next to the file, then in the scenario
 * directory) and set only what differs; see scenarios/online.cfg. */
int mb_scenario_load(const char *name, struct mb_scenario *out, struct mb_cfg_error *err);
/* Load and validate the storage-test settings. */
int mb_storage_cfg_load(const char *name, struct mb_storage_cfg *out, struct mb_cfg_error *err);

/* Every field of a loaded scenario / storage file as JSON, nested like the
 * file (new reference; published values not published are null). */
json_t *mb_scenario_json(const struct mb_scenario *s);
json_t *mb_storage_cfg_json(const struct mb_storage_cfg *c);
/* Print every field as "path = value" lines, in table order. */
void mb_scenario_print(FILE *f, const struct mb_scenario *s);
void mb_storage_cfg_print(FILE *f, const struct mb_storage_cfg *c);
/* Print the option table (key, type, default, range, help) of scenario
 * files (storage = false) or storage-test files (storage = true). */
void mb_cfg_fields_print(FILE *f, bool storage);

#endif
