/* init.c: `mailbench init`: create the databases of a scenario, its users
 * and distribution lists, and populate every mailbox in bulk through the
 * storage engine (not over RPC).
 *
 * Invariants:
 *  - Resumable by construction: the k-th item of a mailbox (folder
 *    creation, then messages, appointments, contacts in a fixed order) gets
 *    message id k and is generated from a seed that depends only on (init
 *    seed, mailbox, k); a mailbox's record says how far it got (next_mid),
 *    and everything up to there is durable (mb_db_commit), so a restart
 *    continues exactly where the last commit ended.
 *  - The topology is written first to DATA/init.topology.json and renamed to
 *    DATA/topology.json only when every mailbox is complete, so readers
 *    never see a half-initialised data directory as ready; DATA/init.state
 *    holds the parameters (a resume with other parameters is refused).
 *  - One worker thread per storage group (each owns its databases).
 */
#include "config.h"

#include "cmd.h"
#include "core/cli.h"
#include "core/content.h"
#include "core/error.h"
#include "core/sampler.h"
#include "core/scenario.h"
#include "core/topology.h"
#include "db/db.h"
#include "proto/proto.h"
#include "store/schema.h"
#include "store/store.h"

#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TXN_BYTES (2u << 20) /* bytes of bodies per bulk transaction */
#define DAY_MS (86400LL * 1000)

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct plan {
	int inbox, deleted, folders, per_folder, appts, contacts;
	size_t avg_body;
	int items; /* messages + appointments + contacts */
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

struct init_ctx {
	const char *data;
	struct mb_topology *topo;
	struct plan plan;
	uint64_t seed;
	int64_t now_ms;
	uint32_t cache_mb;
	int page_size;
	atomic_uint_fast64_t items_done;
	atomic_uint_fast64_t bytes_done;
	atomic_int mailboxes_done;
	atomic_int failed;
	char errmsg[512];
	pthread_mutex_t lock;
	struct mb_cache *cache;
};

struct sg_job {
	struct init_ctx *ctx;
	int sg;
	pthread_t th;
};

static void set_error(struct init_ctx *c, const char *fmt, const char *a, int rc)
{
	pthread_mutex_lock(&c->lock);
	if (!c->failed) {
		snprintf(c->errmsg, sizeof(c->errmsg), fmt, a, mb_strerror(rc));
		c->failed = 1;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Which folder item k of a mailbox goes to, and what kind it is. */
enum item_kind { IT_MAIL, IT_APPT, IT_CONTACT };
static void item_place(const struct plan *p, int k, uint32_t *folder, enum item_kind *kind)
{
	*kind = IT_MAIL;
	if (k < p->inbox) {
		*folder = MB_FID_INBOX;
		return;
	}
	k -= p->inbox;
	if (k < p->deleted) {
		*folder = MB_FID_DELETED;
		return;
	}
	k -= p->deleted;
	if (k < p->folders * p->per_folder) {
		*folder = MB_FID_FIRST_USER + (uint32_t)(k / p->per_folder);
		return;
	}
	k -= p->folders * p->per_folder;
	if (k < p->appts) {
		*folder = MB_FID_CALENDAR;
		*kind = IT_APPT;
		return;
	}
	*folder = MB_FID_CONTACTS;
	*kind = IT_CONTACT;
}

/* Write item k of user u's mailbox. Returns bytes of body written. */
static int write_item(struct init_ctx *c, struct mb_schema *s, const struct mb_topo_user *u, int k,
		      struct mb_buf *tmp, size_t *body_bytes)
{
	uint32_t folder;
	enum item_kind kind;
	uint64_t seed = mix64(c->seed ^ ((uint64_t)u->mailbox << 32) ^ (uint64_t)k);
	char subject[96], name[128], email[128];
	struct mb_prop props[8];
	struct mb_bytes rcpt;
	uint16_t n = 0;
	char *body = NULL;
	size_t blen = 0;
	struct mb_msg_in in;
	int nusers = mb_topology_user_count(c->topo);
	int rc;

	item_place(&c->plan, k, &folder, &kind);
	memset(&in, 0, sizeof(in));
	mb_content_subject(seed, subject, sizeof(subject));
	if (kind == IT_MAIL) {
		const struct mb_topo_user *from =
			mb_topology_user(c->topo, (int)(mix64(seed + 1) % (uint64_t)nusers));
		rc = mb_content_body(seed, c->plan.avg_body, &body, &blen);
		if (rc)
			return rc;
		props[n++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Note");
		props[n++] = mb_prop_str(MB_PR_SUBJECT, subject);
		props[n++] = mb_prop_str(MB_PR_SENDER_NAME, from->name);
		props[n++] = mb_prop_str(MB_PR_DISPLAY_TO, u->name);
		in.time = c->now_ms - (int64_t)(mix64(seed + 2) % (uint64_t)(30 * DAY_MS));
		in.flags = (mix64(seed + 3) % 10) < 7 ? MB_MSGFLAG_READ : 0;
	} else if (kind == IT_APPT) {
		rc = mb_content_body(seed, 2048, &body, &blen);
		if (rc)
			return rc;
		/* within two weeks either side of now, on half hours, 30..120 min */
		int64_t slot = (int64_t)(mix64(seed + 4) % (28 * 48)) - 14 * 48;
		int64_t base = c->now_ms - c->now_ms % (30 * 60 * 1000);
		in.start = base + slot * 30 * 60 * 1000;
		in.end = in.start + (int64_t)(1 + mix64(seed + 5) % 4) * 30 * 60 * 1000;
		in.busy = 2;
		in.appointment = true;
		in.time = c->now_ms - DAY_MS;
		in.flags = MB_MSGFLAG_READ;
		props[n++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Appointment");
		props[n++] = mb_prop_str(MB_PR_SUBJECT, subject);
		props[n++] = mb_prop_str(MB_PR_LOCATION, "Room 1");
		props[n++] = mb_prop_i64(MB_PR_START_DATE, in.start);
		props[n++] = mb_prop_i64(MB_PR_END_DATE, in.end);
		props[n++] = mb_prop_i64(MB_PR_BUSY_STATUS, in.busy);
	} else {
		snprintf(name, sizeof(name), "%s", subject);
		snprintf(email, sizeof(email), "contact%d.%u@example.org", k, u->mailbox);
		in.time = c->now_ms - DAY_MS;
		in.flags = MB_MSGFLAG_READ;
		props[n++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Contact");
		props[n++] = mb_prop_str(MB_PR_DISPLAY_NAME, name);
		props[n++] = mb_prop_str(MB_PR_EMAIL_ADDRESS, email);
	}
	(void)rcpt;
	in.props = props;
	in.nprops = n;
	in.body = body;
	in.body_len = (uint32_t)blen;
	uint64_t mid;
	rc = mb_schema_msg_add(s, u->mailbox, folder, &in, tmp, &mid, NULL);
	free(body);
	if (!rc && mid != (uint64_t)k + 1)
		rc = MB_ECORRUPT; /* the resume invariant broke */
	*body_bytes = blen;
	return rc;
}

/* Commit the open transaction, or abort it when rc is an error. */
static int txn_close(struct mb_db *db, int rc)
{
	if (rc) {
		mb_db_abort(db);
		return rc;
	}
	return mb_db_commit(db);
}

static int populate_mailbox(struct init_ctx *c, struct mb_schema *s, const struct mb_topo_user *u,
			    struct mb_buf *tmp)
{
	struct mb_db *db = mb_schema_db(s);
	struct mb_mailbox_rec m;
	int rc;

	if (mb_schema_mailbox_get(s, u->mailbox, &m) == MB_ENOTFOUND) {
		rc = mb_db_begin(db);
		if (rc)
			return rc;
		rc = mb_schema_mailbox_create(s, u->mailbox, u->name);
		for (int f = 0; f < c->plan.folders && !rc; f++) {
			char name[32];
			uint32_t num;
			snprintf(name, sizeof(name), "Folder %02d", f + 1);
			rc = mb_schema_folder_create(s, u->mailbox, MB_FID_ROOT, name, &num);
			if (!rc && num != MB_FID_FIRST_USER + (uint32_t)f)
				rc = MB_ECORRUPT;
		}
		rc = txn_close(db, rc);
		if (rc)
			return rc;
		m.next_mid = 1;
	}
	int k = (int)m.next_mid - 1;
	if (k > 0)
		atomic_fetch_add(&c->items_done, (uint64_t)k);
	while (k < c->plan.items) {
		if (stop_flag || c->failed)
			return MB_EAGAIN;
		size_t txn_bytes = 0;
		rc = mb_db_begin(db);
		if (rc)
			return rc;
		int start = k;
		while (k < c->plan.items && txn_bytes < TXN_BYTES && !rc) {
			size_t b = 0;
			rc = write_item(c, s, u, k, tmp, &b);
			txn_bytes += b;
			k++;
		}
		rc = txn_close(db, rc);
		if (rc)
			return rc;
		atomic_fetch_add(&c->items_done, (uint64_t)(k - start));
		atomic_fetch_add(&c->bytes_done, (uint64_t)txn_bytes);
	}
	return 0;
}

static void *sg_worker(void *arg)
{
	struct sg_job *j = arg;
	struct init_ctx *c = j->ctx;
	const struct mb_topo_info *info = mb_topology_info(c->topo);
	char dir[4200], logdir[4200];
	struct mb_sg_options o;
	struct mb_sg *sg = NULL;
	struct mb_buf *tmp = NULL;
	int rc;

	mb_topology_db_path(c->data, j->sg, 1, dir, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	mb_topology_log_dir(c->data, info->log_dir, j->sg, logdir, sizeof(logdir));
	mb_sg_options_init(&o);
	o.dir = dir;
	o.log_dir = logdir;
	o.cache = c->cache;
	o.create = true;
	rc = mb_sg_open(&o, &sg);
	if (rc) {
		set_error(c, "cannot open storage group %s: %s", dir, rc);
		return NULL;
	}
	rc = mb_buf_create(1 << 20, &tmp);
	for (int d = 1; d <= info->databases && !rc && !c->failed && !stop_flag; d++) {
		if (mb_topology_db_sg(c->topo, d) != j->sg)
			continue;
		char name[32];
		struct mb_db *db;
		struct mb_schema *s;
		snprintf(name, sizeof(name), "db%02d.mdb", d);
		rc = mb_db_open(sg, name, (uint32_t)c->page_size, MB_DB_CREATE, &db);
		if (rc) {
			set_error(c, "cannot open database %s: %s", name, rc);
			break;
		}
		rc = mb_schema_open(db, true, &s);
		if (rc) {
			set_error(c, "cannot create the tables of %s: %s", name, rc);
			mb_db_close(db);
			break;
		}
		for (int i = 0; i < mb_topology_user_count(c->topo) && !rc; i++) {
			const struct mb_topo_user *u = mb_topology_user(c->topo, i);
			if (u->db != d)
				continue;
			rc = populate_mailbox(c, s, u, tmp);
			if (rc == MB_EAGAIN)
				break;
			if (rc) {
				char what[160];
				snprintf(what, sizeof(what), "%s (%s)", u->name, name);
				set_error(c, "cannot populate mailbox %s: %s", what, rc);
				break;
			}
			atomic_fetch_add(&c->mailboxes_done, 1);
		}
		mb_schema_close(s);
		mb_db_close(db);
	}
	mb_buf_destroy(tmp);
	rc = mb_sg_close(sg);
	if (rc)
		set_error(c, "closing storage group %s: %s", dir, rc);
	return NULL;
}

/* ---- topology generation ---- */

static int gen_topology(const struct mb_scenario *sc, int users, double scale, const char *log_dir,
			int cache_mb, struct mb_topology **out)
{
	struct mb_topo_info info;
	struct mb_topology *t;
	int rc;

	memset(&info, 0, sizeof(info));
	snprintf(info.scenario, sizeof(info.scenario), "%s", sc->name);
	info.scale = scale;
	info.page_kb = sc->page_kb;
	info.storage_groups = sc->storage_groups;
	info.databases = sc->databases;
	info.db_cache_mb = cache_mb;
	mb_store_scaled_mailbox(sc, scale, &info);
	info.created = (double)time(NULL);
	snprintf(info.log_dir, sizeof(info.log_dir), "%s", log_dir ? log_dir : "");
	rc = mb_topology_create(&info, &t);
	if (rc)
		return rc;
	static const char alnum[] = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
	for (int i = 0; i < users && !rc; i++) {
		struct mb_topo_user u;
		uint8_t r[16];
		memset(&u, 0, sizeof(u));
		snprintf(u.name, sizeof(u.name), "user%04d", i + 1);
		rc = mb_auth_random(r, sizeof(r));
		for (int k = 0; k < 16; k++)
			u.password[k] = alnum[r[k] % (sizeof(alnum) - 1)];
		if (!rc)
			rc = mb_auth_random(u.salt, sizeof(u.salt));
		u.iterations = MB_PBKDF2_ITERATIONS;
		if (!rc)
			rc = mb_auth_derive(u.password, u.salt, u.iterations, u.key);
		u.db = i % info.databases + 1;
		u.sg = mb_topology_db_sg(t, u.db);
		if (!rc)
			rc = mb_topology_add_user(t, &u);
	}
	/* distribution lists: sizes in [min, max] with the published mean */
	int nl = sc->dl_per_site, mn = sc->dl_min_members, mx = sc->dl_max_members;
	int avg = sc->dl_avg_members;
	if (mx > users)
		mx = users;
	if (mn > mx)
		mn = mx;
	if (avg > mx)
		avg = mx;
	if (avg < mn)
		avg = mn;
	int *size = calloc((size_t)(nl ? nl : 1), sizeof(int));
	uint32_t *mem = calloc((size_t)(mx ? mx : 1), sizeof(uint32_t));
	if (!size || !mem)
		rc = rc ? rc : MB_ENOMEM;
	uint64_t st = 0x5eed;
	long sum = 0;
	for (int i = 0; i < nl && !rc; i++) {
		st = mix64(st + (uint64_t)i);
		size[i] = mn + (int)(st % (uint64_t)(mx - mn + 1));
		sum += size[i];
	}
	/* nudge sizes until the mean is exact (within bounds) */
	long want = (long)avg * nl;
	for (int guard = 0; sum != want && guard < 1000000 && nl > 0 && !rc; guard++) {
		st = mix64(st + 7);
		int i = (int)(st % (uint64_t)nl);
		if (sum > want && size[i] > mn) {
			size[i]--;
			sum--;
		} else if (sum < want && size[i] < mx) {
			size[i]++;
			sum++;
		}
	}
	for (int i = 0; i < nl && !rc; i++) {
		char name[32];
		int n = 0;
		while (n < size[i]) {
			st = mix64(st + 13);
			uint32_t m = (uint32_t)(st % (uint64_t)users);
			bool dup = false;
			for (int j = 0; j < n; j++)
				dup |= mem[j] == m;
			if (!dup)
				mem[n++] = m;
		}
		snprintf(name, sizeof(name), "list%03d", i + 1);
		rc = mb_topology_add_list(t, name, mem, n);
	}
	free(size);
	free(mem);
	if (rc) {
		mb_topology_destroy(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* ---- state file ---- */

static int write_state(const char *path, const char *scenario, int users, double scale,
		       uint64_t seed, bool complete, int done)
{
	char tmp[4200];
	json_t *o = json_pack("{s:i,s:s,s:i,s:f,s:s,s:b,s:i}", "version", 1, "scenario", scenario,
			      "users", users, "scale", scale, "seed", "", "complete", complete,
			      "mailboxes_done", done);
	char seedhex[17];
	snprintf(seedhex, sizeof(seedhex), "%016llx", (unsigned long long)seed);
	json_object_set_new(o, "seed", json_string(seedhex));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int rc = json_dump_file(o, tmp, JSON_INDENT(1)) == 0 && rename(tmp, path) == 0 ? 0 : MB_EIO;
	json_decref(o);
	return rc;
}

static void fmt_dur(double s, char *buf, size_t len)
{
	if (s < 0 || s > 360000)
		snprintf(buf, len, "--:--");
	else if (s >= 3600)
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
	else
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mailbench init -s SCENARIO [--users N] [--data DIR] [--log-dir DIR]\n"
		"                      [--scale F] [--restart]\n"
		"\n"
		"Create the scenario's databases (storage groups sgN/dbMM.mdb), its users with\n"
		"generated passwords and its distribution lists, populate every mailbox per\n"
		"the scenario's mailbox configuration, and write DATA/topology.json.\n"
		"Interrupted (Ctrl-C), it stops after the current transaction; run it again\n"
		"with the same options to resume, or with --restart to start over.\n"
		"\n"
		"options:\n"
		"  -s, --scenario NAME  online, cached or a .cfg path (required)\n"
		"  -u, --users N        users (default: the scenario's run.users)\n"
		"  -d, --data DIR       data directory (default: " MB_DEFAULT_DATA_DIR ")\n"
		"  -l, --log-dir DIR    transaction logs under DIR/sgN (default: DATA/sgN/log)\n"
		"  -S, --scale F        scale of mailbox contents and database cache, (0, 1]\n"
		"                       (default: the scenario's run.scale; 1 = published profile)\n"
		"  -r, --restart        delete an earlier (partial) initialisation first\n"
		"  -h, --help           this help\n"
		"\n"
		"exit codes: 0 done, 2 usage or input error, 3 runtime failure or interrupted\n");
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Remove a storage group directory we created (DATA/sgN or LOGDIR/sgN). */
static int rm_tree(const char *path)
{
	if (access(path, F_OK) != 0)
		return 0;
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : MB_EIO;
}

int mb_cmd_init(int argc, char **argv)
{
	static const struct option lo[] = {{"scenario", required_argument, NULL, 's'},
					   {"users", required_argument, NULL, 'u'},
					   {"data", required_argument, NULL, 'd'},
					   {"log-dir", required_argument, NULL, 'l'},
					   {"scale", required_argument, NULL, 'S'},
					   {"restart", no_argument, NULL, 'r'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *scen = NULL, *data = MB_DEFAULT_DATA_DIR, *log_dir = NULL;
	int users = 0, opt;
	double scale = 0;
	bool restart = false;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:u:d:l:S:rh", lo, NULL)) != -1) {
		switch (opt) {
		case 's':
			scen = optarg;
			break;
		case 'u': {
			long v;
			if (mb_cli_long("init", "--users", optarg, 1, 1000000, &v))
				return MB_EXIT_USAGE;
			users = (int)v;
			break;
		}
		case 'd':
			data = optarg;
			break;
		case 'l':
			log_dir = optarg;
			break;
		case 'S':
			if (mb_cli_double("init", "--scale", optarg, 0, 1, 1, &scale))
				return MB_EXIT_USAGE;
			break;
		case 'r':
			restart = true;
			break;
		case 'h':
			usage(stdout);
			return MB_EXIT_OK;
		default:
			usage(stderr);
			return MB_EXIT_USAGE;
		}
	}
	if (mb_cli_no_operands("init", argc, argv))
		return MB_EXIT_USAGE;
	if (!scen) {
		fprintf(stderr, "mailbench init: -s SCENARIO is required\n");
		usage(stderr);
		return MB_EXIT_USAGE;
	}
	struct mb_scenario *sc = calloc(1, sizeof(*sc));
	struct mb_cfg_error cerr;
	if (!sc)
		return MB_EXIT_RUNTIME;
	if (mb_scenario_load(scen, sc, &cerr)) {
		char buf[1024];
		mb_cfg_error_format(&cerr, buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
		free(sc);
		return MB_EXIT_USAGE;
	}
	if (!users)
		users = sc->run_users;
	if (scale == 0)
		scale = sc->scale;

	char topo_path[4200], work_topo[4200], state_path[4200], path[4200];
	snprintf(topo_path, sizeof(topo_path), "%s/topology.json", data);
	snprintf(work_topo, sizeof(work_topo), "%s/init.topology.json", data);
	snprintf(state_path, sizeof(state_path), "%s/init.state", data);
	if (mkdir(data, 0755) && errno != EEXIST) {
		fprintf(stderr, "mailbench init: --data: cannot create %s: %s\n", data, strerror(errno));
		free(sc);
		return MB_EXIT_USAGE;
	}
	if (restart) {
		for (int g = 1; g <= sc->storage_groups; g++) {
			int r1, r2 = 0;
			snprintf(path, sizeof(path), "%s/sg%d", data, g);
			r1 = rm_tree(path);
			if (log_dir) {
				snprintf(path, sizeof(path), "%s/sg%d", log_dir, g);
				r2 = rm_tree(path);
			}
			if (r1 || r2) {
				fprintf(stderr, "mailbench init: --restart: cannot remove %s: %s\n", path,
					strerror(errno));
				free(sc);
				return MB_EXIT_RUNTIME;
			}
		}
		unlink(topo_path);
		unlink(work_topo);
		unlink(state_path);
	}

	/* resume or fresh start */
	struct mb_topology *topo = NULL;
	uint64_t seed = 0;
	char err[1024];
	json_t *st = json_load_file(state_path, 0, NULL);
	if (st) {
		const char *ss = json_string_value(json_object_get(st, "scenario"));
		int su = (int)json_integer_value(json_object_get(st, "users"));
		double ssc = json_number_value(json_object_get(st, "scale"));
		const char *seedhex = json_string_value(json_object_get(st, "seed"));
		bool complete = json_is_true(json_object_get(st, "complete"));
		if (!ss || strcmp(ss, sc->name) || su != users || fabs(ssc - scale) > 1e-12 || !seedhex) {
			fprintf(stderr,
				"mailbench init: %s: an initialisation with other parameters (scenario %s, "
				"%d users, scale %g) is there; use --restart to replace it\n",
				state_path, ss ? ss : "?", su, ssc);
			json_decref(st);
			free(sc);
			return MB_EXIT_USAGE;
		}
		seed = strtoull(seedhex, NULL, 16);
		json_decref(st);
		if (complete && access(topo_path, R_OK) == 0) {
			printf("mailbench init: %s is already initialised (scenario %s, %d users, scale "
			       "%g); use --restart to start over\n",
			       data, sc->name, users, scale);
			free(sc);
			return MB_EXIT_OK;
		}
		int rc = mb_topology_read(work_topo, &topo, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "mailbench init: cannot resume: %s; use --restart\n", err);
			free(sc);
			return MB_EXIT_USAGE;
		}
		fprintf(stderr, "mailbench init: resuming the initialisation of %s\n", data);
	} else {
		if (access(topo_path, F_OK) == 0) {
			fprintf(stderr,
				"mailbench init: %s exists but no %s: use --restart to replace it\n",
				topo_path, state_path);
			free(sc);
			return MB_EXIT_USAGE;
		}
		if (mb_auth_random(&seed, sizeof(seed))) {
			free(sc);
			return MB_EXIT_RUNTIME;
		}
		int cache_mb = mb_store_scaled_cache_mb(sc, users, scale);
		int rc = gen_topology(sc, users, scale, log_dir, cache_mb, &topo);
		if (!rc)
			rc = mb_topology_write(topo, work_topo);
		if (!rc)
			rc = write_state(state_path, sc->name, users, scale, seed, false, 0);
		if (rc) {
			fprintf(stderr, "mailbench init: cannot write the topology under %s: %s\n", data,
				mb_strerror(rc));
			mb_topology_destroy(topo);
			free(sc);
			return MB_EXIT_RUNTIME;
		}
	}

	const struct mb_topo_info *info = mb_topology_info(topo);
	struct init_ctx *c = calloc(1, sizeof(*c));
	c->data = data;
	c->topo = topo;
	c->seed = seed;
	c->now_ms = (int64_t)info->created * 1000;
	c->page_size = info->page_kb * 1024;
	c->plan.inbox = info->inbox_messages;
	c->plan.deleted = info->deleted_items_messages;
	c->plan.folders = info->new_folders;
	c->plan.per_folder = info->messages_per_folder;
	c->plan.appts = info->calendar_appointments;
	c->plan.contacts = info->contacts;
	c->plan.avg_body = (size_t)info->avg_message_kb * 1024;
	c->plan.items = c->plan.inbox + c->plan.deleted + c->plan.folders * c->plan.per_folder +
			c->plan.appts + c->plan.contacts;
	pthread_mutex_init(&c->lock, NULL);
	/* bulk loading wants a larger cache than the store's scaled one */
	uint64_t cache_bytes = (uint64_t)(info->db_cache_mb > 96 ? info->db_cache_mb : 96) << 20;
	int rc = mb_cache_create(cache_bytes, &c->cache);
	if (rc) {
		fprintf(stderr, "mailbench init: cannot create the database cache: %s\n",
			mb_strerror(rc));
		return MB_EXIT_RUNTIME;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	uint64_t total_items = (uint64_t)c->plan.items * (uint64_t)mb_topology_user_count(topo);
	struct sg_job *jobs = calloc((size_t)info->storage_groups, sizeof(*jobs));
	double t0 = mb_now_s();
	printf("mailbench init: scenario %s, %d users, %d databases in %d storage groups, scale %g, "
	       "%d items per mailbox (avg message %d KB), database cache %d MB\n",
	       sc->name, users, info->databases, info->storage_groups, info->scale, c->plan.items,
	       info->avg_message_kb, info->db_cache_mb);
	fflush(stdout);
	for (int g = 0; g < info->storage_groups; g++) {
		jobs[g].ctx = c;
		jobs[g].sg = g + 1;
		pthread_create(&jobs[g].th, NULL, sg_worker, &jobs[g]);
	}
	bool tty = isatty(STDERR_FILENO);
	double last_line = -10;
	uint64_t start_items = 0;
	double t_first = 0;
	bool first = true;
	for (;;) {
		usleep(250000);
		double el = mb_now_s() - t0;
		uint64_t done = atomic_load(&c->items_done);
		if (first && el > 1) {
			start_items = done; /* resumed items do not count for the rate */
			t_first = el;
			first = false;
		}
		int mdone = atomic_load(&c->mailboxes_done);
		double frac = total_items ? (double)done / (double)total_items : 1;
		double rate = !first && el > t_first && done > start_items
				      ? (double)(done - start_items) / (el - t_first)
				      : 0;
		char eta[32];
		fmt_dur(rate > 0 ? (double)(total_items - done) / rate : -1, eta, sizeof(eta));
		bool finished = mdone >= users || c->failed || stop_flag;
		if (tty) {
			int w = 30, fill = (int)(frac * w);
			fprintf(stderr, "\r[%.*s%*s] %5.1f%% %d/%d mailboxes %.0f MB ETA %s ",
				fill, "##############################", w - fill, "", frac * 100, mdone,
				users, (double)atomic_load(&c->bytes_done) / 1048576.0, eta);
		} else if (el - last_line >= 5 || finished) {
			fprintf(stderr, "init: %5.1f%% %d/%d mailboxes %.0f MB ETA %s\n", frac * 100,
				mdone, users, (double)atomic_load(&c->bytes_done) / 1048576.0, eta);
			last_line = el;
		}
		if (finished)
			break;
	}
	for (int g = 0; g < info->storage_groups; g++)
		pthread_join(jobs[g].th, NULL);
	if (tty)
		fprintf(stderr, "\n");
	double el = mb_now_s() - t0;
	int mdone = atomic_load(&c->mailboxes_done);
	int exit_code = MB_EXIT_OK;
	if (c->failed) {
		fprintf(stderr, "mailbench init: %s\n", c->errmsg);
		write_state(state_path, sc->name, users, scale, seed, false, mdone);
		exit_code = MB_EXIT_RUNTIME;
	} else if (mdone < users) {
		fprintf(stderr,
			"mailbench init: interrupted after %d of %d mailboxes; run the same command "
			"again to resume\n",
			mdone, users);
		write_state(state_path, sc->name, users, scale, seed, false, mdone);
		exit_code = MB_EXIT_RUNTIME;
	} else {
		rc = rename(work_topo, topo_path) == 0 ? 0 : mb_from_errno(errno);
		if (!rc)
			rc = write_state(state_path, sc->name, users, scale, seed, true, mdone);
		if (rc) {
			fprintf(stderr, "mailbench init: cannot finish %s: %s\n", topo_path,
				mb_strerror(rc));
			exit_code = MB_EXIT_RUNTIME;
		} else {
			printf("mailbench init: done: %d mailboxes, %.0f MB of bodies in %.1f s; "
			       "topology %s\n",
			       users, (double)atomic_load(&c->bytes_done) / 1048576.0, el, topo_path);
		}
	}
	mb_cache_destroy(c->cache);
	pthread_mutex_destroy(&c->lock);
	free(jobs);
	free(c);
	mb_topology_destroy(topo);
	free(sc);
	return exit_code;
}
