/* addrprops.c: the address properties of a received message (see
 * addrprops.h).  Layouts: Address Book EntryID ([MS-OXCDATA] 2.2.5.2):
 * u32 flags 0, the 16-byte provider UID of the address book, u32 version
 * 1, u32 type 0 (a local mail user), the X500 DN and its NUL; FlatEntryList
 * (2.3.3): u32 count, u32 size, then each FlatEntry: u32 size, the entry
 * id, padding to a multiple of 4. */
#include "store/addrprops.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* the Exchange address book's provider UID ([MS-OXCDATA] 2.2.5.2) */
static const uint8_t ab_provider[16] = {0xDC, 0xA7, 0x40, 0xC8, 0xC0, 0x42, 0x10, 0x1A,
					0xB4, 0xB9, 0x08, 0x00, 0x2B, 0x2F, 0xE1, 0x82};

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void mb_addr_build(struct mb_addr *a, const char *name)
{
	char dn[MB_ADDR_DN_MAX + 1];
	snprintf(a->name, sizeof(a->name), "%s", name);
	int n = snprintf(dn, sizeof(dn),
			 "/o=mailbench/ou=First Administrative Group/cn=Recipients/cn=%s", a->name);
	size_t dl = n < 0 ? 0 : (size_t)n < sizeof(dn) ? (size_t)n : sizeof(dn) - 1;

	memset(a->entryid, 0, 28);
	memcpy(a->entryid + 4, ab_provider, 16);
	put32(a->entryid + 20, 1);
	put32(a->entryid + 24, 0);
	memcpy(a->entryid + 28, dn, dl);
	a->entryid[28 + dl] = 0;
	a->entryid_len = (uint32_t)(28 + dl + 1);

	memcpy(a->search_key, "EX:", 3);
	for (size_t i = 0; i < dl; i++)
		a->search_key[3 + i] = (uint8_t)toupper((unsigned char)dn[i]);
	a->search_key[3 + dl] = 0;
	a->search_key_len = (uint32_t)(3 + dl + 1);

	uint32_t pad = (4 - a->entryid_len % 4) % 4;
	uint32_t entry = 4 + a->entryid_len + pad;
	put32(a->entries, 1);
	put32(a->entries + 4, entry);
	put32(a->entries + 8, a->entryid_len);
	memcpy(a->entries + 12, a->entryid, a->entryid_len);
	memset(a->entries + 12 + a->entryid_len, 0, pad);
	a->entries_len = 8 + entry;
}

/* A name, entry id and search key of a (tag 0: that one left out). */
static int addr_ids(const struct mb_addr *a, uint32_t name, uint32_t entryid, uint32_t key,
		    struct mb_prop *out)
{
	int n = 0;
	if (name)
		out[n++] = mb_prop_str(name, a->name);
	out[n++] = mb_prop_bytes(entryid, a->entryid, a->entryid_len);
	out[n++] = mb_prop_bytes(key, a->search_key, a->search_key_len);
	return n;
}

int mb_addr_sender_props(const struct mb_addr *a, int64_t submit_ms, struct mb_prop *out)
{
	/* the sender's name is the store's own column (PR_SENDER_NAME) */
	int n = addr_ids(a, 0, MB_PR_SENDER_ENTRYID, MB_PR_SENDER_SEARCH_KEY, out);
	n += addr_ids(a, MB_PR_SENT_REPRESENTING_NAME, MB_PR_SENT_REPRESENTING_ENTRYID,
		      MB_PR_SENT_REPRESENTING_SEARCH_KEY, out + n);
	out[n++] = mb_prop_str(MB_PR_REPLY_RECIPIENT_NAMES, a->name);
	out[n++] = mb_prop_bytes(MB_PR_REPLY_RECIPIENT_ENTRIES, a->entries, a->entries_len);
	out[n++] = mb_prop_i64(MB_PR_CLIENT_SUBMIT_TIME, submit_ms);
	return n;
}

int mb_addr_recipient_props(const struct mb_addr *a, bool named, struct mb_prop *out)
{
	int n = addr_ids(a, MB_PR_RECEIVED_BY_NAME, MB_PR_RECEIVED_BY_ENTRYID,
			 MB_PR_RECEIVED_BY_SEARCH_KEY, out);
	n += addr_ids(a, MB_PR_RCVD_REPRESENTING_NAME, MB_PR_RCVD_REPRESENTING_ENTRYID,
		      MB_PR_RCVD_REPRESENTING_SEARCH_KEY, out + n);
	out[n++] = mb_prop_i64(MB_PR_MESSAGE_TO_ME, named);
	out[n++] = mb_prop_i64(MB_PR_MESSAGE_CC_ME, 0);
	out[n++] = mb_prop_i64(MB_PR_MESSAGE_RECIP_ME, named);
	return n;
}

bool mb_addr_is_prop(uint32_t tag)
{
	switch (tag) {
	case MB_PR_SENDER_ENTRYID:
	case MB_PR_SENDER_SEARCH_KEY:
	case MB_PR_SENT_REPRESENTING_NAME:
	case MB_PR_SENT_REPRESENTING_ENTRYID:
	case MB_PR_SENT_REPRESENTING_SEARCH_KEY:
	case MB_PR_REPLY_RECIPIENT_NAMES:
	case MB_PR_REPLY_RECIPIENT_ENTRIES:
	case MB_PR_CLIENT_SUBMIT_TIME:
	case MB_PR_RECEIVED_BY_NAME:
	case MB_PR_RECEIVED_BY_ENTRYID:
	case MB_PR_RECEIVED_BY_SEARCH_KEY:
	case MB_PR_RCVD_REPRESENTING_NAME:
	case MB_PR_RCVD_REPRESENTING_ENTRYID:
	case MB_PR_RCVD_REPRESENTING_SEARCH_KEY:
	case MB_PR_MESSAGE_TO_ME:
	case MB_PR_MESSAGE_CC_ME:
	case MB_PR_MESSAGE_RECIP_ME:
		return true;
	}
	return false;
}
