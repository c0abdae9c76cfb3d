/* pristine.c: save and restore the pristine initialised state of a data
 * directory (see pristine.h for the layout and the states). */
#define _GNU_SOURCE
#include "store/pristine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/topology.h"
#include "db/io.h"

#define PATH_LEN 4608
#define STATE_MAX 4096

/* One file of the state: its path relative to the copy ("sg1/db01.mdb",
 * "sg1.log/checkpoint") and where it lives in DATA. */
struct pfile {
	char rel[96];
	char live[PATH_LEN];
	uint64_t size;
};

struct plist {
	struct pfile *f;
	size_t n, cap;
	char state[STATE_MAX];
};

/* buf = a "/" b; MB_EINVAL when it does not fit. */
static int pjoin(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s/%s", a, b);
	return n < 0 || (size_t)n >= len ? MB_EINVAL : 0;
}

static int fail(char *err, size_t len, int rc, const char *fmt, const char *a, const char *b)
{
	if (err && len) {
		char what[PATH_LEN * 2 + 64];
		snprintf(what, sizeof(what), fmt, a, b ? b : "");
		snprintf(err, len, "%s: %s", what, mb_strerror(rc));
	}
	return rc;
}

static int add(struct plist *l, const char *rel, const char *live, uint64_t size)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct pfile *f = realloc(l->f, cap * sizeof(*f));
		if (!f)
			return MB_ENOMEM;
		l->f = f;
		l->cap = cap;
	}
	struct pfile *p = &l->f[l->n++];
	snprintf(p->rel, sizeof(p->rel), "%s", rel);
	snprintf(p->live, sizeof(p->live), "%s", live);
	p->size = size;
	return 0;
}

static int cmp_rel(const void *a, const void *b)
{
	return strcmp(((const struct pfile *)a)->rel, ((const struct pfile *)b)->rel);
}

static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return mb_from_errno(errno);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

/* The regular files of dir (db files only when db_only) into l as
 * "prefix/NAME". */
static int scan_dir(struct plist *l, const char *dir, const char *prefix, bool db_only)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : mb_from_errno(errno);
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		if (e->d_name[0] == '.')
			continue;
		/* a copy mb_io_open was making when the process died */
		if (nl > 8 && !strcmp(e->d_name + nl - 8, ".unshare"))
			continue;
		if (db_only &&
		    (nl < 5 || strncmp(e->d_name, "db", 2) || strcmp(e->d_name + nl - 4, ".mdb")))
			continue;
		char live[PATH_LEN], rel[96];
		snprintf(live, sizeof(live), "%s/%s", dir, e->d_name);
		struct stat sb;
		if (stat(live, &sb) || !S_ISREG(sb.st_mode))
			continue;
		if (snprintf(rel, sizeof(rel), "%s/%s", prefix, e->d_name) >= (int)sizeof(rel))
			continue;
		rc = add(l, rel, live, (uint64_t)sb.st_size);
	}
	closedir(d);
	return rc;
}

/* The files of DATA's state as they are now. */
static int scan_live(const char *data, struct plist *l, char *err, size_t errlen)
{
	char path[PATH_LEN];
	snprintf(path, sizeof(path), "%s/topology.json", data);
	struct mb_topology *t = NULL;
	char terr[256];
	int rc = mb_topology_read(path, &t, terr, sizeof(terr));
	if (rc)
		return rc == MB_ENOTFOUND ? rc : fail(err, errlen, rc, "%s%s", terr, NULL);
	const struct mb_topo_info *ti = mb_topology_info(t);
	snprintf(path, sizeof(path), "%s/init.state", data);
	rc = read_small(path, l->state, sizeof(l->state));
	if (rc) {
		mb_topology_destroy(t);
		return rc == MB_ENOTFOUND ? rc : fail(err, errlen, rc, "%s%s", path, NULL);
	}
	for (int g = 1; !rc && g <= ti->storage_groups; g++) {
		char dir[PATH_LEN], logdir[PATH_LEN], pre[32];
		snprintf(dir, sizeof(dir), "%s/sg%d", data, g);
		snprintf(pre, sizeof(pre), "sg%d", g);
		rc = scan_dir(l, dir, pre, true);
		if (!rc)
			rc = mb_topology_log_dir(data, ti->log_dir[0] ? ti->log_dir : NULL, g,
						 logdir, sizeof(logdir));
		snprintf(pre, sizeof(pre), "sg%d.log", g);
		if (!rc)
			rc = scan_dir(l, logdir, pre, false);
	}
	mb_topology_destroy(t);
	if (rc)
		return fail(err, errlen, rc, "%s: cannot list the databases and logs%s", data,
			    NULL);
	qsort(l->f, l->n, sizeof(l->f[0]), cmp_rel);
	return 0;
}

static void fingerprint(const struct plist *l, struct mb_pristine_info *out)
{
	uint64_t h = 1469598103934665603ull;
#define FNV(byte)                                                                                  \
	do {                                                                                       \
		h ^= (uint8_t)(byte);                                                              \
		h *= 1099511628211ull;                                                             \
	} while (0)
	for (const char *p = l->state; *p; p++)
		FNV(*p);
	out->bytes = 0;
	out->bytes_db = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (!strstr(l->f[i].rel, ".log/"))
			out->bytes_db += l->f[i].size;
		for (const char *p = l->f[i].rel; *p; p++)
			FNV(*p);
		FNV(0);
		for (int b = 0; b < 8; b++)
			FNV(l->f[i].size >> (8 * b));
		out->bytes += l->f[i].size;
	}
#undef FNV
	snprintf(out->fingerprint, sizeof(out->fingerprint), "%016llx", (unsigned long long)h);
}

/* Copy src to dst (created or truncated): a reflink where the file system
 * offers one, else copy_file_range, else read/write; then fdatasync. */
static int copy_file(const char *src, const char *dst, struct mb_pristine_info *info)
{
	bool reflinked = false;
	int rc = mb_io_copy_file(src, dst, &reflinked);
	if (!rc && reflinked)
		info->reflinks++;
	else if (!rc)
		info->copies++;
	return rc;
}

/* Share src with dst by a hard link (the same file system), else copy it:
 * a database or log file is unshared when it is first opened for writing
 * (mb_io_open), so the pristine state stays as it was saved. */
static int link_or_copy(const char *src, const char *dst, struct mb_pristine_info *info)
{
	if (link(src, dst) == 0) {
		info->links++;
		return 0;
	}
	if (errno == EEXIST)
		return mb_from_errno(errno);
	return copy_file(src, dst, info);
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int rm_tree(const char *path)
{
	struct stat sb;
	if (lstat(path, &sb))
		return errno == ENOENT ? 0 : mb_from_errno(errno);
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : MB_EIO;
}

int mb_pristine_drop(const char *data)
{
	char path[PATH_LEN];
	snprintf(path, sizeof(path), "%s/pristine", data);
	int rc = rm_tree(path);
	snprintf(path, sizeof(path), "%s/pristine.tmp", data);
	int rc2 = rm_tree(path);
	return rc ? rc : rc2;
}

static int save(const char *data, const struct plist *l, struct mb_pristine_info *out, char *err,
		size_t errlen)
{
	char tmp[PATH_LEN], dst[PATH_LEN], p[PATH_LEN];
	snprintf(tmp, sizeof(tmp), "%s/pristine.tmp", data);
	snprintf(dst, sizeof(dst), "%s/pristine", data);
	int rc = rm_tree(tmp);
	if (!rc && mkdir(tmp, 0700))
		rc = mb_from_errno(errno);
	if (rc)
		return fail(err, errlen, rc, "%s%s", tmp, NULL);
	for (size_t i = 0; i < l->n; i++) {
		/* the directory of rel ("sg1" or "sg1.log") */
		char dir[128];
		snprintf(dir, sizeof(dir), "%s", l->f[i].rel);
		char *slash = strchr(dir, '/');
		if (slash)
			*slash = '\0';
		if (pjoin(p, sizeof(p), tmp, dir))
			return fail(err, errlen, MB_EINVAL, "%s/%s", tmp, dir);
		if (mkdir(p, 0700) && errno != EEXIST)
			return fail(err, errlen, mb_from_errno(errno), "%s%s", p, NULL);
		if (pjoin(p, sizeof(p), tmp, l->f[i].rel))
			return fail(err, errlen, MB_EINVAL, "%s/%s", tmp, l->f[i].rel);
		rc = link_or_copy(l->f[i].live, p, out);
		if (rc)
			return fail(err, errlen, rc, "saving %s as %s", l->f[i].live, p);
	}
	if (pjoin(p, sizeof(p), tmp, "MANIFEST"))
		return fail(err, errlen, MB_EINVAL, "%s/%s", tmp, "MANIFEST");
	int mfd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FILE *f = mfd >= 0 ? fdopen(mfd, "w") : NULL;
	if (!f) {
		int e = errno;
		if (mfd >= 0)
			close(mfd);
		return fail(err, errlen, mb_from_errno(e), "%s%s", p, NULL);
	}
	/* the init state (a JSON object: no line of its own starts with '=')
	 * then "=" and one "size rel" per file */
	fprintf(f, "%s\n=\n", l->state);
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%llu %s\n", (unsigned long long)l->f[i].size, l->f[i].rel);
	if (fflush(f) || fsync(fileno(f)))
		rc = mb_from_errno(errno);
	if (fclose(f) && !rc)
		rc = mb_from_errno(errno);
	if (!rc)
		rc = rm_tree(dst);
	if (!rc && rename(tmp, dst))
		rc = mb_from_errno(errno);
	if (rc)
		return fail(err, errlen, rc, "%s%s", dst, NULL);
	out->saved = true;
	return 0;
}

/* Read DATA/pristine/MANIFEST into l (rel and size; live left empty). */
static int read_manifest(const char *data, struct plist *l)
{
	char path[PATH_LEN];
	snprintf(path, sizeof(path), "%s/pristine/MANIFEST", data);
	FILE *f = fopen(path, "r");
	if (!f)
		return mb_from_errno(errno);
	char line[PATH_LEN];
	size_t o = 0;
	bool files = false;
	int rc = 0;
	l->state[0] = '\0';
	while (!rc && fgets(line, sizeof(line), f)) {
		if (!files) {
			if (!strcmp(line, "=\n")) {
				files = true;
				/* the newline fprintf added after the state */
				if (o > 0 && l->state[o - 1] == '\n')
					l->state[--o] = '\0';
				continue;
			}
			size_t n = strlen(line);
			if (o + n >= sizeof(l->state)) {
				rc = MB_EPROTO;
				break;
			}
			memcpy(l->state + o, line, n + 1);
			o += n;
			continue;
		}
		unsigned long long size;
		char rel[96];
		if (sscanf(line, "%llu %95s", &size, rel) != 2 || strstr(rel, "..")) {
			rc = MB_EPROTO;
			break;
		}
		rc = add(l, rel, "", size);
	}
	fclose(f);
	if (!rc && !files)
		rc = MB_EPROTO;
	return rc;
}

static int restore(const char *data, const struct plist *live, const struct plist *copy,
		   struct mb_pristine_info *out, char *err, size_t errlen)
{
	/* where each directory of the copy lives in DATA, from the live scan
	 * (the same topology); a storage group with no file now is DATA/sgN
	 * and its default log directory */
	for (size_t i = 0; i < live->n; i++)
		if (unlink(live->f[i].live) && errno != ENOENT)
			return fail(err, errlen, mb_from_errno(errno), "removing %s%s",
				    live->f[i].live, NULL);
	char path[PATH_LEN];
	snprintf(path, sizeof(path), "%s/topology.json", data);
	struct mb_topology *t = NULL;
	char terr[256];
	int rc = mb_topology_read(path, &t, terr, sizeof(terr));
	if (rc)
		return fail(err, errlen, rc, "%s%s", terr, NULL);
	const struct mb_topo_info *ti = mb_topology_info(t);
	for (size_t i = 0; !rc && i < copy->n; i++) {
		const char *rel = copy->f[i].rel;
		int g = 0;
		char kind[8] = "";
		if (sscanf(rel, "sg%d%7[^/]", &g, kind) < 1 || g < 1 || g > ti->storage_groups) {
			rc = fail(err, errlen, MB_EPROTO, "%s/pristine/MANIFEST: %s", data, rel);
			break;
		}
		const char *name = strchr(rel, '/');
		name = name ? name + 1 : rel;
		char dir[PATH_LEN], dst[PATH_LEN], src[PATH_LEN];
		if (!strcmp(kind, ".log"))
			rc = mb_topology_log_dir(data, ti->log_dir[0] ? ti->log_dir : NULL, g, dir,
						 sizeof(dir));
		else
			snprintf(dir, sizeof(dir), "%s/sg%d", data, g);
		if (rc)
			break;
		char pdir[PATH_LEN];
		if (pjoin(dst, sizeof(dst), dir, name) ||
		    pjoin(pdir, sizeof(pdir), data, "pristine") ||
		    pjoin(src, sizeof(src), pdir, rel)) {
			rc = fail(err, errlen, MB_EINVAL, "%s/%s: path too long", dir, name);
			break;
		}
		rc = copy_file(src, dst, out);
		if (rc)
			fail(err, errlen, rc, "restoring %s from %s", dst, src);
	}
	mb_topology_destroy(t);
	if (!rc)
		out->restored = true;
	return rc;
}

int mb_pristine_measure(const char *data, struct mb_pristine_info *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	struct plist l = {0};
	int rc = scan_live(data, &l, err, errlen);
	if (!rc) {
		fingerprint(&l, out);
		out->bytes_data = out->bytes;
	}
	free(l.f);
	return rc;
}

int mb_pristine_prepare(const char *data, struct mb_pristine_info *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	struct plist live = {0}, copy = {0};
	int rc = scan_live(data, &live, err, errlen);
	if (rc)
		goto done;
	int mr = read_manifest(data, &copy);
	if (mr == 0 && !strcmp(copy.state, live.state)) {
		rc = restore(data, &live, &copy, out, err, errlen);
		if (!rc)
			fingerprint(&copy, out);
	} else {
		/* no copy, or one of another initialisation: DATA as it is now
		 * (right after init) becomes the copy */
		rc = save(data, &live, out, err, errlen);
		if (!rc)
			fingerprint(&live, out);
	}
	if (!rc) {
		struct plist now = {0};
		struct mb_pristine_info m;
		rc = scan_live(data, &now, err, errlen);
		if (!rc) {
			fingerprint(&now, &m);
			out->bytes_data = m.bytes;
			out->bytes_db = m.bytes_db;
		}
		free(now.f);
	}
done:
	free(live.f);
	free(copy.f);
	return rc;
}
