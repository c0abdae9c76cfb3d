/* proto.h: the mailbench wire protocol (MAPI-style RPC over TCP).
 *
 * Byte-level layout: docs/PROTOCOL.md.  Summary: little-endian,
 * length-prefixed frames with a 16-byte header; one REQUEST frame carries a
 * batch of operations (ROPs), its REPLY carries one result per operation, in
 * order; NOTIFY frames are pushed by the store; ERROR frames report a frame
 * the store could not decode.  Payloads above a negotiated threshold may be
 * compressed with MS-OXCRPC's LZ77+DIRECT2 (proto/lz77.h; header flag,
 * uncompressed length in the header).
 *
 * The codec works on buffers, for blocking and non-blocking (libuv) users
 * alike: mb_frame_check() says whether a whole frame is at the front of a
 * byte buffer; mb_frame_payload() returns its (decompressed) payload;
 * mb_request_decode()/mb_reply_decode()/mb_notify_decode() turn a payload
 * into structs whose variable parts live in a caller-owned arena and point
 * into the payload (zero-copy strings): the payload and the arena must
 * outlive the decoded structs.  Encoders append whole frames to an mb_buf.
 *
 * Invariants: every length and count is checked against the bytes that
 * remain before it is used; nothing is read past the frame; a frame larger
 * than MB_PROTO_MAX_FRAME (or the caller's smaller limit) is refused before
 * any allocation; decoding never aborts, it returns MB_EPROTO or MB_ETOOBIG.
 */
#ifndef MB_PROTO_PROTO_H
#define MB_PROTO_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- frame header ---------------------------------------------------- */

/* Header: u32 len | u8 magic | u8 version | u8 kind | u8 flags | u32 seq |
 * u32 raw_len (16 bytes, little-endian). */
/* Versions: 4 download content streams (SyncDownload's content); 3 upload
 * contexts; 2 LZ77+DIRECT2 payloads; 1 LZ4. */
#define MB_PROTO_MAGIC 0x4Du	      /* 'M' */
#define MB_PROTO_VERSION 4	      /* see above */
#define MB_FRAME_HDR 16		      /* header bytes */
#define MB_PROTO_MAX_FRAME (4u << 20) /* max payload, wire and decompressed */
#define MB_PROTO_MAX_OPS 256	      /* operations per request frame */
#define MB_PROTO_MAX_PROPS 64	      /* properties per op */
#define MB_PROTO_MAX_IDS 4096	      /* message ids per op */
#define MB_PROTO_MAX_ROWS 1024	      /* rows per QueryRows reply */
#define MB_PROTO_MAX_SORT 4	      /* sort keys per SortTable */
#define MB_PROTO_MAX_NAME 256	      /* user names, folder names */
#define MB_PROTO_DEFAULT_COMPRESS_MIN 256

enum mb_frame_kind {
	MB_FRAME_REQUEST = 1, /* client -> store: a batch of operations */
	MB_FRAME_REPLY = 2,   /* store -> client: one result per operation */
	MB_FRAME_NOTIFY = 3,  /* store -> client, unsolicited: events */
	MB_FRAME_ERROR = 4,   /* store -> client: the frame could not be decoded */
};

#define MB_FRAME_F_LZ77 0x01u /* payload is LZ77+DIRECT2 (proto/lz77.h) */

struct mb_frame_hdr {
	uint32_t len; /* payload bytes on the wire after the header */
	uint8_t version;
	uint8_t kind;	  /* enum mb_frame_kind */
	uint8_t flags;	  /* MB_FRAME_F_* */
	uint32_t seq;	  /* request sequence number, echoed by its reply */
	uint32_t raw_len; /* payload bytes after decompression (== len if not) */
};

/* ---- operations (ROPs) ------------------------------------------------ */

/* A SortTable key: a column and its order. */
enum { MB_SORT_ASC = 0, MB_SORT_DESC = 1 };
struct mb_sort_key {
	uint32_t tag;
	uint8_t order; /* MB_SORT_ASC or MB_SORT_DESC */
};

/* X(ID, code, name) -- codes are stable: they travel on the wire. */
#define MB_OP_TABLE(X)                                                                             \
	X(LOGON_CHALLENGE, 0x01, "LogonChallenge")                                                 \
	X(LOGON, 0x02, "Logon")                                                                    \
	X(LOGOFF, 0x03, "Logoff")                                                                  \
	X(RELEASE, 0x04, "Release")                                                                \
	X(OPEN_FOLDER, 0x10, "OpenFolder")                                                         \
	X(GET_HIERARCHY_TABLE, 0x11, "GetHierarchyTable")                                          \
	X(GET_CONTENTS_TABLE, 0x12, "GetContentsTable")                                            \
	X(SET_COLUMNS, 0x13, "SetColumns")                                                         \
	X(QUERY_ROWS, 0x14, "QueryRows")                                                           \
	X(OPEN_MESSAGE, 0x15, "OpenMessage")                                                       \
	X(GET_PROPS, 0x16, "GetPropertiesSpecific")                                                \
	X(CREATE_MESSAGE, 0x17, "CreateMessage")                                                   \
	X(SET_PROPS, 0x18, "SetProperties")                                                        \
	X(SAVE_CHANGES, 0x19, "SaveChangesMessage")                                                \
	X(SUBMIT, 0x1A, "SubmitMessage")                                                           \
	X(DELETE_MESSAGES, 0x1B, "DeleteMessages")                                                 \
	X(MOVE_COPY, 0x1C, "MoveCopyMessages")                                                     \
	X(CALENDAR_RANGE, 0x20, "CalendarRange")                                                   \
	X(FREEBUSY, 0x21, "FreeBusy")                                                              \
	X(CREATE_CONTACT, 0x22, "CreateContact")                                                   \
	X(LIST_CONTACTS, 0x23, "ListContacts")                                                     \
	X(CREATE_ATTACH, 0x24, "CreateAttachment")                                                 \
	X(SAVE_ATTACH, 0x25, "SaveChangesAttachment")                                              \
	X(GET_ATTACH_TABLE, 0x26, "GetAttachmentTable")                                            \
	X(OPEN_ATTACH, 0x27, "OpenAttachment")                                                     \
	X(OPEN_STREAM, 0x28, "OpenStream")                                                         \
	X(READ_STREAM, 0x29, "ReadStream")                                                         \
	X(REGISTER_NOTIFY, 0x2A, "RegisterNotification")                                           \
	X(SORT_TABLE, 0x2B, "SortTable")                                                           \
	X(RESOLVE_NAMES, 0x40, "ResolveNames")                                                     \
	X(GET_AB_TABLE, 0x41, "GetAddressBookTable")                                               \
	X(SYNC_DOWNLOAD, 0x30, "SyncDownload")                                                     \
	X(SYNC_UPLOAD, 0x31, "SyncUpload")                                                         \
	X(SYNC_CONFIGURE, 0x32, "SyncConfigure")                                                   \
	X(SYNC_STATE_BEGIN, 0x33, "SyncStateBegin")                                                \
	X(SYNC_STATE_CONTINUE, 0x34, "SyncStateContinue")                                          \
	X(SYNC_STATE_END, 0x35, "SyncStateEnd")                                                    \
	X(SYNC_OPEN_COLLECTOR, 0x36, "SyncOpenCollector")                                          \
	X(SYNC_GET_STATE, 0x37, "SyncGetTransferState")                                            \
	X(FT_GET_BUFFER, 0x38, "FastTransferGetBuffer")

enum mb_op_code {
#define MB_X_OPC(id, code, name) MB_OP_##id = code,
	MB_OP_TABLE(MB_X_OPC)
#undef MB_X_OPC
};

/* Dense index of an op code (0 .. MB_OP_COUNT-1) for per-op counters. */
enum mb_op_index {
#define MB_X_OPI(id, code, name) MB_OPI_##id,
	MB_OP_TABLE(MB_X_OPI)
#undef MB_X_OPI
	    MB_OP_COUNT
};

/* Name of an op code ("QueryRows"), or NULL when unknown. */
const char *mb_op_name(int code);
/* Dense index of an op code, or -1 when unknown. */
int mb_op_index(int code);
/* Op code of a dense index, or -1. */
int mb_op_code_at(int index);

/* ---- folders ----------------------------------------------------------- */

/* A folder id on the wire is (mailbox id << 32) | local folder number, so
 * every operation names the mailbox it touches and the store can refuse
 * other mailboxes (MB_EACCES).  Local numbers of the well-known folders are
 * the same in every mailbox; user folders get MB_FID_FIRST_USER and up.
 * Message ids are per mailbox (unique within it, never reused). */
enum mb_fid_local {
	MB_FID_ROOT = 1, /* top of the information store (IPM subtree) */
	MB_FID_INBOX = 2,
	MB_FID_DELETED = 3, /* Deleted Items */
	MB_FID_SENT = 4,    /* Sent Items */
	MB_FID_CALENDAR = 5,
	MB_FID_CONTACTS = 6,
	MB_FID_FIRST_USER = 16,
};
#define MB_FID(mailbox, local) (((uint64_t)(mailbox) << 32) | (uint32_t)(local))
#define MB_FID_MAILBOX(fid) ((uint32_t)((fid) >> 32))
#define MB_FID_LOCAL(fid) ((uint32_t)((fid)&0xFFFFFFFFu))

/* ---- properties ---------------------------------------------------------- */

/* Property tag = (id << 16) | type, as in MAPI. */
enum mb_ptype {
	MB_PT_I32 = 0x0003,
	MB_PT_ERROR = 0x000A, /* value: i32 MB_E* code (property missing) */
	MB_PT_BOOL = 0x000B,
	MB_PT_I64 = 0x0014,
	MB_PT_STRING = 0x001F,	  /* UTF-8 here, UTF-16LE on the wire: u32 length */
	MB_PT_TIME = 0x0040,	  /* i64 milliseconds since the Unix epoch */
	MB_PT_BINARY = 0x0102,	  /* u32 length */
	MB_PT_MV_STRING = 0x101F, /* u16 count, then count x (u32 len, UTF-16LE) */
};
#define MB_PTAG(id, type) (((uint32_t)(id) << 16) | (uint32_t)(type))
#define MB_PTAG_TYPE(tag) ((uint16_t)((tag)&0xFFFFu))
#define MB_PTAG_ID(tag) ((uint16_t)((tag) >> 16))

#define MB_PR_MESSAGE_CLASS MB_PTAG(0x001A, MB_PT_STRING) /* IPM.Note ... */
#define MB_PR_SUBJECT MB_PTAG(0x0037, MB_PT_STRING)
#define MB_PR_START_DATE MB_PTAG(0x0060, MB_PT_TIME) /* appointments */
#define MB_PR_END_DATE MB_PTAG(0x0061, MB_PT_TIME)
#define MB_PR_SENDER_NAME MB_PTAG(0x0C1A, MB_PT_STRING)
/* PidTagDeleteAfterSubmit (MS-OXOMSG 2.2.3.8, 3.3.5.1.3): the submitted
 * message is deleted once sent instead of kept in Sent Items */
#define MB_PR_DELETE_AFTER_SUBMIT MB_PTAG(0x0E01, MB_PT_BOOL)
#define MB_PR_DISPLAY_TO MB_PTAG(0x0E04, MB_PT_STRING)
#define MB_PR_DELIVERY_TIME MB_PTAG(0x0E06, MB_PT_TIME)
#define MB_PR_MESSAGE_FLAGS MB_PTAG(0x0E07, MB_PT_I32) /* bit 0: read */
#define MB_PR_MESSAGE_SIZE MB_PTAG(0x0E08, MB_PT_I32)
#define MB_PR_HASATTACH MB_PTAG(0x0E1B, MB_PT_BOOL)
#define MB_PR_ATTACH_SIZE MB_PTAG(0x0E20, MB_PT_I32)
#define MB_PR_ATTACH_NUM MB_PTAG(0x0E21, MB_PT_I32)
#define MB_PR_OBJECT_TYPE MB_PTAG(0x0FFE, MB_PT_I32)	    /* 6 user, 8 list */
#define MB_PR_ATTACH_DATA_BIN MB_PTAG(0x3701, MB_PT_BINARY) /* stream */
#define MB_PR_ATTACH_FILENAME MB_PTAG(0x3704, MB_PT_STRING)
/* The body's bytes in its own format (text, RTF or HTML): binary, as
 * Outlook's PR_RTF_COMPRESSED and PR_HTML are, so not UTF-16; a long value. */
#define MB_PR_BODY MB_PTAG(0x1000, MB_PT_BINARY)
/* What the client leaves on the original once a reply or forward is sent
 * (PidTagLastVerbExecuted 0x1081, PidTagLastVerbExecutionTime 0x1082,
 * PidTagIconIndex 0x1080, [MS-OXPROPS]; the verbs are the Exchange SDK's
 * EXCHIVERB_REPLYTOSENDER and EXCHIVERB_FORWARD, the icons Outlook's
 * replied and forwarded mail): the reading pane's "You replied to this
 * message on ..." and the view's icon. */
#define MB_PR_ICON_INDEX MB_PTAG(0x1080, MB_PT_I32)
#define MB_PR_LAST_VERB_EXECUTED MB_PTAG(0x1081, MB_PT_I32)
#define MB_PR_LAST_VERB_EXECUTION_TIME MB_PTAG(0x1082, MB_PT_TIME)
enum {
	MB_VERB_REPLY_TO_SENDER = 102, /* EXCHIVERB_REPLYTOSENDER */
	MB_VERB_FORWARD = 104,	       /* EXCHIVERB_FORWARD */
	MB_ICON_REPLIED = 0x105,
	MB_ICON_FORWARDED = 0x106,
};
/* The address properties MAPI's incoming transport sets on a received
 * message ("Setting Properties on Incoming Messages", MAPI reference):
 * the sender and the one it sent for, the recipient and the one it
 * receives for, where replies go, and whether the recipient was named
 * (ids from [MS-OXPROPS]; src/store/addrprops.c builds them). */
#define MB_PR_CLIENT_SUBMIT_TIME MB_PTAG(0x0039, MB_PT_TIME)
#define MB_PR_SENT_REPRESENTING_SEARCH_KEY MB_PTAG(0x003B, MB_PT_BINARY)
#define MB_PR_RECEIVED_BY_ENTRYID MB_PTAG(0x003F, MB_PT_BINARY)
#define MB_PR_RECEIVED_BY_NAME MB_PTAG(0x0040, MB_PT_STRING)
#define MB_PR_SENT_REPRESENTING_ENTRYID MB_PTAG(0x0041, MB_PT_BINARY)
#define MB_PR_SENT_REPRESENTING_NAME MB_PTAG(0x0042, MB_PT_STRING)
#define MB_PR_RCVD_REPRESENTING_ENTRYID MB_PTAG(0x0043, MB_PT_BINARY)
#define MB_PR_RCVD_REPRESENTING_NAME MB_PTAG(0x0044, MB_PT_STRING)
#define MB_PR_REPLY_RECIPIENT_ENTRIES MB_PTAG(0x004F, MB_PT_BINARY)
#define MB_PR_REPLY_RECIPIENT_NAMES MB_PTAG(0x0050, MB_PT_STRING)
#define MB_PR_RECEIVED_BY_SEARCH_KEY MB_PTAG(0x0051, MB_PT_BINARY)
#define MB_PR_RCVD_REPRESENTING_SEARCH_KEY MB_PTAG(0x0052, MB_PT_BINARY)
#define MB_PR_MESSAGE_TO_ME MB_PTAG(0x0057, MB_PT_BOOL)
#define MB_PR_MESSAGE_CC_ME MB_PTAG(0x0058, MB_PT_BOOL)
#define MB_PR_MESSAGE_RECIP_ME MB_PTAG(0x0059, MB_PT_BOOL)
#define MB_PR_SENDER_ENTRYID MB_PTAG(0x0C19, MB_PT_BINARY)
#define MB_PR_SENDER_SEARCH_KEY MB_PTAG(0x0C1D, MB_PT_BINARY)
#define MB_PR_DISPLAY_NAME MB_PTAG(0x3001, MB_PT_STRING)
#define MB_PR_EMAIL_ADDRESS MB_PTAG(0x3003, MB_PT_STRING)
#define MB_PR_CONTENT_COUNT MB_PTAG(0x3602, MB_PT_I32)
#define MB_PR_CONTENT_UNREAD MB_PTAG(0x3603, MB_PT_I32)
#define MB_PR_FID MB_PTAG(0x6748, MB_PT_I64)
#define MB_PR_PARENT_FID MB_PTAG(0x6749, MB_PT_I64)
#define MB_PR_MID MB_PTAG(0x674A, MB_PT_I64)
#define MB_PR_CHANGE_NUM MB_PTAG(0x67A4, MB_PT_I64)
#define MB_PR_RECIPIENTS MB_PTAG(0x6800, MB_PT_MV_STRING) /* user or list names */
#define MB_PR_BUSY_STATUS MB_PTAG(0x6801, MB_PT_I32)	  /* 0 free .. 3 away */
#define MB_PR_LOCATION MB_PTAG(0x6802, MB_PT_STRING)
#define MB_PR_ATTACH_KIND MB_PTAG(0x6803, MB_PT_I32) /* core/content.h kind */

/* ICS state properties a download context takes before it downloads
 * (MS-OXCFXICS 2.2.1.1, 3.3.4.3.1: a contents download MUST have all four);
 * each value is an ID set (mb_idset_encode below) */
#define MB_META_IDSET_GIVEN MB_PTAG(0x4017, MB_PT_BINARY)
#define MB_META_CNSET_SEEN MB_PTAG(0x6796, MB_PT_BINARY)
#define MB_META_CNSET_SEEN_FAI MB_PTAG(0x67DA, MB_PT_BINARY)
#define MB_META_CNSET_READ MB_PTAG(0x67D2, MB_PT_BINARY)
#define MB_SYNC_STATE_MAX (64u << 10) /* bytes of one ICS state property */

#define MB_OBJECT_USER 6	       /* PR_OBJECT_TYPE of a mail user (MAPI_MAILUSER) */
#define MB_OBJECT_LIST 8	       /* of a distribution list (MAPI_DISTLIST) */
#define MB_PROTO_MAX_STREAM (1u << 20) /* bytes per ReadStream */

#define MB_MSGFLAG_READ 0x1
#define MB_MSGFLAG_SUBMIT 0x4 /* submitted, not yet sent (MAPI MSGFLAG_SUBMIT) */
#define MB_MSGFLAG_UNSENT 0x8 /* not yet sent (MAPI MSGFLAG_UNSENT) */

/* A byte string (UTF-8 text or binary); not NUL-terminated. */
struct mb_bytes {
	const uint8_t *p;
	uint32_t len;
};

struct mb_prop {
	uint32_t tag;
	union {
		int64_t i;	   /* I32, BOOL, I64, TIME, ERROR */
		struct mb_bytes b; /* STRING, BINARY */
		struct {
			uint16_t n;
			struct mb_bytes *v;
		} mv; /* MV_STRING */
	} v;
};

/* ---- request operations ---------------------------------------------- */

#define MB_LOGON_F_LZ77 0x1   /* client accepts/sends LZ77+DIRECT2 payloads */
#define MB_LOGON_F_NOTIFY 0x2 /* push new-mail notifications */
#define MB_QR_F_RESTART 0x1   /* QueryRows from the first row */
#define MB_MC_F_COPY 0x1      /* MoveCopy: copy (else move) */
#define MB_SD_F_BODY 0x1      /* SyncDownload: include bodies */
/* SyncDownload on a contents download context: the bodies and attachments
 * of the items that come whole into its FastTransfer stream */
#define MB_SD_F_CONTENT 0x2
#define MB_SC_F_HIERARCHY 0x1 /* SyncConfigure: the folders under fid, not its contents */
#define MB_NONCE_LEN 32
#define MB_SALT_LEN 16
#define MB_PROOF_LEN 32 /* HMAC-SHA-256 */
#define MB_KEY_LEN 32	/* PBKDF2-HMAC-SHA-256 derived key */

enum mb_sync_kind { MB_SYNC_CREATE = 1, MB_SYNC_DELETE = 2, MB_SYNC_SET_FLAGS = 3 };

struct mb_sync_change {
	uint8_t kind;	 /* enum mb_sync_kind */
	uint64_t mid;	 /* DELETE, SET_FLAGS */
	uint32_t flags;	 /* SET_FLAGS: new PR_MESSAGE_FLAGS */
	uint16_t nprops; /* CREATE */
	struct mb_prop *props;
};

struct mb_op {
	uint8_t code; /* enum mb_op_code */
	union {
		struct {
			struct mb_bytes user;
			uint32_t flags;
		} challenge;
		/* mailbox: the mailbox to open (empty = the user's own) */
		struct {
			struct mb_bytes user;
			struct mb_bytes mailbox;
			uint8_t proof[MB_PROOF_LEN];
			uint32_t flags;
		} logon;
		struct {
			uint32_t handle;
		} release;
		struct {
			uint64_t fid;
		} open_folder;
		/* GET_HIERARCHY_TABLE (children of fid) and GET_CONTENTS_TABLE */
		struct {
			uint64_t fid;
			uint32_t handle;
		} get_table;
		struct {
			uint32_t handle;
			uint16_t n;
			uint32_t *tags;
		} set_columns;
		/* SORT_TABLE: the table's sort order, keys[0] first (RopSortTable,
		 * [MS-OXCTABL] 2.2.2.13: a tag and MB_SORT_ASC or MB_SORT_DESC) */
		struct {
			uint32_t handle;
			uint16_t n;
			struct mb_sort_key keys[MB_PROTO_MAX_SORT];
		} sort_table;
		struct {
			uint32_t handle;
			uint32_t flags;
			uint32_t max_rows;
		} query_rows;
		struct {
			uint64_t fid;
			uint64_t mid;
			uint32_t handle;
		} open_message;
		/* GET_PROPS: tags of an opened or created message */
		struct {
			uint32_t handle;
			uint16_t n;
			uint32_t *tags;
		} get_props;
		struct {
			uint64_t fid;
			uint32_t handle;
		} create_message;
		struct {
			uint32_t handle;
			uint16_t n;
			struct mb_prop *props;
		} set_props;
		/* SAVE_CHANGES and SUBMIT */
		struct {
			uint32_t handle;
		} save;
		struct {
			uint64_t fid;
			uint32_t n;
			uint64_t *mids;
		} del;
		struct {
			uint64_t src_fid;
			uint64_t dst_fid;
			uint32_t flags;
			uint32_t n;
			uint64_t *mids;
		} move_copy;
		struct {
			int64_t start;
			int64_t end;
			uint32_t max_rows;
		} calendar;
		struct {
			struct mb_bytes user;
			int64_t start;
			int64_t end;
		} freebusy;
		struct {
			uint16_t n;
			struct mb_prop *props;
		} create_contact;
		struct {
			uint32_t start;
			uint32_t max_rows;
		} list_contacts;
		/* handle 0: the changes of fid after since_cn; else those of
		 * the download context handle (SYNC_CONFIGURE) after its
		 * CnsetSeen, fid and since_cn unused */
		struct {
			uint64_t fid;
			uint64_t since_cn;
			uint32_t flags;
			uint32_t max;
			uint32_t handle;
		} sync_down;
		/* SYNC_CONFIGURE: a contents download context on fid, or with
		 * MB_SC_F_HIERARCHY one of the folders under it;
		 * SYNC_OPEN_COLLECTOR: an upload context on fid (flags 0) */
		struct {
			uint64_t fid;
			uint32_t handle;
			uint32_t flags;
		} sync_cfg;
		/* SYNC_STATE_BEGIN (tag: MB_META_*, size: the value's bytes),
		 * SYNC_STATE_CONTINUE (data), SYNC_STATE_END */
		struct {
			uint32_t handle;
			uint32_t tag;
			uint32_t size;
			struct mb_bytes data;
		} sync_state;
		/* CREATE_ATTACH, GET_ATTACH_TABLE (num unused), OPEN_ATTACH:
		 * msg is the handle of an open or new message */
		struct {
			uint32_t msg;
			uint32_t num;
			uint32_t handle;
		} attach;
		/* OPEN_STREAM: tag of an open message (PR_BODY) or attachment
		 * (PR_ATTACH_DATA_BIN) */
		struct {
			uint32_t obj;
			uint32_t tag;
			uint32_t handle;
		} open_stream;
		struct {
			uint32_t handle;
			uint32_t max;
		} read_stream;
		/* REGISTER_NOTIFY uses get_table (fid, handle); SAVE_ATTACH save */
		struct {
			uint16_t n;
			struct mb_bytes *names;
		} resolve;
		struct {
			uint32_t handle;
		} ab_table;
		/* SYNC_GET_STATE: the checkpoint state of the upload context
		 * handle, as a FastTransfer download context `out` (read with
		 * FT_GET_BUFFER, which takes read_stream) */
		struct {
			uint32_t handle;
			uint32_t out;
		} sync_xfer;
		/* handle 0: the changes of fid; else those of the upload
		 * context handle (SYNC_OPEN_COLLECTOR), fid unused */
		struct {
			uint64_t fid;
			uint32_t handle;
			uint32_t n;
			struct mb_sync_change *changes;
		} sync_up;
	} u;
};

struct mb_request {
	uint32_t seq;
	uint16_t nops;
	struct mb_op *ops;
};

/* The handle number op makes (a table, message, draft, attachment, stream,
 * subscription, address list, ICS context or FastTransfer state: the
 * store releases whatever that number named first), or -1 when the op
 * makes none. */
int64_t mb_op_opens_handle(const struct mb_op *op);

/* ---- reply operations ------------------------------------------------ */

struct mb_delivery {
	uint32_t mailbox; /* recipient mailbox id */
	uint64_t mid;	  /* the copy in the recipient's Inbox */
};

struct mb_busy_block {
	int64_t start;
	int64_t end;
	uint32_t status; /* PR_BUSY_STATUS */
};

/* One name of a ResolveNames reply. */
struct mb_resolved {
	int32_t status;	      /* 0 or MB_ENOTFOUND */
	uint8_t type;	      /* MB_OBJECT_USER or MB_OBJECT_LIST */
	struct mb_bytes name; /* the account / list name */
	struct mb_bytes display;
};

struct mb_sync_item {
	uint64_t mid;
	uint64_t cn;
	uint8_t deleted; /* 1: tombstone, no properties */
	uint16_t nprops;
	struct mb_prop *props;
};

struct mb_op_reply {
	uint8_t code;	/* the request op's code */
	int32_t status; /* 0 or MB_E*; on error the body is empty */
	union {
		struct {
			uint8_t nonce[MB_NONCE_LEN];
			uint8_t salt[MB_SALT_LEN];
			uint32_t iterations;
		} challenge;
		struct {
			uint32_t mailbox;
			uint32_t flags;
			uint32_t compress_min;
		} logon;
		struct {
			uint64_t fid;
			uint64_t parent;
			struct mb_bytes name;
			uint32_t count;
			uint32_t unread;
			uint32_t subfolders;
			uint64_t cn;
		} folder;
		/* GET_*_TABLE, GET_ATTACH_TABLE, GET_AB_TABLE: rows;
		 * CREATE_ATTACH: the new attachment's number; OPEN_STREAM: size */
		struct {
			uint32_t rows;
		} table;
		/* READ_STREAM: the bytes read (empty at the end) */
		struct {
			struct mb_bytes data;
		} stream;
		struct {
			uint16_t n;
			struct mb_resolved *v;
		} resolve;
		/* QUERY_ROWS, CALENDAR_RANGE, LIST_CONTACTS: nrows x ncols values */
		struct {
			uint16_t ncols;
			uint32_t nrows;
			uint8_t more;
			struct mb_prop *vals;
		} rows;
		/* OPEN_MESSAGE (summary), GET_PROPS */
		struct {
			uint16_t n;
			struct mb_prop *props;
		} props;
		/* SAVE_CHANGES, CREATE_CONTACT */
		struct {
			uint64_t mid;
			uint64_t cn;
		} saved;
		struct {
			uint64_t mid;
			uint32_t databases;
			uint32_t n;
			struct mb_delivery *dl;
		} submit;
		/* DELETE_MESSAGES */
		struct {
			uint32_t n;
		} count;
		/* MOVE_COPY: the ids in the destination, in request order */
		struct {
			uint32_t n;
			uint64_t *mids;
		} moved;
		struct {
			uint32_t n;
			struct mb_busy_block *blocks;
		} freebusy;
		struct {
			uint64_t watermark;
			uint8_t more;
			uint32_t content; /* bytes in the context's FastTransfer stream */
			uint32_t n;
			struct mb_sync_item *items;
		} sync_down;
		struct {
			uint64_t cn;
			uint32_t n;
			uint64_t *mids;
		} sync_up;
	} u;
};

struct mb_reply {
	uint32_t seq;
	uint16_t nops;
	struct mb_op_reply *ops;
};

/* ---- notifications ----------------------------------------------------- */

enum mb_event_type { MB_EVENT_NEW_MAIL = 1 };

struct mb_event {
	uint8_t type;
	uint64_t fid;
	uint64_t mid;
	uint64_t cn;
	uint32_t size; /* PR_MESSAGE_SIZE */
};

struct mb_notify {
	uint16_t n;
	struct mb_event *events;
};

/* ---- error frames -------------------------------------------------------- */

struct mb_frame_error {
	int32_t code; /* MB_E* */
	struct mb_bytes message;
};

/* ---- buffers and arenas ---------------------------------------------- */

/* A growable byte buffer for encoding (and for collecting received bytes). */
struct mb_buf;
int mb_buf_create(size_t initial, struct mb_buf **out);
void mb_buf_destroy(struct mb_buf *b);
uint8_t *mb_buf_data(const struct mb_buf *b);
size_t mb_buf_len(const struct mb_buf *b);
void mb_buf_reset(struct mb_buf *b);
/* Append bytes. */
int mb_buf_append(struct mb_buf *b, const void *p, size_t n);
/* Drop the first n bytes (n <= len). */
void mb_buf_consume(struct mb_buf *b, size_t n);
/* Make room for n more bytes; *p points at the free space; commit with
 * mb_buf_commit(b, used). */
int mb_buf_reserve(struct mb_buf *b, size_t n, uint8_t **p);
void mb_buf_commit(struct mb_buf *b, size_t n);
/* Capacity in bytes (for memory accounting); shrink back to at most cap. */
size_t mb_buf_capacity(const struct mb_buf *b);
void mb_buf_shrink(struct mb_buf *b, size_t cap);

/* A bump allocator for decoded structs; reset between frames. */
struct mb_arena;
int mb_arena_create(size_t capacity, struct mb_arena **out);
void mb_arena_destroy(struct mb_arena *a);
void mb_arena_reset(struct mb_arena *a);
/* 8-byte aligned, zeroed; NULL when the arena is exhausted. */
void *mb_arena_alloc(struct mb_arena *a, size_t n);
size_t mb_arena_used(const struct mb_arena *a);

/* ---- compression settings ---------------------------------------------- */

struct mb_lz77;
struct mb_codec_opts {
	/* compress payloads of at least min_bytes with this encoder (NULL:
	 * never); the sender owns it, one per thread */
	struct mb_lz77 *lz77;
	uint32_t min_bytes;
	uint32_t max_frame; /* payload limit; 0 means MB_PROTO_MAX_FRAME */
};

/* ---- frames ------------------------------------------------------------- */

/* Is a whole frame at the front of buf?  0: yes, *hdr and *total (header +
 * payload bytes) set.  MB_EAGAIN: not yet (*total set to the bytes needed
 * when the header is complete, else MB_FRAME_HDR).  MB_EPROTO: bad magic,
 * version, kind, flags or raw_len.  MB_ETOOBIG: len or raw_len above
 * max_frame (0 = MB_PROTO_MAX_FRAME). */
int mb_frame_check(const void *buf, size_t avail, uint32_t max_frame, struct mb_frame_hdr *hdr,
		   size_t *total);
/* The payload of a checked frame (frame points at the header).  When
 * compressed it is decompressed into scratch (reset first) and must be
 * exactly hdr->raw_len bytes; otherwise *payload points into frame. */
int mb_frame_payload(const struct mb_frame_hdr *hdr, const void *frame, struct mb_buf *scratch,
		     const uint8_t **payload, size_t *len);
/* Append a frame with this payload, compressed when opts say so and it
 * helps.  *wire_len (optional) receives the frame's bytes on the wire. */
int mb_frame_append(struct mb_buf *out, uint8_t kind, uint32_t seq, const void *payload, size_t len,
		    const struct mb_codec_opts *opts, size_t *wire_len);

/* ---- payload codecs ---------------------------------------------------- */

/* Encode the payload of a request/reply/notify/error into out (appended). */
int mb_request_encode_payload(struct mb_buf *out, const struct mb_request *r);
int mb_reply_encode_payload(struct mb_buf *out, const struct mb_reply *r);

/* Encode a whole frame (header + payload, compressed per opts) into out,
 * using tmp as scratch; opts may be NULL (no compression).  After a
 * successful encode tmp holds the payload as it was before compression
 * (until tmp's next use). */
int mb_request_encode(struct mb_buf *out, struct mb_buf *tmp, const struct mb_request *r,
		      const struct mb_codec_opts *opts, size_t *wire_len);
int mb_reply_encode(struct mb_buf *out, struct mb_buf *tmp, const struct mb_reply *r,
		    const struct mb_codec_opts *opts, size_t *wire_len);
int mb_notify_encode(struct mb_buf *out, struct mb_buf *tmp, const struct mb_notify *n,
		     const struct mb_codec_opts *opts, size_t *wire_len);
int mb_error_encode(struct mb_buf *out, struct mb_buf *tmp, uint32_t seq, int code,
		    const char *message, size_t *wire_len);

/* Decode payloads (see the top of this file for lifetimes).  seq is copied
 * into the result from the frame header by the caller's choice. */
int mb_request_decode(const uint8_t *p, size_t len, uint32_t seq, struct mb_arena *a,
		      struct mb_request *out);
int mb_reply_decode(const uint8_t *p, size_t len, uint32_t seq, struct mb_arena *a,
		    struct mb_reply *out);
int mb_notify_decode(const uint8_t *p, size_t len, struct mb_arena *a, struct mb_notify *out);
int mb_error_decode(const uint8_t *p, size_t len, struct mb_frame_error *out);

/* Properties on their own (also the store's on-disk property blob):
 * u16 count, then count x (u32 tag, value). */
int mb_props_encode(struct mb_buf *out, const struct mb_prop *props, uint16_t n);
int mb_props_decode(const uint8_t *p, size_t len, struct mb_arena *a, struct mb_prop **props,
		    uint16_t *n);
/* Find a property by tag in an array; NULL when absent. */
const struct mb_prop *mb_props_find(const struct mb_prop *props, uint16_t n, uint32_t tag);
/* Bytes one property takes on the wire. */
size_t mb_prop_wire_size(const struct mb_prop *p);

/* ---- ID sets (ICS state values, proto/idset.c) --------------------------- */

/* A set of ids (message ids or change numbers) as ascending, disjoint,
 * non-adjacent closed ranges [lo, hi], lo >= 1.  On the wire (the value of
 * an MB_META_* state property): varint count, then per range varint
 * (lo - previous hi), varint (hi - lo); a varint is LEB128 (7 bits per
 * byte, low first, at most 10 bytes).  A compact form of MS-OXCFXICS
 * 2.2.2.4's IDSET (no replica GUID: one store). */
struct mb_idrange {
	uint64_t lo, hi;
};
/* Ranges of n ids (any order, duplicates allowed; ids 0 skipped), sorted in
 * place, into out (room for n ranges): the number of ranges. */
uint32_t mb_idset_from_ids(uint64_t *ids, uint32_t n, struct mb_idrange *out);
/* Bytes mb_idset_encode writes for these ranges. */
size_t mb_idset_size(const struct mb_idrange *r, uint32_t n);
/* Encode into out (room for mb_idset_size bytes): bytes written. */
size_t mb_idset_encode(const struct mb_idrange *r, uint32_t n, uint8_t *out);
/* Check and summarise an encoded set: 0 with its range count, id count and
 * highest id (0 when empty), or MB_EPROTO when malformed (a varint cut or
 * over 64 bits, ranges out of order or overlapping, bytes left over). */
int mb_idset_scan(const uint8_t *p, size_t len, uint32_t *nranges, uint64_t *nids, uint64_t *max);
/* Decode an encoded set (checked as mb_idset_scan does) into out (room for
 * cap ranges): 0 with the range count, MB_EPROTO, or MB_ETOOBIG past cap. */
int mb_idset_decode(const uint8_t *p, size_t len, struct mb_idrange *out, uint32_t cap,
		    uint32_t *n);
/* Add [lo, hi] to the n ranges r (room for n + 1), merging what it touches:
 * the new count. */
uint32_t mb_idset_add(struct mb_idrange *r, uint32_t n, uint64_t lo, uint64_t hi);

/* Helpers to build values. */
struct mb_bytes mb_str(const char *s);
struct mb_prop mb_prop_i64(uint32_t tag, int64_t v);
struct mb_prop mb_prop_bytes(uint32_t tag, const void *p, uint32_t len);
struct mb_prop mb_prop_str(uint32_t tag, const char *s);
/* true when a and b have the same bytes. */
bool mb_bytes_eq(struct mb_bytes a, struct mb_bytes b);
bool mb_bytes_eq_str(struct mb_bytes a, const char *s);

/* ---- logon handshake (auth.c) ------------------------------------------ */

#define MB_PBKDF2_ITERATIONS 2048

/* key = PBKDF2-HMAC-SHA-256(password, salt, iterations, MB_KEY_LEN). */
int mb_auth_derive(const char *password, const uint8_t salt[MB_SALT_LEN], uint32_t iterations,
		   uint8_t key[MB_KEY_LEN]);
/* proof = HMAC-SHA-256(key, nonce || user). */
int mb_auth_proof(const uint8_t key[MB_KEY_LEN], const uint8_t nonce[MB_NONCE_LEN],
		  const char *user, size_t user_len, uint8_t proof[MB_PROOF_LEN]);
/* Constant-time check of a proof: 0, or MB_EAUTH. */
int mb_auth_verify(const uint8_t key[MB_KEY_LEN], const uint8_t nonce[MB_NONCE_LEN],
		   const char *user, size_t user_len, const uint8_t proof[MB_PROOF_LEN]);
/* Cryptographically random bytes (OpenSSL). */
int mb_auth_random(void *buf, size_t n);
/* Hex helpers for topology files: 2*n chars + NUL. */
void mb_hex_encode(const uint8_t *p, size_t n, char *out);
int mb_hex_decode(const char *hex, uint8_t *out, size_t n);

#endif
