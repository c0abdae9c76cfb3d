/* addrprops.h: the address properties of a received message, as MAPI's
 * incoming transport sets them ("Setting Properties on Incoming Messages",
 * MAPI reference): the sender group (PR_SENDER_*, PR_SENT_REPRESENTING_*,
 * PR_REPLY_RECIPIENT_*, PR_CLIENT_SUBMIT_TIME) and the recipient group
 * (PR_RECEIVED_BY_*, PR_RCVD_REPRESENTING_*, PR_MESSAGE_TO_ME, _CC_ME,
 * _RECIP_ME).  A user's entry id is an Address Book EntryID of a local
 * mail user ([MS-OXCDATA] 2.2.5.2) with its X500 DN, its search key the
 * address type, a colon and the DN upper-cased; nobody sends on another's
 * behalf here, so the representing groups repeat the sender's and the
 * recipient's (as the reference says a transport with no mapping does).
 * The props point into the mb_addr they were built from: keep it alive
 * until they are stored. */
#ifndef MB_STORE_ADDRPROPS_H
#define MB_STORE_ADDRPROPS_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"

#define MB_ADDR_DN_MAX (80 + MB_PROTO_MAX_NAME)
#define MB_ADDR_SENDER_PROPS 8
#define MB_ADDR_RECIPIENT_PROPS 9

struct mb_addr {
	char name[MB_PROTO_MAX_NAME + 1];
	uint8_t entryid[28 + MB_ADDR_DN_MAX + 1];
	uint32_t entryid_len;
	uint8_t search_key[3 + MB_ADDR_DN_MAX + 1];
	uint32_t search_key_len;
	uint8_t entries[12 + 28 + MB_ADDR_DN_MAX + 1 + 3]; /* FlatEntryList of one */
	uint32_t entries_len;
};

/* Build a's ids for the user called name (truncated to MB_PROTO_MAX_NAME). */
void mb_addr_build(struct mb_addr *a, const char *name);
/* The sender group of a message from a, submitted at submit_ms: fills out
 * (room for MB_ADDR_SENDER_PROPS) and returns the count. */
int mb_addr_sender_props(const struct mb_addr *a, int64_t submit_ms, struct mb_prop *out);
/* The recipient group for a (named as a recipient when named, else reached
 * through a list): room for MB_ADDR_RECIPIENT_PROPS. */
int mb_addr_recipient_props(const struct mb_addr *a, bool named, struct mb_prop *out);
/* Is tag one of the two groups' (the store sets them, whatever a client
 * set)?  Kept beside the builders above: a tag they add belongs here. */
bool mb_addr_is_prop(uint32_t tag);

#endif
