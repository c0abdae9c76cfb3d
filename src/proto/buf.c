/* buf.c: growable byte buffers and bump arenas of the protocol codec.
 * Invariants: a buffer's data is [start, start+len) inside its allocation;
 * consume() advances start and compacts lazily; an arena never frees a
 * single object, only everything at reset/destroy, and hands out 8-byte
 * aligned zeroed memory from chunks of at most its capacity in total. */
#include "proto/proto.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

struct mb_buf {
	uint8_t *mem;
	size_t start;
	size_t len;
	size_t cap;
};

int mb_buf_create(size_t initial, struct mb_buf **out)
{
	struct mb_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return MB_ENOMEM;
	if (initial) {
		b->mem = malloc(initial);
		if (!b->mem) {
			free(b);
			return MB_ENOMEM;
		}
		b->cap = initial;
	}
	*out = b;
	return 0;
}

void mb_buf_destroy(struct mb_buf *b)
{
	if (!b)
		return;
	free(b->mem);
	free(b);
}

uint8_t *mb_buf_data(const struct mb_buf *b) { return b->mem ? b->mem + b->start : NULL; }

size_t mb_buf_len(const struct mb_buf *b) { return b->len; }

void mb_buf_reset(struct mb_buf *b)
{
	b->start = 0;
	b->len = 0;
}

int mb_buf_reserve(struct mb_buf *b, size_t n, uint8_t **p)
{
	if (b->start + b->len + n > b->cap) {
		if (b->start) {
			memmove(b->mem, b->mem + b->start, b->len);
			b->start = 0;
		}
		if (b->len + n > b->cap) {
			size_t ncap = b->cap ? b->cap : 256;
			while (ncap < b->len + n) {
				if (ncap > (SIZE_MAX / 2))
					return MB_ENOMEM;
				ncap *= 2;
			}
			uint8_t *m = realloc(b->mem, ncap);
			if (!m)
				return MB_ENOMEM;
			b->mem = m;
			b->cap = ncap;
		}
	}
	if (p)
		*p = b->mem + b->start + b->len;
	return 0;
}

void mb_buf_commit(struct mb_buf *b, size_t n) { b->len += n; }

int mb_buf_append(struct mb_buf *b, const void *p, size_t n)
{
	uint8_t *dst;
	int rc;

	if (n == 0)
		return 0;
	rc = mb_buf_reserve(b, n, &dst);
	if (rc)
		return rc;
	memcpy(dst, p, n);
	b->len += n;
	return 0;
}

void mb_buf_consume(struct mb_buf *b, size_t n)
{
	if (n >= b->len) {
		b->start = 0;
		b->len = 0;
		return;
	}
	b->start += n;
	b->len -= n;
}

size_t mb_buf_capacity(const struct mb_buf *b) { return b->cap; }

void mb_buf_shrink(struct mb_buf *b, size_t cap)
{
	if (b->cap <= cap || b->len > cap)
		return;
	if (b->start) {
		memmove(b->mem, b->mem + b->start, b->len);
		b->start = 0;
	}
	if (cap == 0) {
		free(b->mem);
		b->mem = NULL;
		b->cap = 0;
		return;
	}
	uint8_t *m = realloc(b->mem, cap);
	if (m) {
		b->mem = m;
		b->cap = cap;
	}
}

/* ---- arena ---- */

struct mb_arena_chunk {
	struct mb_arena_chunk *next;
	size_t size;
	size_t used;
	/* data follows, 8-byte aligned */
	max_align_t data[];
};

struct mb_arena {
	struct mb_arena_chunk *head;
	size_t capacity; /* bytes of all chunks together at most */
	size_t total;	 /* bytes allocated in chunks */
	size_t used;
	unsigned nchunks;
};

int mb_arena_create(size_t capacity, struct mb_arena **out)
{
	struct mb_arena *a = calloc(1, sizeof(*a));

	if (!a)
		return MB_ENOMEM;
	a->capacity = capacity;
	*out = a;
	return 0;
}

static void arena_free_chunks(struct mb_arena_chunk *c)
{
	while (c) {
		struct mb_arena_chunk *n = c->next;
		free(c);
		c = n;
	}
}

void mb_arena_destroy(struct mb_arena *a)
{
	if (!a)
		return;
	arena_free_chunks(a->head);
	free(a);
}

void mb_arena_reset(struct mb_arena *a)
{
	/* keep the first (most recent) chunk only, emptied */
	if (a->head) {
		arena_free_chunks(a->head->next);
		a->head->next = NULL;
		a->head->used = 0;
		a->total = a->head->size;
		a->nchunks = 1;
	}
	a->used = 0;
}

void *mb_arena_alloc(struct mb_arena *a, size_t n)
{
	size_t need = (n + 7) & ~(size_t)7;

	if (need == 0)
		need = 8;
	if (need > a->capacity || a->used + need > a->capacity)
		return NULL;
	if (!a->head || a->head->used + need > a->head->size) {
		/* small first (most decoded requests are small), doubling after */
		size_t sz = (size_t)4096 << (a->nchunks < 10 ? a->nchunks : 10);
		while (sz < need)
			sz *= 2;
		if (a->total + sz > a->capacity)
			sz = need > a->capacity - a->total ? need : a->capacity - a->total;
		if (a->total + sz > a->capacity)
			return NULL;
		struct mb_arena_chunk *c = malloc(sizeof(*c) + sz);
		if (!c)
			return NULL;
		c->next = a->head;
		c->size = sz;
		c->used = 0;
		a->head = c;
		a->total += sz;
		a->nchunks++;
	}
	void *p = (uint8_t *)a->head->data + a->head->used;
	a->head->used += need;
	a->used += need;
	memset(p, 0, n);
	return p;
}

size_t mb_arena_used(const struct mb_arena *a) { return a->used; }
