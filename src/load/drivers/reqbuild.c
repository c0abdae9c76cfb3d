/* drivers/reqbuild.c: the mbstore driver's request builder (see
 * reqbuild.h).  Invariant: no entry handed out is ever handed out again
 * before a reset; what does not fit goes to the spare area and marks the
 * batch failed. */
#include "load/drivers/reqbuild.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

void mb__rb_reset(struct mb__rb *rb)
{
	rb->nops = rb->nprops = rb->nstrs = rb->ntags = rb->nmids = rb->nchanges = 0;
	rb->npool = 0;
	rb->err = 0;
}

int mb__rb_error(const struct mb__rb *rb) { return rb->err; }

struct mb_op *mb__rb_op(struct mb__rb *rb, uint8_t code)
{
	struct mb_op *op;
	if (rb->nops < MB_RB_OPS) {
		op = &rb->ops[rb->nops++];
	} else {
		rb->err = MB_ETOOBIG;
		op = &rb->spare_op;
	}
	memset(op, 0, sizeof(*op));
	op->code = code;
	return op;
}

/* n entries of an array of cap at *used, or of spare; NULL when n can never fit. */
static void *take(struct mb__rb *rb, void *array, int *used, int cap, int n, size_t size,
		  void *spare)
{
	if (n < 0 || n > cap) {
		rb->err = MB_ETOOBIG;
		return NULL;
	}
	if (n > cap - *used) {
		rb->err = MB_ETOOBIG;
		return spare;
	}
	void *p = (char *)array + (size_t)*used * size;
	*used += n;
	return p;
}

struct mb_prop *mb__rb_props(struct mb__rb *rb, int n)
{
	return take(rb, rb->props, &rb->nprops, MB_RB_PROPS, n, sizeof(rb->props[0]),
		    rb->spare.props);
}

uint32_t *mb__rb_tags(struct mb__rb *rb, int n)
{
	return take(rb, rb->tags, &rb->ntags, MB_RB_PROPS, n, sizeof(rb->tags[0]), rb->spare.tags);
}

uint64_t *mb__rb_mids(struct mb__rb *rb, int n)
{
	return take(rb, rb->mids, &rb->nmids, MB_PROTO_MAX_IDS, n, sizeof(rb->mids[0]),
		    rb->spare.mids);
}

struct mb_bytes *mb__rb_strs(struct mb__rb *rb, int n)
{
	return take(rb, rb->strs, &rb->nstrs, MB_RB_STRS, n, sizeof(rb->strs[0]), rb->spare.strs);
}

struct mb_sync_change *mb__rb_changes(struct mb__rb *rb, int n)
{
	return take(rb, rb->changes, &rb->nchanges, MB_RB_CHANGES, n, sizeof(rb->changes[0]),
		    rb->spare.changes);
}

uint8_t *mb__rb_bytes(struct mb__rb *rb, size_t n)
{
	if (n > MB_RB_POOL || n > sizeof(rb->spare)) {
		rb->err = MB_ETOOBIG;
		return NULL;
	}
	if (n > MB_RB_POOL - rb->npool) {
		rb->err = MB_ETOOBIG;
		return (uint8_t *)&rb->spare;
	}
	uint8_t *p = (uint8_t *)rb->pool + rb->npool;
	rb->npool += n;
	return p;
}

struct mb_bytes mb__rb_printf(struct mb__rb *rb, const char *fmt, ...)
{
	size_t room = MB_RB_POOL - rb->npool;
	struct mb_bytes b = {(const uint8_t *)"", 0};
	va_list ap;
	va_start(ap, fmt);
	int n = room ? vsnprintf(rb->pool + rb->npool, room, fmt, ap) : -1;
	va_end(ap);
	if (n < 0 || (size_t)n >= room) {
		rb->err = MB_ETOOBIG;
		return b;
	}
	b.p = (const uint8_t *)rb->pool + rb->npool;
	b.len = (uint32_t)n;
	rb->npool += (size_t)n + 1;
	return b;
}
