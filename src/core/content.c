/* content.c: the shared text generator of mailbench (see content.h).
 * Invariant: the vocabulary and the Zipf lookup table are built once and
 * never change, so bodies are a pure function of their seed. */
#include "core/content.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define VOCAB 4096
#define ZIPF_BITS 16
#define WORD_MAX 16
#define ZIPF_S 1.05

static const char *const common[] = {
	"the", "to", "of", "and", "a", "in", "is", "it", "you", "that", "for", "on", "we",
	"this", "with", "be", "are", "have", "as", "will", "at", "not", "can", "from", "your",
	"our", "please", "by", "or", "all", "if", "meeting", "team", "would", "about", "an",
	"thanks", "project", "should", "next", "week", "but", "they", "has", "report", "new",
	"been", "more", "review", "let", "me", "know", "there", "time", "do", "also", "update",
	"customer", "could", "need", "any", "which", "when", "get", "attached", "some",
	"schedule", "budget", "was", "what", "regards", "call", "plan", "one", "out", "send",
	"today", "question", "status", "so", "up", "data", "work", "just", "like", "draft",
	"proposal", "server", "office", "agenda", "monday", "friday", "quarter", "sales",
	"issue", "follow", "changes", "release", "before", "after", "tomorrow", "again",
};
#define NCOMMON (sizeof(common) / sizeof(common[0]))

static const char *const syl[] = {
	"ka", "re", "mi", "to", "sa", "ne", "lo", "ri", "ta", "ve", "con", "pro", "ment",
	"tion", "ber", "der", "ex", "in", "un", "al", "ly", "ing", "er", "est", "ab", "port",
	"ser", "vi", "ce", "ma", "na", "ge", "dis", "tri", "bu", "cal", "en", "dar", "fo",
	"lder", "pe", "ri", "od", "sum", "mar", "y", "quo", "ta", "an", "nu",
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

static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double unit(uint64_t *s)
{
	return (double)(mix(s) >> 11) * (1.0 / 9007199254740992.0);
}

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

void mb_content_fill(uint64_t seed, char *buf, size_t len)
{
	pthread_once(&once, build);
	uint64_t s = seed ^ 0x626f6479ULL;
	size_t pos = 0;
	int in_sentence = 0, sentences = 0, para = 3 + (int)(mix(&s) % 5);
	int sentence_len = 6 + (int)(mix(&s) % 14);
	while (pos < len) {
		char word[PHRASE_MAX + 4];
		size_t l = token(&s, word);
		uint64_t r = mix(&s);
		if (in_sentence == 0)
			word[0] = (char)(word[0] - 'a' + 'A');
		in_sentence++;
		if (in_sentence >= sentence_len) {
			word[l++] = (r & 7) == 0 ? '?' : '.';
			in_sentence = 0;
			sentence_len = 6 + (int)((r >> 8) % 14);
			if (++sentences >= para) {
				word[l++] = '\n';
				word[l++] = '\n';
				sentences = 0;
				para = 2 + (int)((r >> 16) % 6);
			} else {
				word[l++] = ' ';
			}
		} else {
			if (((r >> 24) & 15) == 0)
				word[l++] = ',';
			word[l++] = ' ';
		}
		if (l > len - pos)
			l = len - pos;
		memcpy(buf + pos, word, l);
		pos += l;
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
