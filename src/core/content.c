/* content.c: the shared text generator of mailbench (see content.h).
 * Invariant: the vocabulary and the Zipf lookup table are built once and
 * never change, so bodies are a pure function of their seed. */
#include "core/content.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define VOCAB 4096
#define ZIPF_BITS 16
#define WORD_MAX 16
#define ZIPF_S 1.05

static const char *const common[] = {
    "the",	"to",	    "of",	"and",	  "a",	      "in",	  "is",	      "it",
    "you",	"that",	    "for",	"on",	  "we",	      "this",	  "with",     "be",
    "are",	"have",	    "as",	"will",	  "at",	      "not",	  "can",      "from",
    "your",	"our",	    "please",	"by",	  "or",	      "all",	  "if",	      "meeting",
    "team",	"would",    "about",	"an",	  "thanks",   "project",  "should",   "next",
    "week",	"but",	    "they",	"has",	  "report",   "new",	  "been",     "more",
    "review",	"let",	    "me",	"know",	  "there",    "time",	  "do",	      "also",
    "update",	"customer", "could",	"need",	  "any",      "which",	  "when",     "get",
    "attached", "some",	    "schedule", "budget", "was",      "what",	  "regards",  "call",
    "plan",	"one",	    "out",	"send",	  "today",    "question", "status",   "so",
    "up",	"data",	    "work",	"just",	  "like",     "draft",	  "proposal", "server",
    "office",	"agenda",   "monday",	"friday", "quarter",  "sales",	  "issue",    "follow",
    "changes",	"release",  "before",	"after",  "tomorrow", "again",
};
#define NCOMMON (sizeof(common) / sizeof(common[0]))

static const char *const syl[] = {
    "ka",   "re",  "mi",  "to", "sa",  "ne",  "lo",  "ri",  "ta",  "ve",  "con", "pro", "ment",
    "tion", "ber", "der", "ex", "in",  "un",  "al",  "ly",  "ing", "er",  "est", "ab",	"port",
    "ser",  "vi",  "ce",  "ma", "na",  "ge",  "dis", "tri", "bu",  "cal", "en",	 "dar", "fo",
    "lder", "pe",  "ri",  "od", "sum", "mar", "y",   "quo", "ta",  "an",  "nu",
};
#define NSYL (sizeof(syl) / sizeof(syl[0]))

static char vocab[VOCAB][WORD_MAX];
static uint8_t vlen[VOCAB];
static uint16_t zipf[1 << ZIPF_BITS];
#define NPHRASE 1024
#define PHRASE_MAX (5 * WORD_MAX)
#define PHRASE_SHARE 64 /* of 256: tokens that are stock phrases */
static char phrase[NPHRASE][PHRASE_MAX];
static uint8_t plen[NPHRASE];
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* the sentence pool of mb_content_fill: NSENT sentences, ~2.6 MB */
#define NSENT (1u << 15)
#define SENT_MAX 255
static char *pool;
static uint32_t soff[NSENT];
static uint8_t slen[NSENT];
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double unit(uint64_t *s) { return (double)(mix(s) >> 11) * (1.0 / 9007199254740992.0); }

static void build(void)
{
	uint64_t s = 0x6d61696c62656e63ULL; /* fixed: the vocabulary never changes */
	for (size_t i = 0; i < VOCAB; i++) {
		char w[WORD_MAX * 2] = "";
		if (i < NCOMMON) {
			strcpy(w, common[i]);
		} else {
			int n = 1 + (int)(mix(&s) % 4);
			for (int k = 0; k < n && strlen(w) < WORD_MAX - 5; k++)
				strcat(w, syl[mix(&s) % NSYL]);
		}
		size_t l = strlen(w);
		if (l > WORD_MAX - 1)
			l = WORD_MAX - 1;
		memcpy(vocab[i], w, l);
		vlen[i] = (uint8_t)l;
	}
	/* Zipf law (exponent ZIPF_S) over the vocabulary, as a lookup table. */
	double h = 0;
	for (int i = 0; i < VOCAB; i++)
		h += pow(i + 1, -ZIPF_S);
	double acc = 0;
	int w = 0;
	for (int i = 0; i < VOCAB; i++) {
		acc += pow(i + 1, -ZIPF_S) / h;
		int upto = (int)(acc * (1 << ZIPF_BITS) + 0.5);
		if (i == VOCAB - 1)
			upto = 1 << ZIPF_BITS;
		while (w < upto && w < (1 << ZIPF_BITS))
			zipf[w++] = (uint16_t)i;
	}
	/* stock phrases: 2..5 words each, drawn with the same law */
	for (int i = 0; i < NPHRASE; i++) {
		int n = 2 + (int)(mix(&s) % 4);
		size_t l = 0;
		for (int k = 0; k < n; k++) {
			unsigned idx = zipf[mix(&s) & ((1u << ZIPF_BITS) - 1)];
			if (k > 0)
				phrase[i][l++] = ' ';
			memcpy(phrase[i] + l, vocab[idx], vlen[idx]);
			l += vlen[idx];
		}
		plen[i] = (uint8_t)l;
	}
}

size_t mb_content_size(uint64_t seed, size_t avg_bytes)
{
	/* log-normal, sigma 1: mean = exp(mu + 1/2), so mu = ln(avg) - 1/2 */
	uint64_t s = seed ^ 0x73697a65ULL;
	double u1 = 1.0 - unit(&s), u2 = unit(&s);
	double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
	double v = exp(log((double)avg_bytes) - 0.5 + z);
	if (v < MB_CONTENT_MIN)
		v = MB_CONTENT_MIN;
	if (v > MB_CONTENT_MAX)
		v = MB_CONTENT_MAX;
	return (size_t)v;
}

/* Append one token (a word or a stock phrase) drawn from s to w. */
static size_t token(uint64_t *s, char *w)
{
	uint64_t r = mix(s);
	unsigned pick = zipf[r & ((1u << ZIPF_BITS) - 1)];
	if (((r >> 16) & 0xff) < PHRASE_SHARE) {
		unsigned ph = pick % NPHRASE;
		memcpy(w, phrase[ph], plen[ph]);
		return plen[ph];
	}
	memcpy(w, vocab[pick], vlen[pick]);
	return vlen[pick];
}

/* One sentence of the generator into w (capacity SENT_MAX): tokens with
 * commas, a capital first letter, '.' or '?' and one trailing space.
 * Returns its length. */
static size_t sentence(uint64_t *s, char *w)
{
	size_t n = 0;
	int words = 6 + (int)(mix(s) % 14);
	for (int i = 0; i < words; i++) {
		char t[PHRASE_MAX];
		size_t l = token(s, t);
		if (n + l + 3 > SENT_MAX)
			break;
		memcpy(w + n, t, l);
		if (i == 0)
			w[n] = (char)(w[n] - 'a' + 'A');
		n += l;
		uint64_t r = mix(s);
		if (i == words - 1)
			w[n++] = (r & 7) == 0 ? '?' : '.';
		else if (((r >> 24) & 15) == 0)
			w[n++] = ',';
		w[n++] = ' ';
	}
	return n;
}

/* The sentence pool: built once, from a fixed seed. */
static void build_pool(void)
{
	pthread_once(&once, build);
	uint64_t s = 0x73656e74656e6365ULL;
	size_t cap = (size_t)NSENT * 96 + 32, used = 0;
	pool = malloc(cap);
	if (!pool)
		abort(); /* a few MB at start-up: nothing sensible to do without them */
	for (size_t i = 0; i < NSENT; i++) {
		char w[SENT_MAX];
		size_t l = sentence(&s, w);
		if (used + l + 32 > cap) {
			cap *= 2;
			char *np = realloc(pool, cap);
			if (!np)
				abort();
			pool = np;
		}
		memcpy(pool + used, w, l);
		soff[i] = (uint32_t)used;
		slen[i] = (uint8_t)l;
		used += l;
	}
	memset(pool + used, ' ', 32); /* padding read by the word copies */
}

/* Sentences drawn uniformly from the pool (four per random draw), in
 * paragraphs of 2..7 sentences: the text keeps the vocabulary's Zipf law and
 * its compression ratio (the pool is much larger than any codec's window)
 * and costs a copy per sentence, so bodies are generated at memory speed. */
void mb_content_fill(uint64_t seed, char *buf, size_t len)
{
	pthread_once(&pool_once, build_pool);
	uint64_t s = seed ^ 0x626f6479ULL;
	size_t pos = 0;
	int sentences = 0, para = 3 + (int)(mix(&s) % 5);
	while (pos < len) {
		uint64_t r = mix(&s);
		for (int k = 0; k < 4 && pos < len; k++, r >>= 16) {
			unsigned i = (unsigned)(r & (NSENT - 1));
			const char *src = pool + soff[i];
			size_t l = slen[i];
			bool brk = ++sentences >= para;
			if (brk) {
				sentences = 0;
				para = 2 + (int)((r >> 13) % 6);
			}
			if (pos + SENT_MAX + 32 <= len) {
				/* whole 32-byte words (the pool is padded): no
				 * per-length copy call */
				for (size_t o = 0; o < l; o += 32)
					memcpy(buf + pos + o, src + o, 32);
				pos += l;
				if (brk) {
					buf[pos - 1] = '\n';
					buf[pos++] = '\n';
				}
			} else if (pos + l + 1 <= len) {
				memcpy(buf + pos, src, l);
				pos += l;
				if (brk) {
					buf[pos - 1] = '\n';
					buf[pos++] = '\n';
				}
			} else {
				memcpy(buf + pos, src, len - pos);
				pos = len;
			}
		}
	}
}

int mb_content_body(uint64_t seed, size_t avg_bytes, char **out, size_t *len)
{
	size_t n = mb_content_size(seed, avg_bytes);
	char *b = malloc(n + 1);
	if (!b)
		return MB_ENOMEM;
	mb_content_fill(seed, b, n);
	b[n] = '\0';
	*out = b;
	*len = n;
	return 0;
}

void mb_content_subject(uint64_t seed, char *buf, size_t len)
{
	pthread_once(&once, build);
	uint64_t s = seed ^ 0x7375626aULL;
	int words = 2 + (int)(mix(&s) % 6);
	size_t pos = 0;
	for (int i = 0; i < words; i++) {
		unsigned idx = zipf[mix(&s) & ((1u << ZIPF_BITS) - 1)];
		if (idx < 8) /* skip the most common fillers in subjects */
			idx = 8 + (unsigned)(mix(&s) % (VOCAB - 8));
		size_t l = vlen[idx];
		if (pos + l + 2 > len)
			break;
		if (i > 0)
			buf[pos++] = ' ';
		memcpy(buf + pos, vocab[idx], l);
		if (i == 0)
			buf[pos] = (char)(buf[pos] - 'a' + 'A');
		pos += l;
	}
	if (pos == 0 && len >= 2)
		buf[pos++] = 'x';
	buf[pos] = '\0';
}

/* ---- kinds of content ---- */

const char *const mb_content_kind_names[MB_CK_COUNT + 1] = {"text",  "rtf",    "html",	"office",
							    "image", "bitmap", "photo", NULL};
/* The file name extension of an attachment of each kind. */
static const char *const kind_ext[MB_CK_COUNT] = {"txt", "rtf", "htm", "doc", "jpg", "bmp", "bmp"};

const char *mb_content_kind_ext(enum mb_content_kind k)
{
	return (int)k >= 0 && k < MB_CK_COUNT ? kind_ext[k] : "bin";
}

const char *mb_content_kind_name(enum mb_content_kind k)
{
	return (int)k >= 0 && k < MB_CK_COUNT ? mb_content_kind_names[k] : "?";
}

int mb_content_kind_parse(const char *name, enum mb_content_kind *out)
{
	for (int k = 0; k < MB_CK_COUNT; k++)
		if (!strcmp(name, mb_content_kind_names[k])) {
			*out = (enum mb_content_kind)k;
			return 0;
		}
	return MB_EINVAL;
}

/* Append n bytes of src (or as many as fit) at buf[*pos], len the end. */
static void put(char *buf, size_t len, size_t *pos, const char *src, size_t n)
{
	if (n > len - *pos)
		n = len - *pos;
	memcpy(buf + *pos, src, n);
	*pos += n;
}

/* Text wrapped in markup: a prologue, then paragraphs of generated text
 * (80-400 bytes) between an opening and a closing string, some words in
 * an inline style. */
static void fill_markup(uint64_t seed, char *buf, size_t len, const char *prologue,
			const char *open, const char *close, const char *const *inl, size_t ninl)
{
	uint64_t s = seed ^ 0x6d61726bULL;
	size_t pos = 0;
	put(buf, len, &pos, prologue, strlen(prologue));
	char text[512];
	uint64_t para = 0;
	while (pos < len) {
		size_t n = 40 + (size_t)(mix(&s) % 200);
		mb_content_fill(seed + 0x9E37ull * ++para, text, n);
		for (size_t i = 0; i < n; i++)
			if (text[i] == '\n')
				text[i] = ' ';
		put(buf, len, &pos, open, strlen(open));
		/* one styled run inside some paragraphs */
		size_t cut = n / 3;
		if (ninl >= 2 && (mix(&s) & 3) == 0) {
			put(buf, len, &pos, text, cut);
			put(buf, len, &pos, inl[0], strlen(inl[0]));
			put(buf, len, &pos, text + cut, cut);
			put(buf, len, &pos, inl[1], strlen(inl[1]));
			put(buf, len, &pos, text + 2 * cut, n - 2 * cut);
		} else {
			put(buf, len, &pos, text, n);
		}
		put(buf, len, &pos, close, strlen(close));
	}
}

/* An office document's sectors, cumulative percent: FAT, UTF-16LE text,
 * records, a stream's last sector (a tail, then zeros); the rest embedded
 * binary data.  With MB_OFFICE_FIELD random bytes in a record's 12-byte
 * body this gives 3.7:1 with the wire's LZ77+DIRECT2 per 28 KB ReadStream
 * chunk (tests/unit/test_content.c; 2.3:1 under LZ4 with 2 random bytes
 * and 3% binary, the values before the wire's codec changed), set against Word 97-2003 and Excel
 * 97-2003 files LibreOffice wrote here from English prose and a sales table
 * (8-160 KB): 2.67-4.06:1, 3.60:1 on average (bench/office-ratio.sh;
 * docs/workload.md, "Office documents" and "The wire's codec"). */
#define MB_OFFICE_FAT 5
#define MB_OFFICE_TEXT 50
#define MB_OFFICE_RECORDS 75
#define MB_OFFICE_SLACK 99
#define MB_OFFICE_FIELD 1

static void fill_office(uint64_t seed, char *buf, size_t len)
{
	/* a compound file: a header, then 512-byte sectors: FAT sectors
	 * (little-endian sector chains, regular), UTF-16LE text (half zero
	 * bytes), formatting records (short repeated structures with random
	 * fields), the zero-filled ends of streams and embedded binary data
	 * (random) */
	static const unsigned char magic[8] = {0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1};
	uint64_t s = seed ^ 0x6f666669ULL;
	size_t pos = 0;
	put(buf, len, &pos, (const char *)magic, sizeof(magic));
	char sec[512], text[256];
	uint32_t next = 1;
	while (pos < len) {
		uint64_t r = mix(&s) % 100;
		if (r < MB_OFFICE_FAT) { /* FAT */
			for (int i = 0; i < 128; i++) {
				uint32_t v = next++;
				memcpy(sec + 4 * i, &v, 4);
			}
		} else if (r < MB_OFFICE_TEXT) { /* UTF-16LE text */
			mb_content_fill(mix(&s), text, sizeof(text));
			for (int i = 0; i < 256; i++) {
				sec[2 * i] = text[i];
				sec[2 * i + 1] = 0;
			}
		} else if (r < MB_OFFICE_RECORDS) { /* records: tag, length, random fields */
			for (int i = 0; i < 512; i += 16) {
				uint64_t a = mix(&s);
				sec[i] = 0x09;
				sec[i + 1] = 0x08;
				sec[i + 2] = 0x0c;
				sec[i + 3] = 0;
				memset(sec + i + 4, 0, 12);
				memcpy(sec + i + 4, &a, MB_OFFICE_FIELD);
			}
		} else if (r < MB_OFFICE_SLACK) { /* a stream's last sector: a tail, then zeros */
			memset(sec, 0, sizeof(sec));
			size_t tail = (size_t)(mix(&s) % 128);
			mb_content_fill(mix(&s), sec, tail);
		} else { /* binary */
			for (int i = 0; i < 512; i += 8) {
				uint64_t a = mix(&s);
				memcpy(sec + i, &a, 8);
			}
		}
		put(buf, len, &pos, sec, sizeof(sec));
	}
}

static void fill_image(uint64_t seed, char *buf, size_t len)
{
	static const char hdr[] = "\xFF\xD8\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x48\x00\x48"
				  "\x00\x00\xFF\xDB\x00\x43\x00";
	uint64_t s = seed ^ 0x696d6167ULL;
	size_t pos = 0;
	put(buf, len, &pos, hdr, sizeof(hdr) - 1);
	while (pos < len) {
		uint64_t a = mix(&s);
		put(buf, len, &pos, (const char *)&a, sizeof(a));
	}
}

/* A Windows bitmap (BMP, 24 bits per pixel, uncompressed: BI_RGB) of a
 * drawing: MB_BITMAP_WIDTH pixels a row, a flat background and
 * MB_BITMAP_SHAPES filled rectangles of flat colours, their edges
 * anti-aliased (a blend of the two colours); MB_BITMAP_DETAIL_PCT of the
 * rectangles are detailed (every pixel its colour plus a little noise, as
 * shading or a scanned inset).  Set against small real drawings,
 * diagrams and icons written as 120 x 120 BMPs (43 KB, the size of the
 * send mix's bitmap): 2.2-6.4:1 with the wire's LZ77+DIRECT2 per 28 KB
 * chunk, 4.38:1 geometric mean (bench/bitmap-ratio.sh; this kind: 4.3:1
 * at that size); a photograph written as a BMP barely compresses (1.0:1)
 * and is not what this kind stands for. */
#define MB_BITMAP_WIDTH 120
#define MB_BITMAP_SHAPES 14
#define MB_BITMAP_DETAIL_PCT 44

struct bm_rect {
	int x0, y0, x1, y1; /* [x0, x1) x [y0, y1) */
	uint8_t c[3];
	bool detail;
};

enum { BMP_ROW = (MB_BITMAP_WIDTH * 3 + 3) & ~3 };

/* The 54-byte header of a 24-bit BMP (BI_RGB) of MB_BITMAP_WIDTH pixels
 * a row and as many rows as len holds; its height. */
static int put_bmp_header(char *buf, size_t len, size_t *pos)
{
	int height = (int)((len > 54 ? len - 54 : 0) / BMP_ROW) + 1;
	uint32_t img = (uint32_t)BMP_ROW * (uint32_t)height;
	uint8_t h[54] = {'B', 'M'};
	uint32_t v[] = {54 + img, 0, 54, 40, MB_BITMAP_WIDTH, (uint32_t)height};
	for (int i = 0; i < 6; i++)
		memcpy(h + 2 + 4 * i, &v[i], 4);
	h[26] = 1;  /* planes */
	h[28] = 24; /* bits per pixel; compression 0: BI_RGB */
	memcpy(h + 34, &img, 4);
	h[38] = 0x13; /* 2,835 pixels per metre (72 dpi) */
	h[39] = 0x0B;
	h[42] = 0x13;
	h[43] = 0x0B;
	put(buf, len, pos, (const char *)h, sizeof(h));
	return height;
}

/* A Windows bitmap of a photograph: the BMP header, then pixels whose
 * sensor noise leaves no repeats for a byte-level codec (photographs
 * written as 120 x 120 BMPs here: 1.00:1 and 1.01:1; docs/workload.md). */
static void fill_photo(uint64_t seed, char *buf, size_t len)
{
	uint64_t s = seed ^ 0x70686f74ULL;
	size_t pos = 0;
	put_bmp_header(buf, len, &pos);
	while (pos < len) {
		uint64_t a = mix(&s);
		put(buf, len, &pos, (const char *)&a, sizeof(a));
	}
}

static void fill_bitmap(uint64_t seed, char *buf, size_t len)
{
	uint64_t s = seed ^ 0x626d6170ULL;
	size_t pos = 0;
	int height = put_bmp_header(buf, len, &pos);

	struct bm_rect r[MB_BITMAP_SHAPES];
	for (int i = 0; i < MB_BITMAP_SHAPES; i++) {
		uint64_t a = mix(&s), b = mix(&s);
		int w = 6 + (int)(a % 60), ht = 6 + (int)((a >> 8) % 60);
		r[i].x0 = (int)((a >> 16) % MB_BITMAP_WIDTH);
		r[i].y0 = (int)((a >> 24) % (uint64_t)height);
		r[i].x1 = r[i].x0 + w;
		r[i].y1 = r[i].y0 + ht;
		memcpy(r[i].c, &b, 3);
		r[i].detail = (b >> 32) % 100 < MB_BITMAP_DETAIL_PCT;
	}
	uint8_t row[BMP_ROW];
	for (int y = 0; y < height && pos < len; y++) {
		memset(row, 0, sizeof(row));
		for (int x = 0; x < MB_BITMAP_WIDTH; x++) {
			uint8_t c[3] = {0xF4, 0xF4, 0xF4};
			for (int i = 0; i < MB_BITMAP_SHAPES; i++) {
				const struct bm_rect *q = &r[i];
				if (x < q->x0 || x >= q->x1 || y < q->y0 || y >= q->y1)
					continue;
				bool edge =
				    x == q->x0 || x == q->x1 - 1 || y == q->y0 || y == q->y1 - 1;
				uint64_t n = (edge || q->detail) ? mix(&s) : 0;
				for (int k = 0; k < 3; k++) {
					if (edge) /* anti-aliased: a blend of the two */
						c[k] = (uint8_t)((c[k] * (n & 3) +
								  q->c[k] * (4 - (n & 3))) /
								 4);
					else if (q->detail)
						c[k] = (uint8_t)(q->c[k] +
								 (int)((n >> (8 * k)) & 15) - 8);
					else
						c[k] = q->c[k];
				}
			}
			memcpy(row + 3 * x, c, 3);
		}
		put(buf, len, &pos, (const char *)row, sizeof(row));
	}
}

void mb_content_fill_kind(enum mb_content_kind k, uint64_t seed, char *buf, size_t len)
{
	static const char *const rtf_inl[] = {"\\b ", "\\b0 "};
	static const char *const html_inl[] = {"<b>", "</b>"};
	switch (k) {
	case MB_CK_RTF:
		fill_markup(seed, buf, len,
			    "{\\rtf1\\ansi\\ansicpg1252\\deff0\\deflang1033{\\fonttbl{\\f0\\fswiss"
			    "\\fcharset0 Arial;}}\\viewkind4\\uc1",
			    "\\pard\\plain\\s0\\ql\\li0\\ri0\\widctlpar\\aspalpha\\f0\\fs20\\cf1 ",
			    "\\par\r\n", rtf_inl, 2);
		return;
	case MB_CK_HTML:
		fill_markup(
		    seed, buf, len,
		    "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; "
		    "charset=us-ascii\"><style><!-- p.MsoNormal {margin:0in; font-size:10.0pt; "
		    "font-family:Arial} --></style></head><body lang=EN-US>",
		    "<p class=MsoNormal><font size=2 face=Arial><span "
		    "style='font-size:10.0pt;font-family:Arial'>",
		    "</span></font></p>\r\n", html_inl, 2);
		return;
	case MB_CK_OFFICE:
		fill_office(seed, buf, len);
		return;
	case MB_CK_IMAGE:
		fill_image(seed, buf, len);
		return;
	case MB_CK_BITMAP:
		fill_bitmap(seed, buf, len);
		return;
	case MB_CK_PHOTO:
		fill_photo(seed, buf, len);
		return;
	default:
		mb_content_fill(seed, buf, len);
	}
}
