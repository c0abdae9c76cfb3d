/* schema_int.h: internal to the schema files (schema.c, schema_msg.c,
 * schema_scan.c): the handle, record layouts, key builders and the record
 * functions they share.  Not for other files of the store.
 *
 * Record layouts (little-endian values, big-endian keys):
 *   mailbox: u64 next_mid | u64 next_cn | u32 next_folder | u32 nfolders
 *   folder:  u32 parent | u32 count | u32 unread | u32 subfolders | u64 cn | name
 *   message: u32 folder | u32 flags | i64 time | u64 cn | u32 size |
 *            u32 body_len | i64 start | i64 end | u32 busy | u8 appt |
 *            u8 nattach | u8 row flags | 1 pad |
 *            [u32 content mbx | u64 content mid, when ROW_SHARED] |
 *            props (mb_props_encode)
 *   instance: u32 rows sharing the content (absent: 1)
 * Content: a message's body (bodies) and attachment bytes (attach_data)
 * are keyed by its own (mbx, mid), or, for a row with ROW_SHARED, by the
 * content key in the row: (mbx | CONTENT_BIT, mid) of the delivery that
 * stored them once for every recipient of its database (single-instance
 * storage); instances counts the rows that share it.
 * Keys:  mailboxes (mbx) | folders (mbx, folder) | messages, bodies (mbx, mid)
 *        attachments (mbx, mid, u16 num) | attach_data (content, u16 num)
 *        instances (content)
 *        by_time (mbx, folder, ~biased time, mid) | by_cn (mbx, folder, cn)
 *        calendar (mbx, biased start, mid)
 * Layering: schema.c (open, mailbox and folder records) <- schema_msg.c
 * (messages, their indexes and attachments) <- schema_scan.c (folder scans,
 * changes since a change number, calendar ranges); no file calls one above.
 */
#ifndef MB_STORE_SCHEMA_INT_H
#define MB_STORE_SCHEMA_INT_H

#include "store/schema.h"

#define MSG_HDR 56
#define ROW_SHARED 0x01u	/* message row flag (byte 54): content by reference */
#define CONTENT_REF 12		/* after a shared row's header: u32 mbx, u64 mid */
#define CONTENT_BIT 0x80000000u /* content keys' mailbox bit: no row has it */
#define FOLDER_HDR 24
#define MBX_LEN 24

struct mb_schema {
	struct mb_db *db;
	struct mb_tree *mailboxes, *folders, *messages, *bodies, *by_time, *by_cn, *calendar;
	struct mb_tree *attach, *attach_data, *instances;
	struct mb_val val; /* scratch for internal reads */
	struct mb_val val2;
	struct mb_val val3; /* a row read to find its content */
};
static inline void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}
static inline uint64_t bias(int64_t t) { return (uint64_t)t ^ (1ULL << 63); }
static inline int64_t unbias(uint64_t v) { return (int64_t)(v ^ (1ULL << 63)); }

/* ---- keys ---- */

static inline size_t k_mbx(uint8_t *k, uint32_t mailbox)
{
	mb_key_u32(k, mailbox);
	return 4;
}
static inline size_t k_folder(uint8_t *k, uint32_t mailbox, uint32_t folder)
{
	mb_key_u32(mb_key_u32(k, mailbox), folder);
	return 8;
}
static inline size_t k_msg(uint8_t *k, uint32_t mailbox, uint64_t mid)
{
	mb_key_u64(mb_key_u32(k, mailbox), mid);
	return 12;
}
static inline size_t k_att(uint8_t *k, uint32_t mailbox, uint64_t mid, uint16_t num)
{
	uint8_t *p = mb_key_u64(mb_key_u32(k, mailbox), mid);
	p[0] = (uint8_t)(num >> 8);
	p[1] = (uint8_t)num;
	return 14;
}
static inline size_t k_time(uint8_t *k, uint32_t mailbox, uint32_t folder, int64_t time,
			    uint64_t mid)
{
	uint8_t *p = mb_key_u32(mb_key_u32(k, mailbox), folder);
	mb_key_u64(mb_key_u64(p, ~bias(time)), mid);
	return 24;
}
static inline size_t k_cn(uint8_t *k, uint32_t mailbox, uint32_t folder, uint64_t cn)
{
	mb_key_u64(mb_key_u32(mb_key_u32(k, mailbox), folder), cn);
	return 16;
}
static inline size_t k_cal(uint8_t *k, uint32_t mailbox, int64_t start, uint64_t mid)
{
	mb_key_u64(mb_key_u64(mb_key_u32(k, mailbox), bias(start)), mid);
	return 20;
}

/* schema.c: the mailbox record and folder records */
int mb__schema_mbx_get(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *r);
int mb__schema_mbx_put(struct mb_schema *s, uint32_t mailbox, const struct mb_mailbox_rec *r);
int mb__schema_folder_put(struct mb_schema *s, uint32_t mailbox, const struct mb_folder_rec *f);
int mb__schema_mbx_folder_get(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			      struct mb_mailbox_rec *m, struct mb_folder_rec *f);

#endif
