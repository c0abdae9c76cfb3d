/* mailbox.h: the mailbox profile, i.e. what one simulated user's mailbox
 * holds: the scenario's mailbox section (at scale 1) and the topology
 * file's mailbox (after scaling) are this one struct.
 *
 * Invariant of a scaled profile: a count that is positive at scale 1
 * stays at least 1; the number of new folders and the message size are
 * not scaled (scale shrinks contents, not their shape).
 */
#ifndef MB_CORE_MAILBOX_H
#define MB_CORE_MAILBOX_H

struct mb_mailbox_profile {
	int inbox_messages;
	int deleted_items_messages;
	int new_folders;
	int messages_per_folder;
	int calendar_appointments;
	int contacts;
	int avg_message_kb;
};

/* The profile at a scale (scale > 0; 1 copies it). */
void mb_mailbox_profile_scale(const struct mb_mailbox_profile *in, double scale,
			      struct mb_mailbox_profile *out);
/* Items in one mailbox: messages, appointments and contacts. */
int mb_mailbox_profile_items(const struct mb_mailbox_profile *p);

#endif
