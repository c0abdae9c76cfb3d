/* imapcmd_int.h: what the commands against an external IMAP target share
 * (cmd_imap.c: `check` and the shared helpers; cmd_imap_init.c: `init`):
 * the provisioned folder names, a set of Message-IDs read from a folder,
 * and the IMAP client's TLS set-up.  Nothing else includes it.
 */
#ifndef MB_LAB_IMAPCMD_INT_H
#define MB_LAB_IMAPCMD_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "lab/mailc.h"

/* The folders of a provisioned mailbox (Outlook's names). */
#define F_DELETED "Deleted Items"
#define F_SENT "Sent Items"
#define F_CALENDAR "Calendar"
#define F_CONTACTS "Contacts"

struct idset {
	char **ids;
	size_t n, cap;
};

void mb__imapcmd_idset_add(struct idset *s, const char *p, size_t len);
int mb__imapcmd_idset_has(const struct idset *s, const char *id);
void mb__imapcmd_idset_free(struct idset *s);
/* The Message-IDs of folder's messages into s (the folder selected on c);
 * 0 or an error. */
int mb__imapcmd_folder_ids(struct mb_imapc *c, const char *folder, struct idset *s);
/* TLS of the IMAP client: 0, or the exit code. */
int mb__imapcmd_tls_setup(const char *cmd, const char *target, int tls, const char *ca,
			  bool insecure);

#endif
