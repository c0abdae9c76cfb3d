/* drivers/imap_int.h: what the imap target's files share (imap.c: the
 * connections, untagged responses and the ops table; imap_script.c: the
 * steps as IMAP command scripts; imap_smtp.c: the SMTP submission of SEND;
 * imap_cmd.c: commands, the uid map, the end of a step, under all three):
 * the per-user state, its connection states and the operation names.
 * Nothing outside src/load/drivers/imap*.c includes it.
 */
#ifndef MB_LOAD_DRIVERS_IMAP_INT_H
#define MB_LOAD_DRIVERS_IMAP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "load/imapparse.h"
#include "load/mailmsg.h"
#include "load/smtpparse.h"
#include "load/target.h"

#define ROWS_MAX 256
#define MAP_MAX 1024 /* uid -> message id entries per user */
#define NFIXED 5     /* INBOX, Deleted Items, Sent Items, Calendar, Contacts */
#define FOLDERS_MAX 64

/* Operation names (histograms "imap.SELECT", ...). */
/* clang-format off */
#define OP_TABLE(X) \
	X(GREETING, "imap.GREETING") \
	X(CAPABILITY, "imap.CAPABILITY") \
	X(AUTHENTICATE, "imap.AUTHENTICATE") \
	X(ENABLE, "imap.ENABLE") \
	X(LIST, "imap.LIST") \
	X(SELECT, "imap.SELECT") \
	X(FETCH, "imap.FETCH") \
	X(STORE, "imap.STORE") \
	X(MOVE, "imap.MOVE") \
	X(EXPUNGE, "imap.EXPUNGE") \
	X(APPEND, "imap.APPEND") \
	X(STATUS, "imap.STATUS") \
	X(NOOP, "imap.NOOP") \
	X(IDLE, "imap.IDLE") \
	X(LOGOUT, "imap.LOGOUT") \
	X(S_GREETING, "smtp.GREETING") \
	X(S_EHLO, "smtp.EHLO") \
	X(S_AUTH, "smtp.AUTH") \
	X(S_MAIL, "smtp.MAIL") \
	X(S_RCPT, "smtp.RCPT") \
	X(S_DATA, "smtp.DATA") \
	X(STARTTLS, "imap.STARTTLS") \
	X(S_STARTTLS, "smtp.STARTTLS")
/* clang-format on */

enum op {
#define X_OP(id, name) OP_##id,
	OP_TABLE(X_OP)
#undef X_OP
	    OP_COUNT
};

enum c0 {
	C_DOWN = 0,
	C_GREETING,
	C_CAPA,
	C_STARTTLS, /* STARTTLS sent; then the handshake */
	C_TLS,
	C_AUTH,
	C_ENABLE,
	C_LIST,
	C_READY,
	C_IDLE_START,
	C_IDLE,
	C_UNIDLE,
	C_CMD
};
enum c1 {
	S_DOWN = 0,
	S_CONNECTING,
	S_GREETING,
	S_EHLO,
	S_STARTTLS,
	S_TLS,
	S_AUTH,
	S_READY,
	S_ENVELOPE,
	S_BODY
};

struct folder_rep {
	uint32_t uidvalidity;
	uint64_t modseq;
	uint32_t maxuid;
	int synced; /* downloaded at least once */
	int dirty;
	int n;
	uint32_t uid[ROWS_MAX];
	uint8_t seen[ROWS_MAX];
	int32_t who[ROWS_MAX];
};

struct imap_user {
	struct mb_imap_parser *p;
	struct mb_smtp_parser *sp;
	size_t scan0;
	enum c0 c0;
	enum c1 c1;
	unsigned tagno;
	char tag[16];
	int op;	     /* command in flight on conn 0 */
	int qresync; /* server has CONDSTORE+QRESYNC and we enabled it */
	int has_move, has_uidplus, has_idle, has_literalplus, has_starttls;
	int secured0, secured1; /* STARTTLS done on connection 0, 1 */
	int nuser_folders;
	int selected; /* folder index, -1 none */
	uint32_t exists;
	uint32_t sel_uidvalidity;
	uint64_t sel_modseq;
	int notified; /* EXISTS grew while idle */
	/* the step in flight */
	int stepping;
	struct mb_step s;
	int phase;
	uint64_t ids[ROWS_MAX];
	int nids;
	uint64_t more[ROWS_MAX];
	int nmore;
	uint32_t rcpt_mb[512]; /* SEND: recipient mailboxes */
	uint16_t rcpt_of[512]; /* the address (rcpt index) that reached rcpt_mb[k] */
	int nrcpt_mb;
	char **rcpt;	  /* SEND: addresses */
	uint8_t *rcpt_ok; /* SEND: RCPT TO answered 250 or 251 */
	int nrcpt;
	int rcpt_replies;
	uint64_t mid;
	char *msg;
	size_t msglen;
	int status;
	/* results */
	int n;
	uint64_t rids[ROWS_MAX];
	uint32_t rflags[ROWS_MAX];
	int32_t rwho[ROWS_MAX];
	uint32_t count, count2;
	/* uid -> message id */
	uint64_t map_key[MAP_MAX], map_mid[MAP_MAX];
	unsigned map_next;
	/* cached mode */
	struct folder_rep *rep; /* NFIXED + user folders */
	int nrep;
	int sync_folder;
	int synced_once;
	uint64_t counter;
};

/* imap_cmd.c, the bottom layer (calls nothing above it). */
uint64_t mb__imap_mix64(uint64_t x);
int mb__imap_nfolders(const struct imap_user *iu);
void mb__imap_folder_name(int f, char *buf, size_t len);
void mb__imap_map_put(struct imap_user *iu, uint64_t key, uint64_t mid);
uint64_t mb__imap_map_get(const struct imap_user *iu, uint64_t key);
/* Send one tagged command on conn 0 (the op's histogram times it). */
int mb__imap_cmd(struct mb_tuser *u, int op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void mb__imap_uidset(const uint64_t *ids, int n, char *buf, size_t len);
/* End the step in flight with status (0 or an error); IDLE again. */
void mb__imap_finish(struct mb_tuser *u, int status);
void mb__imap_maybe_idle(struct mb_tuser *u);
int mb__imap_select_folder(struct mb_tuser *u, int f);
int mb__imap_append(struct mb_tuser *u, int folder, const char *flags);

/* imap_smtp.c: SEND's message and its submission (calls imap_cmd.c). */
int mb__imap_build_msg(struct mb_tuser *u, enum mb_mailmsg_kind kind);
int mb__imap_smtp_line(struct mb_tuser *u, int op, const char *line);
int mb__imap_smtp_envelope(struct mb_tuser *u);
void mb__imap_smtp_fail(struct mb_tuser *u, int rc);
int mb__imap_smtp_reply(struct mb_tuser *u, const struct mb_smtp_reply *r);

/* imap_script.c: the script's phases, a cached step served locally
 * (calls imap_smtp.c and imap_cmd.c; imap.c calls it). */
int mb__imap_step_next(struct mb_tuser *u, int ok, const struct mb_imap_resp *r);
int mb__imap_local_step(struct mb_tuser *u);
int mb__imap_step_run(struct mb_tuser *u);

#endif
