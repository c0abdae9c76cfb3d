/* session_config.c: what a session is configured with: the scenario, the
 * target (--target, lab:dovecot, imap://), the server's processes for its
 * counters, the load hosts (--load-hosts, --load-procs, --listen), the
 * thresholds, and the values every start reads (users, scale, accel,
 * cache, seed, compression, warm-up: a flag, else the scenario's); and the
 * accounts the load engine logs on with.  Invariants: configure changes
 * nothing while a child runs (MB_EBUSY); a configuration error names the
 * flag or the file and field (struct mb_cfg_error) and leaves the session
 * unconfigured for the new choice. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "core/error.h"
#include "core/options.h"
#include "load/dist.h"
#include "report/compare.h"
#include "report/session_int.h"
#include "store/store.h"

void mb_session_params_default(struct mb_session_params *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->scenario, sizeof(p->scenario), "online");
	p->compression = -1;
	p->warmup_s = -1;
	snprintf(p->data_dir, sizeof(p->data_dir), "%s", MB_DEFAULT_DATA_DIR);
	p->save_runs = true;
	p->seed = -1;
}

/* The accounts the load engine logs on with.  The store's own driver
 * (mbstore: embedded, or a store started elsewhere at an address) logs on
 * with the store's keys, which only DATA/topology.json holds; another
 * target with the target's accounts file: target.accounts, else
 * DATA/accounts.json (the IMAP/lab targets' accounts), else
 * DATA/topology.json. */
void mb__accounts_path(const struct mb_session *s, char *buf, size_t len)
{
	if (!s->embedded && s->sc.target_accounts[0]) {
		snprintf(buf, len, "%s", s->sc.target_accounts);
		return;
	}
	bool store = s->tops && (s->tops->flags & MB_TARGET_F_EMBEDDED);
	snprintf(buf, len, "%s/accounts.json", s->p.data_dir);
	if (store || access(buf, R_OK) != 0)
		snprintf(buf, len, "%s/topology.json", s->p.data_dir);
}

static int load_hosts_error(struct mb_cfg_error *err, const char *field, const char *msg)
{
	memset(err, 0, sizeof(*err));
	snprintf(err->field, sizeof(err->field), "%s", field);
	snprintf(err->message, sizeof(err->message), "%.255s", msg);
	return MB_ECONFIG;
}

/* K load processes on this machine: an Open MPI job without a hostfile
 * (mpirun -n K, the ranks on localhost), the users split as over hosts. */
static int local_load_procs(struct mb_session *s, int k, const char *field,
			    struct mb_cfg_error *err)
{
	if (!mb_dist_get())
		return load_hosts_error(err, field,
					"several load processes run through Open MPI, and this "
					"mailbench was built without it");
	s->mpi = true;
	s->ranks.ranks = k;
	snprintf(s->ranks.hosts, sizeof(s->ranks.hosts), "localhost");
	char desc[320];
	mb_load_ranks_desc(&s->ranks, desc, sizeof(desc));
	snprintf(s->load_desc, sizeof(s->load_desc), "load: %s (Open MPI)", desc);
	return 0;
}

/* Users past one load process's open-file limit (each holds its
 * connections open) go to as many local load processes as they need. */
static int auto_load_procs(struct mb_session *s, struct mb_cfg_error *err)
{
	int conns = s->tops->flags & MB_TARGET_F_NO_IO ? 0 : s->tops->conns, k = 1;
	long lim = mb_dist_fd_limit();
	if (s->mpi || mb_dist_procs_for_fds(mb_session_users(s), conns, lim, &k) != 0 || k <= 1)
		return 0;
	char msg[200];
	snprintf(msg, sizeof(msg), "%d users need %d load processes (open-file limit %ld)",
		 mb_session_users(s), k, lim);
	int rc = local_load_procs(s, k, "--users", err);
	if (rc)
		snprintf(err->message, sizeof(err->message),
			 "%.150s; several load processes run "
			 "through Open MPI, and this mailbench was built without it",
			 msg);
	return rc;
}

/* --load-hosts, --load-procs and --listen: the hostfile is read, the
 * store must listen where the hosts reach it (a loopback address only
 * when every load host is this machine; never a wildcard, which the load
 * could not connect to). */
static int configure_load_hosts(struct mb_session *s, const struct mb_session_params *p,
				struct mb_cfg_error *err)
{
	char msg[600], host[128];
	s->mpi = false;
	s->load_desc[0] = '\0';
	memset(&s->ranks, 0, sizeof(s->ranks));
	const char *l = p->listen[0] ? p->listen : "127.0.0.1:0";
	const char *colon = strrchr(l, ':');
	if (!colon || colon == l || !colon[1] || (size_t)(colon - l) >= sizeof(host))
		return load_hosts_error(err, "--listen", "expected ADDR:PORT");
	memcpy(host, l, (size_t)(colon - l));
	host[colon - l] = '\0';
	if (!strcmp(host, "0.0.0.0") || !strcmp(host, "[::]") || !strcmp(host, "::") || !host[0])
		return load_hosts_error(err, "--listen",
					"a wildcard address cannot be connected to: give this "
					"machine's address that the load hosts reach");
	if (!p->load_hosts[0])
		return p->load_procs > 0 ? local_load_procs(s, p->load_procs, "--load-procs", err)
					 : 0;
	int rc = mb_hostfile_read(p->load_hosts, &s->hf, msg, sizeof(msg));
	if (rc) {
		memset(err, 0, sizeof(*err));
		snprintf(err->field, sizeof(err->field), "--load-hosts");
		snprintf(err->message, sizeof(err->message), "%.255s", msg);
		return MB_ECONFIG;
	}
	bool loopback = !strncmp(host, "127.", 4) || !strcmp(host, "localhost") ||
			!strcmp(host, "[::1]") || !strcmp(host, "::1");
	if (loopback && !s->hf.local_only) {
		snprintf(msg, sizeof(msg),
			 "the load hosts in %.200s cannot reach the store on %.100s: give --listen "
			 "ADDR:PORT on an address they reach",
			 p->load_hosts, host);
		return load_hosts_error(err, "--listen", msg);
	}
	s->mpi = true;
	s->ranks.ranks = p->load_procs > 0 ? p->load_procs : s->hf.total_slots;
	size_t o = 0;
	for (int i = 0; i < s->hf.count && o < sizeof(s->ranks.hosts); i++) {
		bool dup = false;
		for (int k = 0; k < i && !dup; k++)
			dup = !strcmp(s->hf.host[k], s->hf.host[i]);
		if (dup)
			continue;
		int w = snprintf(s->ranks.hosts + o, sizeof(s->ranks.hosts) - o, "%s%s",
				 o ? ", " : "", s->hf.host[i]);
		o = w < 0 ? o : o + (size_t)w;
	}
	char desc[320];
	mb_load_ranks_desc(&s->ranks, desc, sizeof(desc));
	snprintf(s->load_desc, sizeof(s->load_desc), "load: %s (Open MPI)", desc);
	return 0;
}

int mb_session_configure(struct mb_session *s, const struct mb_session_params *p,
			 struct mb_cfg_error *err)
{
	if (mb_session_children(s) > 0)
		return MB_EBUSY;
	struct mb_scenario *sc = malloc(sizeof(*sc));
	if (!sc)
		return MB_ENOMEM;
	int rc = mb_scenario_load(p->scenario, sc, err);
	if (rc) {
		free(sc);
		return rc;
	}
	rc = configure_load_hosts(s, p, err);
	if (rc) {
		free(sc);
		return rc;
	}
	s->sc = *sc;
	free(sc);
	/* the target: the scenario's keys, then --target */
	struct mb_target_cfg tc;
	mb_target_cfg_default(&tc);
	if (s->sc.target_driver[0])
		snprintf(tc.driver, sizeof(tc.driver), "%s", s->sc.target_driver);
	snprintf(tc.address[0], sizeof(tc.address[0]), "%s", s->sc.target_address);
	snprintf(tc.address[1], sizeof(tc.address[1]), "%s", s->sc.target_submission);
	const struct mb_target_ops *tops = mb_target_find(tc.driver);
	/* lab:dovecot: the imap driver against the lab the run starts */
	bool lab = !strcmp(p->target, "lab:dovecot");
	const char *targ = lab ? "imap" : p->target;
	if (!tops || (targ[0] && mb_target_cfg_parse(&tc, targ) != 0)) {
		if (err) {
			memset(err, 0, sizeof(*err));
			snprintf(err->file, sizeof(err->file), "%s",
				 tops ? "--target" : s->sc.path);
			snprintf(err->field, sizeof(err->field), "%.120s",
				 tops ? p->target : "target.driver");
			snprintf(err->message, sizeof(err->message), "%s",
				 tops ? "expected DRIVER, DRIVER:ADDR:PORT, ADDR:PORT, "
					"imap://HOST:PORT or "
					"lab:dovecot"
				      : "unknown driver");
		}
		return MB_ECONFIG;
	}
	if (p->submit[0] && mb_target_cfg_submit(&tc, p->submit) != 0) {
		if (err) {
			memset(err, 0, sizeof(*err));
			snprintf(err->file, sizeof(err->file), "--submit");
			snprintf(err->field, sizeof(err->field), "%.120s", p->submit);
			snprintf(err->message, sizeof(err->message),
				 "expected smtp://HOST:PORT, smtps://HOST:PORT or HOST:PORT");
		}
		return MB_ECONFIG;
	}
	if (mb_target_cfg_tls(&tc, p->tls) != 0) { /* --tls starttls|implicit */
		if (err) {
			memset(err, 0, sizeof(*err));
			snprintf(err->file, sizeof(err->file), "--tls");
			snprintf(err->field, sizeof(err->field), "%s", mb_tls_modes[p->tls]);
			snprintf(err->message, sizeof(err->message),
				 "the %.60s driver does not speak TLS", tc.driver);
		}
		return MB_ECONFIG;
	}
	snprintf(tc.tls_ca, sizeof(tc.tls_ca), "%s", p->tls_ca);
	tc.tls_insecure = p->tls_insecure;
	if (lab)
		tc.address[0][0] = tc.address[1][0] = '\0'; /* the lab's, once it is up */
	/* the server's processes, for its counters */
	pid_t roots[16];
	int nroots = 0;
	for (const char *q = p->server_pids; *q && nroots < 16;) {
		char *end;
		long v = strtol(q, &end, 10);
		if (end == q || v <= 0 || (*end && *end != ',')) {
			if (err) {
				memset(err, 0, sizeof(*err));
				snprintf(err->file, sizeof(err->file), "--server-pids");
				snprintf(err->field, sizeof(err->field), "%.120s", p->server_pids);
				snprintf(err->message, sizeof(err->message),
					 "expected PID[,PID...] (at most 16)");
			}
			return MB_ECONFIG;
		}
		roots[nroots++] = (pid_t)v;
		q = *end ? end + 1 : end;
	}
	if (p->server_cgroup[0] && mb_srvmon_set_cgroup(s->srv, p->server_cgroup)) {
		if (err) {
			memset(err, 0, sizeof(*err));
			snprintf(err->file, sizeof(err->file), "--server-cgroup");
			snprintf(err->field, sizeof(err->field), "%.120s", p->server_cgroup);
			snprintf(
			    err->message, sizeof(err->message),
			    "no readable cgroup.procs there (a cgroup v2 directory, absolute or "
			    "under /sys/fs/cgroup)");
		}
		return MB_ECONFIG;
	}
	if (nroots)
		mb_srvmon_set_roots(s->srv, roots, nroots);
	s->lab = lab;
	s->imap = !strcmp(tc.driver, "imap");
	s->srv_on = lab || nroots > 0 || p->server_cgroup[0];
	mb_srvmon_set_disk(s->srv, s->srv_on ? p->data_dir : NULL);
	s->tcfg = tc;
	s->tops = mb_target_find(tc.driver);
	s->embedded = (s->tops->flags & MB_TARGET_F_EMBEDDED) && !tc.address[0][0];
	if (lab)
		snprintf(s->target_str, sizeof(s->target_str), "lab:dovecot");
	else if (tc.address[0][0])
		snprintf(s->target_str, sizeof(s->target_str), "%.50s:%.200s", tc.driver,
			 tc.address[0]);
	else
		snprintf(s->target_str, sizeof(s->target_str), "%s", tc.driver);
	s->unmeasured[0] = '\0';
	if (!s->embedded && !s->srv_on)
		snprintf(s->unmeasured, sizeof(s->unmeasured),
			 "server counters: the target (%.120s) is not a server this run starts "
			 "(--server-pids or --server-cgroup name its processes)",
			 s->target_str);
	s->have_st = mb_storage_cfg_load("storage", &s->st, NULL) == 0;
	s->p = *p;
	if ((rc = auto_load_procs(s, err)) != 0)
		return rc;
	s->configured = true;
	mb_thresholds_init(&s->th, &s->sc, s->have_st ? &s->st : NULL);
	char path[MB_PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/thresholds.cfg", p->data_dir);
	rc = mb_thresholds_load(&s->th, path, err);
	if (rc == MB_ENOTFOUND)
		rc = 0;
	if (!s->stress)
		s->stress_threads = p->stress_threads > 0		   ? p->stress_threads
				    : s->have_st && s->st.thread_count > 0 ? s->st.threads[0]
									   : 4;
	return rc;
}

const struct mb_session_params *mb_session_params(const struct mb_session *s) { return &s->p; }

const char *mb_session_target(const struct mb_session *s) { return s->target_str; }

bool mb_session_embedded(const struct mb_session *s) { return !s->configured || s->embedded; }

void mb_session_engine(const struct mb_session *s, char *buf, size_t len)
{
	const struct mb_target_cfg *tc = &s->tcfg;
	/* the storage test on this machine's disk, whatever the target */
	bool stress_only = s->configured && s->load_t0 <= 0 && !mb_session_load_active(s) &&
			   s->have_st && (s->stress || mb_histset_count(s->stress_hists) > 0);
	if (stress_only)
		snprintf(buf, len, "%s storage test, %d KB pages, %d db, %s mode", PACKAGE_STRING,
			 s->st.page_kb, s->st.databases, s->st.mode);
	else if (mb_session_embedded(s))
		mb_compare_engine_str(&s->sc, buf, len);
	else if (s->lab)
		snprintf(buf, len, "%s",
			 s->lab_engine[0] ? s->lab_engine
					  : "Dovecot, Postfix (the lab: not up yet)");
	else if (s->imap)
		snprintf(buf, len,
			 "an IMAP server at %.80s, SMTP submission at %.80s (started "
			 "elsewhere: versions n/a)",
			 tc->address[0], tc->address[1][0] ? tc->address[1] : "n/a");
	else if (!strcmp(tc->driver, "mbstore"))
		snprintf(buf, len,
			 "a mailbench store at %.80s (started elsewhere: its settings n/a)",
			 tc->address[0]);
	else if (!strcmp(tc->driver, "null"))
		snprintf(buf, len, "none (the null target does no I/O)");
	else
		snprintf(buf, len, "%.50s target at %.80s", tc->driver,
			 tc->address[0][0] ? tc->address[0] : "n/a");
}

const char *mb_session_unmeasured(const struct mb_session *s) { return s->unmeasured; }

uint32_t mb_session_unsupported(const struct mb_session *s) { return s->unsupported; }

const struct mb_scenario *mb_session_scenario(const struct mb_session *s)
{
	return s->configured ? &s->sc : NULL;
}

const struct mb_storage_cfg *mb_session_storage_cfg(const struct mb_session *s)
{
	return s->have_st ? &s->st : NULL;
}

int mb_session_users(const struct mb_session *s)
{
	return s->p.users > 0 ? s->p.users : s->sc.run_users > 0 ? s->sc.run_users : s->sc.users;
}

double mb_session_scale(const struct mb_session *s)
{
	return s->p.scale > 0 ? s->p.scale : s->sc.scale;
}

double mb_session_accel(const struct mb_session *s)
{
	return s->p.accel > 0 ? s->p.accel : s->sc.accel;
}

double mb_session_cache_mb(const struct mb_session *s)
{
	if (s->p.cache_mb > 0)
		return s->p.cache_mb;
	if (s->sc.run_cache_mb > 0)
		return s->sc.run_cache_mb;
	if (s->has_data_info && s->data_info.bytes_db > 0 && s->sc.users > 0 &&
	    s->sc.mailbox_mb > 0) {
		/* the published cache-to-data ratio applied to the databases as
		 * they are on disk (896 MB for 8,000 x 25 MB) */
		double ratio = s->sc.db_cache_mb / ((double)s->sc.users * s->sc.mailbox_mb);
		double mb = ratio * (double)s->data_info.bytes_db / 1048576.0;
		return mb < MB_STORE_MIN_CACHE_MB ? MB_STORE_MIN_CACHE_MB : mb;
	}
	/* before the data directory is measured: from the nominal size */
	return mb_store_scaled_cache_mb(&s->sc, mb_session_users(s), mb_session_scale(s));
}

long mb_session_seed(const struct mb_session *s)
{
	return s->p.seed >= 0 ? s->p.seed : s->sc.run_seed;
}

bool mb_session_compression(const struct mb_session *s)
{
	return s->p.compression >= 0 ? s->p.compression != 0 : s->sc.compression;
}

bool mb_session_compression_applies(const struct mb_session *s)
{
	return mb_compare_target_compresses(s->target_str);
}

void mb_session_client_mode(const struct mb_session *s, char *buf, size_t len)
{
	if (mb_session_compression_applies(s))
		mb_compare_mode_str(s->sc.mode, mb_session_compression(s), buf, len);
	else
		snprintf(buf, len, "%s, compression n/a (the %s target has no RPC compression)",
			 s->sc.mode == MB_MODE_CACHED ? "cached" : "online", s->tcfg.driver);
}

double mb_session_warmup(const struct mb_session *s)
{
	return s->p.warmup_s >= 0 ? s->p.warmup_s : s->sc.warmup_s;
}

struct mb_thresholds *mb_session_thresholds(struct mb_session *s) { return &s->th; }

int mb_session_save_thresholds(struct mb_session *s)
{
	char path[MB_PATH_MAX + 32];
	if (mkdir(s->p.data_dir, 0700) && errno != EEXIST)
		return mb_from_errno(errno);
	snprintf(path, sizeof(path), "%s/thresholds.cfg", s->p.data_dir);
	return mb_thresholds_save(&s->th, path);
}

bool mb_session_initialised(const struct mb_session *s)
{
	char path[MB_PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/topology.json", s->p.data_dir);
	json_t *j = json_load_file(path, 0, NULL);
	if (!j)
		return false;
	bool ok = true;
	/* When the topology records what it was made for, it must match. */
	json_t *users = json_object_get(j, "users");
	if (json_is_array(users) && (int)json_array_size(users) < mb_session_users(s))
		ok = false;
	if (json_is_integer(users) && json_integer_value(users) < mb_session_users(s))
		ok = false;
	json_t *scale = json_object_get(j, "scale");
	if (json_is_number(scale) && fabs(json_number_value(scale) - mb_session_scale(s)) > 1e-9)
		ok = false;
	json_decref(j);
	/* an interrupted initialisation says so in init.state */
	snprintf(path, sizeof(path), "%s/init.state", s->p.data_dir);
	json_t *st = json_load_file(path, 0, NULL);
	if (st && json_is_false(json_object_get(st, "complete")))
		ok = false;
	/* and one of another version holds other content (store.h) */
	if (st && json_integer_value(json_object_get(st, "version")) != MB_INIT_VERSION)
		ok = false;
	json_decref(st);
	return ok;
}

int mb__accounts_users(const char *path)
{
	struct mb_topology *t = NULL;
	char err[256];
	if (access(path, R_OK) != 0 || mb_topology_read(path, &t, err, sizeof(err)))
		return 0;
	int n = mb_topology_user_count(t);
	mb_topology_destroy(t);
	return n;
}

/* The scenario's accounts (users, passwords, lists) for a target that has
 * none of its own (the null driver), written to path. */
int mb__write_generated_accounts(struct mb_session *s, const char *path)
{
	struct mb_topology *t = NULL;
	int users = mb_session_users(s);
	int rc = mb_store_gen_topology(
	    &s->sc, users, mb_session_scale(s), NULL,
	    (int)ceil(mb_store_scaled_cache_mb(&s->sc, users, mb_session_scale(s))), 0, &t);
	if (!rc)
		rc = mb_topology_write_accounts(t, path);
	if (t)
		mb_topology_destroy(t);
	return rc;
}
