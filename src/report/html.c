/* html.c: the stakeholder report (see html.h).
 *
 * The page is written in one pass: style (uPlot's CSS, then ours, with a
 * print style), the sections as static HTML tables, then one JSON blob
 * with the chart data, uPlot's release file and a short script that hands
 * each chart's data to uPlot.  Invariants: text from the documents is
 * always HTML-escaped; the JSON blob and the inlined library never contain
 * "</script" (escaped as "<\/"), so they cannot end their element early.
 */
#include "report/html.h"
#include "core/scenario.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core/error.h"
#include "report/compare.h"
#include "report/report.h"
#include "report/runcmp.h"
#include "report/html_int.h"

#define UPLOT_JS "uplot/uPlot.iife.min.js"
#define UPLOT_CSS "uplot/uPlot.min.css"
#define UPLOT_VERSION "uplot/VERSION"

/* ---- where the vendored files are ---- */

static const char *mb_vendor_dir(void)
{
	static char dir[PATH_MAX];
	mb_share_dir("MAILBENCH_VENDOR", "vendor", dir, sizeof(dir));
	return dir;
}

static char *slurp(const char *rel, char *why, size_t whylen)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", mb_vendor_dir(), rel);
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (why)
			snprintf(why, whylen,
				 "%s: %s (the vendored chart library; MAILBENCH_VENDOR "
				 "names its directory)",
				 path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (len + 1 < cap)
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* ---- output helpers ---- */

/* ---- documents ---- */

static int classify(struct doc *d, char *why, size_t whylen)
{
	const char *schema = json_string_value(json_object_get(d->j, "schema"));
	const char *tool = json_string_value(json_object_get(d->j, "tool"));
	if (schema && !strcmp(schema, MB_RUN_SCHEMA)) {
		d->kind = DOC_RUN;
		d->sum = calloc(1, sizeof(*d->sum));
		if (!d->sum)
			return MB_ENOMEM;
		char w[512] = "";
		int rc = mb_summary_from_json(d->j, d->sum, w, sizeof(w));
		if (rc && why)
			snprintf(why, whylen, "%s: %s", d->name, w);
		return rc;
	}
	if (schema && !strcmp(schema, "mailbench-capacity/1")) {
		d->kind = DOC_CAPACITY;
		return 0;
	}
	if (tool && !strcmp(tool, "mailbench storage-test")) {
		d->kind = DOC_STORAGE;
		return 0;
	}
	if (why)
		snprintf(why, whylen,
			 "%s: not a mailbench run (%s), capacity search (mailbench-capacity/1) or "
			 "storage-test result",
			 d->name, MB_RUN_SCHEMA);
	return MB_EPROTO;
}

/* ---- sections ---- */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
				      "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

/* ---- findings ---- */

static const char *page_css =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;"
    "max-width:1240px;padding:16px 20px;color:#222;background:#fff}"
    "h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;border-bottom:2px solid #ccd;"
    "padding-bottom:3px;margin-top:28px}h3{font-size:16px}"
    "table{border-collapse:collapse;font-size:13px;margin:6px 0}"
    "th,td{border:1px solid #d8d8e0;padding:3px 7px;vertical-align:top}"
    "thead th{background:#eef0f6;position:sticky;top:0}tbody th{text-align:left;font-weight:"
    "normal;background:#f8f8fb;white-space:nowrap}td.n{text-align:right;white-space:nowrap;"
    "font-variant-numeric:tabular-nums}tr.hdr td{font-size:12px;color:#445;max-width:180px}"
    "tr.sep td{border:0;height:6px;padding:0}td.up{color:#a33}td.down{color:#246}"
    ".scroll{overflow-x:auto}.legend{font-size:12px;color:#445;display:grid;"
    "grid-template-columns:max-content 1fr;gap:1px 10px}.legend dt{font-weight:bold}"
    ".legend dd{margin:0}.warn{background:#fff4e0;border:1px solid #e0b060;padding:6px;"
    "white-space:pre-wrap}.note{font-size:12px;color:#555}.answer{font-size:16px;"
    "font-weight:bold;background:#eef6ee;border-left:4px solid #393;padding:6px 10px}"
    ".chart{margin:10px 0 18px;break-inside:avoid}.chart figcaption{font-size:12px;color:#555}"
    ".facts td{max-width:260px;word-break:break-word}td.v{font-weight:bold}"
    "nav a{margin-right:12px}"
    "@media print{body{max-width:none;padding:0;font-size:10pt}nav{display:none}"
    "thead th{position:static}.scroll{overflow:visible}section{break-inside:auto}"
    "h2{break-after:avoid}table{font-size:9pt}.chart{break-inside:avoid}}";

/* The script: hand each chart's data to uPlot; mark the body when done. */
static const char *page_js =
    "(function(){var D=JSON.parse(document.getElementById('mb-data').textContent);"
    "var pal=D.palette,n=0,pts=0;D.charts.forEach(function(c){"
    "var el=document.getElementById(c.id);if(!c.tables.length){el.textContent='n/a: no data';"
    "el.dataset.points=0;return;}"
    "var data=c.tables.length==1?c.tables[0]:uPlot.join(c.tables);"
    "var series=[{label:c.xlabel}];c.labels.forEach(function(l,i){series.push({label:l,"
    "stroke:pal[i%pal.length],width:2,spanGaps:true,points:{show:c.points,size:6}});});"
    "var w=Math.max(560,Math.min(1180,el.clientWidth||1180));"
    "new uPlot({title:c.title,width:w,height:280,scales:{x:{time:false}},series:series,"
    "axes:[{label:c.xlabel},{label:c.unit}]},data,el);"
    "var p=0;for(var i=1;i<data.length;i++)for(var k=0;k<data[i].length;k++)"
    "if(data[i][k]!=null)p++;el.dataset.points=p;pts+=p;n++;});"
    "document.body.dataset.charts=n;document.body.dataset.points=pts;})();";

int mb_html_report(json_t *const *docs, const char *const *names, size_t n, FILE *f, char *why,
		   size_t whylen)
{
	struct rep r;
	memset(&r, 0, sizeof(r));
	r.f = f;
	int rc = 0;
	char *js = NULL, *css = NULL, *ver = NULL;
	struct mb_scenario *sc = NULL;
	r.d = calloc(n ? n : 1, sizeof(*r.d));
	r.charts = json_array();
	if (!r.d || !r.charts) {
		rc = MB_ENOMEM;
		goto done;
	}
	r.n = n;
	for (size_t i = 0; i < n; i++) {
		r.d[i].j = docs[i];
		r.d[i].name = names[i];
		if ((rc = classify(&r.d[i], why, whylen)))
			goto done;
		if (r.d[i].kind == DOC_RUN) {
			if (r.nruns == MB_RUNCMP_MAX_RUNS) {
				if (why)
					snprintf(why, whylen, "%s: at most %d runs in one report",
						 names[i], MB_RUNCMP_MAX_RUNS);
				rc = MB_EINVAL;
				goto done;
			}
			r.targets[r.nruns] = mb__html_run_target(docs[i], r.target_buf[r.nruns],
								 sizeof(r.target_buf[0]));
			r.runs[r.nruns++] = r.d[i].sum;
			r.d[i].run_no = (int)r.nruns;
		}
	}
	if (!(js = slurp(UPLOT_JS, why, whylen)) || !(css = slurp(UPLOT_CSS, why, whylen))) {
		rc = MB_ENOTFOUND;
		goto done;
	}
	ver = slurp(UPLOT_VERSION, NULL, 0);
	if (r.nruns > 0) {
		/* the published columns of the reference run's scenario */
		sc = calloc(1, sizeof(*sc));
		if (sc && mb_scenario_load(r.runs[0]->scenario, sc, NULL)) {
			free(sc);
			sc = NULL;
		}
	}
	time_t now = time(NULL);
	struct tm tm;
	char when[32];
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
	mb__html_out(&r,
		     "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		     "<title>mailbench report</title>\n"
		     "<script>window.addEventListener('error',function(e){var b=document.body;"
		     "if(b)b.dataset.errors=(b.dataset.errors?b.dataset.errors+' | ':'')+e.message;"
		     "});</script>\n<style>");
	mb__html_raw_script(&r, css);
	mb__html_out(&r, "</style>\n<style>%s</style>\n</head><body>\n", page_css);
	mb__html_out(
	    &r,
	    "<header><h1>mailbench report</h1><p>%s; generated %s from %zu document%s "
	    "(%zu run%s). Every figure was measured by mailbench's processes on the machine "
	    "named below; n/a marks what was not measured.</p>\n",
	    PACKAGE_STRING, when, n, n == 1 ? "" : "s", r.nruns, r.nruns == 1 ? "" : "s");
	mb__html_out(&r, "<nav><a href=\"#facts\">runs</a><a href=\"#compare\">comparison</a>"
			 "<a href=\"#charts\">charts</a><a href=\"#actions\">actions</a>"
			 "<a href=\"#storage\">storage test</a><a href=\"#capacity\">capacity</a>"
			 "<a href=\"#findings\">findings</a></nav></header>\n");
	mb__html_sec_facts(&r);
	mb__html_sec_compare(&r, sc);
	mb__html_sec_charts(&r);
	mb__html_sec_actions(&r);
	mb__html_sec_storage(&r);
	mb__html_sec_capacity(&r);
	mb__html_sec_findings(&r);
	mb__html_out(&r,
		     "<footer class=\"note\"><p>Charts drawn by uPlot %s (MIT licence), inlined "
		     "into this file.</p></footer>\n",
		     ver ? strtok(ver, "\n") : "");
	json_t *data = json_pack("{s:O,s:[]}", "charts", r.charts, "palette");
	for (size_t i = 0; i < sizeof(palette) / sizeof(palette[0]); i++)
		json_array_append_new(json_object_get(data, "palette"), json_string(palette[i]));
	char *dump = json_dumps(data, JSON_COMPACT | JSON_REAL_PRECISION(8));
	json_decref(data);
	if (!dump) {
		rc = MB_ENOMEM;
		goto done;
	}
	mb__html_out(&r, "<script type=\"application/json\" id=\"mb-data\">");
	mb__html_raw_script(&r, dump);
	free(dump);
	mb__html_out(&r, "</script>\n<script>");
	mb__html_raw_script(&r, js);
	mb__html_out(&r, "</script>\n<script>%s</script>\n</body></html>\n", page_js);
	if (ferror(f))
		rc = MB_EIO;
done:
	for (size_t i = 0; r.d && i < n; i++)
		free(r.d[i].sum);
	free(r.d);
	json_decref(r.charts);
	free(js);
	free(css);
	free(ver);
	free(sc);
	return rc;
}

int mb_html_report_file(json_t *const *docs, const char *const *names, size_t n, const char *path,
			char *why, size_t whylen)
{
	char tmp[PATH_MAX + 16];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		if (why)
			snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		return mb_from_errno(errno);
	}
	int rc = mb_html_report(docs, names, n, f, why, whylen);
	if (fclose(f) && !rc)
		rc = MB_EIO;
	if (!rc && rename(tmp, path)) {
		if (why)
			snprintf(why, whylen, "%s: %s", path, strerror(errno));
		rc = mb_from_errno(errno);
	}
	if (rc)
		unlink(tmp);
	return rc;
}
