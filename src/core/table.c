/* table.c: text table layout and formatting (see table.h).
 * Invariant: formatted lines have exactly layout.total_w characters. */
#include "core/table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define HEADER_CELL_MAX 40
#define HEADER_CELL_MIN 8
#define GAP 2

struct cell {
	char s[MB_TABLE_CELL_MAX];
};

struct trow {
	char label[MB_TABLE_CELL_MAX];
	enum mb_row_style style;
	enum mb_verdict verdict;
	int tag;
	struct cell *cells;
};

struct mb_table {
	int ncols;
	char label_heading[MB_TABLE_CELL_MAX];
	char shortname[MB_TABLE_MAX_COLS][MB_TABLE_CELL_MAX];
	char longname[MB_TABLE_MAX_COLS][1024];
	int prio[MB_TABLE_MAX_COLS];
	struct trow *rows;
	int nrows, cap;
};

int mb_table_create(int ncols, struct mb_table **out)
{
	if (ncols < 0 || ncols > MB_TABLE_MAX_COLS)
		return MB_ERANGE;
	struct mb_table *t = calloc(1, sizeof(*t));
	if (!t)
		return MB_ENOMEM;
	t->ncols = ncols;
	*out = t;
	return 0;
}

void mb_table_destroy(struct mb_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nrows; i++)
		free(t->rows[i].cells);
	free(t->rows);
	free(t);
}

int mb_table_cols(const struct mb_table *t) { return t->ncols; }

int mb_table_set_heading(struct mb_table *t, int col, const char *shortname, const char *longname)
{
	if (col < 0 || col >= t->ncols)
		return MB_ERANGE;
	snprintf(t->shortname[col], sizeof(t->shortname[col]), "%s", shortname ? shortname : "");
	snprintf(t->longname[col], sizeof(t->longname[col]), "%s", longname ? longname : "");
	return 0;
}

const char *mb_table_heading(const struct mb_table *t, int col, bool long_form)
{
	if (col < 0 || col >= t->ncols)
		return "";
	return long_form ? t->longname[col] : t->shortname[col];
}

void mb_table_set_label_heading(struct mb_table *t, const char *text)
{
	snprintf(t->label_heading, sizeof(t->label_heading), "%s", text ? text : "");
}

void mb_table_set_priority(struct mb_table *t, int col, int prio)
{
	if (col >= 0 && col < t->ncols)
		t->prio[col] = prio;
}

int mb_table_add_row(struct mb_table *t, const char *label, enum mb_row_style style, int *row_out)
{
	if (t->nrows == t->cap) {
		int cap = t->cap ? t->cap * 2 : 32;
		struct trow *r = realloc(t->rows, (size_t)cap * sizeof(*r));
		if (!r)
			return MB_ENOMEM;
		t->rows = r;
		t->cap = cap;
	}
	struct trow *r = &t->rows[t->nrows];
	memset(r, 0, sizeof(*r));
	r->cells = calloc((size_t)(t->ncols ? t->ncols : 1), sizeof(struct cell));
	if (!r->cells)
		return MB_ENOMEM;
	snprintf(r->label, sizeof(r->label), "%s", label ? label : "");
	r->style = style;
	r->tag = -1;
	if (row_out)
		*row_out = t->nrows;
	t->nrows++;
	return 0;
}

int mb_table_rows(const struct mb_table *t) { return t->nrows; }

enum mb_row_style mb_table_row_style(const struct mb_table *t, int row)
{
	return row >= 0 && row < t->nrows ? t->rows[row].style : MB_ROW_NORMAL;
}

int mb_table_set_cell(struct mb_table *t, int row, int col, const char *text)
{
	if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
		return MB_ERANGE;
	snprintf(t->rows[row].cells[col].s, MB_TABLE_CELL_MAX, "%s", text ? text : "");
	return 0;
}

const char *mb_table_cell(const struct mb_table *t, int row, int col)
{
	if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
		return "";
	return t->rows[row].cells[col].s;
}

const char *mb_table_row_label(const struct mb_table *t, int row)
{
	return row >= 0 && row < t->nrows ? t->rows[row].label : "";
}

void mb_table_set_verdict(struct mb_table *t, int row, enum mb_verdict v)
{
	if (row >= 0 && row < t->nrows)
		t->rows[row].verdict = v;
}

enum mb_verdict mb_table_verdict(const struct mb_table *t, int row)
{
	return row >= 0 && row < t->nrows ? t->rows[row].verdict : MB_VERDICT_NONE;
}

void mb_table_set_tag(struct mb_table *t, int row, int tag)
{
	if (row >= 0 && row < t->nrows)
		t->rows[row].tag = tag;
}

int mb_table_tag(const struct mb_table *t, int row)
{
	return row >= 0 && row < t->nrows ? t->rows[row].tag : -1;
}

static int col_width(const struct mb_table *t, int c, int header_cap)
{
	int w = (int)strlen(t->shortname[c]);
	for (int r = 0; r < t->nrows; r++) {
		int n = (int)strlen(t->rows[r].cells[c].s);
		if (t->rows[r].style == MB_ROW_HEADER && n > header_cap)
			n = header_cap;
		if (n > w)
			w = n;
	}
	return w;
}

int mb_table_layout(const struct mb_table *t, int width, struct mb_table_layout *out)
{
	memset(out, 0, sizeof(*out));
	if (width < 20)
		width = 20;
	int label_w = (int)strlen(t->label_heading);
	for (int r = 0; r < t->nrows; r++) {
		int n = (int)strlen(t->rows[r].label);
		if (n > label_w)
			label_w = n;
	}
	int w[MB_TABLE_MAX_COLS], full[MB_TABLE_MAX_COLS];
	bool shown[MB_TABLE_MAX_COLS];
	int sum = 0;
	/* labels name the rows: keep a quarter of the width for them (at
	 * least 12) before the label column is cut */
	int keep = width / 4 > 12 ? width / 4 : 12;
	int min_label = label_w < keep ? label_w : keep;
	for (int c = 0; c < t->ncols; c++)
		full[c] = col_width(t, c, MB_TABLE_CELL_MAX);
	/* header rows (long text) give way first: narrower header cells */
	for (int cap = HEADER_CELL_MAX; cap >= HEADER_CELL_MIN; cap--) {
		sum = 0;
		for (int c = 0; c < t->ncols; c++) {
			w[c] = col_width(t, c, cap);
			shown[c] = true;
			sum += w[c] + GAP;
		}
		if (label_w + sum <= width)
			break;
	}
	/* drop columns, lowest priority (then rightmost) first */
	while (label_w + sum > width && min_label + sum > width) {
		int drop = -1;
		for (int c = 0; c < t->ncols; c++)
			if (shown[c] && (drop < 0 || t->prio[c] <= t->prio[drop]))
				drop = c;
		if (drop < 0)
			break;
		shown[drop] = false;
		sum -= w[drop] + GAP;
	}
	if (label_w + sum > width)
		label_w = width - sum > min_label ? width - sum : min_label;
	/* width left over goes to the header cells that were cut, a column
	 * at a time in turn */
	int spare = width - label_w - sum;
	for (bool grew = true; spare > 0 && grew;) {
		grew = false;
		for (int c = 0; c < t->ncols && spare > 0; c++) {
			if (!shown[c] || full[c] <= w[c])
				continue;
			w[c]++;
			spare--;
			grew = true;
		}
	}
	out->label_w = label_w;
	out->total_w = label_w;
	for (int c = 0; c < t->ncols; c++) {
		if (!shown[c])
			continue;
		if (w[c] < full[c])
			out->cut = true;
		out->col[out->ncols] = c;
		out->w[out->ncols] = w[c];
		out->ncols++;
		out->total_w += w[c] + GAP;
	}
	return 0;
}

/* s into dst, exactly w chars: right-aligned (or left), cut with '~'. */
static size_t put_cell(char *dst, const char *s, int w, bool left)
{
	int n = (int)strlen(s);
	if (n > w) {
		memcpy(dst, s, (size_t)(w > 0 ? w - 1 : 0));
		if (w > 0)
			dst[w - 1] = '~';
		return (size_t)w;
	}
	if (left) {
		memcpy(dst, s, (size_t)n);
		memset(dst + n, ' ', (size_t)(w - n));
	} else {
		memset(dst, ' ', (size_t)(w - n));
		memcpy(dst + (w - n), s, (size_t)n);
	}
	return (size_t)w;
}

static void format_line(const struct mb_table *t, const struct mb_table_layout *l,
			const char *label, int row, char *buf, size_t len)
{
	if (len == 0)
		return;
	size_t need = (size_t)l->total_w + 1;
	char *tmp = malloc(need);
	if (!tmp) {
		buf[0] = '\0';
		return;
	}
	size_t o = put_cell(tmp, label, l->label_w, true);
	bool sep = row >= 0 && t->rows[row].style == MB_ROW_SEPARATOR;
	for (int i = 0; i < l->ncols; i++) {
		int c = l->col[i];
		memset(tmp + o, sep ? '-' : ' ', GAP);
		o += GAP;
		if (sep) {
			memset(tmp + o, '-', (size_t)l->w[i]);
			o += (size_t)l->w[i];
			continue;
		}
		const char *s = row < 0 ? t->shortname[c] : t->rows[row].cells[c].s;
		o += put_cell(tmp + o, s, l->w[i], false);
	}
	tmp[o] = '\0';
	snprintf(buf, len, "%s", tmp);
	free(tmp);
}

void mb_table_format_heading(const struct mb_table *t, const struct mb_table_layout *l, char *buf,
			     size_t len)
{
	format_line(t, l, t->label_heading, -1, buf, len);
}

void mb_table_format_row(const struct mb_table *t, const struct mb_table_layout *l, int row,
			 char *buf, size_t len)
{
	if (row < 0 || row >= t->nrows) {
		if (len)
			buf[0] = '\0';
		return;
	}
	if (t->rows[row].style == MB_ROW_SEPARATOR) {
		char *lab = calloc((size_t)l->label_w + 1, 1);
		if (lab) {
			memset(lab, '-', (size_t)l->label_w);
			format_line(t, l, lab, row, buf, len);
			free(lab);
		}
		return;
	}
	format_line(t, l, t->rows[row].label, row, buf, len);
}

int mb_table_col_offset(const struct mb_table_layout *l, int shown_index)
{
	int o = l->label_w;
	for (int i = 0; i < shown_index && i < l->ncols; i++)
		o += GAP + l->w[i];
	return o + GAP;
}

/* Trailing blanks off (empty cells at the end of a printed line). */
static char *rtrim(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
	return s;
}

void mb_table_print(const struct mb_table *t, FILE *f, int width)
{
	struct mb_table_layout l;
	mb_table_layout(t, width, &l);
	size_t len = (size_t)l.total_w + 1;
	char *buf = malloc(len);
	if (!buf)
		return;
	mb_table_format_heading(t, &l, buf, len);
	fprintf(f, "%s\n", rtrim(buf));
	for (int r = 0; r < t->nrows; r++) {
		mb_table_format_row(t, &l, r, buf, len);
		fprintf(f, "%s\n", rtrim(buf));
	}
	free(buf);
	fprintf(f, "\n");
	for (int i = 0; i < l.ncols; i++) {
		int c = l.col[i];
		if (!t->longname[c][0])
			continue;
		if (!strncmp(t->longname[c], t->shortname[c], strlen(t->shortname[c])))
			fprintf(f, "%s\n", t->longname[c]);
		else
			fprintf(f, "%s: %s\n", t->shortname[c], t->longname[c]);
	}
}

static void csv_field(FILE *f, const char *s)
{
	if (strpbrk(s, ",\"\n")) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else {
		fputs(s, f);
	}
}

int mb_table_csv(const struct mb_table *t, FILE *f,
		 const char *(*key)(const struct mb_table *t, int row, void *arg), void *arg)
{
	fputs("row", f);
	for (int c = 0; c < t->ncols; c++) {
		fputc(',', f);
		csv_field(f, t->shortname[c]);
	}
	fputc('\n', f);
	for (int r = 0; r < t->nrows; r++) {
		if (t->rows[r].style == MB_ROW_SEPARATOR)
			continue;
		const char *k = key ? key(t, r, arg) : NULL;
		char label[96];
		if (!k) {
			snprintf(label, sizeof(label), "%s", t->rows[r].label);
			for (char *p = label; *p; p++)
				if (*p == ' ')
					*p = '_';
			k = label;
		}
		csv_field(f, k);
		for (int c = 0; c < t->ncols; c++) {
			fputc(',', f);
			char cell[MB_TABLE_CELL_MAX], *d = cell;
			const char *s = t->rows[r].cells[c].s;
			bool numeric = s[0] == '-' || s[0] == '+' || (s[0] >= '0' && s[0] <= '9');
			for (; *s && d < cell + sizeof(cell) - 1; s++)
				if (!(numeric && *s == ','))
					*d++ = *s;
			*d = '\0';
			csv_field(f, cell);
		}
		fputc('\n', f);
	}
	return ferror(f) ? MB_EIO : 0;
}
