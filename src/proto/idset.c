/* idset.c: ID sets, the values of the ICS state properties a cached-mode
 * client uploads into a download context (MS-OXCFXICS 2.2.1.1): which
 * message ids it holds (IdsetGiven) and which change numbers it has seen
 * (CnsetSeen, CnsetSeenFAI, CnsetRead), and that an upload context hands
 * back with the change numbers of the imported changes added.  The wire
 * form is in proto.h.
 *
 * Invariants: mb_idset_scan and mb_idset_decode accept exactly what
 * mb_idset_encode writes (ascending, disjoint, non-adjacent ranges with
 * lo >= 1) and never read past len; mb_idset_add keeps ranges in that
 * form; nothing here allocates.
 */
#include "config.h"

#include "proto/proto.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint32_t mb_idset_from_ids(uint64_t *ids, uint32_t n, struct mb_idrange *out)
{
	qsort(ids, n, sizeof(*ids), cmp_u64);
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (ids[i] == 0)
			continue;
		if (k && ids[i] <= out[k - 1].hi + 1) {
			if (ids[i] > out[k - 1].hi)
				out[k - 1].hi = ids[i];
			continue;
		}
		out[k].lo = out[k].hi = ids[i];
		k++;
	}
	return k;
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

size_t mb_idset_size(const struct mb_idrange *r, uint32_t n)
{
	size_t len = varint_size(n);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		len += varint_size(r[i].lo - prev) + varint_size(r[i].hi - r[i].lo);
		prev = r[i].hi;
	}
	return len;
}

size_t mb_idset_encode(const struct mb_idrange *r, uint32_t n, uint8_t *out)
{
	size_t len = varint_put(out, n);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		len += varint_put(out + len, r[i].lo - prev);
		len += varint_put(out + len, r[i].hi - r[i].lo);
		prev = r[i].hi;
	}
	return len;
}

static int varint_get(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*pos >= len)
			return MB_EPROTO;
		uint8_t b = p[(*pos)++];
		if (shift == 63 && b > 1)
			return MB_EPROTO; /* over 64 bits */
		x |= (uint64_t)(b & 0x7F) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return MB_EPROTO;
}

/* Walk an encoded set, checking it; the ranges into out when out (room
 * for cap ranges). */
static int idset_walk(const uint8_t *p, size_t len, struct mb_idrange *out, uint32_t cap,
		      uint32_t *nranges, uint64_t *nids, uint64_t *max)
{
	size_t pos = 0;
	uint64_t n, prev = 0, ids = 0;
	if (varint_get(p, len, &pos, &n) || n > len) /* a range takes 2 bytes at least */
		return MB_EPROTO;
	if (out && n > cap)
		return MB_ETOOBIG;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t gap, span;
		if (varint_get(p, len, &pos, &gap) || varint_get(p, len, &pos, &span))
			return MB_EPROTO;
		/* the first range starts at 1 or above, the others past prev + 1 */
		if (gap == 0 || (i > 0 && gap < 2) || gap > UINT64_MAX - prev)
			return MB_EPROTO;
		uint64_t lo = prev + gap;
		if (span > UINT64_MAX - lo)
			return MB_EPROTO;
		prev = lo + span;
		ids += span + 1;
		if (out)
			out[i] = (struct mb_idrange){lo, prev};
	}
	if (pos != len)
		return MB_EPROTO;
	*nranges = (uint32_t)n;
	if (nids)
		*nids = ids;
	if (max)
		*max = prev;
	return 0;
}

int mb_idset_scan(const uint8_t *p, size_t len, uint32_t *nranges, uint64_t *nids, uint64_t *max)
{
	return idset_walk(p, len, NULL, 0, nranges, nids, max);
}

int mb_idset_decode(const uint8_t *p, size_t len, struct mb_idrange *out, uint32_t cap, uint32_t *n)
{
	return idset_walk(p, len, out, cap, n, NULL, NULL);
}

uint32_t mb_idset_add(struct mb_idrange *r, uint32_t n, uint64_t lo, uint64_t hi)
{
	if (lo == 0)
		lo = 1;
	if (hi < lo)
		return n;
	/* skip the ranges wholly before lo and not adjacent to it */
	uint32_t i = 0;
	while (i < n && r[i].hi < lo - 1)
		i++;
	/* merge those that overlap or touch [lo, hi] (hi grows as they do) */
	uint32_t j = i;
	while (j < n && (hi == UINT64_MAX || r[j].lo <= hi + 1)) {
		if (r[j].lo < lo)
			lo = r[j].lo;
		if (r[j].hi > hi)
			hi = r[j].hi;
		j++;
	}
	if (j == i) { /* nothing touched: insert at i */
		memmove(&r[i + 1], &r[i], (size_t)(n - i) * sizeof(*r));
		r[i] = (struct mb_idrange){lo, hi};
		return n + 1;
	}
	r[i] = (struct mb_idrange){lo, hi};
	memmove(&r[i + 1], &r[j], (size_t)(n - j) * sizeof(*r));
	return n - (j - i) + 1;
}
