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
 *  - One worker thread per storage group (each owns its databases,
 *    init_fill.c); the generated topology: init_topo.c; shared: init_int.h.
 */
#include "config.h"

#include "cmd.h"
#include "core/options.h"
#include "core/content.h"
#include "core/error.h"
#include "core/sampler.h"
#include "core/scenario.h"
#include "core/topology.h"
#include "db/bulk.h"
#include "db/db.h"
#include "proto/proto.h"
#include "core/mix.h"
#include "core/progress.h"
#include "store/pristine.h"
#include "store/schema.h"
#include "store/store.h"
#include "store/init_int.h"

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* ---- state file ---- */

static int write_state(const char *path, const char *scenario, int users, double scale,
		       uint64_t seed, bool complete, int done)
{
	char tmp[4200];
	json_t *o = json_pack("{s:i,s:s,s:i,s:f,s:s,s:b,s:i}", "version", MB_INIT_VERSION,
			      "scenario", scenario, "users", users, "scale", scale, "seed", "",
			      "complete", complete, "mailboxes_done", done);
	char seedhex[17];
	snprintf(seedhex, sizeof(seedhex), "%016llx", (unsigned long long)seed);
	json_object_set_new(o, "seed", json_string(seedhex));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int rc = json_dump_file(o, tmp, JSON_INDENT(1)) == 0 && chmod(tmp, 0600) == 0 &&
			 rename(tmp, path) == 0
		     ? 0
		     : MB_EIO;
	json_decref(o);
	return rc;
}

/* ---- progress: bodies MB/s beside the bytes written ---- */

/* Rates over the last second: bodies stored, bytes this process wrote
 * (/proc/self/io write_bytes) and bytes the data directory's device wrote
 * (its /sys/dev/block/MAJ:MIN/stat; "n/a" when there is none, e.g. tmpfs).
 * Everything shown is read from the kernel, never estimated. */
struct io_meter {
	char disk_path[128];
	double t;
	uint64_t bodies, proc, disk;
	bool have;
};

static bool read_proc_wb(uint64_t *out)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	bool ok = false;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "write_bytes: %" SCNu64, out) == 1)
			ok = true;
	fclose(f);
	return ok;
}

static bool read_disk_wb(const struct io_meter *m, uint64_t *out)
{
	unsigned long long v[7];
	FILE *f = m->disk_path[0] ? fopen(m->disk_path, "r") : NULL;
	if (!f)
		return false;
	/* fields: reads, merged, sectors read, ms, writes, merged, sectors written */
	bool ok = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
			 &v[5], &v[6]) == 7;
	fclose(f);
	*out = (uint64_t)v[6] * 512;
	return ok;
}

static void meter_init(struct io_meter *m, const char *data)
{
	struct stat st;
	memset(m, 0, sizeof(*m));
	if (stat(data, &st) == 0) {
		snprintf(m->disk_path, sizeof(m->disk_path), "/sys/dev/block/%u:%u/stat",
			 major(st.st_dev), minor(st.st_dev));
		if (access(m->disk_path, R_OK) != 0)
			m->disk_path[0] = '\0';
	}
}

static void meter_sample(struct io_meter *m, double t, uint64_t bodies, char *out, size_t len)
{
	uint64_t proc = 0, disk = 0;
	bool hp = read_proc_wb(&proc), hd = read_disk_wb(m, &disk);
	if (m->have && t - m->t < 1)
		return;
	if (m->have) {
		double dt = t - m->t;
		char ps[32] = "n/a", ds[32] = "n/a";
		if (hp)
			snprintf(ps, sizeof(ps), "%.0f", (double)(proc - m->proc) / dt / 1048576.0);
		if (hd)
			snprintf(ds, sizeof(ds), "%.0f", (double)(disk - m->disk) / dt / 1048576.0);
		snprintf(out, len, "%.0f MB/s, writing %s MB/s, disk %s MB/s",
			 (double)(bodies - m->bodies) / dt / 1048576.0, ps, ds);
	}
	m->t = t;
	m->bodies = bodies;
	m->proc = proc;
	m->disk = disk;
	m->have = true;
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

struct init_args {
	char scenario[MB_PATH_MAX], data[MB_PATH_MAX], log_dir[MB_PATH_MAX];
	int users;
	double scale;
	bool restart;
	bool no_bulk;
	bool accounts_only;
	int seed; /* of the mailboxes' content; < 0: a random one */
};

/* --accounts-only: DATA/accounts.json for N users (the accounts init
 * would create), without databases: what a target other than this store,
 * or the null target, needs.  Takes sc (freed here). */
static int accounts_only(struct mb_scenario *sc, const char *data, int users, double scale)
{
	char path[4200];
	struct mb_topology *topo = NULL;
	int rc =
	    mb_store_gen_topology(sc, users, scale, NULL,
				  (int)ceil(mb_store_scaled_cache_mb(sc, users, scale)), 0, &topo);
	free(sc);
	if (rc) {
		fprintf(stderr, "mailbench init: cannot generate the accounts: %s\n",
			mb_strerror(rc));
		return MB_EXIT_RUNTIME;
	}
	if (mkdir(data, 0700) && errno != EEXIST) {
		fprintf(stderr, "mailbench init: --data: cannot create %s: %s\n", data,
			strerror(errno));
		mb_topology_destroy(topo);
		return MB_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "%s/accounts.json", data);
	rc = mb_topology_write_accounts(topo, path);
	mb_topology_destroy(topo);
	if (rc) {
		fprintf(stderr, "mailbench init: cannot write %s: %s\n", path, mb_strerror(rc));
		return MB_EXIT_RUNTIME;
	}
	printf("mailbench init: accounts of %d users in %s (no databases)\n", users, path);
	return MB_EXIT_OK;
}

static int init_main(void *args, int argc, char **argv)
{
	const struct init_args *a = args;
	const char *scen = a->scenario, *data = a->data;
	const char *log_dir = a->log_dir[0] ? a->log_dir : NULL;
	int users = a->users;
	double scale = a->scale;
	bool restart = a->restart, no_bulk = a->no_bulk;
	(void)argc;
	(void)argv;
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
	if (a->accounts_only)
		return accounts_only(sc, data, users, scale);

	char topo_path[4200], work_topo[4200], state_path[4200], path[4200];
	snprintf(topo_path, sizeof(topo_path), "%s/topology.json", data);
	snprintf(work_topo, sizeof(work_topo), "%s/init.topology.json", data);
	snprintf(state_path, sizeof(state_path), "%s/init.state", data);
	if (mkdir(data, 0700) && errno != EEXIST) {
		fprintf(stderr, "mailbench init: --data: cannot create %s: %s\n", data,
			strerror(errno));
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
				fprintf(stderr, "mailbench init: --restart: cannot remove %s: %s\n",
					path, strerror(errno));
				free(sc);
				return MB_EXIT_RUNTIME;
			}
		}
		unlink(topo_path);
		unlink(work_topo);
		unlink(state_path);
	}

	/* resume or fresh start: init writes into DATA, so a pristine copy
	 * of an earlier initialisation no longer holds (store/pristine.h) */
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
		int ver = (int)json_integer_value(json_object_get(st, "version"));
		if (ver != MB_INIT_VERSION) {
			fprintf(stderr,
				"mailbench init: %s: version: an initialisation of version %d "
				"is there (this mailbench writes version %d: other mailbox "
				"content); use --restart to replace it\n",
				state_path, ver, MB_INIT_VERSION);
			json_decref(st);
			free(sc);
			return MB_EXIT_USAGE;
		}
		if (seedhex)
			seed = strtoull(seedhex, NULL, 16);
		if (!ss || strcmp(ss, sc->name) || su != users || fabs(ssc - scale) > 1e-12 ||
		    !seedhex || (a->seed >= 0 && seed != (uint64_t)a->seed)) {
			fprintf(
			    stderr,
			    "mailbench init: %s: an initialisation with other parameters "
			    "(scenario %s, "
			    "%d users, scale %g, seed %s) is there; use --restart to replace it\n",
			    state_path, ss ? ss : "?", su, ssc, seedhex ? seedhex : "?");
			json_decref(st);
			free(sc);
			return MB_EXIT_USAGE;
		}
		json_decref(st);
		if (complete && access(topo_path, R_OK) == 0) {
			printf("mailbench init: %s is already initialised (scenario %s, %d users, "
			       "scale "
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
		mb_pristine_drop(data);
	} else {
		if (access(topo_path, F_OK) == 0) {
			fprintf(
			    stderr,
			    "mailbench init: %s exists but no %s: use --restart to replace it\n",
			    topo_path, state_path);
			free(sc);
			return MB_EXIT_USAGE;
		}
		if (a->seed >= 0)
			seed = (uint64_t)a->seed;
		else if (mb_auth_random(&seed, sizeof(seed))) {
			free(sc);
			return MB_EXIT_RUNTIME;
		}
		mb_pristine_drop(data);
		int cache_mb = (int)ceil(mb_store_scaled_cache_mb(sc, users, scale));
		int rc =
		    mb_store_gen_topology(sc, users, scale, log_dir, cache_mb, MB_GEN_KEYS, &topo);
		if (!rc)
			rc = mb_topology_write(topo, work_topo);
		if (!rc)
			rc = write_state(state_path, sc->name, users, scale, seed, false, 0);
		if (rc) {
			fprintf(stderr, "mailbench init: cannot write the topology under %s: %s\n",
				data, mb_strerror(rc));
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
	c->stop = &stop_flag;
	c->no_bulk = no_bulk;
	c->now_ms = (int64_t)info->created * 1000;
	c->page_size = info->page_kb * 1024;
	c->plan.inbox = info->mailbox.inbox_messages;
	c->plan.deleted = info->mailbox.deleted_items_messages;
	c->plan.folders = info->mailbox.new_folders;
	c->plan.per_folder = info->mailbox.messages_per_folder;
	c->plan.appts = info->mailbox.calendar_appointments;
	c->plan.contacts = info->mailbox.contacts;
	c->plan.avg_body = (size_t)info->mailbox.avg_message_kb * 1024;
	c->mix = sc->mix_init;
	c->nmix = sc->mix_init_count;
	c->plan.items = mb_mailbox_profile_items(&info->mailbox);
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
	printf(
	    "mailbench init: scenario %s, %d users, %d databases in %d storage groups, scale %g, "
	    "%d items per mailbox (avg message %d KB), database cache %d MB\n",
	    sc->name, users, info->databases, info->storage_groups, info->scale, c->plan.items,
	    info->mailbox.avg_message_kb, info->db_cache_mb);
	fflush(stdout);
	for (int g = 0; g < info->storage_groups; g++) {
		jobs[g].ctx = c;
		jobs[g].sg = g + 1;
		pthread_create(&jobs[g].th, NULL, mb__init_sg_worker, &jobs[g]);
	}
	struct mb_progress_opts po = {.out = stderr,
				      .tty = isatty(STDERR_FILENO),
				      .label = "init",
				      .noun = "items",
				      .warmup_s = 1, /* resumed items do not count for the rate */
				      .every_s = 5};
	struct mb_progress *prog = NULL;
	int pr = mb_progress_create(&po, mb_now_s() - t0, &prog);
	struct io_meter meter;
	meter_init(&meter, data);
	char speed[160] = "", extra[256];
	for (;;) {
		usleep(250000);
		double el = mb_now_s() - t0;
		uint64_t done = atomic_load(&c->items_done);
		int mdone = atomic_load(&c->mailboxes_done);
		bool finished = mdone >= users || c->failed || stop_flag;
		meter_sample(&meter, el, atomic_load(&c->bytes_done), speed, sizeof(speed));
		snprintf(extra, sizeof(extra), "%d/%d mailboxes %.0f MB%s%s", mdone, users,
			 (double)atomic_load(&c->bytes_done) / 1048576.0, speed[0] ? " " : "",
			 speed);
		if (pr == 0)
			mb_progress_update(prog, el, done, total_items, extra, finished);
		if (finished)
			break;
	}
	for (int g = 0; g < info->storage_groups; g++)
		pthread_join(jobs[g].th, NULL);
	mb_progress_destroy(prog);
	double el = mb_now_s() - t0;
	int mdone = atomic_load(&c->mailboxes_done);
	int exit_code = MB_EXIT_OK;
	if (c->failed) {
		fprintf(stderr, "mailbench init: %s\n", c->errmsg);
		write_state(state_path, sc->name, users, scale, seed, false, mdone);
		exit_code = MB_EXIT_RUNTIME;
	} else if (mdone < users) {
		fprintf(
		    stderr,
		    "mailbench init: interrupted after %d of %d mailboxes; run the same command "
		    "again to resume\n",
		    mdone, users);
		write_state(state_path, sc->name, users, scale, seed, false, mdone);
		exit_code = MB_EXIT_RUNTIME;
	} else {
		rc = rename(work_topo, topo_path) == 0 ? 0 : mb_from_errno(errno);
		/* the accounts alone, for targets other than this store */
		snprintf(path, sizeof(path), "%s/accounts.json", data);
		if (!rc)
			rc = mb_topology_write_accounts(topo, path);
		if (!rc)
			rc = write_state(state_path, sc->name, users, scale, seed, true, mdone);
		if (rc) {
			fprintf(stderr, "mailbench init: cannot finish %s: %s\n", topo_path,
				mb_strerror(rc));
			exit_code = MB_EXIT_RUNTIME;
		} else {
			uint64_t bb = atomic_load(&c->bytes_done);
			printf("mailbench init: done: %d mailboxes, %.0f MB of bodies (%" PRIu64
			       " body bytes) in %.2f s (%.0f MB/s); topology %s\n",
			       users, (double)bb / 1048576.0, bb, el, (double)bb / 1048576.0 / el,
			       topo_path);
		}
	}
	mb_cache_destroy(c->cache);
	pthread_mutex_destroy(&c->lock);
	free(jobs);
	free(c);
	mb_topology_destroy(topo);
	free(sc);
	if (exit_code == MB_EXIT_OK) {
		/* the pristine state every run starts from (store/pristine.h) */
		struct mb_pristine_info pi;
		char perr[1024] = "";
		int prc = mb_pristine_prepare(data, &pi, perr, sizeof(perr));
		if (prc) {
			fprintf(stderr, "mailbench init: cannot save the pristine copy: %s\n",
				perr[0] ? perr : mb_strerror(prc));
			return MB_EXIT_RUNTIME;
		}
		printf("mailbench init: pristine copy in %s/pristine (%.0f MB; %d files linked, "
		       "%d reflinked, %d copied)\n",
		       data, (double)pi.bytes / 1048576.0, pi.links, pi.reflinks, pi.copies);
	}
	return exit_code;
}

#define IA struct init_args
static const struct mb_opt init_opts[] = {
    MB_OPTION_SCENARIO(IA, scenario, NULL, MB_OPT_REQ, NULL),
    MB_OPTION_USERS(IA, users, "the scenario's run.users"),
    MB_OPTION_DATA(IA, data, 'd', 0, MB_DEFAULT_DATA_DIR),
    MB_OPTION_LOG_DIR(IA, log_dir, 'l', "DATA/sgN/log"),
    MB_OPTION_SCALE(IA, scale, 'S'),
    {.path = "restart",
     .flag = "restart",
     .sflag = 'r',
     .type = MB_OT_FLAG,
     .off = offsetof(IA, restart),
     .help = "delete an earlier (partial) initialisation first"},
    {.path = "no_bulk",
     .flag = "no-bulk",
     .type = MB_OT_FLAG,
     .off = offsetof(IA, no_bulk),
     .help = "populate in ordinary logged transactions instead of bulk-building each "
	     "database (slower; for comparison)"},
    {.path = "seed",
     .flag = "seed",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(IA, seed),
     .def = -1,
     .min = 0,
     .max = MB_SEED_MAX,
     .dtext = "a random one, kept in DATA/init.state",
     .help = "seed of the mailboxes' content: one seed, the same messages, folders and "
	     "sizes"},
    {.path = "accounts_only",
     .flag = "accounts-only",
     .type = MB_OT_FLAG,
     .off = offsetof(IA, accounts_only),
     .help = "write DATA/accounts.json only (users, passwords, lists), no databases: for "
	     "load --topology against the null target or another server"},
};

const struct mb_cmd_entry mb_cmd_init_entry = {
    .name = "init",
    .usage = "-s SCENARIO [--users N] [--data DIR] [--scale F] [OPTIONS]",
    .summary = "create and populate the mailbox databases",
    .about = "Create the scenario's databases (storage groups sgN/dbMM.mdb), its users with\n"
	     "generated passwords and its distribution lists, populate every mailbox per the\n"
	     "scenario's mailbox configuration, and write DATA/topology.json.  Each database\n"
	     "is bulk-built (every page written once, one logged record of the build); the\n"
	     "progress line shows bodies MB/s beside the bytes this process and the disk\n"
	     "write per second.  Interrupted (Ctrl-C), it stops; run it again with the same\n"
	     "options to resume (a database whose build did not finish is built again), or\n"
	     "with --restart to start over.  Every initialised message is read.  A data\n"
	     "directory initialised by a version of mailbench that wrote other content\n"
	     "(init.state's version) is neither resumed nor reused: --restart replaces it.",
    .epilog = "exit codes: 0 done, 2 usage or input error, 3 runtime failure or interrupted",
    .opts = init_opts,
    .nopts = (int)(sizeof(init_opts) / sizeof(init_opts[0])),
    .args_size = sizeof(struct init_args),
    .run = init_main,
};
