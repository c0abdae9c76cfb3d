/* opbatch.h: request batches that the store's test clients
 * (tests/integration/mb-client.c, tests/unit/test_delivery.c) send again
 * and again, built in one place.
 * Invariants: each helper only sets the fields of the ops it fills (the
 * caller zeroes the array first) and returns how many ops it filled; the
 * arrays passed in (props, tags) must outlive the call that sends them. */
#ifndef MB_TESTS_OPBATCH_H
#define MB_TESTS_OPBATCH_H

#include <string.h>

#include "proto/proto.h"

/* One operation of this code, every other field zero. */
static inline struct mb_op opbatch_op(uint8_t code)
{
	struct mb_op o;
	memset(&o, 0, sizeof(o));
	o.code = code;
	return o;
}

/* GetPropertiesSpecific tags[0..n) of handle h. */
static inline struct mb_op opbatch_get_props(uint32_t h, uint32_t *tags, uint16_t n)
{
	struct mb_op o = opbatch_op(MB_OP_GET_PROPS);
	o.u.get_props.handle = h;
	o.u.get_props.n = n;
	o.u.get_props.tags = tags;
	return o;
}

static inline struct mb_op opbatch_release(uint32_t h)
{
	struct mb_op o = opbatch_op(MB_OP_RELEASE);
	o.u.release.handle = h;
	return o;
}

/* OpenStream of property tag of the open message or attachment obj as h. */
static inline struct mb_op opbatch_open_stream(uint32_t obj, uint32_t tag, uint32_t h)
{
	struct mb_op o = opbatch_op(MB_OP_OPEN_STREAM);
	o.u.open_stream.obj = obj;
	o.u.open_stream.tag = tag;
	o.u.open_stream.handle = h;
	return o;
}

static inline struct mb_op opbatch_read_stream(uint32_t h, uint32_t max)
{
	struct mb_op o = opbatch_op(MB_OP_READ_STREAM);
	o.u.read_stream.handle = h;
	o.u.read_stream.max = max;
	return o;
}

/* props[0..2]: subject, body and the recipients names[0..n). */
static inline void opbatch_mail_props(struct mb_prop props[3], const char *subject,
				      const char *body, struct mb_bytes *names, uint16_t n)
{
	props[0] = mb_prop_str(MB_PR_SUBJECT, subject);
	props[1] = mb_prop_str(MB_PR_BODY, body);
	memset(&props[2], 0, sizeof(props[2]));
	props[2].tag = MB_PR_RECIPIENTS;
	props[2].v.mv.n = n;
	props[2].v.mv.v = names;
}

/* CreateMessage in folder fid as handle, SetProps props[0..n), then
 * last (MB_OP_SUBMIT or MB_OP_SAVE_CHANGES) on the handle: 3 ops. */
static inline uint16_t opbatch_compose(struct mb_op *o, uint64_t fid, uint32_t handle,
				       struct mb_prop *props, uint16_t n, uint8_t last)
{
	o[0].code = MB_OP_CREATE_MESSAGE;
	o[0].u.create_message.fid = fid;
	o[0].u.create_message.handle = handle;
	o[1].code = MB_OP_SET_PROPS;
	o[1].u.set_props.handle = handle;
	o[1].u.set_props.n = n;
	o[1].u.set_props.props = props;
	o[2].code = last;
	o[2].u.save.handle = handle;
	return 3;
}

/* CreateAttachment of the draft msg as handle, SetProps props[0..n),
 * SaveChangesAttachment: 3 ops. */
static inline uint16_t opbatch_attach(struct mb_op *o, uint32_t msg, uint32_t handle,
				      struct mb_prop *props, uint16_t n)
{
	o[0] = opbatch_op(MB_OP_CREATE_ATTACH);
	o[0].u.attach.msg = msg;
	o[0].u.attach.handle = handle;
	o[1] = opbatch_op(MB_OP_SET_PROPS);
	o[1].u.set_props.handle = handle;
	o[1].u.set_props.n = n;
	o[1].u.set_props.props = props;
	o[2] = opbatch_op(MB_OP_SAVE_ATTACH);
	o[2].u.save.handle = handle;
	return 3;
}

/* opbatch_compose with natt attachments saved before last, each
 * (opbatch_attach as att_handle) with the nap properties at att + i * nap:
 * 3 + 3 * natt ops. */
static inline uint16_t opbatch_compose_attached(struct mb_op *o, uint64_t fid, uint32_t handle,
						struct mb_prop *props, uint16_t n, uint8_t last,
						uint32_t att_handle, struct mb_prop *att,
						uint16_t nap, uint16_t natt)
{
	opbatch_compose(o, fid, handle, props, n, last);
	o[2 + 3 * natt] = o[2];
	for (uint16_t i = 0; i < natt; i++)
		opbatch_attach(&o[2 + 3 * i], handle, att_handle, att + (size_t)i * nap, nap);
	return (uint16_t)(3 + 3 * natt);
}

/* OpenFolder, GetContentsTable as handle, SetColumns cols[0..ncols),
 * QueryRows (flags, max_rows): 4 ops. */
static inline uint16_t opbatch_browse(struct mb_op *o, uint64_t fid, uint32_t handle,
				      uint32_t *cols, uint16_t ncols, uint32_t flags,
				      uint32_t max_rows)
{
	o[0].code = MB_OP_OPEN_FOLDER;
	o[0].u.open_folder.fid = fid;
	o[1].code = MB_OP_GET_CONTENTS_TABLE;
	o[1].u.get_table.fid = fid;
	o[1].u.get_table.handle = handle;
	o[2].code = MB_OP_SET_COLUMNS;
	o[2].u.set_columns.handle = handle;
	o[2].u.set_columns.n = ncols;
	o[2].u.set_columns.tags = cols;
	o[3].code = MB_OP_QUERY_ROWS;
	o[3].u.query_rows.handle = handle;
	o[3].u.query_rows.flags = flags;
	o[3].u.query_rows.max_rows = max_rows;
	return 4;
}

/* OpenMessage mid of folder fid as handle, GetProps tags[0..n): 2 ops. */
static inline uint16_t opbatch_read(struct mb_op *o, uint64_t fid, uint64_t mid, uint32_t handle,
				    uint32_t *tags, uint16_t n)
{
	o[0].code = MB_OP_OPEN_MESSAGE;
	o[0].u.open_message.fid = fid;
	o[0].u.open_message.mid = mid;
	o[0].u.open_message.handle = handle;
	o[1] = opbatch_get_props(handle, tags, n);
	return 2;
}

#endif
